/* config_error.h - the one format of an error in a config file (ci/matrix, ci/budgets):
 * "file:line: message", shared by the matrix parser (harness/) and the budget parser
 * (analysis/). */
#ifndef SB_CONFIG_ERROR_H
#define SB_CONFIG_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* Formats "file:line: message" into err (errlen bytes, the caller's). Always returns -1,
 * so a parser can `return sb_config_verr(...)`. */
int sb_config_verr(char *err, size_t errlen, const char *file, int line, const char *fmt,
		   va_list ap);

#endif
