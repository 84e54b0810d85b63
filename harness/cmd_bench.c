/* cmd_bench.c - `sampbench bench`: runs one profile of the bench matrix (ci/matrix) into one
 * HDF5 file, with progress, and prints the table of runs. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "harness/ab.h"
#include "harness/cli.h"
#include "harness/matrix.h"
#include "harness/session.h"
#include "harness/show.h"
#include "harness/tool.h"
#include "results/h5io.h"
#include "sampler/plugin.h"
#include "version.h"

#define BENCH_RUN_OVERHEAD_S 0.3 /* fork, sink, metrics, HDF5 per run: the ETA's prior */
#define BENCH_BAR_WIDTH 24

static const char bench_usage[] =
	"usage: sampbench bench [--profile NAME] [--matrix FILE] [-o FILE.h5] [--force]\n"
	"                       [--ab REV | --sampler A,B] [--shard K/N]\n"
	"                       [--resume FILE.h5.tmp]\n"
	"\n"
	"Runs a profile of the bench matrix (samplers x workloads x threads x hz x\n"
	"repetitions, each run in its own child under the watchdog) into FILE.h5 and prints\n"
	"the table of runs. A failed run is recorded and the bench goes on; Ctrl-C stops and\n"
	"keeps the runs done so far (the file is marked incomplete). Progress goes to stderr:\n"
	"a bar with an ETA on a terminal, one line per finished cell otherwise.\n"
	"\n";

/* After the options. */
static const char bench_exit[] =
	"\n"
	"Exit: 0 every run ok or skipped, 1 a run failed, 2 bad input, 130 interrupted.\n";

static struct env {
	const char *profile;
	const char *matrix;
	const char *out;
	int force;
	int dry_run;
	const char *ab;
	const char *shard;
	const char *resume;
	const char *pair;
	int profile_set;
} env;

