/* config_error.c - "file:line: message" errors of the config parsers (config_error.h). */
#include "core/config_error.h"

#include <stdio.h>

int sb_config_verr(char *err, size_t errlen, const char *file, int line, const char *fmt,
		   va_list ap)
{
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(err, errlen, "%s:%d: %s", file, line, msg);
	return -1;
}
