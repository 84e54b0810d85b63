/* opt.c - option tables (opt.h): getopt_long arrays, parsing and help lines from one table. */
#include "harness/opt.h"

#include <getopt.h>
#include <string.h>

#include "harness/cli.h"

#define OPT_HELP_GAP 3 /* spaces between the longest option and the help column */
#define OPT_LONG_ONLY 256 /* getopt_long's value for entry i without a short name: 256 + i */

static size_t count(const struct opt *opts)
{
	size_t n = 0;

	while (opts[n].kind != OPT_KIND_END)
		n++;
	return n;
}

static int getopt_value(const struct opt *opts, size_t i)
{
	return opts[i].short_name ? opts[i].short_name : OPT_LONG_ONLY + (int)i;
}

/* Whether o is followed by a value: always for the typed kinds, for a callback when it
 * names one. */
static int takes_value(const struct opt *o)
{
	return o->kind == OPT_KIND_STRING || o->kind == OPT_KIND_INT ||
	       o->kind == OPT_KIND_DOUBLE || (o->kind == OPT_KIND_CALLBACK && o->arg);
}

/* Stores one occurrence of o with its value arg (NULL when it takes none). Returns 0, or -1
 * after one line on stderr. */
static int store(const struct opt *o, const char *arg)
{
	char name[64];

	if (o->long_name)
		snprintf(name, sizeof(name), "--%s", o->long_name);
	else
		snprintf(name, sizeof(name), "-%c", o->short_name);
	switch (o->kind) {
	case OPT_KIND_FLAG:
		*(int *)o->value = 1;
		return 0;
	case OPT_KIND_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_KIND_INT:
		return sb_parse_int(name, arg, o->min, o->max, o->value);
	case OPT_KIND_DOUBLE: {
		double v;
		if (sb_parse_double(name, arg, &v))
			return -1;
		if (v <= o->dmin || v > o->dmax) {
			sb_err("%s must be in (%g, %g]%s%s, got %s", name, o->dmin, o->dmax,
			       o->unit ? " " : "", o->unit ? o->unit : "", arg);
			return -1;
		}
		*(double *)o->value = v;
		return 0;
	}
	case OPT_KIND_CALLBACK:
		return o->fn(o, arg);
	case OPT_KIND_HELP:
	case OPT_KIND_END:
		break;
	}
	return 0;
}

int opt_parse(const char *cmd, const struct opt *opts, int argc, char **argv, unsigned flags)
{
	struct option longopts[OPT_MAX + 1];
	char optstring[3 + 2 * OPT_MAX + 1], *p = optstring;
	size_t n = count(opts), nlong = 0;
	int c;

	if (n > OPT_MAX) {
		sb_err("%s has %zu options, at most %d", cmd, n, OPT_MAX);
		return OPT_PARSE_ERROR;
	}
	/* '+' stops at the first operand; ':' reports a missing value apart from an unknown
	 * option */
	if (flags & OPT_STOP_AT_OPERAND)
		*p++ = '+';
	*p++ = ':';
	for (size_t i = 0; i < n; i++) {
		if (opts[i].long_name)
			longopts[nlong++] = (struct option){
				opts[i].long_name,
				takes_value(&opts[i]) ? required_argument : no_argument, NULL,
				getopt_value(opts, i)
			};
		if (opts[i].short_name) {
			*p++ = (char)opts[i].short_name;
			if (takes_value(&opts[i]))
				*p++ = ':';
		}
	}
	*p = 0;
	longopts[nlong] = (struct option){ 0 };

	/* 0, not 1: glibc and the BSDs then start afresh, '+' and all, however an earlier
	 * parse in this process ended */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		size_t i = 0;

		while (i < n && getopt_value(opts, i) != c)
			i++;
		if (i == n) { /* ':' missing value, '?' unknown option */
			sb_getopt_error(c, argv, cmd);
			return OPT_PARSE_ERROR;
		}
		if (opts[i].kind == OPT_KIND_HELP)
			return OPT_PARSE_HELP;
		if (store(&opts[i], takes_value(&opts[i]) ? optarg : NULL) != 0)
			return OPT_PARSE_ERROR;
	}
	return optind;
}

/* "  -s, --sampler LIST", "      --seed N" or "  -x N" into buf. Returns its length. */
static size_t left_column(char *buf, size_t len, const struct opt *o)
{
	int w;

	if (o->short_name && o->long_name)
		w = snprintf(buf, len, "  -%c, --%s", o->short_name, o->long_name);
	else if (o->long_name)
		w = snprintf(buf, len, "      --%s", o->long_name);
	else
		w = snprintf(buf, len, "  -%c", o->short_name);
	if (o->arg && w >= 0 && (size_t)w < len)
		w += snprintf(buf + w, len - (size_t)w, " %s", o->arg);
	return w < 0 ? 0 : (size_t)w;
}

void opt_help(FILE *out, const struct opt *opts)
{
	char left[128];
	size_t col = 0;

	for (size_t i = 0; opts[i].kind != OPT_KIND_END; i++) {
		size_t w = left_column(left, sizeof(left), &opts[i]);
		if (w > col)
			col = w;
	}
	col += OPT_HELP_GAP;
	for (size_t i = 0; opts[i].kind != OPT_KIND_END; i++) {
		const char *h = opts[i].help ? opts[i].help : "";
		size_t w = left_column(left, sizeof(left), &opts[i]);

		fprintf(out, "%s%*s", left, (int)(col - w), "");
		for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(out, "%.*s\n%*s", (int)(nl - h), h, (int)col, "");
		fprintf(out, "%s\n", h);
	}
}

int opt_operands(const char *cmd, char **argv, int first, int argc, int min, int max,
		 const char *what)
{
	int n = argc - first;

	if (n < min) {
		sb_err("missing %s (see 'sampbench %s --help')", what, cmd);
		return -1;
	}
	if (max >= 0 && n > max) {
		sb_err("unexpected argument '%s' (see 'sampbench %s --help')", argv[first + max],
		       cmd);
		return -1;
	}
	return 0;
}
