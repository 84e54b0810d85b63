/* opt.h - one option table per command: its --help lines, its getopt_long arrays and the
 * parsing into its struct env all come from the table (perf's parse-options, the argp
 * tables of libbpf-tools). A command declares
 *
 *	const struct opt run_options[] = {
 *		OPT_STRING('s', "sampler", &env.samplers, "LIST", "samplers, comma separated"),
 *		OPT_INTEGER('t', "threads", &env.threads, "N", 1, 64, "workload threads"),
 *		OPT_HELP(),
 *		OPT_END(),
 *	};
 *
 * and calls opt_parse() and, for --help, its own usage paragraph and opt_help(). */
#ifndef SB_OPT_H
#define SB_OPT_H

#include <stdio.h>

enum opt_kind {
	OPT_KIND_END,      /* ends the table */
	OPT_KIND_FLAG,     /* int *: set to 1 */
	OPT_KIND_STRING,   /* const char **: the value itself (argv's); the last one given wins */
	OPT_KIND_INT,      /* long *: a whole decimal in [min, max] */
	OPT_KIND_DOUBLE,   /* double *: a finite number in (dmin, dmax] */
	OPT_KIND_CALLBACK, /* fn(opt, value): repeated options, checks of their own */
	OPT_KIND_HELP,     /* -h, --help: opt_parse returns OPT_PARSE_HELP */
};

struct opt {
	enum opt_kind kind;
	int short_name;        /* 0: long form only */
	const char *long_name;
	const char *arg;       /* the value's name in the help (LIST, N); NULL: takes none */
	const char *help;      /* each '\n' starts a continuation line under the first */
	void *value;           /* where the parsed value goes (see the kinds) */
	long min, max;         /* OPT_KIND_INT */
	double dmin, dmax;     /* OPT_KIND_DOUBLE: the range is (dmin, dmax] */
	const char *unit;      /* OPT_KIND_DOUBLE: named in the range error ("seconds") */
	/* OPT_KIND_CALLBACK: gets the value (NULL for an option without one). Returns 0, or
	 * -1 after one line on stderr. */
	int (*fn)(const struct opt *o, const char *arg);
};

/* Refuses, at compile time, a destination of the wrong type for the kind. */
#define OPT_VALUE(type, v) ((void *)(1 ? (v) : (type *)0))

#define OPT_BOOLEAN(s, l, v, h)                                                                \
	{ .kind = OPT_KIND_FLAG, .short_name = (s), .long_name = (l), .help = (h),             \
	  .value = OPT_VALUE(int, v) }
#define OPT_STRING(s, l, v, a, h)                                                              \
	{ .kind = OPT_KIND_STRING, .short_name = (s), .long_name = (l), .arg = (a), .help = (h), \
	  .value = OPT_VALUE(const char *, v) }
#define OPT_INTEGER(s, l, v, a, lo, hi, h)                                                     \
	{ .kind = OPT_KIND_INT, .short_name = (s), .long_name = (l), .arg = (a), .help = (h),  \
	  .value = OPT_VALUE(long, v), .min = (lo), .max = (hi) }
#define OPT_NUMBER(s, l, v, a, lo, hi, u, h)                                                   \
	{ .kind = OPT_KIND_DOUBLE, .short_name = (s), .long_name = (l), .arg = (a), .help = (h), \
	  .value = OPT_VALUE(double, v), .dmin = (lo), .dmax = (hi), .unit = (u) }
#define OPT_CALLBACK(s, l, v, a, f, h)                                                         \
	{ .kind = OPT_KIND_CALLBACK, .short_name = (s), .long_name = (l), .arg = (a),          \
	  .help = (h), .value = (v), .fn = (f) }
#define OPT_HELP()                                                                             \
	{ .kind = OPT_KIND_HELP, .short_name = 'h', .long_name = "help", .help = "this help" }
#define OPT_END() { .kind = OPT_KIND_END }

/* The most entries a table may have (opt_parse refuses more). */
#define OPT_MAX 32

/* opt_parse's flags. */
enum {
	OPT_STOP_AT_OPERAND = 1, /* options end at the first operand (exec's CMD and its own) */
};

/* What opt_parse returns besides the index of the first operand. */
enum { OPT_PARSE_ERROR = -1, OPT_PARSE_HELP = 0 };

/* Parses the options of argv (argv[0] is the command, named cmd in error hints) into the
 * table's destinations, in command-line order; getopt_long may move the operands behind
 * the options. An unknown option, a missing or bad value, or a callback's refusal prints
 * one line on stderr and stops the parse. Returns the index in argv of the first operand
 * (argc when there is none), OPT_PARSE_HELP at -h/--help (the caller prints its help), or
 * OPT_PARSE_ERROR (a usage error: exit 2). */
int opt_parse(const char *cmd, const struct opt *opts, int argc, char **argv, unsigned flags);

/* Checks the operands argv[first..argc) of command cmd: at least min and at most max
 * (max < 0: no limit). Too few: "missing WHAT", too many: "unexpected argument 'X'", each
 * with a pointer to the command's --help. Returns 0, or -1 after that one line on stderr
 * (a usage error: exit 2). */
int opt_operands(const char *cmd, char **argv, int first, int argc, int min, int max,
		 const char *what);

/* Prints one line per option of opts ("  -s, --sampler LIST   help"), the help texts in one
 * column and their continuation lines under it. */
void opt_help(FILE *out, const struct opt *opts);

#endif