static const struct env env_defaults = {
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
	pg->group_failed += r->status == SB_RUN_FAILED || r->status == SB_RUN_INCOMPLETE;
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

const struct opt cmd_bench_options[] = {
	OPT_STRING('p', "profile", &env.profile, "NAME", "profile of the matrix (default: default)"),
	OPT_STRING('m', "matrix", &env.matrix, "FILE",
		   "matrix config (default: ci/matrix; format in docs/gate.md)"),
	OPT_STRING('o', "output", &env.out, "FILE",
		   "output (default: results/runs/<UTC time>.h5)"),
	OPT_BOOLEAN('f', "force", &env.force, "overwrite FILE if it exists"),
	OPT_BOOLEAN('n', "dry-run", &env.dry_run, "print the runs and the expected time, run nothing"),
	OPT_STRING(0, "ab", &env.ab, "REV",
		   "same-run A/B: build REV in a temporary git worktree and run\n"
		   "it (B, the candidate) right after this build (A, the\n"
		   "reference) for every run; the gate compares B with A"),
	OPT_STRING('s', "sampler", &env.pair, "A,B",
		   "A/B of two samplers (e.g. two builds of a plugin,\n"
		   "./old.so,./new.so): each cell of the profile runs `none`,\n"
		   "A and B in place of the profile's samplers"),
	OPT_STRING(0, "shard", &env.shard, "K/N",
		   "run part K of N of the profile (whole cells, with their\n"
		   "`none` reference); `sampbench merge` joins the parts"),
	OPT_STRING(0, "resume", &env.resume, "FILE",
		   "continue the bench whose FILE.h5.tmp a kill left behind,\n"
		   "skipping its runs; refused for another matrix or revision"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	int first = opt_parse("bench", cmd_bench_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (opt_operands("bench", argv, first, argc, 0, 0, "") != 0)
		return -1;
	/* the profile the --resume file records, unless one is given */
	env.profile_set = env.profile != NULL;
	if (!env.profile)
		env.profile = "default";
	if (env.ab && env.pair) {
		sb_err("--ab and --sampler exclude each other (one A/B at a time)");
		return -1;
	}
	if (env.resume && env.out) {
		sb_err("--resume and --output exclude each other (the output is FILE without .tmp)");
		return -1;
	}
	if (env.resume && (strlen(env.resume) < 8 ||
			   strcmp(env.resume + strlen(env.resume) - 7, ".h5.tmp"))) {
		sb_err("--resume wants the FILE.h5.tmp of an interrupted bench, got '%s'",
		       env.resume);
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
	int w = run_name_width(specs, n);
	for (size_t i = 0; i < n; i++)
		printf("%-*s %-10s %3d %6g %3d %5gs\n", w, specs[i].sampler->name,
		       specs[i].workload->name, specs[i].threads, specs[i].hz,
		       specs[i].repetition, specs[i].duration_s);
	fmt_duration(t, sizeof(t), total_s);
	printf("%zu runs, about %s\n", n, t);
}

/* The matrix identity written as root attributes and checked by --resume and merge. */
struct identity {
	char digest[17];
	char runs[24];
	char shard[24];
	char ab[48];
};

/* Checks that the interrupted file tmp was written by this very bench: same matrix digest,
 * profile, shard, candidate and revision. Returns 0, or -1 after one line on stderr. */
static int check_resume(const char *tmp, const struct identity *id)
{
	static const char *names[] = { "matrix_digest", "matrix_profile", "shard", "ab_rev",
				       "git_rev" };
	const char *want[] = { id->digest, env.profile, id->shard, id->ab, SB_GIT_REV };
	char got[128], err[512];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		int rc = h5_read_attr(tmp, names[i], got, sizeof(got), err, sizeof(err));
		if (rc < 0) {
			sb_err("%s", err);
			return -1;
		}
		if (strcmp(got, want[i])) {
			sb_err("cannot resume '%s': it is another bench (%s '%s', this one '%s')", tmp,
			       names[i], rc ? "(none)" : got, want[i]);
			return -1;
		}
	}
	return 0;
}

/* What the A/B runner needs: the candidate build (--ab) or each run id's variant
 * (--sampler A,B). */
struct ab_ctx {
	const struct ab_build *build;
	const char *variant_of; /* by run id: 0 none (the shared reference), 'A', 'B' */
};

static int ab_runner(void *arg, size_t i, const struct run_spec *spec, int64_t id,
		     struct sb_run *r)
{
	const struct ab_ctx *ctx = arg;
	char v;

	(void)i;
	if (ctx->build) {
		/* each spec runs twice in a row (ids 2k, 2k+1): the reference first on even
		 * repetitions, the candidate first on odd ones (A B, B A, ...), so that whatever
		 * favours the first or the second run of a pair (a load that builds up, caches
		 * the first one warms) does not fall on one build every time */
		if ((id % 2) != (spec->repetition % 2))
			return ab_run_candidate(ctx->build, spec, id, r);
		v = 'A';
	} else {
		v = ctx->variant_of[id];
	}
	if (tool_or_runner_run(spec, id, r) != 0)
		return -1;
	if (v)
		snprintf(r->variant, sizeof(r->variant), "%c", v);
	return 0;
}

/* --sampler A,B: the profile's cells with `none`, A and B in place of its samplers, per
 * repetition in that order. Replaces *specs (freed) and fills *variant_of (malloc'd, by
 * position). Returns the new count, or -1 after one line on stderr. */
static long pair_specs(struct run_spec **specs, long n, char **variant_of)
{
	char list[512], *save = NULL;
	const struct sampler *ab[2], *none = sampler_resolve("none");
	int k = 0;

	snprintf(list, sizeof(list), "%s", env.pair);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (k == 2) {
			k = 3;
			break;
		}
		ab[k] = sampler_resolve(t); /* prints why not */
		if (!ab[k])
			return -1;
		k++;
	}
	if (k != 2) {
		sb_err("--sampler wants two samplers A,B, got '%s'", env.pair);
		return -1;
	}
	if (!none)
		return -1;
	struct run_spec *out = calloc((size_t)n * 3, sizeof(*out));
	char *var = calloc((size_t)n * 3, 1);
	long j = 0;
	if (!out || !var) {
		free(out);
		free(var);
		sb_err("out of memory");
		return -1;
	}
	/* one slot per (cell group, repetition): the specs of one are contiguous */
	for (long i = 0; i < n;) {
		long end = i;
		while (end < n && same_group(&(*specs)[end], &(*specs)[i]) &&
		       (*specs)[end].repetition == (*specs)[i].repetition &&
		       (*specs)[end].param == (*specs)[i].param)
			end++;
		for (int v = 0; v < 3; v++) {
			out[j] = (*specs)[i];
			out[j].sampler = v == 0 ? none : ab[v - 1];
			var[j++] = v == 0 ? 0 : v == 1 ? 'A' : 'B';
		}
		i = end;
	}
	free(*specs);
	*specs = out;
	*variant_of = var;
	return j;
}

int cmd_bench(int argc, char **argv)
{
	struct ab_build ab = { 0 };
	struct identity ident = { 0 };
	struct run_spec *sel = NULL;
	int64_t *ids = NULL;
	char *keep = NULL;
	struct sb_run *prior = NULL;
	size_t nprior = 0;
	struct sb_host rhost;
	char *variant_of = NULL;
	struct mx_matrix *m = NULL;
	struct run_spec *specs = NULL;
	struct sb_run *runs = NULL;
	size_t nruns = 0;
	char err[512], out[256];
	int rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(bench_usage, stdout);
		opt_help(stdout, cmd_bench_options);
		fputs(bench_exit, stdout);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;

	if (env.resume && !env.profile_set) { /* the profile the file records */
		static char prof[MX_NAME_LEN];
		if (h5_read_attr(env.resume, "matrix_profile", prof, sizeof(prof), err,
				 sizeof(err)) < 0) {
			sb_err("%s", err);
			return SB_EXIT_USAGE;
		}
		if (prof[0])
			env.profile = prof;
	}
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
	if (env.pair) {
		n = pair_specs(&specs, n, &variant_of);
		if (n < 0)
			goto cleanup;
		snprintf(ident.ab, sizeof(ident.ab), "sampler:%s", env.pair);
	}
	matrix_digest(specs, (size_t)n, ident.digest);
	snprintf(ident.runs, sizeof(ident.runs), "%ld", n);
	int k = 1, nshards = 1;
	if (env.shard && matrix_parse_shard(env.shard, &k, &nshards) != 0) {
		sb_err("--shard wants K/N with 1 <= K <= N <= 1000, got '%s'", env.shard);
		goto cleanup;
	}
	if (env.shard)
		snprintf(ident.shard, sizeof(ident.shard), "%d/%d", k, nshards);
	keep = malloc((size_t)n);
	int per = env.ab ? 2 : 1; /* A/B: every spec runs as A (id 2i) then B (id 2i+1) */
	sel = calloc((size_t)n * (size_t)per, sizeof(*sel));
	ids = calloc((size_t)n * (size_t)per, sizeof(*ids));
	if (!keep || !sel || !ids) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	if (env.shard)
		matrix_shard(specs, (size_t)n, k, nshards, keep);
	else
		memset(keep, 1, (size_t)n);
	if (env.ab && !env.dry_run) { /* before resume: its identity includes the candidate */
		if (ab_prepare(env.ab, &ab, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			goto cleanup;
		}
		snprintf(ident.ab, sizeof(ident.ab), "%s", ab.rev);
	}
	if (env.resume) {
		if (check_resume(env.resume, &ident) != 0)
			goto cleanup;
		if (h5_read(env.resume, &rhost, &prior, &nprior, 0, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			goto cleanup;
		}
	}
	size_t nsel = 0;
	for (long i = 0; i < n; i++) {
		for (int v = 0; keep[i] && v < per; v++) {
			int64_t id = (int64_t)i * per + v;
			int have = 0;
			for (size_t j = 0; j < nprior && !have; j++)
				have = prior[j].run_id == id;
			if (have)
				continue;
			sel[nsel] = specs[i];
			ids[nsel++] = id;
		}
	}
	struct progress pg = { .tty = isatty(STDERR_FILENO), .start_ns = sb_now_ns() };
	for (size_t i = 0; i < nsel; i++)
		pg.total_s += expected_s(&sel[i]);
	if (env.dry_run) {
		print_plan(sel, nsel, pg.total_s);
		rc = SB_EXIT_OK;
		goto cleanup;
	}
	if (env.resume) {
		snprintf(out, sizeof(out), "%.*s", (int)(strlen(env.resume) - 4), env.resume);
	} else if (env.out) {
		snprintf(out, sizeof(out), "%s", env.out);
	} else if (default_output(out, sizeof(out)) != 0) {
		goto cleanup;
	}

	char total[32];
	fmt_duration(total, sizeof(total), pg.total_s);
	fprintf(stderr, "bench: profile '%s' of %s: %zu runs%s%s, about %s, into %s\n",
		env.profile, env.matrix, nsel, env.shard ? " of shard " : "",
		env.shard ? ident.shard : "", total, out);
	if (nprior)
		fprintf(stderr, "bench: resuming: %zu runs already in %s\n", nprior, env.resume);
	struct ab_ctx actx = { env.ab ? &ab : NULL, variant_of };
	const char *attrs[] = { "matrix_digest", ident.digest, "matrix_profile", env.profile,
				"matrix_runs", ident.runs, "shard", ident.shard, "ab_rev", ident.ab,
				NULL };
	struct session_opts so = {
		.out_path = out,
		.force = env.force,
		.quiet = 1,
		.hook = bench_hook,
		.hook_arg = &pg,
		.run_ids = ids,
		.run = env.ab || env.pair ? ab_runner : NULL,
		.run_arg = &actx,
		.attrs = env.resume ? NULL : attrs,
		.resume_tmp = env.resume,
		.resume_host = &rhost,
		.prior = prior,
		.nprior = nprior,
	};
	prior = NULL; /* the session owns them now */
	nprior = 0;
	rc = session_run(&so, sel, nsel, &runs, &nruns);
	if (pg.tty)
		fprintf(stderr, "\r\033[K");
	if (rc != SB_EXIT_USAGE && nruns > 0) {
		show_table(stdout, runs, nruns);
		printf("wrote %s (%zu runs)\n", out, nruns);
	}
cleanup:
	ab_cleanup(&ab);
	for (size_t i = 0; i < nprior; i++)
		run_free(&prior[i]);
	free(prior);
	free(sel);
	free(ids);
	free(keep);
	free(variant_of);
	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	free(specs);
	free(m);
	return rc;
}
