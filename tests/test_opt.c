/* test_opt.c - option tables (harness/opt.h): the help lines, the parse into the
 * destinations and its one-line errors; then, through the binary, every command's --help
 * against its own table and its errors for a bad option, a missing value and an integer or
 * number out of its range. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness/cli.h"
#include "harness/opt.h"
#include "tests/support/sbrun.h"

static char bin[512];

/* ---- the module, on a table of every kind ---- */

static struct env {
	int flag;
	const char *name;
	long count;
	double rate;
	int calls;
	const char *last_call;
	int quiet;
} env;

static int count_call(const struct opt *o, const char *arg)
{
	(void)o;
	if (arg && !strcmp(arg, "refuse")) {
		sb_err("--call refuses '%s'", arg);
		return -1;
	}
	env.calls++;
	env.last_call = arg;
	return 0;
}

static const struct opt table[] = {
	OPT_BOOLEAN('f', "flag", &env.flag, "a flag"),
	OPT_STRING('n', "name", &env.name, "NAME", "a name\nwith a second line\nand a third"),
	OPT_INTEGER('c', "count", &env.count, "N", 1, 10, "a count, 1..10"),
	OPT_NUMBER(0, "rate", &env.rate, "F", 0, 50, "hertz", "a rate, 0 < F <= 50"),
	OPT_CALLBACK('x', "call", NULL, "ARG", count_call, "repeatable"),
	OPT_BOOLEAN('q', NULL, &env.quiet, "short only"),
	OPT_HELP(),
	OPT_END(),
};

/* argv for opt_parse: "t" and the arguments, in a buffer the parse may reorder. */
struct argv_buf {
	char *v[32];
	int n;
};

static void make_argv(struct argv_buf *a, const char *const *args)
{
	a->n = 0;
	a->v[a->n++] = "t";
	for (; *args; args++)
		a->v[a->n++] = (char *)*args;
	a->v[a->n] = NULL;
}

/* Runs opt_parse on args with stderr captured into err. Returns what opt_parse returned. */
static int parse(const char *const *args, unsigned flags, struct argv_buf *a, char *err,
		 size_t errlen)
{
	FILE *tmp = tmpfile();
	int saved = dup(2), rc;
	size_t n;

	assert_non_null(tmp);
	memset(&env, 0, sizeof(env));
	make_argv(a, args);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	rc = opt_parse("t", table, a->n, a->v, flags);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, errlen - 1, tmp);
	err[n] = 0;
	fclose(tmp);
	return rc;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Asserts a usage error: OPT_PARSE_ERROR and one line holding want. */
static void expect_error(const char *want, const char *const *args)
{
	struct argv_buf a;
	char err[1024];
	int rc = parse(args, 0, &a, err, sizeof(err));

	if (rc != OPT_PARSE_ERROR || count_lines(err) != 1 || !strstr(err, want))
		fail_msg("want an error with '%s', got %d: %s", want, rc, err);
	assert_int_equal(strncmp(err, "sampbench: ", 11), 0);
	assert_true(err[strlen(err) - 2] != '.');
}

/* Every option of the table on a line of its own, its help in one column for all, the
 * continuation lines of a help under its first. */
static void test_help_lists_every_option(void **state)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, col = 0, continuation = 0, options = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	assert_non_null(out);
	opt_help(out, table);
	fclose(out);
	for (size_t i = 0; table[i].kind != OPT_KIND_END; i++) {
		char want[64];
		const char *hit;

		if (table[i].long_name)
			snprintf(want, sizeof(want), "--%s", table[i].long_name);
		else
			snprintf(want, sizeof(want), "-%c", table[i].short_name);
		hit = strstr(text, want);
		if (!hit)
			fail_msg("'%s' not in the help:\n%s", want, text);
		if (table[i].arg)
			assert_non_null(strstr(hit, table[i].arg));
		if (table[i].short_name && table[i].long_name) {
			snprintf(want, sizeof(want), "-%c, --%s", table[i].short_name,
				 table[i].long_name);
			assert_non_null(strstr(text, want));
		}
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t lead = strspn(line, " ");
		if (line[lead] == '-') { /* an option's line: its help after the widest option */
			const char *h = strstr(line + lead, "   ");
			assert_non_null(h);
			size_t at = (size_t)(h - line) + strspn(h, " ");
			if (!col)
				col = at;
			assert_int_equal(at, col);
			options++;
		} else { /* a continuation line */
			assert_int_equal(lead, col);
			continuation++;
		}
	}
	assert_int_equal(options, sizeof(table) / sizeof(table[0]) - 1);
	assert_int_equal(continuation, 2);
	free(text);
}

