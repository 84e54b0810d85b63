/* cmd_bench.c - `sampbench bench`: runs one profile of the bench matrix (ci/matrix) into one
 * HDF5 file, with progress, and prints the table of runs. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "matrix.h"
#include "session.h"
#include "show.h"

#define BENCH_RUN_OVERHEAD_S 0.3 /* fork, sink, metrics, HDF5 per run: the ETA's prior */
#define BENCH_BAR_WIDTH 24

static const char bench_usage[] =
	"usage: sampbench bench [--profile NAME] [--matrix FILE] [-o FILE.h5] [--force]\n"
	"\n"
	"Runs a profile of the bench matrix (samplers x workloads x threads x hz x\n"
	"repetitions, each run in its own child under the watchdog) into FILE.h5 and prints\n"
	"the table of runs. A failed run is recorded and the bench goes on; Ctrl-C stops and\n"
	"keeps the runs done so far (the file is marked incomplete). Progress goes to stderr:\n"
	"a bar with an ETA on a terminal, one line per finished cell otherwise.\n"
	"\n"
	"  -p, --profile NAME   profile of the matrix (default: default)\n"
	"  -m, --matrix FILE    matrix config (default: ci/matrix; format in docs/gate.md)\n"
	"  -o, --output FILE    output (default: results/runs/<UTC time>.h5)\n"
	"  -f, --force          overwrite FILE if it exists\n"
	"  -n, --dry-run        print the runs and the expected time, run nothing\n"
	"  -h, --help           this help\n"
	"\n"
	"Exit: 0 every run ok or skipped, 1 a run failed, 2 bad input, 130 interrupted.\n";

static struct env {
	const char *profile;
	const char *matrix;
	const char *out;
	int force;
	int dry_run;
} env;

static const struct env env_defaults = {
	.profile = "default",
	.matrix = "ci/matrix",
};

/* Progress state shared with the session hook. */
struct progress {
	int tty;
	uint64_t start_ns;
	double total_s, done_s; /* expected seconds of all runs / of the finished ones */
	size_t group_start;     /* first spec of the current cell group */
	int group_failed, group_skipped;
};

static double expected_s(const struct run_spec *s)
{
	return s->duration_s + BENCH_RUN_OVERHEAD_S;
}

static int same_group(const struct run_spec *a, const struct run_spec *b)
{
	return a->workload == b->workload && a->threads == b->threads && a->hz == b->hz &&
	       a->duration_s == b->duration_s;
}

static void fmt_duration(char *buf, size_t len, double s)
{
	if (!(s >= 0) || s > 360000)
		snprintf(buf, len, "?");
	else if (s >= 60)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%ds", (int)s);
}

/* Seconds left: the expected time still to run, scaled by how fast the expectation has
 * proved so far. */
static double eta_s(const struct progress *pg, double elapsed)
{
	if (pg->done_s <= 0)
		return pg->total_s;
	return (pg->total_s - pg->done_s) * elapsed / pg->done_s;
}

static void bench_hook(void *arg, size_t i, size_t n, const struct run_spec *spec,
		       const struct sb_run *r)
{
	struct progress *pg = arg;
	double elapsed = (double)(sb_now_ns() - pg->start_ns) / 1e9;
	char eta[32], el[32];

	if (!r) { /* about to run spec i */
		if (!pg->tty)
			return;
		int fill = (int)((double)i * BENCH_BAR_WIDTH / (double)n);
		char bar[BENCH_BAR_WIDTH + 1];
		for (int k = 0; k < BENCH_BAR_WIDTH; k++)
			bar[k] = k < fill ? '#' : '-';
		bar[BENCH_BAR_WIDTH] = 0;
		fmt_duration(eta, sizeof(eta), eta_s(pg, elapsed));
		fprintf(stderr, "\r[%s] %zu/%zu  %s %dt %gHz: %s rep %d  ETA %s\033[K", bar, i, n,
			spec->workload->name, spec->threads, spec->hz, spec->sampler->name,
			spec->repetition, eta);
		fflush(stderr);
		return;
	}
	pg->done_s += expected_s(spec);
	pg->group_failed += r->status == SB_RUN_FAILED;
	pg->group_skipped += r->status == SB_RUN_SKIPPED;
	if (i + 1 < n && same_group(spec + 1, spec))
		return;
	/* the cell group (workload, threads, hz) is finished */
	if (!pg->tty) {
		fmt_duration(eta, sizeof(eta), eta_s(pg, elapsed));
		fmt_duration(el, sizeof(el), elapsed);
		fprintf(stderr, "bench: [%zu/%zu runs] %s %dt %gHz done: %zu runs, %d failed, "
			"%d skipped (%s elapsed, ETA %s)\n", i + 1, n, spec->workload->name,
			spec->threads, spec->hz, i + 1 - pg->group_start, pg->group_failed,
			pg->group_skipped, el, eta);
	} else if (pg->group_failed) {
		fprintf(stderr, "\r\033[K%s %dt %gHz: %d runs failed\n", spec->workload->name,
			spec->threads, spec->hz, pg->group_failed);
	}
	pg->group_start = i + 1;
	pg->group_failed = pg->group_skipped = 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "matrix", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	env = env_defaults;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:m:o:fnh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': env.profile = optarg; break;
		case 'm': env.matrix = optarg; break;
		case 'o': env.out = optarg; break;
		case 'f': env.force = 1; break;
		case 'n': env.dry_run = 1; break;
		case 'h': return 1;
		default: /* ':' missing value, '?' unknown option */
			sb_getopt_error(c, argv, "bench");
			return -1;
		}
	}
	if (optind < argc) {
		sb_err("unexpected argument '%s' (see 'sampbench bench --help')", argv[optind]);
		return -1;
	}
	return 0;
}

