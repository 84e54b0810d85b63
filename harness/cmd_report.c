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

#include "../platform/platform.h"
#include "cli.h"

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
	"each cell across the hosts, side by side. Needs " PYTHON " with python3-h5py, python3-numpy and\n"
	"python3-matplotlib; set SAMPBENCH_ROOT to the source tree if the script is not found.\n"
	"\n"
	"  -o, --output DIR         output directory (created; index.html replaced)\n"
	"  --history FILE.h5...     add a History section: `sampbench history` of these files\n"
	"                           (metrics per cell over the commits, the gate's verdicts),\n"
	"                           its table and DIR/history.svg; takes the rest of the line\n"
	"  --history-metric LIST    its metrics (default: suspend_window_p50_ns,\n"
	"                           suspend_window_p99_ns)\n"
	"  -h, --help               this help\n";

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

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return SB_EXIT_OK;
		}
	}
	if (access(PYTHON, X_OK) != 0) {
		sb_err("%s not found: install python3, python3-h5py, python3-numpy and "
		       "python3-matplotlib (make deps)", PYTHON);
		return SB_EXIT_FAIL;
	}
	if (find_script(script, sizeof(script)) < 0) {
		sb_err("report script %s not found (set SAMPBENCH_ROOT to the source tree)",
		       getenv("SAMPBENCH_ROOT") && *getenv("SAMPBENCH_ROOT") ? script : SCRIPT);
		return SB_EXIT_FAIL;
	}
	args = calloc((size_t)argc + 3, sizeof(*args));
	if (!args) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	args[0] = "python3";
	args[1] = "-B"; /* no __pycache__ in the source tree */
	args[2] = script;
	for (int i = 1; i < argc; i++)
		args[i + 2] = argv[i];
	setenv("MPLBACKEND", "Agg", 1);
	/* the History section runs this binary's `history` */
	char exe[PATH_MAX];
	if (plat_self_exe(exe, sizeof(exe)) > 0)
		setenv("SAMPBENCH_BIN", exe, 1);
	fflush(NULL);
	execv(PYTHON, args);
	sb_err("cannot run %s: %s", PYTHON, strerror(errno));
	free(args);
	return SB_EXIT_FAIL;
}