/* Values land in their destinations, the last of a repeated string wins, a callback sees
 * each occurrence, and the operands are found behind the options. */
static void test_parse_values(void **state)
{
	struct argv_buf a;
	char err[1024];

	(void)state;
	int first = parse(ARGS("in.h5", "-f", "--name", "a", "-n", "b", "-c", "10", "--rate=50",
			       "-x", "one", "--call", "two", "-q", "out.h5"),
			  0, &a, err, sizeof(err));
	assert_string_equal(err, "");
	assert_int_equal(first, a.n - 2);
	assert_string_equal(a.v[first], "in.h5");
	assert_string_equal(a.v[first + 1], "out.h5");
	assert_int_equal(env.flag, 1);
	assert_string_equal(env.name, "b");
	assert_int_equal(env.count, 10);
	assert_true(env.rate == 50);
	assert_int_equal(env.calls, 2);
	assert_string_equal(env.last_call, "two");
	assert_int_equal(env.quiet, 1);

	/* no options: nothing set, the first operand at 1 */
	first = parse(ARGS("x"), 0, &a, err, sizeof(err));
	assert_int_equal(first, 1);
	assert_int_equal(env.flag + env.calls, 0);
	assert_null(env.name);
}

/* OPT_STOP_AT_OPERAND: what follows the first operand is the operand's, options too. */
static void test_stop_at_operand(void **state)
{
	struct argv_buf a;
	char err[1024];

	(void)state;
	int first = parse(ARGS("-f", "cmd", "-q", "--bogus"), OPT_STOP_AT_OPERAND, &a, err,
			  sizeof(err));
	assert_string_equal(err, "");
	assert_int_equal(first, 2);
	assert_string_equal(a.v[first + 1], "-q");
	assert_int_equal(env.flag, 1);
	assert_int_equal(env.quiet, 0);
	/* without it, the same line is an unknown option */
	assert_int_equal(parse(ARGS("-f", "cmd", "-q", "--bogus"), 0, &a, err, sizeof(err)),
			 OPT_PARSE_ERROR);
}

/* -h and --help stop the parse for the help; an error before them is still an error. */
static void test_help_request(void **state)
{
	struct argv_buf a;
	char err[1024];

	(void)state;
	assert_int_equal(parse(ARGS("-c", "3", "--help", "--bogus"), 0, &a, err, sizeof(err)),
			 OPT_PARSE_HELP);
	assert_string_equal(err, "");
	assert_int_equal(parse(ARGS("-h"), 0, &a, err, sizeof(err)), OPT_PARSE_HELP);
	assert_int_equal(parse(ARGS("-c", "0", "--help"), 0, &a, err, sizeof(err)),
			 OPT_PARSE_ERROR);
}

static void test_unknown_option(void **state)
{
	(void)state;
	expect_error("unknown option '--bogus' (see 'sampbench t --help')", ARGS("--bogus"));
	expect_error("unknown option", ARGS("-f", "-Z"));
	expect_error("unknown option '--flag=1'", ARGS("--flag=1")); /* a flag takes none */
}

static void test_missing_value(void **state)
{
	(void)state;
	expect_error("option '--name' needs a value", ARGS("-f", "--name"));
	expect_error("option '-c' needs a value", ARGS("-c"));
	expect_error("option '--call' needs a value", ARGS("--call"));
}

