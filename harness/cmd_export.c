/* cmd_export.c - `sampbench export`: a run's stacks as folded stacks, profile.proto,
 * speedscope JSON, the Firefox Profiler's format or a gperftools CPU profile
 * (analysis/export.h), written to a temp file and renamed into place. */
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
	int threads;
} env;

static const struct env env_defaults = { .run_id = -1 };

const struct opt cmd_export_options[] = {
	OPT_STRING('F', "format", &env.format, "FMT",
		   "folded: one 'root;...;leaf count' line per unique stack\n"
		   "(flamegraph.pl, speedscope); without --run, every run of the\n"
		   "file under a root frame naming the run\n"
		   "pprof: gzipped profile.proto with thread id and timestamp\n"
		   "labels (go tool pprof, pprof web UI, Pyroscope, Grafana)\n"
		   "speedscope: speedscope JSON, one profile per thread\n"
		   "firefox: Firefox Profiler processed format, one track per thread\n"
		   "gperftools: gperftools legacy CPU profile (google-pprof,\n"
		   "libprofiler readers)\n"
		   "gperftools-symbols: the same behind pprof's '--- symbol'\n"
		   "section, so 'google-pprof --text OUT' prints function names\n"
		   "all but folded need --run (or a file of one run)"),
	OPT_INTEGER('r', "run", &env.run_id, "ID", 0, LONG_MAX,
		    "run id (see 'sampbench show FILE.h5')"),
	OPT_BOOLEAN('m', "module", &env.module, "folded: name frames module!function"),
	OPT_BOOLEAN('T', "threads", &env.threads,
		    "folded: a root frame 'thread-0/TID' per sample with a tid"),
	OPT_STRING('o', "output", &env.output, "OUT",
		   "output file (default: standard output for folded)"),
	OPT_HELP(),
	OPT_END(),
};

static int64_t write_pprof(FILE *out, const struct sb_run *r, size_t n, unsigned flags)
{
	(void)n, (void)flags;
	return export_pprof(out, r);
}

static int64_t write_speedscope(FILE *out, const struct sb_run *r, size_t n, unsigned flags)
{
	(void)n, (void)flags;
	return export_speedscope(out, r);
}

static int64_t write_firefox(FILE *out, const struct sb_run *r, size_t n, unsigned flags)
{
	(void)n, (void)flags;
	return export_firefox(out, r);
}

static int64_t write_gperftools(FILE *out, const struct sb_run *r, size_t n, unsigned flags)
{
	(void)n, (void)flags;
	return export_gperftools(out, r, 0);
}

static int64_t write_gperftools_symbols(FILE *out, const struct sb_run *r, size_t n,
					unsigned flags)
{
	(void)n, (void)flags;
	return export_gperftools(out, r, 1);
}

/* The formats: a new one is a writer and a line here. */
static const struct format {
	const char *name;
	int64_t (*write)(FILE *out, const struct sb_run *runs, size_t n, unsigned flags);
	int several_runs; /* takes every run of a file at once */
	int binary;       /* needs -o */
} formats[] = {
	{ "folded", export_folded, 1, 0 },
	{ "pprof", write_pprof, 0, 1 },
	{ "speedscope", write_speedscope, 0, 0 },
	{ "firefox", write_firefox, 0, 0 },
	{ "gperftools", write_gperftools, 0, 1 },
	{ "gperftools-symbols", write_gperftools_symbols, 0, 1 },
};

#define FORMAT_NAMES "folded, pprof, speedscope, firefox, gperftools or gperftools-symbols"

/* The runs to export: run run_id of runs (-1: all of them, which fmt must allow) into
 * *sel and *nsel. Returns 0, or -1 after one error line. */
static int select_runs(struct sb_run *runs, size_t nruns, long run_id, const struct format *fmt,
		       const char *input, struct sb_run **sel, size_t *nsel)
{
	*sel = runs;
	*nsel = nruns;
	if (run_id >= 0) {
		for (*nsel = 0; *nsel < nruns && runs[*nsel].run_id != run_id; (*nsel)++)
			;
		if (*nsel == nruns) {
			sb_err("no run %ld in %s (see 'sampbench show %s')", run_id, input, input);
			return -1;
		}
		*sel = &runs[*nsel];
		*nsel = 1;
	} else if (nruns == 0) {
		sb_err("no runs in %s", input);
		return -1;
	} else if (!fmt->several_runs && nruns > 1) {
		sb_err("%s holds %zu runs, pick one with --run", input, nruns);
		return -1;
	}
	return 0;
}

/* Writes sel[0..nsel) in fmt to output (NULL or "-": standard output; a file is replaced
 * whole or not at all). Returns SB_EXIT_OK, or SB_EXIT_FAIL after one error line. */
static int write_export(const struct format *fmt, const struct sb_run *sel, size_t nsel,
			unsigned flags, const char *output)
{
	struct atomic_file af = { 0 };
	int to_file = output && strcmp(output, "-") != 0, ret = SB_EXIT_FAIL;
	FILE *out = to_file ? atomic_file_open(&af, output) : stdout;

	if (!out) {
		sb_err("cannot create %s: %s", output, strerror(errno));
		goto cleanup;
	}
	int64_t written = fmt->write(out, sel, nsel, flags);
	if (written < 0 || fflush(out) != 0 || ferror(out)) {
		sb_err("cannot write %s: %s", to_file ? output : "standard output", strerror(errno));
		goto cleanup;
	}
	if (to_file && atomic_file_commit(&af) != 0) { /* af owns out */
		sb_err("cannot write %s: %s", output, strerror(errno));
		goto cleanup;
	}
	ret = SB_EXIT_OK;
cleanup:
	atomic_file_abort(&af); /* a no-op after the commit */
	return ret;
}

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
	const struct format *fmt = NULL;
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
	if (env.threads)
		flags |= EXPORT_THREAD;
	if (opt_operands("export", argv, first, argc, 1, 1, "input FILE.h5") != 0)
		return SB_EXIT_USAGE;
	input = argv[first];
	if (!format) {
		sb_err("missing --format (" FORMAT_NAMES ")");
		return SB_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(format, formats[i].name) == 0)
			fmt = &formats[i];
	if (!fmt) {
		sb_err("unknown format '%s' (" FORMAT_NAMES ")", format);
		return SB_EXIT_USAGE;
	}
	if (fmt->binary && !output) {
		sb_err("--format %s needs -o FILE (the profile is binary)", format);
		return SB_EXIT_USAGE;
	}
	if (h5_read(input, &host, &runs, &nruns, 1, err, sizeof(err)) < 0) {
		sb_err("cannot read %s: %s", input, err);
		return SB_EXIT_USAGE;
	}

	if (select_runs(runs, nruns, run_id, fmt, input, &sel, &nsel) == 0) {
		if (fmt->several_runs && nsel > 1)
			flags |= EXPORT_LABEL;
		ret = write_export(fmt, sel, nsel, flags, output);
	}
	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	return ret;
}