/* results/runs/<UTC>.h5, creating results/runs when needed. */
static int default_output(char *buf, size_t len)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if ((mkdir("results", 0777) != 0 && errno != EEXIST) ||
	    (mkdir("results/runs", 0777) != 0 && errno != EEXIST)) {
		sb_err("cannot create results/runs: %s", strerror(errno));
		return -1;
	}
	snprintf(buf, len, "results/runs/%s.h5", stamp);
	return 0;
}

/* The bench's `run`s in the order they will execute, and the expected total. */
static void print_plan(const struct run_spec *specs, size_t n, double total_s)
{
	char t[32];
	for (size_t i = 0; i < n; i++)
		printf("%-14s %-10s %3d %6g %3d %5gs\n", specs[i].sampler->name,
		       specs[i].workload->name, specs[i].threads, specs[i].hz,
		       specs[i].repetition, specs[i].duration_s);
	fmt_duration(t, sizeof(t), total_s);
	printf("%zu runs, about %s\n", n, t);
}

int cmd_bench(int argc, char **argv)
{
	struct mx_matrix *m = NULL;
	struct run_spec *specs = NULL;
	struct sb_run *runs = NULL;
	size_t nruns = 0;
	char err[512], out[256];
	int rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(bench_usage, stdout);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;

	m = malloc(sizeof(*m));
	if (!m) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	if (matrix_load(env.matrix, m, err, sizeof(err)) != 0) {
		sb_err("%s", err);
		goto cleanup;
	}
	long n = matrix_specs(m, env.profile, &specs, err, sizeof(err));
	if (n < 0) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	if (n == 0) {
		sb_err("%s in '%s'", err, env.matrix);
		goto cleanup;
	}
	struct progress pg = { .tty = isatty(STDERR_FILENO), .start_ns = sb_now_ns() };
	for (long i = 0; i < n; i++)
		pg.total_s += expected_s(&specs[i]);
	if (env.dry_run) {
		print_plan(specs, (size_t)n, pg.total_s);
		rc = SB_EXIT_OK;
		goto cleanup;
	}
	if (env.out) {
		snprintf(out, sizeof(out), "%s", env.out);
	} else if (default_output(out, sizeof(out)) != 0) {
		goto cleanup;
	}

	char total[32];
	fmt_duration(total, sizeof(total), pg.total_s);
	fprintf(stderr, "bench: profile '%s' of %s: %ld runs, about %s, into %s\n", env.profile,
		env.matrix, n, total, out);
	struct session_opts so = {
		.out_path = out,
		.force = env.force,
		.quiet = 1,
		.hook = bench_hook,
		.hook_arg = &pg,
	};
	rc = session_run(&so, specs, (size_t)n, &runs, &nruns);
	if (pg.tty)
		fprintf(stderr, "\r\033[K");
	if (rc != SB_EXIT_USAGE && nruns > 0) {
		show_table(stdout, runs, nruns);
		printf("wrote %s (%zu runs)\n", out, nruns);
	}
cleanup:
	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	free(specs);
	free(m);
	return rc;
}