/* Integers: whole, in [min, max] (both ends taken); numbers: finite, in (min, max]. A
 * refused value leaves the destination alone. */
static void test_ranges(void **state)
{
	struct argv_buf a;
	char err[1024];

	(void)state;
	expect_error("--count must be between 1 and 10, got 0", ARGS("-c", "0"));
	expect_error("--count must be between 1 and 10, got 11", ARGS("--count", "11"));
	expect_error("invalid integer '2.5' for --count", ARGS("-c", "2.5"));
	expect_error("invalid integer '' for --count", ARGS("--count="));
	expect_error("--rate must be in (0, 50] hertz, got 0", ARGS("--rate", "0"));
	expect_error("--rate must be in (0, 50] hertz, got 50.5", ARGS("--rate", "50.5"));
	expect_error("invalid number 'inf' for --rate", ARGS("--rate", "inf"));
	expect_error("--call refuses 'refuse'", ARGS("-x", "refuse"));
	assert_int_equal(parse(ARGS("-c", "1"), 0, &a, err, sizeof(err)), 3);
	assert_int_equal(env.count, 1);
	assert_int_equal(parse(ARGS("-c", "5", "-c", "99"), 0, &a, err, sizeof(err)),
			 OPT_PARSE_ERROR);
	assert_int_equal(env.count, 5);
	assert_int_equal(parse(ARGS("--rate", "0.001"), 0, &a, err, sizeof(err)), 3);
	assert_true(env.rate == 0.001);
}

/* ---- every command, through the binary ---- */

/* "--name", or "-n" for an option without a long name. */
static void option_name(char *buf, size_t len, const struct opt *o)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
}

static const struct {
	const char *name;
	const struct opt *opts;
} commands[] = {
	{ "list", cmd_list_options },	      { "run", cmd_run_options },
	{ "bench", cmd_bench_options },	      { "gate", cmd_gate_options },
	{ "baseline", cmd_baseline_options }, { "merge", cmd_merge_options },
	{ "history", cmd_history_options },   { "show", cmd_show_options },
	{ "export", cmd_export_options },     { "import", cmd_import_options },
	{ "report", cmd_report_options },     { "target", cmd_target_options },
	{ "top", cmd_top_options },	      { "calibrate", cmd_calibrate_options },
	{ "expect", cmd_expect_options },     { "margins", cmd_expect_options },
#ifdef __linux__
	{ "exec", cmd_exec_options },
#endif
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Runs `bin cmd opt [value]`; expects exit 2 and one stderr line holding want. */
static void expect_cli_error(const char *cmd, const char *opt, const char *value,
			     const char *want)
{
	char err[2048];
	int rc = sbrun(bin, value ? ARGS(cmd, opt, value) : ARGS(cmd, opt), NULL, 0, err,
		       sizeof(err));

	if (rc != 2 || count_lines(err) != 1 || !strstr(err, want))
		fail_msg("sampbench %s %s %s: want exit 2 and one line with '%s', got %d: %s", cmd,
			 opt, value ? value : "", want, rc, err);
}

/* The main command list names every command of this table, so none is left untested. */
static void test_every_command_is_here(void **state)
{
	char out[4096];

	(void)state;
	assert_int_equal(sbrun(bin, ARGS("--help"), out, sizeof(out), NULL, 0), 0);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char name[32];
		size_t i;

		if (strncmp(line, "  ", 2) || sscanf(line, "%31s", name) != 1)
			continue;
		for (i = 0; i < NCOMMANDS && strcmp(commands[i].name, name); i++)
			;
		if (i == NCOMMANDS)
			fail_msg("command '%s' has no option table in this test", name);
	}
}

