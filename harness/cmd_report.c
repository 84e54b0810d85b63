/* cmd_report.c - `sampbench report`: runs analysis/report.py (Python, matplotlib) with the
 * system interpreter. The script is found through $SAMPBENCH_ROOT, then next to the
 * binary (build/sampbench -> analysis/report.py), then in the current directory. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/cli.h"
#include "platform/platform.h"

#define PYTHON "/usr/bin/python3"
#define SCRIPT "analysis/report.py"

static const char usage_text[] =
	"usage: sampbench report FILE.h5 [FILE.h5...] -o DIR [--history-metric M[,M...]]\n"
	"                        [--history FILE.h5...]\n"
	"\n"
	"Writes DIR/index.html and its PNG images: accuracy of every sampler in the files\n"
	"(rate, magnitude, threads, suspend latency, overhead) against the truth and against\n"
	"gperftools, with findings computed from the data. Several files are merged (e.g. one\n"
	"per thread count). Runs of several hosts (a merged file) add a section comparing\n"
	"each cell across the hosts, side by side. Needs " PYTHON " with python3-h5py,\n"
	"python3-numpy and python3-matplotlib; set SAMPBENCH_ROOT to the source tree if the\n"
	"script is not found.\n"
	"\n";

static struct env {
	const char *output;
	const char *history;
	const char *history_metric;
} env;

static const struct env env_defaults = { 0 };

/* Checked here, so that a bad option is refused before Python starts; the script parses
 * the command line again (it checks -o and the files itself; --history takes the rest of
 * the line there). */
const struct opt cmd_report_options[] = {
	OPT_STRING('o', "output", &env.output, "DIR",
		   "output directory (created; index.html replaced)"),
	OPT_STRING(0, "history", &env.history, "FILE.h5...",
		   "add a History section: `sampbench history` of these files\n"
		   "(metrics per cell over the commits, the gate's verdicts),\n"
		   "its table and DIR/history.svg; takes the rest of the line"),
	OPT_STRING(0, "history-metric", &env.history_metric, "LIST",
		   "its metrics (default: suspend_window_p50_ns,\nsuspend_window_p99_ns)"),
	OPT_HELP(),
	OPT_END(),
};

/* Finds SCRIPT: $SAMPBENCH_ROOT, the binary's parent and grandparent directories, ".". */
static int find_script(char *out, size_t len)
{
	const char *root = getenv("SAMPBENCH_ROOT");
	char exe[PATH_MAX], dir[PATH_MAX];
	ssize_t n;

	if (root && *root) {
		snprintf(out, len, "%s/%s", root, SCRIPT);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	n = plat_self_exe(exe, sizeof(exe));
	if (n > 0) {
		snprintf(dir, sizeof(dir), "%s", dirname(exe));
		for (int up = 0; up < 2; up++) {
			snprintf(out, len, "%s/%s", dir, SCRIPT);
			if (access(out, R_OK) == 0)
				return 0;
			char *parent = dirname(dir);
			memmove(dir, parent, strlen(parent) + 1);
		}
	}
	snprintf(out, len, "%s", SCRIPT);
	return access(out, R_OK) == 0 ? 0 : -1;
}

/* `sampbench report`: see usage_text. Checks the interpreter and script, then execs. */
int cmd_report(int argc, char **argv)
{
	char script[PATH_MAX + 32];
	char **args;
	int rc = SB_EXIT_FAIL;

	/* Python gets the command line as typed: getopt_long permutes argv, which would move
	 * the main files behind `--history FILE...` (that option takes the rest of the line) */
	args = calloc((size_t)argc + 3, sizeof(*args));
	if (!args) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	for (int i = 1; i < argc; i++)
		args[i + 2] = argv[i];
	env = env_defaults;
	int first = opt_parse("report", cmd_report_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(usage_text, stdout);
		opt_help(stdout, cmd_report_options);
		rc = SB_EXIT_OK;
		goto cleanup;
	}
	if (first < 0) {
		rc = SB_EXIT_USAGE;
		goto cleanup;
	}
	if (access(PYTHON, X_OK) != 0) {
		sb_err("%s not found: install python3, python3-h5py, python3-numpy and "
		       "python3-matplotlib (make deps)", PYTHON);
		goto cleanup;
	}
	if (find_script(script, sizeof(script)) < 0) {
		sb_err("report script %s not found (set SAMPBENCH_ROOT to the source tree)",
		       getenv("SAMPBENCH_ROOT") && *getenv("SAMPBENCH_ROOT") ? script : SCRIPT);
		goto cleanup;
	}
	args[0] = "python3";
	args[1] = "-B"; /* no __pycache__ in the source tree */
	args[2] = script;
	setenv("MPLBACKEND", "Agg", 1);
	/* the History section runs this binary's `history` */
	char exe[PATH_MAX];
	if (plat_self_exe(exe, sizeof(exe)) > 0)
		setenv("SAMPBENCH_BIN", exe, 1);
	fflush(NULL);
	execv(PYTHON, args);
	sb_err("cannot run %s: %s", PYTHON, strerror(errno));
cleanup:
	free(args);
	return rc;
}
