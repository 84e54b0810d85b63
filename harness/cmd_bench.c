/* cmd_bench.c - `sampbench bench`: runs one profile of the bench matrix (ci/matrix) into one
 * HDF5 file, with progress, and prints the table of runs. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/gate.h"
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

/* Fork, sink, metrics, HDF5 per run: the ETA's prior. Measured on 2 cores: 0.08-0.10 s a
 * run in five workloads benches of CI (365-377 runs in 395-408 s), 0.14 in a default
 * bench, 0.10 in the quick profile. */
#define BENCH_RUN_OVERHEAD_S 0.1
#define BENCH_BAR_WIDTH 24
/* Adaptive repetitions: the share of the runs past a cell's MIN the ETA expects to be
 * made before any is decided, and the weight of that guess in expected run seconds; the
 * share seen so far takes over as the bench decides. Measured: 5-17 of 240 in those
 * five CI benches, 12 of 236 in a default bench; at 0.25 the announced time was 20-27 %
 * above what they took. */
#define BENCH_EXTRA_PRIOR 0.05
#define BENCH_EXTRA_WEIGHT_S 60.0

static const char bench_usage[] =
	"usage: sampbench bench [--profile NAME] [--matrix FILE] [-o FILE.h5] [--force]\n"
	"                       [--ab REV | --sampler A,B] [--shard K/N]\n"
	"                       [--resume FILE.h5.tmp] [--budgets FILE] [--baseline B.h5]\n"
	"\n"
	"Runs a profile of the bench matrix (samplers x workloads x threads x hz x\n"
	"repetitions, each run in its own child under the watchdog) into FILE.h5 and prints\n"
	"the table of runs. A block with `reps = MIN..MAX` repeats a cell past MIN only while\n"
	"the budgets (--budgets) leave one of its checks, or a regression test against\n"
	"--baseline, undecided (docs/gate.md). A failed\n"
	"run is recorded and the bench goes on; Ctrl-C stops and keeps the runs done so far\n"
	"(the file is marked incomplete). Progress goes to stderr:\n"
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
	const char *budgets;
	const char *baseline;
	int profile_set;
} env;

static const struct env env_defaults = {
	.matrix = "ci/matrix",
	.budgets = "ci/budgets",
};

