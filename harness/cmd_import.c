/* cmd_import.c - `sampbench import`: reads a profile another tool wrote
 * (analysis/import.h) and prints its samples as folded stacks, so any supported format can
 * be checked, compared or turned into a flame graph. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export.h"
#include "analysis/import.h"
#include "core/atomic_file.h"
#include "harness/cli.h"
#include "harness/expect_step.h"

static const char usage_text[] =
	"usage: sampbench import [-F FMT] FILE [-T] [-s] [-o OUT]   (FILE - : standard input)\n"
	"\n"
	"Reads a profile another tool wrote and prints its samples as folded stacks (one\n"
	"'root;...;leaf count' line per unique stack, sorted). A file that is not what it\n"
	"claims is one error line and exit 2.\n"
	"\n";

static struct env {
	const char *format;
	const char *output;
	int threads;
	int summary;
	const char *expect;
} env;

const struct opt cmd_import_options[] = {
	OPT_STRING('F', "format", &env.format, "FMT",
		   "pprof, perf-script, folded, speedscope, firefox, gperftools or\n"
		   "sysprof (default: told by the file's first bytes)"),
	OPT_BOOLEAN('T', "threads", &env.threads,
		    "a root frame 'thread-0/TID' per sample with a thread id"),
	OPT_BOOLEAN('s', "summary", &env.summary,
		    "print 'samples N threads T frames F' instead of the stacks"),
	OPT_STRING('o', "output", &env.output, "OUT", "output file (default: standard output)"),
	OPT_STRING('e', "expect", &env.expect, "FILE",
		   "judge the expectations of FILE on the profile instead (docs/expect.md):\n"
		   "exit 1 when one fails"),
	OPT_HELP(),
	OPT_END(),
};

/* `sampbench import`: see usage_text. */
int cmd_import(int argc, char **argv)
{
	const struct import_format *fmt = NULL;
	struct atomic_file af = { 0 };
	struct sb_run run = { 0 };
	unsigned char *buf = NULL;
	size_t len = 0;
	char err[512];
	FILE *out = NULL;
	int to_file = 0, ret = SB_EXIT_USAGE;

	memset(&env, 0, sizeof(env));
	int first = opt_parse("import", cmd_import_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(usage_text, stdout);
		opt_help(stdout, cmd_import_options);
		return SB_EXIT_OK;
	}
	if (first < 0 || opt_operands("import", argv, first, argc, 1, 1, "profile FILE") != 0)
		return SB_EXIT_USAGE;
	const char *input = argv[first];
	if (env.format && !(fmt = import_format_find(env.format))) {
		sb_err("unknown format '%s' (pprof, perf-script, folded, speedscope, firefox, "
		       "gperftools or sysprof)", env.format);
		return SB_EXIT_USAGE;
	}
	if (!(buf = import_read_file(input, fmt ? fmt->max_bytes : IMPORT_MAX_FILE, &len, err,
			      sizeof(err)))) {
		sb_err("%s", err);
		return SB_EXIT_USAGE;
	}
	if (!fmt && !(fmt = import_detect(buf, len))) {
		sb_err("cannot tell the format of '%s' (give --format)", input);
		goto cleanup;
	}
	if (import_buffer(fmt, buf, len, &run, err, sizeof(err)) < 0) {
		sb_err("cannot import '%s' as %s: %s", input, fmt->name, err);
		goto cleanup;
	}
	if (env.expect) {
		ret = expect_step_runs(env.expect, &run, 1);
		goto cleanup;
	}
	ret = SB_EXIT_FAIL;
	to_file = env.output && strcmp(env.output, "-") != 0;
	out = to_file ? atomic_file_open(&af, env.output) : stdout;
	if (!out) {
		sb_err("cannot create %s: %s", env.output, strerror(errno));
		goto cleanup;
	}
	int64_t written = 0;
	if (env.summary) {
		size_t nthreads = 0;
		int32_t *tids = export_tids(&run, &nthreads);
		if (tids && nthreads && tids[0] < 0)
			nthreads--;
		free(tids);
		written = tids ? fprintf(out, "samples %zu threads %zu frames %zu\n", run.nsamples,
					 nthreads, run.nsymbols) : -1;
	} else {
		written = export_folded(out, &run, 1, env.threads ? EXPORT_THREAD : 0);
	}
	if (written < 0 || fflush(out) != 0 || ferror(out)) {
		sb_err("cannot write %s: %s", to_file ? env.output : "standard output",
		       strerror(errno));
		goto cleanup;
	}
	if (to_file) {
		out = NULL; /* af owns it */
		if (atomic_file_commit(&af) != 0) {
			sb_err("cannot write %s: %s", env.output, strerror(errno));
			goto cleanup;
		}
	}
	ret = SB_EXIT_OK;
cleanup:
	atomic_file_abort(&af);
	run_free(&run);
	free(buf);
	return ret;
}
