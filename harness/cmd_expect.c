/* cmd_expect.c - `sampbench expect` and `sampbench margins`: a user's expectation file
 * (analysis/expect.h, docs/expect.md) judged on the runs of a results file, and margins
 * harvested from its repetitions; and the `--expect FILE` step of `run` and `exec`. */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/expect.h"
#include "harness/cli.h"
#include "harness/expect_step.h"
#include "results/h5io.h"

/* Checks that the expectation file at path reads (see expect_step.h). */
int expect_step_validate(const char *path)
{
	struct expect_set set;
	char err[512];

	if (expect_load(path, &set, err, sizeof(err)) < 0) {
		sb_err("%s", err);
		return -1;
	}
	expect_free(&set);
	return 0;
}

/* Runs fn on the expectation file and the runs of the results file. Returns the exit code:
 * fn's, or SB_EXIT_USAGE on a bad file. */
static int with_files(const char *expect_path, const char *h5_path,
		      int (*fn)(const struct expect_set *, const struct sb_run *, size_t))
{
	struct expect_set set;
	struct sb_run *runs = NULL;
	struct sb_host host;
	size_t n = 0;
	char err[512];
	int rc;

	if (expect_load(expect_path, &set, err, sizeof(err)) < 0) {
		sb_err("%s", err);
		return SB_EXIT_USAGE;
	}
	if (h5_read(h5_path, &host, &runs, &n, 1, err, sizeof(err)) < 0) {
		sb_err("%s", err);
		expect_free(&set);
		return SB_EXIT_USAGE;
	}
	rc = fn(&set, runs, n);
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
	expect_free(&set);
	return rc;
}

static int judge(const struct expect_set *set, const struct sb_run *runs, size_t n)
{
	char err[256];
	int failed = expect_report(stdout, set, runs, n, err, sizeof(err));

	if (failed < 0) {
		sb_err("%s", err);
		return SB_EXIT_FAIL;
	}
	return failed ? SB_EXIT_FAIL : SB_EXIT_OK;
}

static int margins(const struct expect_set *set, const struct sb_run *runs, size_t n)
{
	if (expect_margins(stdout, set, runs, n) < 0) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	return SB_EXIT_OK;
}

/* Judges the expectation file on runs in memory (see expect_step.h). */
int expect_step_runs(const char *expect_path, const struct sb_run *runs, size_t n)
{
	struct expect_set set;
	char err[512];

	if (expect_load(expect_path, &set, err, sizeof(err)) < 0) {
		sb_err("%s", err);
		return SB_EXIT_USAGE;
	}
	int rc = judge(&set, runs, n);
	expect_free(&set);
	return rc;
}

/* Judges the expectation file on a results file just written (see expect_step.h). */
int expect_step_run(const char *expect_path, const char *h5_path)
{
	printf("expectations %s on %s:\n", expect_path, h5_path);
	fflush(stdout);
	return with_files(expect_path, h5_path, judge);
}

static struct env {
	const char *expect;
} env;

const struct opt cmd_expect_options[] = {
	OPT_STRING('e', "expect", &env.expect, "FILE", "the expectation file (docs/expect.md)"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses `CMD --expect FILE FILE.h5`, printing usage_text at --help. Returns the index of
 * FILE.h5 in argv, or -1 with *rc the exit code. */
static int parse(const char *cmd, const char *usage_text, int argc, char **argv, int *rc)
{
	env.expect = NULL;
	int first = opt_parse(cmd, cmd_expect_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(usage_text, stdout);
		opt_help(stdout, cmd_expect_options);
		*rc = SB_EXIT_OK;
		return -1;
	}
	*rc = SB_EXIT_USAGE;
	if (first < 0 || opt_operands(cmd, argv, first, argc, 1, 1, "FILE.h5") != 0)
		return -1;
	if (!env.expect) {
		sb_err("%s needs --expect FILE", cmd);
		return -1;
	}
	return first;
}

/* `sampbench expect --expect FILE FILE.h5`. Returns the exit code: 1 when a check fails. */
int cmd_expect(int argc, char **argv)
{
	int rc, at = parse("expect", "usage: sampbench expect --expect FILE FILE.h5\n\n"
			   "Judges each expectation of FILE on each run of FILE.h5 it applies to:\n"
			   "measured vs expected within its margin (docs/expect.md). Exits 1 when one\n"
			   "fails, naming it, or when a sampler it applies to failed its run.\n\n",
			   argc, argv, &rc);
	return at < 0 ? rc : with_files(env.expect, argv[at], judge);
}

/* `sampbench margins --expect FILE FILE.h5`. Returns the exit code. */
int cmd_margins(int argc, char **argv)
{
	int rc, at = parse("margins", "usage: sampbench margins --expect FILE FILE.h5\n\n"
			   "Per sampler and expectation, over the runs of FILE.h5: the mean, the\n"
			   "standard deviation and a margin a re-run should stay within (the larger of\n"
			   "4 standard deviations and one run's counting noise, plus the mean's distance\n"
			   "from the expected value): docs/expect.md.\n\n",
			   argc, argv, &rc);
	return at < 0 ? rc : with_files(env.expect, argv[at], margins);
}