/* Progress state shared with the session hook. */
struct progress {
	int tty;
	uint64_t start_ns;
	double fixed_s;               /* expected seconds of the runs made whatever happens */
	double opt_s;                 /* ... of the adaptive runs past their cell's MIN */
	double opt_seen_s, opt_run_s; /* ... of those decided on so far, of those made */
	double done_s;                /* ... of the finished runs */
	size_t nruns;                 /* finished runs */
	const struct run_spec *group; /* a spec of the current cell group, NULL before one */
	size_t group_runs;
	int group_failed, group_skipped, group_reps;
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

/* Whether spec s is an adaptive run past its cell's MIN: made only while undecided. */
static int optional_run(const struct run_spec *s)
{
	return s->reps_max && s->repetition >= s->reps_min;
}

/* The expected seconds of the whole bench: the runs made whatever happens, the adaptive
 * ones made so far, and of those still to decide the share made so far (weighed with
 * BENCH_EXTRA_PRIOR while few are decided). */
static double expected_total_s(const struct progress *pg)
{
	double share = (pg->opt_run_s + BENCH_EXTRA_PRIOR * BENCH_EXTRA_WEIGHT_S) /
		       (pg->opt_seen_s + BENCH_EXTRA_WEIGHT_S);
	return pg->fixed_s + pg->opt_run_s + (pg->opt_s - pg->opt_seen_s) * share;
}

/* Seconds left: the expected time still to run, scaled by how fast the expectation has
 * proved so far. */
static double eta_s(const struct progress *pg, double elapsed)
{
	double left = expected_total_s(pg) - pg->done_s;
	if (left < 0) /* the share guessed for the runs past MIN was too high */
		left = 0;
	if (pg->done_s <= 0)
		return left;
	return left * elapsed / pg->done_s;
}

/* The line of the finished cell group pg->group: on a log always, on a terminal when runs
 * failed; then a fresh count for the next group. */
static void group_end(struct progress *pg)
{
	const struct run_spec *g = pg->group;
	double elapsed = (double)(sb_now_ns() - pg->start_ns) / 1e9;
	char eta[32], el[32], reps[48] = "";

	if (!g)
		return;
	if (g->reps_max)
		snprintf(reps, sizeof(reps), " (reps %d of %d..%d)", pg->group_reps, g->reps_min,
			 g->reps_max);
	if (!pg->tty) {
		fmt_duration(eta, sizeof(eta), eta_s(pg, elapsed));
		fmt_duration(el, sizeof(el), elapsed);
		fprintf(stderr, "bench: [%zu runs] %s %dt %gHz done: %zu runs%s, %d failed, "
			"%d skipped (%s elapsed, ETA %s)\n", pg->nruns, g->workload->name,
			g->threads, g->hz, pg->group_runs, reps, pg->group_failed,
			pg->group_skipped, el, eta);
	} else if (pg->group_failed) {
		fprintf(stderr, "\r\033[K%s %dt %gHz: %d runs failed\n", g->workload->name,
			g->threads, g->hz, pg->group_failed);
	}
	pg->group = NULL;
	pg->group_runs = 0;
	pg->group_failed = pg->group_skipped = pg->group_reps = 0;
}

static void bench_hook(void *arg, size_t i, size_t n, const struct run_spec *spec,
		       const struct sb_run *r)
{
	struct progress *pg = arg;
	double elapsed = (double)(sb_now_ns() - pg->start_ns) / 1e9;
	char eta[32];

	(void)i;
	(void)n;
	if (!r) { /* about to run spec */
		if (!pg->tty)
			return;
		double total = expected_total_s(pg);
		int fill = total > 0 ? (int)(pg->done_s * BENCH_BAR_WIDTH / total) : 0;
		char bar[BENCH_BAR_WIDTH + 1];
		for (int k = 0; k < BENCH_BAR_WIDTH; k++)
			bar[k] = k < fill ? '#' : '-';
		bar[BENCH_BAR_WIDTH] = 0;
		fmt_duration(eta, sizeof(eta), eta_s(pg, elapsed));
		fprintf(stderr, "\r[%s] %zu runs  %s %dt %gHz: %s rep %d  ETA %s\033[K", bar,
			pg->nruns, spec->workload->name, spec->threads, spec->hz,
			spec->sampler->name, spec->repetition, eta);
		fflush(stderr);
		return;
	}
	pg->done_s += expected_s(spec);
	pg->nruns++;
	pg->group_runs++;
	pg->group_failed += r->status == SB_RUN_FAILED || r->status == SB_RUN_INCOMPLETE;
	pg->group_skipped += r->status == SB_RUN_SKIPPED;
	if (spec->repetition + 1 > pg->group_reps)
		pg->group_reps = spec->repetition + 1;
}

/* The adaptive driver's state: the budgets, and which samplers of the current cell group
 * run in its current repetition. */
struct adapt {
	const struct gate_config *cfg; /* NULL: every spec runs (no adaptive block) */
	const struct sb_run *base;     /* --baseline's runs (no samples), NULL: none */
	size_t nbase;
	const struct sb_host *bhost;
	struct progress *pg;
	const struct run_spec *group; /* the group and repetition decided last */
	int rep;
	char open[MX_MAX_LIST * 2][SB_NAME_LEN]; /* its undecided samplers */
	int nopen;
	struct sb_run *scratch; /* room for the group's runs, then the baseline's */
};

/* The samplers of spec's cell group whose budget checks the runs so far leave undecided
 * (gate_eval's `reps` rows, docs/gate.md) into a->open. Returns 0, or -1 when out of
 * memory (everything then counts as undecided). */
static int decide_group(struct adapt *a, const struct run_spec *spec,
			const struct sb_host *host, const struct sb_run *done, size_t ndone)
{
	struct gate_result res;
	size_t n = 0, nb = 0;

	a->nopen = 0;
	for (size_t i = 0; i < ndone; i++) {
		const struct sb_run *r = &done[i];
		if (!strcmp(r->workload, spec->workload->name) && r->threads == spec->threads &&
		    r->hz == spec->hz && r->duration_s == spec->duration_s)
			a->scratch[n++] = *r; /* shallow: gate_eval only reads */
	}
	for (size_t i = 0; i < a->nbase; i++) { /* the same cells in the baseline */
		const struct sb_run *r = &a->base[i];
		if (!strcmp(r->workload, spec->workload->name) && r->threads == spec->threads &&
		    r->hz == spec->hz)
			a->scratch[n + nb++] = *r;
	}
	struct gate_side side = { .host = host, .runs = a->scratch, .nruns = n };
	struct gate_side bside = { .path = env.baseline, .host = a->bhost,
				   .runs = a->scratch + n, .nruns = nb };
	if (gate_eval(a->cfg, nb ? &bside : NULL, &side, &res) != 0)
		return -1;
	char why[512] = "";
	size_t u = 0;
	for (size_t i = 0; i < res.nchecks; i++) {
		const struct gate_check *k = &res.checks[i];
		if (k->kind == GATE_REPS && k->state == GATE_WARN &&
		    a->nopen < (int)ARRAY_SIZE(a->open))
			snprintf(a->open[a->nopen++], SB_NAME_LEN, "%s", k->sampler);
		if (k->open && u < sizeof(why))
			u += (size_t)snprintf(why + u, sizeof(why) - u, "%s %s %s%s",
					      u ? "," : "", k->sampler, k->metric,
					      k->kind == GATE_REGRESSION ? " (regress)" : "");
	}
	gate_result_free(&res);
	if (a->nopen && !a->pg->tty) /* a log says what a repetition past MIN is for */
		fprintf(stderr, "bench: %s %dt %gHz rep %d for the undecided:%s\n",
			spec->workload->name, spec->threads, spec->hz, spec->repetition, why);
	return 0;
}

/* The `want` of the bench's runs: every run of a fixed cell and below MIN; past MIN, the
 * run of a sampler still undecided after the repetitions before this one, and `none` when any
 * sampler of its group runs (its overhead reference, first in the repetition). Also
 * ends the progress line of each finished group. */
static int bench_want(void *arg, size_t i, const struct run_spec *spec,
		      const struct sb_host *host, const struct sb_run *done, size_t ndone)
{
	struct adapt *a = arg;
	struct progress *pg = a->pg;
	int want = 1;

	(void)i;
	if (pg->group && !same_group(pg->group, spec))
		group_end(pg);
	if (!pg->group)
		pg->group = spec;
	if (!optional_run(spec))
		return 1;
	/* once per group and repetition: its runs so far are all before this one */
	if (!a->group || !same_group(a->group, spec) || a->rep != spec->repetition) {
		if (decide_group(a, spec, host, done, ndone) != 0)
			a->nopen = -1;
		a->group = spec;
		a->rep = spec->repetition;
	}
	if (a->nopen >= 0) {
		want = 0;
		for (int k = 0; k < a->nopen && !want; k++)
			want = (spec->sampler->flags & SB_SAMPLER_BASELINE) ||
			       !strcmp(a->open[k], spec->sampler->name);
	}
	pg->opt_seen_s += expected_s(spec);
	pg->opt_run_s += want ? expected_s(spec) : 0;
	return want;
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
	OPT_STRING('B', "budgets", &env.budgets, "FILE",
		   "the rules that decide adaptive repetitions (`reps =\n"
		   "MIN..MAX`; default: ci/budgets, as `sampbench gate`)"),
	OPT_STRING(0, "baseline", &env.baseline, "FILE",
		   "adaptive repetitions: also run a cell while a regression\n"
		   "test against this file is undecided (as `gate --baseline`)"),
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

/* The bench's `run`s in the order they will execute (an adaptive one past its cell's MIN
 * marked `?`: made only while the cell is undecided), and the expected total. */
static void print_plan(const struct run_spec *specs, size_t n, const struct progress *pg)
{
	char t[32];
	size_t nopt = 0;
	int w = run_name_width(specs, n);
	for (size_t i = 0; i < n; i++) {
		printf("%-*s %-10s %3d %6g %3d %5gs%s\n", w, specs[i].sampler->name,
		       specs[i].workload->name, specs[i].threads, specs[i].hz,
		       specs[i].repetition, specs[i].duration_s,
		       optional_run(&specs[i]) ? " ?" : "");
		nopt += optional_run(&specs[i]) != 0;
	}
	fmt_duration(t, sizeof(t), expected_total_s(pg));
	if (nopt)
		printf("%zu to %zu runs (adaptive: about %.0f, with %.0f%% of the %zu runs marked "
		       "?), about %s\n", n - nopt, n,
		       (double)(n - nopt) + BENCH_EXTRA_PRIOR * (double)nopt,
		       BENCH_EXTRA_PRIOR * 100, nopt, t);
	else
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

/* What one bench holds from its matrix to its runs (bench_free releases it all). */
struct bench {
	struct mx_matrix *m;
	struct run_spec *specs; /* the profile's runs, expanded (and paired: --pair) */
	long n;
	char *variant_of; /* --pair: 0, 'A' or 'B' for each spec */
	struct identity ident;
	struct ab_build ab;
	char *keep;           /* keep[i]: spec i is in this shard */
	struct run_spec *sel; /* the runs to do now: this shard's, not in the resumed file */
	int64_t *ids;         /* their run ids */
	size_t nsel;
	struct sb_run *prior; /* the resumed file's runs, until the session takes them */
	size_t nprior;
	struct sb_host rhost;
	struct sb_run *runs; /* what the session wrote */
	size_t nruns;
	struct gate_config *cfg; /* the budgets adaptive cells are decided by; NULL: none */
	struct sb_run *base;     /* --baseline's runs, read without samples */
	size_t nbase;
	struct sb_host bhost;
	int rc; /* the exit code when a step fails */
};

static void bench_free(struct bench *b)
{
	ab_cleanup(&b->ab);
	for (size_t i = 0; i < b->nprior; i++)
		run_free(&b->prior[i]);
	free(b->prior);
	free(b->sel);
	free(b->ids);
	free(b->keep);
	free(b->variant_of);
	for (size_t i = 0; i < b->nruns; i++)
		run_free(&b->runs[i]);
	free(b->runs);
	free(b->specs);
	free(b->m);
	free(b->cfg);
	for (size_t i = 0; i < b->nbase; i++)
		run_free(&b->base[i]);
	free(b->base);
}

/* Adaptive blocks: loads the budgets that decide them (--budgets) into b->cfg and the
 * baseline's runs (--baseline) into b->base; with --ab or --sampler A,B their cells run
 * every repetition up to MAX instead (the A/B file is judged B against A). Returns 0, or
 * -1 after one error line (b->rc set). */
static int bench_budgets(struct bench *b)
{
	char err[512];
	size_t nadapt = 0;

	for (size_t i = 0; i < b->nsel; i++)
		nadapt += b->sel[i].reps_max != 0;
	if (!nadapt)
		return 0;
	if (env.ab || env.pair) {
		fprintf(stderr, "bench: %s: adaptive repetitions run to their maximum\n",
			env.ab ? "--ab" : "--sampler");
		for (size_t i = 0; i < b->nsel; i++)
			b->sel[i].reps_min = b->sel[i].reps_max = 0;
		return 0;
	}
	b->cfg = malloc(sizeof(*b->cfg));
	if (!b->cfg) {
		sb_err("out of memory");
		b->rc = SB_EXIT_FAIL;
		return -1;
	}
	if (gate_config_load(env.budgets, b->cfg, err, sizeof(err)) != 0) {
		sb_err("%s (the budgets decide the adaptive repetitions)", err);
		return -1;
	}
	if (env.baseline && h5_read(env.baseline, &b->bhost, &b->base, &b->nbase, 0, err,
				    sizeof(err)) != 0) {
		sb_err("%s", err);
		return -1;
	}
	return 0;
}

/* --resume without --profile: the profile the file records becomes env.profile. Returns
 * 0, or -1 after one error line. */
static int resume_profile(void)
{
	static char prof[MX_NAME_LEN];
	char err[512];

	if (h5_read_attr(env.resume, "matrix_profile", prof, sizeof(prof), err, sizeof(err)) < 0) {
		sb_err("%s", err);
		return -1;
	}
	if (prof[0])
		env.profile = prof;
	return 0;
}

/* Reads the matrix and expands the profile into b->specs (paired for --pair), with the
 * identity a resumed or merged file must share. Returns 0, or -1 after one error line
 * (b->rc set). */
static int bench_expand(struct bench *b)
{
	char err[512];

	b->m = malloc(sizeof(*b->m));
	if (!b->m) {
		sb_err("out of memory");
		b->rc = SB_EXIT_FAIL;
		return -1;
	}
	if (matrix_load(env.matrix, b->m, err, sizeof(err)) != 0) {
		sb_err("%s", err);
		return -1;
	}
	b->n = matrix_specs(b->m, env.profile, &b->specs, err, sizeof(err));
	if (b->n < 0) {
		sb_err("out of memory");
		b->rc = SB_EXIT_FAIL;
		return -1;
	}
	if (b->n == 0) {
		sb_err("%s in '%s'", err, env.matrix);
		return -1;
	}
	if (env.pair) {
		b->n = pair_specs(&b->specs, b->n, &b->variant_of);
		if (b->n < 0)
			return -1;
		snprintf(b->ident.ab, sizeof(b->ident.ab), "sampler:%s", env.pair);
	}
	matrix_digest(b->specs, (size_t)b->n, b->ident.digest);
	snprintf(b->ident.runs, sizeof(b->ident.runs), "%ld", b->n);
	return 0;
}

/* Chooses the runs to do into b->sel and b->ids: this shard's (--shard), each as A and B
 * (--ab, whose candidate it builds), less those the resumed file holds (--resume, whose
 * runs it reads into b->prior). Returns 0, or -1 after one error line (b->rc set). */
static int bench_select(struct bench *b)
{
	char err[512];
	int k = 1, nshards = 1;

	if (env.shard && matrix_parse_shard(env.shard, &k, &nshards) != 0) {
		sb_err("--shard wants K/N with 1 <= K <= N <= 1000, got '%s'", env.shard);
		return -1;
	}
	if (env.shard)
		snprintf(b->ident.shard, sizeof(b->ident.shard), "%d/%d", k, nshards);
	b->keep = malloc((size_t)b->n);
	int per = env.ab ? 2 : 1; /* A/B: every spec runs as A (id 2i) then B (id 2i+1) */
	b->sel = calloc((size_t)b->n * (size_t)per, sizeof(*b->sel));
	b->ids = calloc((size_t)b->n * (size_t)per, sizeof(*b->ids));
	if (!b->keep || !b->sel || !b->ids) {
		sb_err("out of memory");
		b->rc = SB_EXIT_FAIL;
		return -1;
	}
	if (env.shard)
		matrix_shard(b->specs, (size_t)b->n, k, nshards, b->keep);
	else
		memset(b->keep, 1, (size_t)b->n);
	if (env.ab && !env.dry_run) { /* before resume: its identity includes the candidate */
		if (ab_prepare(env.ab, &b->ab, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			return -1;
		}
		snprintf(b->ident.ab, sizeof(b->ident.ab), "%s", b->ab.rev);
	}
	if (env.resume) {
		if (check_resume(env.resume, &b->ident) != 0)
			return -1;
		if (h5_read(env.resume, &b->rhost, &b->prior, &b->nprior, 0, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			return -1;
		}
	}
	for (long i = 0; i < b->n; i++) {
		for (int v = 0; b->keep[i] && v < per; v++) {
			int64_t id = (int64_t)i * per + v;
			int have = 0;
			for (size_t j = 0; j < b->nprior && !have; j++)
				have = b->prior[j].run_id == id;
			if (have)
				continue;
			b->sel[b->nsel] = b->specs[i];
			b->ids[b->nsel++] = id;
		}
	}
	return 0;
}

/* The file the runs go to: the resumed file's final name, -o, or a fresh one under
 * results/runs/. Returns 0, or -1 after one error line. */
static int bench_output(char *out, size_t len)
{
	if (env.resume)
		snprintf(out, len, "%.*s", (int)(strlen(env.resume) - 4), env.resume);
	else if (env.out)
		snprintf(out, len, "%s", env.out);
	else if (default_output(out, len) != 0)
		return -1;
	return 0;
}

/* Runs b->sel through one session into out (the session takes b->prior), with a progress
 * line on a terminal, and prints the runs' table. Returns the session's exit code. */
static int bench_execute(struct bench *b, const char *out, struct progress *plan)
{
	struct progress pg = *plan;
	struct adapt ad = { .cfg = b->cfg, .base = b->base, .nbase = b->nbase, .bhost = &b->bhost,
			    .pg = &pg };
	char total[32], upto[16] = "";

	pg.tty = isatty(STDERR_FILENO);
	pg.start_ns = sb_now_ns();
	fmt_duration(total, sizeof(total), expected_total_s(&pg));
	if (pg.opt_s > 0)
		snprintf(upto, sizeof(upto), "up to ");
	fprintf(stderr, "bench: profile '%s' of %s: %s%zu runs%s%s, about %s, into %s\n",
		env.profile, env.matrix, upto, b->nsel, env.shard ? " of shard " : "",
		env.shard ? b->ident.shard : "", total, out);
	if (b->cfg) {
		ad.scratch = calloc(b->nsel + b->nprior + b->nbase + 1, sizeof(*ad.scratch));
		if (!ad.scratch) {
			sb_err("out of memory");
			return SB_EXIT_FAIL;
		}
	}
	if (b->nprior)
		fprintf(stderr, "bench: resuming: %zu runs already in %s\n", b->nprior, env.resume);
	struct ab_ctx actx = { env.ab ? &b->ab : NULL, b->variant_of };
	const char *attrs[] = { "matrix_digest", b->ident.digest, "matrix_profile", env.profile,
				"matrix_runs", b->ident.runs, "shard", b->ident.shard, "ab_rev",
				b->ident.ab, NULL };
	struct session_opts so = {
		.out_path = out,
		.force = env.force,
		.quiet = 1,
		.hook = bench_hook,
		.hook_arg = &pg,
		.run_ids = b->ids,
		.run = env.ab || env.pair ? ab_runner : NULL,
		.run_arg = &actx,
		.want = bench_want,
		.want_arg = &ad,
		.attrs = env.resume ? NULL : attrs,
		.resume_tmp = env.resume,
		.resume_host = &b->rhost,
		.prior = b->prior,
		.nprior = b->nprior,
	};
	b->prior = NULL; /* the session owns them now */
	b->nprior = 0;
	int rc = session_run(&so, b->sel, b->nsel, &b->runs, &b->nruns);
	free(ad.scratch);
	if (rc != 130)
		group_end(&pg);
	if (pg.tty)
		fprintf(stderr, "\r\033[K");
	if (rc != SB_EXIT_USAGE && b->nruns > 0) {
		show_table(stdout, b->runs, b->nruns);
		printf("wrote %s (%zu runs)\n", out, b->nruns);
	}
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	struct bench b = { .rc = SB_EXIT_USAGE };
	char out[256];

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(bench_usage, stdout);
		opt_help(stdout, cmd_bench_options);
		fputs(bench_exit, stdout);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	if (env.resume && !env.profile_set && resume_profile() != 0)
		return SB_EXIT_USAGE;
	if (bench_expand(&b) == 0 && bench_select(&b) == 0 && bench_budgets(&b) == 0) {
		struct progress plan = { 0 };
		for (size_t i = 0; i < b.nsel; i++) {
			if (optional_run(&b.sel[i]))
				plan.opt_s += expected_s(&b.sel[i]);
			else
				plan.fixed_s += expected_s(&b.sel[i]);
		}
		if (env.dry_run) {
			print_plan(b.sel, b.nsel, &plan);
			b.rc = SB_EXIT_OK;
		} else if (bench_output(out, sizeof(out)) == 0) {
			b.rc = bench_execute(&b, out, &plan);
		}
	}
	bench_free(&b);
	return b.rc;
}