/* `sampbench CMD --help` exits 0 and shows every option of CMD's table. */
static void test_every_help_shows_its_table(void **state)
{
	static char out[16384];

	(void)state;
	for (size_t c = 0; c < NCOMMANDS; c++) {
		assert_int_equal(sbrun(bin, ARGS(commands[c].name, "--help"), out, sizeof(out),
				       NULL, 0),
				 0);
		assert_int_equal(strncmp(out, "usage: sampbench ", 17), 0);
		for (const struct opt *o = commands[c].opts; o->kind != OPT_KIND_END; o++) {
			char want[64];

			option_name(want, sizeof(want), o);
			if (!strstr(out, want))
				fail_msg("'sampbench %s --help' does not mention %s",
					 commands[c].name, want);
		}
	}
}

/* Every command: an unknown option, every option that takes a value given none, every
 * integer above its maximum and every number above its range: exit 2, one line. */
static void test_every_command_refuses_bad_options(void **state)
{
	(void)state;
	for (size_t c = 0; c < NCOMMANDS; c++) {
		const char *cmd = commands[c].name;
		char hint[128], flag[64], value[64];

		snprintf(hint, sizeof(hint), "unknown option '--bogus' (see 'sampbench %s --help')",
			 cmd);
		expect_cli_error(cmd, "--bogus", NULL, hint);
		for (const struct opt *o = commands[c].opts; o->kind != OPT_KIND_END; o++) {
			option_name(flag, sizeof(flag), o);
			if (o->kind == OPT_KIND_STRING || o->kind == OPT_KIND_INT ||
			    o->kind == OPT_KIND_DOUBLE || (o->kind == OPT_KIND_CALLBACK && o->arg)) {
				snprintf(hint, sizeof(hint), "option '%s' needs a value", flag);
				expect_cli_error(cmd, flag, NULL, hint);
			}
			if (o->kind == OPT_KIND_INT && o->max < LONG_MAX) {
				snprintf(value, sizeof(value), "%ld", o->max + 1);
				snprintf(hint, sizeof(hint), "%s must be between %ld and %ld", flag,
					 o->min, o->max);
				expect_cli_error(cmd, flag, value, hint);
			}
			if (o->kind == OPT_KIND_DOUBLE) {
				snprintf(value, sizeof(value), "%g", o->dmax * 2);
				snprintf(hint, sizeof(hint), "%s must be in (%g, %g]", flag, o->dmin,
					 o->dmax);
				expect_cli_error(cmd, flag, value, hint);
			}
		}
	}
}

/* opt_operands: counts inside [min, max] pass; too few or too many refused; max < 0 has
 * no limit. */
static void test_operands(void **state)
{
	char *argv[] = { "x", "a.h5", "b.h5", "c.h5", NULL };

	(void)state;
	assert_int_equal(opt_operands("x", argv, 1, 2, 1, 1, "FILE.h5"), 0);
	assert_int_equal(opt_operands("x", argv, 1, 1, 1, 1, "FILE.h5"), -1);  /* none */
	assert_int_equal(opt_operands("x", argv, 1, 3, 1, 1, "FILE.h5"), -1);  /* two */
	assert_int_equal(opt_operands("x", argv, 1, 4, 2, -1, "IN.h5"), 0);    /* no limit */
	assert_int_equal(opt_operands("x", argv, 1, 2, 2, -1, "IN.h5"), -1);
	assert_int_equal(opt_operands("x", argv, 4, 4, 0, 0, ""), 0);
	assert_int_equal(opt_operands("x", argv, 3, 4, 0, 0, ""), -1);
}

/* The operand errors through the binary: one line naming what is missing or extra. */
static void test_operand_errors(void **state)
{
	(void)state;
	expect_cli_error("show", NULL, NULL, "missing FILE.h5 (see 'sampbench show --help')");
	expect_cli_error("export", "a.h5", "b.h5", "unexpected argument 'b.h5'");
	expect_cli_error("list", "extra", NULL, "unexpected argument 'extra'");
}

int main(void)
{
	const char *b = getenv("BUILD");
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_stop_at_operand),
		cmocka_unit_test(test_help_request),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_missing_value),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_every_command_is_here),
		cmocka_unit_test(test_every_help_shows_its_table),
		cmocka_unit_test(test_every_command_refuses_bad_options),
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_operand_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
