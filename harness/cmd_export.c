/* cmd_export.c - `sampbench export`: a run's stacks as folded stacks or a gperftools CPU
 * profile (analysis/export.h), written to a temp file and renamed into place. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/export.h"
#include "core/atomic_file.h"
#include "harness/cli.h"
#include "results/h5io.h"

static const char usage_text[] =
	"usage: sampbench export --format FMT FILE.h5 [--run ID] [-o OUT]\n"
	"\n"
	"Writes the stacks of a run in another profiler's format, symbolized from the run's\n"
	"symbols table (the profiled binary is not needed).\n"
	"\n";

static struct env {
	const char *format;
	const char *output;
	long run_id; /* -1: every run */
	int module;
} env;

static const struct env env_defaults = { .run_id = -1 };

const struct opt cmd_export_options[] = {
	OPT_STRING('F', "format", &env.format, "FMT",
		   "folded: one 'root;...;leaf count' line per unique stack\n"
		   "(flamegraph.pl, speedscope); without --run, every run of the\n"
		   "file under a root frame naming the run\n"
		   "pprof: gperftools legacy CPU profile (google-pprof, libprofiler\n"
		   "readers); needs --run (or a file of one run) and -o\n"
		   "pprof-symbols: the same behind pprof's '--- symbol' section, so\n"
		   "'google-pprof --text OUT' prints function names"),
	OPT_INTEGER('r', "run", &env.run_id, "ID", 0, LONG_MAX,
		    "run id (see 'sampbench show FILE.h5')"),
	OPT_BOOLEAN('m', "module", &env.module, "folded: name frames module!function"),
	OPT_STRING('o', "output", &env.output, "OUT",
		   "output file (default: standard output for folded)"),
	OPT_HELP(),
	OPT_END(),
};

enum format { FMT_FOLDED, FMT_PPROF, FMT_PPROF_SYMBOLS };

/* `sampbench export`: see usage_text. */
int cmd_export(int argc, char **argv)
{
	const char *format, *output, *input;
	long run_id;
	unsigned flags = 0;
	struct sb_host host;
	struct sb_run *runs = NULL, *sel;
	size_t nruns = 0, nsel;
	char err[512];
	struct atomic_file af = { 0 };
	int to_file = 0;
	FILE *out = NULL;
	int64_t written;
	enum format fmt;
	int ret = SB_EXIT_USAGE;

	env = env_defaults;
	int first = opt_parse("export", cmd_export_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(usage_text, stdout);
		opt_help(stdout, cmd_export_options);
		return SB_EXIT_OK;
	}
	if (first < 0)
		return SB_EXIT_USAGE;
	format = env.format;
	output = env.output;
	run_id = env.run_id;
	if (env.module)
		flags |= EXPORT_MODULE;
	if (opt_operands("export", argv, first, argc, 1, 1, "input FILE.h5") != 0)
		return SB_EXIT_USAGE;
	input = argv[first];
	if (!format) {
		sb_err("missing --format (folded, pprof or pprof-symbols)");
		return SB_EXIT_USAGE;
	}
	if (strcmp(format, "folded") == 0)
		fmt = FMT_FOLDED;
	else if (strcmp(format, "pprof") == 0)
		fmt = FMT_PPROF;
	else if (strcmp(format, "pprof-symbols") == 0)
		fmt = FMT_PPROF_SYMBOLS;
	else {
		sb_err("unknown format '%s' (folded, pprof or pprof-symbols)", format);
		return SB_EXIT_USAGE;
	}
	if (fmt != FMT_FOLDED && !output) {
		sb_err("--format %s needs -o FILE (the profile is binary)", format);
		return SB_EXIT_USAGE;
	}
	if (h5_read(input, &host, &runs, &nruns, 1, err, sizeof(err)) < 0) {
		sb_err("cannot read %s: %s", input, err);
		return SB_EXIT_USAGE;
	}

	sel = runs;
	nsel = nruns;
	if (run_id >= 0) {
		for (nsel = 0; nsel < nruns && runs[nsel].run_id != run_id; nsel++)
			;
		if (nsel == nruns) {
			sb_err("no run %ld in %s (see 'sampbench show %s')", run_id, input, input);
			goto cleanup;
		}
		sel = &runs[nsel];
		nsel = 1;
	} else if (nruns == 0) {
		sb_err("no runs in %s", input);
		goto cleanup;
	} else if (fmt != FMT_FOLDED && nruns > 1) {
		sb_err("%s holds %zu runs, pick one with --run", input, nruns);
		goto cleanup;
	}
	if (fmt == FMT_FOLDED && nsel > 1)
		flags |= EXPORT_LABEL;

	ret = SB_EXIT_FAIL;
	to_file = output && strcmp(output, "-") != 0;
	out = to_file ? atomic_file_open(&af, output) : stdout;
	if (!out) {
		sb_err("cannot create %s: %s", output, strerror(errno));
		goto cleanup;
	}
	if (fmt == FMT_FOLDED)
		written = export_folded(out, sel, nsel, flags);
	else
		written = export_pprof(out, sel, fmt == FMT_PPROF_SYMBOLS);
	if (written < 0 || fflush(out) != 0 || ferror(out)) {
		sb_err("cannot write %s: %s", to_file ? output : "standard output", strerror(errno));
		goto cleanup;
	}
	if (to_file) {
		out = NULL; /* af owns it */
		if (atomic_file_commit(&af) != 0) {
			sb_err("cannot write %s: %s", output, strerror(errno));
			goto cleanup;
		}
	}
	ret = SB_EXIT_OK;
cleanup:
	atomic_file_abort(&af); /* a no-op after the commit */
	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	return ret;
}
