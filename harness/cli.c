/* cli.c - error reporting and argument parsing shared by the subcommands. */
#include "harness/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

void sb_err(const char *fmt, ...)
{
	va_list ap;
	fputs("sampbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void sb_getopt_error(int c, char **argv, const char *cmd)
{
	if (c == ':')
		sb_err("option '%s' needs a value", argv[optind - 1]);
	else
		sb_err("unknown option '%s' (see 'sampbench %s --help')", argv[optind - 1], cmd);
}

int sb_parse_double(const char *opt, const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v)) {
		sb_err("invalid number '%s' for %s", s, opt);
		return -1;
	}
	*out = v;
	return 0;
}

int sb_parse_int(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end) {
		sb_err("invalid integer '%s' for %s", s, opt);
		return -1;
	}
	if (v < min || v > max) {
		sb_err("%s must be between %ld and %ld, got %ld", opt, min, max, v);
		return -1;
	}
	*out = v;
	return 0;
}
