/* test_gate.c - the regression gate: the Mann-Whitney U test against scipy's values, the
 * budgets config, the verdict on synthetic run sets and the CLI's exit codes. The gate on
 * real runs of a fault sampler is test_gate_faults.c (run alone: it judges rates). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/sbrun.h"

#include "analysis/gate.h"
#include "analysis/mwu.h"
#include "results/h5io.h"
#include "sampler/sampler.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- Mann-Whitney U --- */

/* Reference values from scipy 1.10.1, scipy.stats.mannwhitneyu(x, y) (method "auto",
 * two-sided, continuity correction). */
static void test_mwu_against_scipy(void **state)
{
	(void)state;
	static const struct {
		double x[10], y[10];
		size_t nx, ny;
		double u1, p;
		int exact;
	} cases[] = {
		/* scipy's documented example (exact): statistic 17, p 0.1111 */
		{ { 19, 22, 16, 29, 24 }, { 20, 11, 17, 12 }, 5, 4, 17, 0.1111111111111111, 1 },
		{ { 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10 }, 5, 5, 0, 0.007936507936507936, 1 },
		/* 3 against 3: the smallest possible p is 0.1, the U test can never fire */
		{ { 1, 2, 3 }, { 4, 5, 6 }, 3, 3, 0, 0.1, 1 },
		/* ties: normal approximation with tie correction */
		{ { 1, 2, 2, 3, 4 }, { 2, 3, 4, 5, 5, 6 }, 5, 6, 5, 0.07794691458872482, 0 },
		/* both larger than 8: normal approximation even without ties */
		{ { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, { 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5 },
		  10, 10, 28, 0.10410988966022681, 0 },
		/* exact with one sample of 8 and one of 10 */
		{ { 1, 2, 3, 4, 5, 6, 7, 8 }, { 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 }, 8, 10, 0,
		  4.570592805886923e-05, 1 },
		/* every value tied: no evidence */
		{ { 3, 3, 3, 3 }, { 3, 3, 3, 3 }, 4, 4, 8, 1.0, 0 },
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct mwu_result r;
		assert_int_equal(mwu_test(cases[i].x, cases[i].nx, cases[i].y, cases[i].ny, &r), 0);
		if (fabs(r.u1 - cases[i].u1) > 1e-9 || fabs(r.p - cases[i].p) > 1e-9 ||
		    r.exact != cases[i].exact)
			fail_msg("case %zu: U %g p %.17g exact %d, want U %g p %.17g exact %d", i, r.u1,
				 r.p, r.exact, cases[i].u1, cases[i].p, cases[i].exact);
	}
}

static void test_mwu_symmetry_nan_and_empty(void **state)
{
	(void)state;
	double x[] = { 0.97, 0.99, 1.0, NAN, 0.98, 0.96 }, y[] = { 0.7, 0.71, 0.69, 0.72, 0.68 };
	struct mwu_result a, b;
	assert_int_equal(mwu_test(x, N(x), y, N(y), &a), 0);
	assert_int_equal(mwu_test(y, N(y), x, N(x), &b), 0);
	assert_true(fabs(a.p - b.p) < 1e-12);         /* two-sided: order does not matter */
	assert_true(fabs(a.u1 + b.u1 - 25) < 1e-12);  /* U1 + U2 = n1 n2, the NaN left out */
	assert_true(a.p < 0.05);
	assert_int_equal(mwu_test(x, 0, y, N(y), &a), 0);
	assert_true(isnan(a.p));
	assert_true(median_of(x, N(x)) == 0.98);
	double even[] = { 4, 1, 3, 2 };
	assert_true(median_of(even, 4) == 2.5);
	assert_true(even[0] == 4); /* not reordered */
}

/* --- config --- */

static struct gate_config cfg;
static char err[512];

static void test_config_parses(void **state)
{
	(void)state;
	const char *text = "alpha 0.01\n"
			   "reference gperftools\n"
			   "compare rate_accuracy thread_tvd\n"
			   "regress rate_accuracy off-one 0.05\n"
			   "regress suspend_window_p99_ns up 20us 25%   # both must be exceeded\n"
			   "budget mach suspend_window_p99_ns <= 100us if threads<=cores\n"
			   "budget ctimer,perf rate_accuracy >= 0.95 if threads<=cores hz<=tick\n"
			   "budget mach thread_tvd <= gperftools.thread_tvd + 0.01\n"
			   "budget * failed_runs == 0 if workload=skewed sampler!=none\n";
	assert_int_equal(gate_config_parse(text, "b", &cfg, err, sizeof(err)), 0);
	assert_true(cfg.alpha == 0.01);
	assert_string_equal(cfg.reference, "gperftools");
	assert_int_equal(cfg.ncompare, 2);
	assert_int_equal(cfg.nrules, 2);
	assert_int_equal(cfg.rules[0].dir, GATE_OFF_ONE);
	assert_true(cfg.rules[1].min_abs == 20000 && cfg.rules[1].min_rel == 0.25);
	assert_int_equal(cfg.nbudgets, 4);
	assert_true(cfg.budgets[0].value == 100000);
	assert_int_equal(cfg.budgets[0].line, 6);
	assert_int_equal(cfg.budgets[1].nsamplers, 2);
	assert_int_equal(cfg.budgets[1].nconds, 2);
	assert_string_equal(cfg.budgets[2].ref_sampler, "gperftools");
	assert_string_equal(cfg.budgets[2].ref_metric, "thread_tvd");
	assert_true(cfg.budgets[2].value == 0.01);
	assert_int_equal(cfg.budgets[3].nsamplers, 0);
}

static void expect_config_error(const char *text, int line, const char *want)
{
	char prefix[32];
	if (gate_config_parse(text, "b", &cfg, err, sizeof(err)) == 0)
		fail_msg("parsed: %s", text);
	snprintf(prefix, sizeof(prefix), "b:%d: ", line);
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, want))
		fail_msg("want '%s%s', got '%s'", prefix, want, err);
}

static void test_config_errors_name_the_line(void **state)
{
	(void)state;
	expect_config_error("\n# c\nbudget mach nosuch_metric <= 1\n", 3, "unknown metric 'nosuch_metric'");
	expect_config_error("budget nosuch rate_accuracy >= 1\n", 1, "unknown sampler 'nosuch'");
	expect_config_error("budget mach rate_accuracy => 1\n", 1, "unknown operator '=>'");
	expect_config_error("budget mach suspend_window_p99_ns <= 100 furlongs\n", 1,
			    "expected 'if'");
	expect_config_error("budget mach suspend_window_p99_ns <= 100xs\n", 1, "unknown unit");
	expect_config_error("budget mach rate_accuracy >= 1 if cores\n", 1, "malformed condition");
	expect_config_error("budget mach rate_accuracy >= 1 if colour<=2\n", 1, "unknown variable 'colour'");
	expect_config_error("budget mach rate_accuracy >= 1 if workload<=2\n", 1, "use = or !=");
	expect_config_error("budget mach rate_accuracy >= nosuch.thread_tvd\n", 1, "unknown sampler 'nosuch'");
	expect_config_error("regress rate_accuracy sideways 0.1\n", 1, "unknown direction 'sideways'");
	expect_config_error("regress rate_accuracy up 0.1 5\n", 1, "must be a percentage");
	expect_config_error("regress rate_accuracy up 0.1\nregress rate_accuracy up 0.2\n", 2,
			    "second regress rule");
	expect_config_error("alpha 2\n", 1, "0 < P < 1");
	expect_config_error("frobnicate\n", 1, "unknown directive 'frobnicate'");
	expect_config_error("budget * rate_accuracy >= 1 if clock=gpu\n", 1, "unknown clock 'gpu'");
	expect_config_error("budget * rate_accuracy >= 1 if scope=galaxy\n", 1, "unknown scope");
	expect_config_error("budget * rate_accuracy >= 1 if has=magic\n", 1,
			    "unknown capability 'magic'");
	expect_config_error("budget * suspend_window_p99_ns <= 1 floor rendezvous\n", 1,
			    "'floor' needs a host fact");
	expect_config_error("expect ctimer nosuch_metric why\n", 1, "unknown metric");
}

/* --- verdicts on synthetic runs --- */

#define MAXRUNS 64
static struct sb_run base_runs[MAXRUNS], cur_runs[MAXRUNS];
static size_t nbase, ncur;
static struct sb_host host_a, host_b;

static struct sb_run *add_run(struct sb_run *v, size_t *n, const char *sampler,
			      const char *workload, int threads, double hz, int rep)
{
	struct sb_run *r = &v[(*n)++];
	memset(r, 0, sizeof(*r));
	snprintf(r->sampler, sizeof(r->sampler), "%s", sampler);
	snprintf(r->workload, sizeof(r->workload), "%s", workload);
	r->threads = threads;
	r->hz = hz;
	r->repetition = rep;
	r->status = SB_RUN_OK;
	metrics_clear(&r->metrics);
	return r;
}

/* n repetitions of one cell with rate_accuracy = centre + a small spread. */
static void add_cell(struct sb_run *v, size_t *n, const char *sampler, int threads, int reps,
		     double rate, double window_ns)
{
	for (int i = 0; i < reps; i++) {
		struct sb_run *r = add_run(v, n, sampler, "skewed", threads, 100, i);
		r->metrics.rate_accuracy = rate + 0.002 * i;
		r->metrics.thread_tvd = 0.01 + 0.001 * i;
		r->metrics.suspend_window_p99_ns = window_ns + 100 * i;
	}
}

static const char rules[] = "reference gperftools\n"
			    "compare rate_accuracy thread_tvd\n"
			    "regress rate_accuracy off-one 0.05\n"
			    "regress thread_tvd up 0.03\n"
			    "budget mach suspend_window_p99_ns <= 100us if threads<=cores\n"
			    "budget ctimer rate_accuracy >= 0.95 if threads<=cores hz<=tick\n"
			    "budget mach thread_tvd <= gperftools.thread_tvd + 0.01\n"
			    "budget * failed_runs == 0\n";

static int setup(void **state)
{
	(void)state;
	nbase = ncur = 0;
	memset(&host_a, 0, sizeof(host_a));
	snprintf(host_a.host, sizeof(host_a.host), "vm");
	snprintf(host_a.kernel, sizeof(host_a.kernel), "Linux 6");
	host_a.nproc = 2;
	host_a.tick_hz = 250;
	host_b = host_a;
	return gate_config_parse(rules, "b", &cfg, err, sizeof(err));
}

static const struct gate_check *find_check(const struct gate_result *res, enum gate_kind kind,
					   const char *sampler, int threads, const char *metric)
{
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		if (k->kind == kind && !strcmp(k->sampler, sampler) && k->threads == threads &&
		    !strcmp(k->metric, metric))
			return k;
	}
	return NULL;
}

static void eval(struct gate_result *res, int with_base)
{
	struct gate_side b = { .path = "base.h5", .host = &host_a,
				.runs = base_runs, .nruns = nbase };
	struct gate_side c = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(&cfg, with_base ? &b : NULL, &c, res), 0);
}

static void test_same_data_passes(void **state)
{
	(void)state;
	struct gate_result res;
	add_cell(base_runs, &nbase, "ctimer", 2, 5, 0.99, NAN);
	add_cell(cur_runs, &ncur, "ctimer", 2, 5, 0.99, NAN);
	eval(&res, 1);
	assert_int_equal(res.failed, 0);
	const struct gate_check *k = find_check(&res, GATE_REGRESSION, "ctimer", 2, "rate_accuracy");
	assert_non_null(k);
	assert_true(k->p > 0.5);
	assert_int_equal(res.nwarnings, 0);
	gate_result_free(&res);
}

static void test_regression_needs_significance_and_effect(void **state)
{
	(void)state;
	struct gate_result res;
	/* a big drop with 5 reps a side: significant and beyond 0.05 -> regression */
	add_cell(base_runs, &nbase, "ctimer", 2, 5, 0.99, NAN);
	add_cell(cur_runs, &ncur, "ctimer", 2, 5, 0.80, NAN);
	/* a shift that is significant but smaller than the minimum effect -> pass */
	add_cell(base_runs, &nbase, "itimer", 2, 5, 0.99, NAN);
	add_cell(cur_runs, &ncur, "itimer", 2, 5, 0.97, NAN);
	/* an improvement (closer to 1) -> pass */
	add_cell(base_runs, &nbase, "perf", 2, 5, 0.80, NAN);
	add_cell(cur_runs, &ncur, "perf", 2, 5, 0.99, NAN);
	/* a big drop with only 3 reps a side: p >= 0.1, never significant -> undecided */
	add_cell(base_runs, &nbase, "gperftools-pt", 2, 3, 0.99, NAN);
	add_cell(cur_runs, &ncur, "gperftools-pt", 2, 3, 0.50, NAN);
	eval(&res, 1);

	const struct gate_check *k = find_check(&res, GATE_REGRESSION, "ctimer", 2, "rate_accuracy");
	assert_int_equal(k->state, GATE_FAIL);
	assert_true(k->p < 0.05);
	assert_true(fabs(k->effect - 0.19) < 1e-9);
	assert_non_null(strstr(k->reason, "regressed"));
	k = find_check(&res, GATE_REGRESSION, "itimer", 2, "rate_accuracy");
	assert_int_equal(k->state, GATE_PASS);
	assert_true(k->p < 0.05);
	k = find_check(&res, GATE_REGRESSION, "perf", 2, "rate_accuracy");
	assert_int_equal(k->state, GATE_PASS);
	assert_true(k->effect < 0);
	k = find_check(&res, GATE_REGRESSION, "gperftools-pt", 2, "rate_accuracy");
	assert_int_equal(k->state, GATE_UNDECIDED);
	assert_true(k->p >= 0.1);
	assert_non_null(strstr(k->reason, "too few runs to judge"));
	assert_non_null(strstr(k->reason, "3 vs 3 reps can give p=0.100 at best"));
	assert_int_equal(res.undecided, 1);
	/* thread_tvd is the same on both sides everywhere */
	assert_int_equal(find_check(&res, GATE_REGRESSION, "ctimer", 2, "thread_tvd")->state,
			 GATE_PASS);
	/* only the ctimer rate regression and the ctimer rate budget fail */
	assert_int_equal(res.failed, 2);
	assert_int_equal(find_check(&res, GATE_BUDGET, "ctimer", 2, "rate_accuracy")->state,
			 GATE_FAIL);
	gate_result_free(&res);
}

static void test_budget_conditions_use_host_facts(void **state)
{
	(void)state;
	struct gate_result res;
	add_cell(cur_runs, &ncur, "mach", 2, 3, 1.0, 250e3); /* threads <= cores: checked */
	add_cell(cur_runs, &ncur, "mach", 8, 3, 1.0, 250e3); /* threads > cores: not */
	add_cell(cur_runs, &ncur, "ctimer", 2, 3, 0.5, NAN);
	eval(&res, 0);
	const struct gate_check *k = find_check(&res, GATE_BUDGET, "mach", 2, "suspend_window_p99_ns");
	assert_non_null(k);
	assert_int_equal(k->state, GATE_FAIL);
	assert_true(k->current == 250100); /* the median of the 3 repetitions */
	assert_null(find_check(&res, GATE_BUDGET, "mach", 8, "suspend_window_p99_ns"));
	assert_int_equal(find_check(&res, GATE_BUDGET, "ctimer", 2, "rate_accuracy")->state,
			 GATE_FAIL);
	gate_result_free(&res);

	/* an unknown tick rate: hz<=tick budgets are not applied, and that is said loudly */
	host_b.tick_hz = -1;
	eval(&res, 0);
	assert_null(find_check(&res, GATE_BUDGET, "ctimer", 2, "rate_accuracy"));
	assert_int_equal(res.nwarnings, 1);
	assert_non_null(strstr(res.warnings[0], "tick"));
	gate_result_free(&res);
}

/* A build variant's cell (hotspot@nofp) is its workload's for `workload=` and its own for
 * `variant=`; the plain build is variant fp. Mutation: `workload=` comparing the whole
 * name (fails: hotspot@nofp escapes the first rule). */
static void test_variant_conditions(void **state)
{
	(void)state;
	static struct gate_config c2;
	struct gate_result res;
	char e[256];
	const char *names[] = { "hotspot", "hotspot@nofp", "hotspot@inline", "skewed" };

	assert_int_equal(gate_config_parse("budget * rate_accuracy >= 0.9 if workload=hotspot\n"
					   "budget * thread_tvd <= 0.001 if variant!=fp\n"
					   "budget * thread_tvd <= 0.002 if variant=fp workload!=skewed\n",
					   "v", &c2, e, sizeof(e)), 0);
	for (int w = 0; w < 4; w++)
		for (int i = 0; i < 3; i++) {
			struct sb_run *r = add_run(cur_runs, &ncur, "ctimer", names[w], 2, 100, i);
			r->metrics.rate_accuracy = 0.5; /* fails where judged */
			r->metrics.thread_tvd = 0.01;
		}
	struct gate_side c = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(&c2, NULL, &c, &res), 0);
	int rate[4] = { 0 }, tvd[4] = { 0 };
	for (size_t i = 0; i < res.nchecks; i++)
		for (int w = 0; w < 4; w++)
			if (!strcmp(res.checks[i].workload, names[w])) {
				rate[w] += !strcmp(res.checks[i].metric, "rate_accuracy");
				tvd[w] += !strcmp(res.checks[i].metric, "thread_tvd");
			}
	assert_int_equal(rate[0] + rate[1] + rate[2] + rate[3], 3); /* the three hotspot builds */
	assert_int_equal(rate[3], 0);
	assert_int_equal(tvd[0], 1); /* variant=fp */
	assert_int_equal(tvd[1] + tvd[2], 2); /* variant!=fp */
	assert_int_equal(tvd[3], 0); /* fp, but skewed */
	gate_result_free(&res);
	assert_int_equal(gate_config_parse("budget * rate_accuracy >= 0.9 if variant=O3\n", "v", &c2,
					   e, sizeof(e)), -1);
	assert_non_null(strstr(e, "unknown variant 'O3'"));
}

/* sign-test budgets: over the limit in 3 of 5 runs is noise, in 5 of 5 it is a verdict */
static void test_sign_test_budget(void **state)
{
	(void)state;
	static struct gate_config c2;
	struct gate_result res;
	char e[256];
	assert_int_equal(gate_config_parse("budget mach suspend_window_p99_ns <= 100us sign-test\n",
					   "s", &c2, e, sizeof(e)), 0);
	static const double mixed[] = { 80e3, 120e3, 90e3, 150e3, 130e3 }; /* median 120 us */
	static const double slow[] = { 2.1e6, 2.0e6, 2.2e6, 2.05e6, 2.3e6 };
	for (int pass = 0; pass < 2; pass++) {
		ncur = 0;
		for (int i = 0; i < 5; i++)
			add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i)
				->metrics.suspend_window_p99_ns = pass ? slow[i] : mixed[i];
		struct gate_side cs = { .path = "cur.h5", .host = &host_b,
					.runs = cur_runs, .nruns = ncur };
		assert_int_equal(gate_eval(&c2, NULL, &cs, &res), 0);
		const struct gate_check *k = find_check(&res, GATE_BUDGET, "mach", 2,
							"suspend_window_p99_ns");
		assert_non_null(k);
		if (pass == 0) {
			/* a plain median rule would fail; 3 of 5 over has p = 0.5 */
			assert_true(k->current > 100e3);
			assert_int_equal(k->state, GATE_PASS);
			assert_float_equal(k->p, 0.5, 1e-12);
		} else {
			assert_int_equal(k->state, GATE_FAIL);
			assert_float_equal(k->p, 1.0 / 32, 1e-12);
			assert_non_null(strstr(k->reason, "5 of 5 runs over"));
		}
		gate_result_free(&res);
	}
}

/* Adaptive repetitions, the calls alone: a median rule is decided once more than half of
 * the cell's maximum agree (not half of the runs so far), a sign test once every outcome
 * of the runs to come gives the same verdict. Mutation killed: deciding the median on a
 * majority of the runs so far (2 * ok > n) calls {1, 0.5, 1} of 3..5 a pass. */
static void test_adaptive_calls(void **state)
{
	(void)state;
	static const double pass3[] = { 1.0, 0.99, 1.0 }, fail3[] = { 0.5, 0.4, 0.6 };
	static const double split3[] = { 1.0, 0.5, 1.0 }, split5[] = { 1.0, 0.5, 1.0, 0.5, 0.4 };
	assert_int_equal(gate_median_call(pass3, 3, 5, GATE_GE, 0.9), GATE_PASS);
	assert_int_equal(gate_median_call(fail3, 3, 5, GATE_GE, 0.9), GATE_FAIL);
	assert_int_equal(gate_median_call(split3, 3, 5, GATE_GE, 0.9), -1);
	assert_int_equal(gate_median_call(split3, 2, 5, GATE_GE, 0.9), -1);
	assert_int_equal(gate_median_call(split3, 3, 3, GATE_GE, 0.9), GATE_PASS); /* at max */
	assert_int_equal(gate_median_call(split5, 5, 5, GATE_GE, 0.9), GATE_FAIL);
	/* even maximum: 2 of 4 cannot decide the mean of the two middle runs */
	assert_int_equal(gate_median_call(pass3, 2, 4, GATE_GE, 0.9), -1);
	assert_int_equal(gate_median_call(pass3, 3, 4, GATE_GE, 0.9), GATE_PASS);
	/* sign test at 5: fails only at 5 of 5 (p = 1/32); 4 of 5 is p = 0.1875 */
	assert_int_equal(gate_sign_call(0, 3, 5, 0.05), GATE_PASS);
	assert_int_equal(gate_sign_call(2, 3, 5, 0.05), GATE_PASS); /* one under: 4 of 5 at most */
	assert_int_equal(gate_sign_call(3, 3, 5, 0.05), -1);
	assert_int_equal(gate_sign_call(4, 4, 5, 0.05), -1);
	assert_int_equal(gate_sign_call(5, 5, 5, 0.05), GATE_FAIL);
	/* at 3 runs no outcome reaches 0.05: most over is undecided, whatever comes */
	assert_int_equal(gate_sign_call(2, 2, 3, 0.05), GATE_UNDECIDED);
	assert_int_equal(gate_sign_call(1, 2, 3, 0.05), -1);
}

/* Adaptive cells in a verdict: each gets a `reps` row, decided at 3 of 3..5 when its runs
 * agree, a warning while a check is open below the maximum; a sign test decided for 5
 * runs passes at 3 where a fixed 3-run cell is undecided. */
static void test_adaptive_cells(void **state)
{
	(void)state;
	static struct gate_config c2;
	struct gate_result res;
	char e[256];
	static const double rate[3][3] = { { 0.99, 1.0, 0.98 }, { 0.99, 0.5, 1.0 },
					   { 0.94, 0.96, 0.94 } };
	static const char *const who[3] = { "ctimer", "itimer", "perf" };
	assert_int_equal(gate_config_parse("budget ctimer,itimer rate_accuracy >= 0.9\n"
					   "budget perf rate_accuracy >= 0.95 sign-test\n",
					   "a", &c2, e, sizeof(e)), 0);
	ncur = 0;
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 3; i++) {
			struct sb_run *r = add_run(cur_runs, &ncur, who[c], "balanced", 2, 100, i);
			r->metrics.rate_accuracy = rate[c][i];
			assert_int_equal(run_alloc_stats(r), 0);
			run_add_stat(r, "reps_min", 3);
			run_add_stat(r, "reps_max", 5);
		}
	struct gate_side cs = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(&c2, NULL, &cs, &res), 0);
	const struct gate_check *k = find_check(&res, GATE_REPS, "ctimer", 2, "reps");
	assert_non_null(k);
	assert_int_equal(k->state, GATE_PASS);
	assert_non_null(strstr(k->reason, "reps 3 of 3..5: decided"));
	k = find_check(&res, GATE_REPS, "itimer", 2, "reps");
	assert_int_equal(k->state, GATE_WARN);
	assert_non_null(strstr(k->reason, "undecided"));
	assert_true(find_check(&res, GATE_BUDGET, "itimer", 2, "rate_accuracy")->open);
	k = find_check(&res, GATE_BUDGET, "perf", 2, "rate_accuracy");
	assert_int_equal(k->state, GATE_PASS);
	assert_false(k->open);
	assert_int_equal(find_check(&res, GATE_REPS, "perf", 2, "reps")->state, GATE_PASS);
	gate_result_free(&res);
	for (size_t i = 0; i < ncur; i++)
		free(cur_runs[i].stats);
}

/* Adaptive cells against a baseline: a U test 3 runs against 3 cannot decide (best p
 * 0.100) is open, so the bench runs the cell on; against 5 it can (0.036) and is judged.
 * Mutation killed: regression rows never open (the bench would leave the cell at 3). */
static void test_adaptive_regression(void **state)
{
	(void)state;
	struct gate_result res;
	for (int nb = 3; nb <= 5; nb += 2) {
		nbase = ncur = 0;
		add_cell(base_runs, &nbase, "ctimer", 2, nb, 1.0, 50e3);
		add_cell(cur_runs, &ncur, "ctimer", 2, 3, 0.5, 50e3);
		for (size_t i = 0; i < ncur; i++) {
			assert_int_equal(run_alloc_stats(&cur_runs[i]), 0);
			run_add_stat(&cur_runs[i], "reps_min", 3);
			run_add_stat(&cur_runs[i], "reps_max", 5);
		}
		struct gate_side bs = { .path = "base.h5", .host = &host_a, .runs = base_runs,
					.nruns = nbase };
		struct gate_side cs = { .path = "cur.h5", .host = &host_b, .runs = cur_runs,
					.nruns = ncur };
		assert_int_equal(gate_eval(&cfg, &bs, &cs, &res), 0);
		const struct gate_check *k = find_check(&res, GATE_REGRESSION, "ctimer", 2,
							"rate_accuracy");
		assert_non_null(k);
		assert_int_equal(k->state, nb == 3 ? GATE_UNDECIDED : GATE_FAIL);
		assert_int_equal(k->open, nb == 3);
		k = find_check(&res, GATE_REPS, "ctimer", 2, "reps");
		assert_int_equal(k->state, nb == 3 ? GATE_WARN : GATE_PASS);
		gate_result_free(&res);
		for (size_t i = 0; i < ncur; i++)
			free(cur_runs[i].stats);
	}
}

/* `worst` budgets judge the cell's worst run: one 40 ms stop in 5 runs fails, naming the
 * run; the median of the runs would pass it */
static void test_worst_budget(void **state)
{
	(void)state;
	static struct gate_config c2;
	struct gate_result res;
	char e[256];
	assert_int_equal(gate_config_parse("budget * suspend_window_max_ns <= 10ms worst\n", "s",
					   &c2, e, sizeof(e)), 0);
	assert_int_equal(gate_config_parse("budget * suspend_window_max_ns <= 10ms sign-test worst\n",
					   "s", &c2, e, sizeof(e)), -1);
	assert_non_null(strstr(e, "exclude"));
	assert_int_equal(gate_config_parse("budget * suspend_window_max_ns <= 10ms worst\n", "s",
					   &c2, e, sizeof(e)), 0);
	static const double ok[] = { 300e3, 420e3, 380e3, 2.5e6, 350e3 };
	static const double stuck[] = { 300e3, 420e3, 40.2e6, 390e3, 350e3 };
	/* the stuck run's samples: its 40.2 ms stop on thread 1, 0.5 s after its first sample */
	static struct sb_sample s[3];
	for (int i = 0; i < 3; i++) {
		s[i] = sample_unknown();
		s[i].thread_index = i == 2;
		s[i].time_ns = 7000000000ull + (uint64_t)i * 250000000ull;
		s[i].suspend_window_ns = i == 2 ? 40.2e6 : 50e3;
	}
	for (int pass = 0; pass < 2; pass++) {
		ncur = 0;
		for (int i = 0; i < 5; i++) {
			struct sb_run *r = add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i);
			r->run_id = 10 + i;
			r->metrics.suspend_window_max_ns = pass ? stuck[i] : ok[i];
			if (pass && i == 2) {
				r->samples = s;
				r->nsamples = 3;
			}
		}
		struct gate_side cs = { .path = "cur.h5", .host = &host_b,
					.runs = cur_runs, .nruns = ncur };
		assert_int_equal(gate_eval(&c2, NULL, &cs, &res), 0);
		const struct gate_check *k = find_check(&res, GATE_BUDGET, "mach", 2,
							"suspend_window_max_ns");
		assert_non_null(k);
		if (pass == 0) {
			assert_int_equal(k->state, GATE_PASS);
			assert_float_equal(k->current, 2.5e6, 1e-6);
		} else {
			assert_int_equal(k->state, GATE_FAIL);
			assert_float_equal(k->current, 40.2e6, 1e-6);
			assert_non_null(strstr(k->reason, "worst of 5 runs: run 12, thread 1, "
							  "0.500 s into the run"));
		}
		gate_result_free(&res);
	}
	cur_runs[2].samples = NULL; /* static: a later run_free must not free it */
	cur_runs[2].nsamples = 0;
}

/* a report far below what the threads lived through fails naming both numbers */
static void test_unreported_names_both(void **state)
{
	(void)state;
	static struct gate_config c2;
	struct gate_result res;
	char e[256];
	assert_int_equal(gate_config_parse("budget * window_unreported_p50_ns <= 500us\n", "s", &c2,
					   e, sizeof(e)), 0);
	ncur = 0;
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i);
		r->metrics.window_unreported_p50_ns = 1.58e6 + 1e3 * i;
		r->metrics.window_observed_p50_ns = 1.6e6 + 1e3 * i;
		r->metrics.suspend_window_p50_ns = 20e3;
	}
	struct gate_side cs = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(&c2, NULL, &cs, &res), 0);
	const struct gate_check *k = find_check(&res, GATE_BUDGET, "mach", 2,
						"window_unreported_p50_ns");
	assert_non_null(k);
	assert_int_equal(k->state, GATE_FAIL);
	assert_non_null(strstr(k->reason, "threads lived through 1601.0µs, the sampler reported "
				      "20.0µs"));
	gate_result_free(&res);
}

static void test_reference_budget_and_missing_reference(void **state)
{
	(void)state;
	struct gate_result res;
	add_cell(cur_runs, &ncur, "gperftools", 2, 3, 0.9, NAN); /* thread_tvd ~0.011 */
	for (int i = 0; i < 3; i++) {
		add_run(cur_runs, &ncur, "mach", "skewed", 2, 100, i)->metrics.thread_tvd = 0.05;
		add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i)->metrics.thread_tvd = 0.0;
	}
	eval(&res, 0);
	const struct gate_check *k = NULL;
	for (size_t i = 0; i < res.nchecks; i++)
		if (res.checks[i].kind == GATE_BUDGET && !strcmp(res.checks[i].metric, "thread_tvd") &&
		    !strcmp(res.checks[i].workload, "skewed"))
			k = &res.checks[i];
	assert_non_null(k);
	assert_int_equal(k->state, GATE_FAIL);            /* 0.05 > 0.011 + 0.01 */
	assert_true(fabs(k->baseline - 0.021) < 1e-9);    /* the limit it was held to */
	for (size_t i = 0; i < res.nchecks; i++)
		if (res.checks[i].kind == GATE_BUDGET && !strcmp(res.checks[i].metric, "thread_tvd") &&
		    !strcmp(res.checks[i].workload, "balanced")) {
			assert_int_equal(res.checks[i].state, GATE_WARN); /* no gperftools there */
			assert_non_null(strstr(res.checks[i].reason, "no gperftools"));
		}
	gate_result_free(&res);

	/* a limit against `none` in a file without none runs is not measured (as overhead
	 * is), not a warning. Mutation: the none case left a warning -> fails here */
	static struct gate_config c2;
	char e[256];
	assert_int_equal(gate_config_parse("budget * pause_max_ns <= none.pause_max_ns + 10ms\n",
					   "n", &c2, e, sizeof(e)), 0);
	for (size_t i = 0; i < ncur; i++)
		cur_runs[i].metrics.pause_max_ns = 1e6;
	struct gate_side cs = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(&c2, NULL, &cs, &res), 0);
	k = find_check(&res, GATE_BUDGET, "mach", 2, "pause_max_ns");
	assert_non_null(k);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "not measured: no none pause_max_ns in this cell"));
	assert_int_equal(res.warned, 0);
	gate_result_free(&res);
}

static void test_missing_cells_failed_runs_and_host_mismatch(void **state)
{
	(void)state;
	struct gate_result res;
	add_cell(base_runs, &nbase, "ctimer", 2, 5, 0.99, NAN);
	add_cell(base_runs, &nbase, "itimer", 2, 5, 0.99, NAN);
	add_cell(cur_runs, &ncur, "ctimer", 2, 5, 0.99, NAN);
	add_cell(cur_runs, &ncur, "perf", 2, 5, 0.99, NAN);
	cur_runs[ncur - 1].status = SB_RUN_FAILED;
	host_b.nproc = 4;
	eval(&res, 1);
	const struct gate_check *k = find_check(&res, GATE_MISSING, "itimer", 2, "-");
	assert_non_null(k);
	assert_int_equal(k->state, GATE_WARN);
	assert_non_null(strstr(k->reason, "missing in the current"));
	k = find_check(&res, GATE_MISSING, "perf", 2, "-");
	assert_non_null(k);
	assert_non_null(strstr(k->reason, "missing in the baseline"));
	k = find_check(&res, GATE_BUDGET, "perf", 2, "failed_runs");
	assert_int_equal(k->state, GATE_FAIL);
	assert_true(k->current == 1);
	assert_int_equal(res.failed, 1);
	assert_int_equal(res.nwarnings, 1);
	assert_non_null(strstr(res.warnings[0], "nproc 2 vs 4"));
	gate_result_free(&res);
}


/* --- classes, not names (issue 12) --- */

static struct gate_config ccfg;

static const struct gate_check *find_budget_line(const struct gate_result *res,
						 const char *sampler, const char *metric, int line)
{
	char tag[32];
	snprintf(tag, sizeof(tag), "c:%d)", line);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		if (k->kind == GATE_BUDGET && !strcmp(k->sampler, sampler) &&
		    !strcmp(k->metric, metric) && (!line || strstr(k->reason, tag) || strstr(k->why, tag)))
			return k;
	}
	return NULL;
}

static void eval_cfg(const struct gate_config *c, struct gate_result *res)
{
	struct gate_side cs = { .path = "cur.h5", .host = &host_b,
				.runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(c, NULL, &cs, res), 0);
}

/* Sets a run's class stats as sampler/plugin.c does for a plugin. */
static void set_class(struct sb_run *r, unsigned caps, int abi)
{
	static struct sb_stat_row rows[MAXRUNS][2];
	struct sb_stat_row *st = rows[r - cur_runs];
	snprintf(st[0].name, sizeof(st[0].name), "class_caps");
	st[0].value = caps;
	snprintf(st[1].name, sizeof(st[1].name), "class_abi");
	st[1].value = abi;
	r->stats = st;
	r->nstats = 2;
}

static void test_class_rules_by_what_a_sampler_is(void **state)
{
	(void)state;
	struct gate_result res;
	assert_int_equal(gate_config_parse("budget * thread_tvd <= 0.05 if scope=thread\n"
					   "budget * thread_tvd <= 0.35 if scope=process\n"
					   "budget * magnitude_error <= 0.1 if has=weights\n"
					   "budget * rate_accuracy >= 0.9 if clock=wall\n",
					   "c", &ccfg, err, sizeof(err)), 0);
	/* a plugin declaring a process-wide timer, tvd 0.5 (one of 2 threads): over 0.35 */
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "my-itimer", "balanced", 2, 100, i);
		r->metrics.thread_tvd = 0.5;
		set_class(r, SB_CAP_PROCESS_WIDE | SB_CAP_THREAD_IDS, 2);
	}
	/* a name this sampbench never heard of, no class in the file: every rule of its
	 * clock applies, per-thread */
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "mystery", "balanced", 2, 100, i);
		r->metrics.thread_tvd = 0.2;
		r->metrics.magnitude_error = 0.5;
	}
	/* the built-in itimer is process-wide by its table entry: 0.2 passes 0.35 */
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "itimer", "balanced", 2, 100, i);
		r->metrics.thread_tvd = 0.2;
		r->metrics.magnitude_error = 0.01;
	}
	eval_cfg(&ccfg, &res);

	const struct gate_check *k = find_budget_line(&res, "my-itimer", "thread_tvd", 2);
	assert_non_null(k);
	assert_int_equal(k->state, GATE_FAIL);
	assert_non_null(strstr(k->why, "rule c:2"));
	assert_non_null(strstr(k->why, "process-wide signal"));
	assert_non_null(strstr(k->why, "declared by the plugin"));
	assert_null(find_budget_line(&res, "my-itimer", "thread_tvd", 1));
	assert_null(find_budget_line(&res, "my-itimer", "magnitude_error", 0)); /* no weights */
	k = find_budget_line(&res, "mystery", "thread_tvd", 1);
	assert_int_equal(k->state, GATE_FAIL);
	assert_non_null(strstr(k->why, "every capability assumed"));
	assert_int_equal(find_budget_line(&res, "mystery", "magnitude_error", 3)->state, GATE_FAIL);
	assert_int_equal(find_budget_line(&res, "itimer", "thread_tvd", 2)->state, GATE_PASS);
	assert_null(find_budget_line(&res, "itimer", "rate_accuracy", 0)); /* cpu clock */
	assert_int_equal(res.failed, 3);
	gate_result_free(&res);

	/* the same plugin built against ABI v1: the defaults (per-thread) and the verdict
	 * says they were assumed */
	for (size_t i = 0; i < 3; i++)
		set_class(&cur_runs[i], SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS, 1);
	eval_cfg(&ccfg, &res);
	k = find_budget_line(&res, "my-itimer", "thread_tvd", 1);
	assert_int_equal(k->state, GATE_FAIL);
	assert_non_null(strstr(k->why, "v1 defaults assumed"));
	gate_result_free(&res);
}

/* stack_unwalkable_fraction counts samples on workload threads, like stack_correct: a
 * sampler with stacks but no thread ids (gperftools' format) is "not measured", one that
 * claims both and gives NaN fails. */
static void test_unwalkable_needs_thread_ids(void **state)
{
	(void)state;
	struct gate_result res;
	assert_int_equal(gate_config_parse("budget * stack_unwalkable_fraction <= 0.2\n", "c", &ccfg,
					   err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		add_run(cur_runs, &ncur, "ctimer", "balanced", 2, 100, i)
			->metrics.stack_unwalkable_fraction = 0.01;
		struct sb_run *st = add_run(cur_runs, &ncur, "stacks-only", "balanced", 2, 100, i);
		set_class(st, SB_CAP_STACKS, 2);
		st->nsamples = 40;
		struct sb_run *both = add_run(cur_runs, &ncur, "claims-both", "balanced", 2, 100, i);
		set_class(both, SB_CAP_STACKS | SB_CAP_THREAD_IDS, 2);
		both->nsamples = 40;
	}
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "stacks-only", "stack_unwalkable_fraction", 0);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "not measured: stacks-only does not claim thread_ids"));
	assert_int_equal(find_budget_line(&res, "claims-both", "stack_unwalkable_fraction", 0)->state,
			 GATE_FAIL);
	assert_int_equal(find_budget_line(&res, "ctimer", "stack_unwalkable_fraction", 0)->state,
			 GATE_PASS);
	gate_result_free(&res);
}

static void test_nan_claimed_fails_unclaimed_not_measured(void **state)
{
	(void)state;
	struct gate_result res;
	assert_int_equal(gate_config_parse("budget * suspend_window_p50_ns <= 1ms\n"
					   "budget * misattributed_fraction <= 0.01\n",
					   "c", &ccfg, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		/* ctimer measures both: the workload defines them */
		struct sb_run *r = add_run(cur_runs, &ncur, "ctimer", "balanced", 2, 100, i);
		r->metrics.suspend_window_p50_ns = 10e3;
		r->metrics.misattributed_fraction = 0;
		/* perf does not claim suspend windows: NaN is "not measured" */
		add_run(cur_runs, &ncur, "perf", "balanced", 2, 100, i)->metrics.misattributed_fraction = 0;
		/* a plugin claiming windows and stacks that gives neither, though it took
		 * samples (nsamples without a sample array: the values are NaN) */
		struct sb_run *claims = add_run(cur_runs, &ncur, "claims-all", "balanced", 2, 100, i);
		set_class(claims, SB_CAP_THREAD_IDS | SB_CAP_STACKS | SB_CAP_SUSPEND_WINDOW, 2);
		claims->nsamples = 40;
		/* the same plugin without a sample on churn: no fraction of samples exists */
		struct sb_run *ref = add_run(cur_runs, &ncur, "ctimer", "churn", 2, 100, i);
		ref->metrics.misattributed_fraction = 0;
		ref->metrics.suspend_window_p50_ns = 10e3;
		set_class(add_run(cur_runs, &ncur, "claims-all", "churn", 2, 100, i),
			  SB_CAP_THREAD_IDS | SB_CAP_STACKS | SB_CAP_SUSPEND_WINDOW, 2);
		/* stacks without thread ids (a tool whose format has none, gperftools'): a
		 * sample's slot cannot be checked against its stack */
		struct sb_run *st = add_run(cur_runs, &ncur, "stacks-only", "balanced", 2, 100, i);
		set_class(st, SB_CAP_STACKS, 2);
		st->nsamples = 40;
		/* hotspot: nobody's leaf names a thread, misattributed is undefined there */
		add_run(cur_runs, &ncur, "ctimer", "hotspot", 2, 100, i)->metrics.suspend_window_p50_ns = 10e3;
	}
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "perf", "suspend_window_p50_ns", 0);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "not measured: perf does not claim suspend_window"));
	k = find_budget_line(&res, "claims-all", "suspend_window_p50_ns", 0);
	assert_int_equal(k->state, GATE_FAIL);
	assert_non_null(strstr(k->reason, "claims it"));
	assert_int_equal(find_budget_line(&res, "claims-all", "misattributed_fraction", 0)->state,
			 GATE_FAIL);
	for (size_t i = 0; i < res.nchecks; i++)
		if (!strcmp(res.checks[i].workload, "hotspot") &&
		    !strcmp(res.checks[i].metric, "misattributed_fraction")) {
			assert_int_equal(res.checks[i].state, GATE_NA);
			assert_non_null(strstr(res.checks[i].reason, "no sampler of this file"));
		}
	for (size_t i = 0; i < res.nchecks; i++)
		if (!strcmp(res.checks[i].workload, "churn") &&
		    !strcmp(res.checks[i].sampler, "claims-all")) {
			assert_int_equal(res.checks[i].state, GATE_NA);
			assert_non_null(strstr(res.checks[i].reason, "no samples in any run"));
		}
	k = find_budget_line(&res, "stacks-only", "misattributed_fraction", 0);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "not measured: stacks-only does not claim thread_ids"));
	assert_int_equal(res.failed, 2);
	assert_int_equal(res.na, 6);
	gate_result_free(&res);
}

/* A tool's class as its recipe declares it (harness/tool_run.c): class_caps and
 * class_recipe. */
static void set_recipe_class(struct sb_run *r, unsigned caps)
{
	static struct sb_stat_row rows[MAXRUNS][2];
	struct sb_stat_row *st = rows[r - cur_runs];
	snprintf(st[0].name, sizeof(st[0].name), "class_caps");
	st[0].value = caps;
	snprintf(st[1].name, sizeof(st[1].name), "class_recipe");
	st[1].value = 1;
	r->stats = st;
	r->nstats = 2;
}

/* On an inline build the function shares need frames that name inlined functions: a tool
 * whose recipe does not say it names them is "not measured" there (and judged on the
 * plain build), one that says so fails, and a sampler whose frames are PCs, which
 * sampbench names with their inline chains, fails too. */
static void test_inline_frames_claim(void **state)
{
	(void)state;
	struct gate_result res;
	const unsigned tool = SB_CAP_THREAD_IDS | SB_CAP_STACKS;
	assert_int_equal(gate_config_parse("budget * function_misfit <= 0.05\n", "c", &ccfg, err,
					   sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		const char *wl[] = { "hotspot@inline", "hotspot" };
		for (int w = 0; w < 2; w++) {
			/* someone measures it on both builds */
			add_run(cur_runs, &ncur, "ctimer", wl[w], 2, 100, i)->metrics.function_misfit = 0;
			struct sb_run *r = add_run(cur_runs, &ncur, "tool-plain", wl[w], 2, 100, i);
			set_recipe_class(r, tool);
			r->nsamples = 40;
		}
		struct sb_run *r = add_run(cur_runs, &ncur, "tool-inline", "hotspot@inline", 2, 100, i);
		set_recipe_class(r, tool | SB_CAP_INLINE_FRAMES);
		r->nsamples = 40;
		r = add_run(cur_runs, &ncur, "plugin-pcs", "hotspot@inline", 2, 100, i);
		set_class(r, tool, 2);
		r->nsamples = 40;
	}
	eval_cfg(&ccfg, &res);
	int seen = 0;
	for (size_t i = 0; i < res.nchecks; i++) {
		const struct gate_check *k = &res.checks[i];
		if (strcmp(k->metric, "function_misfit") || !strcmp(k->sampler, "ctimer"))
			continue;
		int plain_tool = !strcmp(k->sampler, "tool-plain") && strcmp(k->workload, "hotspot");
		assert_int_equal(k->state, plain_tool ? GATE_NA : GATE_FAIL);
		if (plain_tool)
			assert_non_null(strstr(k->reason, "does not claim inline_frames"));
		seen++;
	}
	assert_int_equal(seen, 4); /* tool-plain on both builds, tool-inline, plugin-pcs */
	assert_int_equal(res.failed, 3);
	gate_result_free(&res);
}

/* The footprint rules (ci/budgets): a sampler that under-reports its CPU fails the measured
 * rule exactly where an honest one does, and the claim rule besides; NaN footprint metrics
 * (a tool's run: no process accounting; a sampler that claims no CPU) are "not measured",
 * never a failure. */
static void test_footprint_rules(void **state)
{
	(void)state;
	struct gate_result res;
	assert_int_equal(gate_config_parse(
		"budget * sampler_cpu_measured_fraction <= none.sampler_cpu_measured_fraction + 0.05 if clock=cpu\n"
		"budget * sampler_cpu_unreported_fraction <= 0.02\n"
		"budget * rss_growth_bytes_per_s <= none.rss_growth_bytes_per_s + 4000000\n",
		"c", &ccfg, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		struct sb_run *n = add_run(cur_runs, &ncur, "none", "mixed", 2, 100, i);
		n->metrics.sampler_cpu_measured_fraction = 0.002;
		n->metrics.rss_growth_bytes_per_s = 0;
		struct sb_run *r = add_run(cur_runs, &ncur, "ctimer", "mixed", 2, 100, i);
		r->metrics.sampler_cpu_measured_fraction = 0.002;
		r->metrics.sampler_cpu_unreported_fraction = 0.001;
		r->metrics.rss_growth_bytes_per_s = 8e3;
		const char *names[] = { "liar", "honest", "quiet" };
		for (int k = 0; k < 3; k++) {
			r = add_run(cur_runs, &ncur, names[k], "mixed", 2, 100, i);
			r->clock = SB_CLOCK_CPU;
			set_class(r, SB_CAP_THREAD_IDS | SB_CAP_STACKS, 2);
			r->nsamples = 40; /* it sampled: its NaNs are not for want of samples */
			r->metrics.sampler_cpu_measured_fraction = 0.4;
			r->metrics.rss_growth_bytes_per_s = 0;
		}
		cur_runs[ncur - 3].metrics.sampler_cpu_unreported_fraction = 0.399; /* liar */
		cur_runs[ncur - 2].metrics.sampler_cpu_unreported_fraction = 0.001; /* honest */
		/* a tool's run: no process accounting at all */
		r = add_run(cur_runs, &ncur, "tool-x", "mixed", 2, 100, i);
		r->clock = SB_CLOCK_CPU;
		r->nsamples = 40;
		set_class(r, SB_CAP_STACKS, 2);
	}
	eval_cfg(&ccfg, &res);
	assert_int_equal(find_budget_line(&res, "ctimer", "sampler_cpu_measured_fraction", 1)->state,
			 GATE_PASS);
	assert_int_equal(find_budget_line(&res, "liar", "sampler_cpu_measured_fraction", 1)->state,
			 GATE_FAIL);
	assert_int_equal(find_budget_line(&res, "honest", "sampler_cpu_measured_fraction", 1)->state,
			 GATE_FAIL);
	assert_int_equal(find_budget_line(&res, "liar", "sampler_cpu_unreported_fraction", 2)->state,
			 GATE_FAIL);
	assert_int_equal(find_budget_line(&res, "honest", "sampler_cpu_unreported_fraction", 2)->state,
			 GATE_PASS);
	const struct gate_check *k = find_budget_line(&res, "quiet", "sampler_cpu_unreported_fraction", 2);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "reports no sampler_cpu_ns"));
	k = find_budget_line(&res, "tool-x", "rss_growth_bytes_per_s", 3);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "no process accounting"));
	k = find_budget_line(&res, "tool-x", "sampler_cpu_measured_fraction", 1);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "no process accounting"));
	assert_int_equal(res.failed, 4); /* liar x 2, honest, quiet's measured CPU */
	gate_result_free(&res);
}

static void test_expect_line_exempts_with_reason(void **state)
{
	(void)state;
	struct gate_result res;
	expect_config_error("expect ptrace suspend_window_p99_ns\n", 1, "the reason is required");
	assert_int_equal(gate_config_parse("budget * rate_accuracy >= 0.95\n"
					   "expect ctimer rate_accuracy measured 0.9 here, see README\n",
					   "c", &ccfg, err, sizeof(err)), 0);
	assert_int_equal(ccfg.nexpects, 1);
	assert_string_equal(ccfg.expects[0].reason, "measured 0.9 here, see README");
	add_cell(cur_runs, &ncur, "ctimer", 2, 3, 0.9, NAN);
	add_cell(cur_runs, &ncur, "perf", 2, 3, 0.9, NAN);
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "ctimer", "rate_accuracy", 0);
	assert_int_equal(k->state, GATE_EXEMPT);
	assert_non_null(strstr(k->reason, "EXPECTED (c:2: measured 0.9 here, see README)"));
	assert_int_equal(find_budget_line(&res, "perf", "rate_accuracy", 0)->state, GATE_FAIL);
	assert_int_equal(res.failed, 1);
	assert_int_equal(res.exempt, 1);
	gate_result_free(&res);
}

static const char suspend_rules[] =
	"budget * suspend_window_p99_ns <= 100us floor host.rendezvous_p99_ns if has=suspend_window\n"
	"budget * suspend_window_p99_ns <= 2.0 * host.rendezvous_p99_ns if has=suspend_window\n";

static void test_host_fact_and_floor_budgets(void **state)
{
	(void)state;
	struct gate_result res;
	assert_int_equal(gate_config_parse(suspend_rules, "c", &ccfg, err, sizeof(err)), 0);
	assert_string_equal(ccfg.budgets[0].floor_fact, "rendezvous_p99_ns");
	assert_string_equal(ccfg.budgets[1].host_fact, "rendezvous_p99_ns");
	assert_true(ccfg.budgets[1].value == 2.0);
	expect_config_error("budget * suspend_window_p99_ns <= 2 * rendezvous\n", 1, "host fact");
	add_cell(cur_runs, &ncur, "mach", 2, 3, 1.0, 250e3);       /* healthy on a slow host */
	add_cell(cur_runs, &ncur, "fault-slow", 2, 3, 1.0, 2.1e6); /* 2 ms holds */

	/* no calibration in the file: the relative budget is "not measured", visibly */
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "mach", "suspend_window_p99_ns", 2);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "no host fact rendezvous_p99_ns"));
	assert_int_equal(find_budget_line(&res, "mach", "suspend_window_p99_ns", 1)->state, GATE_FAIL);
	gate_result_free(&res);

	/* calibrated, but without the floor's fact (a file from before it was measured):
	 * whether this host allows the absolute budget is unknown, and the row says so */
	host_b.ncalib = 1;
	eval_cfg(&ccfg, &res);
	k = find_budget_line(&res, "mach", "suspend_window_p99_ns", 1);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "calibration has no host fact rendezvous_p99_ns"));
	gate_result_free(&res);
	host_b.ncalib = 0;

	/* this host's floor (150 us) is over 100 us: the absolute budget is not applicable,
	 * said in its row; the relative one (300 us) judges: mach passes, fault-slow fails */
	assert_int_equal(host_fact_set(&host_b, "rendezvous_p99_ns", 150e3), 0);
	eval_cfg(&ccfg, &res);
	k = find_budget_line(&res, "mach", "suspend_window_p99_ns", 1);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "absolute budget not applicable: floor 150.0µs"));
	k = find_budget_line(&res, "mach", "suspend_window_p99_ns", 2);
	assert_int_equal(k->state, GATE_PASS);
	assert_true(k->baseline == 300e3);
	assert_int_equal(find_budget_line(&res, "fault-slow", "suspend_window_p99_ns", 2)->state,
			 GATE_FAIL);
	assert_int_equal(res.failed, 1);
	gate_result_free(&res);

	/* a fast host (floor 30 us): both apply; fault-slow fails both */
	assert_int_equal(host_fact_set(&host_b, "rendezvous_p99_ns", 30e3), 0);
	eval_cfg(&ccfg, &res);
	assert_int_equal(find_budget_line(&res, "fault-slow", "suspend_window_p99_ns", 1)->state,
			 GATE_FAIL);
	assert_int_equal(find_budget_line(&res, "fault-slow", "suspend_window_p99_ns", 2)->state,
			 GATE_FAIL);
	gate_result_free(&res);
}

/* A `calm` budget is judged only where the cell's `none` runs show a calm host: a none run
 * that lost 30 % of its time to other load makes it "not applicable", with the share; at
 * 2 % it judges, and a 2 ms hold fails. */
static void test_calm_budget_needs_a_calm_none(void **state)
{
	(void)state;
	struct gate_result res;
	const char calm_rule[] =
		"budget * suspend_window_p99_ns <= 3.0 * host.rendezvous_p99_ns calm\n";

	assert_int_equal(gate_config_parse(calm_rule, "c", &ccfg, err, sizeof(err)), 0);
	assert_true(ccfg.budgets[0].calm);
	expect_config_error("budget * suspend_window_p99_ns <= 1ms calm calm\n", 1, "expected 'if'");
	assert_int_equal(host_fact_set(&host_b, "rendezvous_p99_ns", 30e3), 0);
	add_cell(cur_runs, &ncur, "fault-slow", 2, 3, 1.0, 2.1e6);
	for (int i = 0; i < 3; i++)
		add_run(cur_runs, &ncur, "none", "skewed", 2, 100, i)->metrics.pause_fraction =
			i == 1 ? 0.3 : 0.02;
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "fault-slow", "suspend_window_p99_ns", 1);
	assert_int_equal(k->state, GATE_NA);
	assert_non_null(strstr(k->reason, "host was busy in this cell (a none run lost 30.0%"));
	gate_result_free(&res);

	cur_runs[ncur - 2].metrics.pause_fraction = 0.02;
	eval_cfg(&ccfg, &res);
	k = find_budget_line(&res, "fault-slow", "suspend_window_p99_ns", 1);
	assert_int_equal(k->state, GATE_FAIL);
	assert_int_equal(res.failed, 1);
	gate_result_free(&res);
}

/* Deterministic uniform in [0, 1). */
static double urand(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*x >> 11) / 9007199254740992.0;
}

/* Gives run r n samples of a wall sampler with suspend windows from window(u). */
static void give_samples(struct sb_run *r, size_t n, double base_ns, double spread_ns,
			 double tail_frac, double tail_ns, uint64_t *seed)
{
	r->samples = calloc(n, sizeof(*r->samples));
	assert_non_null(r->samples);
	r->nsamples = n;
	r->clock = SB_CLOCK_WALL;
	for (size_t i = 0; i < n; i++) {
		struct sb_sample *s = &r->samples[i];
		s->thread_index = (int32_t)(i % 2);
		s->stop_latency_ns = NAN;
		s->suspend_window_ns = urand(seed) < tail_frac ? tail_ns : base_ns + spread_ns * urand(seed);
	}
}

static void free_samples(void)
{
	for (size_t i = 0; i < ncur; i++) {
		free(cur_runs[i].samples);
		cur_runs[i].samples = NULL;
	}
}

/* The p99 of 300 samples is their third largest value: a budget on it is judged on all
 * samples pooled, failing only when the order-statistic bound lies above the limit. */
static void test_pooled_quantile_budget(void **state)
{
	(void)state;
	struct gate_result res;
	uint64_t seed = 42;
	assert_int_equal(gate_config_parse("budget * suspend_window_p99_ns <= 100us\n", "c", &ccfg,
					   err, sizeof(err)), 0);
	/* 4 of 300 at 500 us: the point p99 is over (500 us), but 1.3 % over is consistent
	 * with a true p99 under 100 us: pass */
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i);
		give_samples(r, 100, 20e3, 60e3, 0, 0, &seed);
		r->metrics.suspend_window_p99_ns = 500e3; /* what a per-run p99 would say */
	}
	cur_runs[0].samples[10].suspend_window_ns = cur_runs[1].samples[20].suspend_window_ns =
		cur_runs[2].samples[30].suspend_window_ns = cur_runs[2].samples[31].suspend_window_ns = 500e3;
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "mach", "suspend_window_p99_ns", 0);
	assert_int_equal(k->state, GATE_PASS);
	assert_int_equal(k->ncur, 300);
	assert_true(k->current > 100e3); /* the point estimate */
	assert_non_null(strstr(k->reason, "pooled p99 of 300 samples"));
	gate_result_free(&res);
	free_samples();

	/* 5 % of windows at 2 ms: the whole interval is over: fail */
	ncur = 0;
	for (int i = 0; i < 3; i++)
		give_samples(add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i), 100, 20e3, 60e3,
			     0.05, 2e6, &seed);
	eval_cfg(&ccfg, &res);
	k = find_budget_line(&res, "mach", "suspend_window_p99_ns", 0);
	assert_int_equal(k->state, GATE_FAIL);
	gate_result_free(&res);
	free_samples();
}

/* A sign-test rule with `far`, on 3 runs (a sign test's best p is then 0.125): every run
 * beyond `far` fails on its size; most runs over but not all far is undecided (never a
 * pass, failing the verdict unless undecided_pass); at most half over passes; with 5 runs,
 * 4 over is a test that could have rejected and did not: a pass. Mutations: the far
 * branch removed (the first cell turns undecided), UNDECIDED returned as PASS. */
static void test_undecided_and_far(void **state)
{
	(void)state;
	static struct gate_config c2;
	struct gate_result res;
	char e[256];
	assert_int_equal(gate_config_parse("budget * overhead >= 0.9 sign-test far 0.7\n", "u", &c2,
					   e, sizeof(e)), 0);
	static const struct { const char *sampler; int n; double v[5]; enum gate_state want; }
	cells[] = {
		{ "mach", 3, { 0.50, 0.52, 0.51 }, GATE_FAIL },         /* halved in every run */
		{ "ctimer", 3, { 0.80, 0.85, 0.82 }, GATE_UNDECIDED },  /* over, not far */
		{ "itimer", 3, { 0.50, 0.50, 0.95 }, GATE_UNDECIDED },  /* far in 2 of 3 only */
		{ "perf", 3, { 0.80, 0.95, 0.96 }, GATE_PASS },         /* 1 of 3 over */
		{ "ptrace", 5, { 0.8, 0.8, 0.8, 0.8, 0.95 }, GATE_PASS }, /* p = 0.1875, had power */
	};
	ncur = 0;
	for (size_t c = 0; c < sizeof(cells) / sizeof(cells[0]); c++)
		for (int i = 0; i < cells[c].n; i++)
			add_run(cur_runs, &ncur, cells[c].sampler, "balanced", 2, 100, i)
				->metrics.overhead = cells[c].v[i];
	eval_cfg(&c2, &res);
	for (size_t c = 0; c < sizeof(cells) / sizeof(cells[0]); c++) {
		const struct gate_check *k = find_check(&res, GATE_BUDGET, cells[c].sampler, 2,
							"overhead");
		assert_non_null(k);
		assert_int_equal(k->state, cells[c].want);
	}
	const struct gate_check *k = find_check(&res, GATE_BUDGET, "mach", 2, "overhead");
	assert_non_null(strstr(k->reason, "every run beyond 0.700 (far)"));
	k = find_check(&res, GATE_BUDGET, "ctimer", 2, "overhead");
	assert_non_null(strstr(k->reason, "too few runs to judge"));
	assert_non_null(strstr(k->reason, "3 of 3 would give p=0.125"));
	assert_int_equal(res.failed, 1);
	assert_int_equal(res.undecided, 2);
	assert_true(gate_failed(&res));
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct gate_side cs = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	gate_print(mem, &c2, &cs, &res, 1);
	fclose(mem);
	assert_non_null(strstr(buf, "\n? ctimer/balanced/2t/100Hz"));
	assert_non_null(strstr(buf, "1 failed (0 of 0 regression tests, 1 of 5 budgets), 2 undecided"));
	free(buf);
	gate_result_free(&res);

	/* without the far cell, undecided alone fails the verdict unless asked otherwise */
	ncur = 0;
	for (int i = 0; i < 3; i++)
		add_run(cur_runs, &ncur, "ctimer", "balanced", 2, 100, i)->metrics.overhead = 0.8;
	eval_cfg(&c2, &res);
	assert_int_equal(res.failed, 0);
	assert_true(gate_failed(&res));
	gate_result_free(&res);
	c2.undecided_pass = 1;
	eval_cfg(&c2, &res);
	assert_false(gate_failed(&res));
	assert_int_equal(res.undecided, 1);
	gate_result_free(&res);

	expect_config_error("budget * overhead >= 0.9 far 0.7\n", 1, "'far' needs 'sign-test'");
	expect_config_error("budget * overhead >= 0.9 sign-test far 0.95\n", 1,
			    "'far' value 0.95 is not beyond the limit 0.9");
	expect_config_error("budget * overhead >= 0.9 sign-test far\n", 1, "'far' needs a value");
}

/* A pooled quantile without a confidence bound (too few samples for one at 95 %): a point
 * estimate over the limit is undecided, one within it passes. Mutation: the infinite
 * bound counted as ok (as before): the first cell passes and the test fails. */
static void test_pooled_too_few_samples_undecided(void **state)
{
	(void)state;
	struct gate_result res;
	uint64_t seed = 3;
	assert_int_equal(gate_config_parse("budget * suspend_window_p50_ns <= 1ms\n", "c", &ccfg,
					   err, sizeof(err)), 0);
	/* two samples a cell: P(Bin(2, 0.5) >= 1) = 0.75 < 0.95, no lower bound */
	give_samples(add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, 0), 2, 2e6, 1e3, 0, 0,
		     &seed);
	give_samples(add_run(cur_runs, &ncur, "ptrace", "balanced", 2, 100, 0), 2, 20e3, 1e3, 0,
		     0, &seed);
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_budget_line(&res, "mach", "suspend_window_p50_ns", 0);
	assert_int_equal(k->state, GATE_UNDECIDED);
	assert_non_null(strstr(k->reason, "too few samples to judge"));
	assert_non_null(strstr(k->reason, "none (too few)"));
	k = find_budget_line(&res, "ptrace", "suspend_window_p50_ns", 0);
	assert_int_equal(k->state, GATE_PASS);
	assert_int_equal(res.undecided, 1);
	gate_result_free(&res);
	/* in an adaptive cell below its maximum the short bound is open: more runs bring
	 * samples (mutation killed: judging it by the runs' own p50s alone, decided) */
	assert_int_equal(run_alloc_stats(&cur_runs[0]), 0);
	run_add_stat(&cur_runs[0], "reps_min", 1);
	run_add_stat(&cur_runs[0], "reps_max", 3);
	eval_cfg(&ccfg, &res);
	assert_true(find_budget_line(&res, "mach", "suspend_window_p50_ns", 0)->open);
	assert_int_equal(find_check(&res, GATE_REPS, "mach", 2, "reps")->state, GATE_WARN);
	gate_result_free(&res);
	free(cur_runs[0].stats);
	cur_runs[0].stats = NULL;
	cur_runs[0].nstats = 0;
	free_samples();
}

/* ci/budgets as shipped: a wall sampler holding threads 427 µs and reporting it, and one
 * holding them as long and reporting a tenth (the host: busy floor p99 53 µs,
 * observed busy floor 100 µs; a calm none). Both fail, the first on a reported window,
 * the second, whose reported windows pass every rule, on an observed or unreported one:
 * under-reporting does not pay. At 2 threads on 2 cores the observed p99 rules need a
 * spare core and do not apply: the unreported one judges. Mutation: ci/budgets without
 * the 3 x observed-floor unreported rule lets the tenth pass (test fails). */
static void test_under_reporting_does_not_pay(void **state)
{
	(void)state;
	static struct gate_config shipped;
	struct gate_result res;
	assert_int_equal(gate_config_load("ci/budgets", &shipped, err, sizeof(err)), 0);
	snprintf(host_b.build, sizeof(host_b.build), "plain");
	host_b.ncalib = 2;
	assert_int_equal(host_fact_set(&host_b, "rendezvous_busy_p99_ns", 53e3), 0);
	assert_int_equal(host_fact_set(&host_b, "rendezvous_busy_worst_p99_ns", 60e3), 0);
	assert_int_equal(host_fact_set(&host_b, "rendezvous_busy_observed_worst_p99_ns", 100e3), 0);
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "none", "balanced", 2, 100, i);
		r->metrics.pause_fraction = 0.02;
		r->metrics.pause_max_ns = 2e6;
		r->metrics.checksum_errors = 0;
		for (int tenth = 0; tenth < 2; tenth++) {
			double f = tenth ? 0.1 : 1;
			r = add_run(cur_runs, &ncur, tenth ? "mach-idle" : "mach", "balanced", 2, 100, i);
			r->clock = SB_CLOCK_WALL;
			r->metrics.suspend_window_p50_ns = 427e3 * f;
			r->metrics.suspend_window_p99_ns = 440e3 * f;
			r->metrics.suspend_window_max_ns = 600e3 * f;
			r->metrics.window_observed_p50_ns = 450e3;
			r->metrics.window_observed_p99_ns = 466e3;
			r->metrics.window_observed_max_ns = 700e3;
			r->metrics.window_unreported_p50_ns = 450e3 - 427e3 * f;
		}
	}
	eval_cfg(&shipped, &res);
	int honest_window = 0, tenth_reported = 0, tenth_observed = 0;
	for (size_t i = 0; i < res.nchecks; i++) {
		const struct gate_check *k = &res.checks[i];
		int reported = !strncmp(k->metric, "suspend_window_", 15);
		int observed = !strncmp(k->metric, "window_", 7);
		if (!strcmp(k->sampler, "mach") && reported)
			honest_window += k->state == GATE_FAIL;
		if (!strcmp(k->sampler, "mach-idle") && reported)
			tenth_reported += k->state == GATE_FAIL || k->state == GATE_UNDECIDED;
		if (!strcmp(k->sampler, "mach-idle") && observed)
			tenth_observed += k->state == GATE_FAIL;
	}
	assert_true(honest_window > 0);
	assert_int_equal(tenth_reported, 0); /* its reports alone would pass */
	assert_true(tenth_observed > 0);
	gate_result_free(&res);
}

/* per-run: the median of the runs' own p99s. One run of five on a stalled host (every
 * window 200 us) owns the pooled p99 and fails it; per-run, four runs at ~60 us pass. A
 * sampler slow in three runs of five fails both. */
static void test_per_run_quantile_budget(void **state)
{
	(void)state;
	struct gate_result res;
	uint64_t seed = 7;
	assert_int_equal(gate_config_parse("budget * suspend_window_p99_ns <= 100us\n"
					   "budget * suspend_window_p99_ns <= 100us per-run\n",
					   "c", &ccfg, err, sizeof(err)), 0);
	for (int slow_runs = 1; slow_runs <= 3; slow_runs += 2) {
		ncur = 0;
		for (int i = 0; i < 5; i++) {
			struct sb_run *r = add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, i);
			int slow = i < slow_runs;
			give_samples(r, 300, slow ? 200e3 : 20e3, slow ? 10e3 : 40e3, 0, 0, &seed);
			r->metrics.suspend_window_p99_ns = slow ? 209e3 : 59e3;
		}
		eval_cfg(&ccfg, &res);
		const struct gate_check *pooled = find_budget_line(&res, "mach",
								   "suspend_window_p99_ns", 1);
		const struct gate_check *per_run = find_budget_line(&res, "mach",
								    "suspend_window_p99_ns", 2);
		assert_int_equal(pooled->state, GATE_FAIL);
		assert_int_equal(per_run->state, slow_runs == 1 ? GATE_PASS : GATE_FAIL);
		assert_int_equal(per_run->ncur, 5);
		assert_float_equal(per_run->current, slow_runs == 1 ? 59e3 : 209e3, 1e-6);
		gate_result_free(&res);
		free_samples();
	}
	expect_config_error("budget * rate_accuracy >= 0.9 per-run\n", 1,
			    "'per-run' needs a quantile metric");
	expect_config_error("budget * suspend_window_p99_ns <= 1ms sign-test per-run\n", 1,
			    "'per-run' excludes");
}

static void test_timing_compared_within_one_fingerprint(void **state)
{
	(void)state;
	struct gate_result res;
	assert_int_equal(gate_config_parse("regress suspend_window_p99_ns up 20us\n"
					   "regress rate_accuracy off-one 0.05\n",
					   "c", &ccfg, err, sizeof(err)), 0);
	add_cell(base_runs, &nbase, "mach", 2, 5, 0.99, 50e3);
	add_cell(cur_runs, &ncur, "mach", 2, 5, 0.80, 500e3);
	snprintf(host_a.fingerprint, sizeof(host_a.fingerprint), "kvm-2c-pti");
	snprintf(host_b.fingerprint, sizeof(host_b.fingerprint), "bare-8c");
	struct gate_side b = { .path = "base.h5", .host = &host_a,
				.runs = base_runs, .nruns = nbase };
	struct gate_side c = { .path = "cur.h5", .host = &host_b, .runs = cur_runs, .nruns = ncur };
	assert_int_equal(gate_eval(&ccfg, &b, &c, &res), 0);
	assert_null(find_check(&res, GATE_REGRESSION, "mach", 2, "suspend_window_p99_ns"));
	assert_int_equal(find_check(&res, GATE_REGRESSION, "mach", 2, "rate_accuracy")->state,
			 GATE_FAIL);
	assert_int_equal(res.nnotes, 1);
	assert_non_null(strstr(res.notes[0], "timing metrics were not compared"));
	assert_non_null(strstr(res.notes[0], "kvm-2c-pti"));
	gate_result_free(&res);

	snprintf(host_b.fingerprint, sizeof(host_b.fingerprint), "kvm-2c-pti");
	assert_int_equal(gate_eval(&ccfg, &b, &c, &res), 0);
	assert_int_equal(find_check(&res, GATE_REGRESSION, "mach", 2, "suspend_window_p99_ns")->state,
			 GATE_FAIL);
	assert_int_equal(res.nnotes, 0);
	gate_result_free(&res);
}

/* One A/B file: reps interleaved, B = A's build (HEAD vs HEAD) or A with a 30 us longer
 * hold. Windows: a level per repetition (the host state both runs of a pair share,
 * 50-130 us as the p50 on this VM), 15 us of run-to-run jitter, 60 us of per-sample spread
 * and 1 % of 1.5 ms stalls. Returns the number of failed checks; *hit is set when the
 * suspend window p50 was called a regression. */
static size_t ab_trial(uint64_t seed, double hold_ns, int *hit)
{
	struct gate_result res;
	free_samples();
	ncur = 0;
	for (int rep = 0; rep < 5; rep++) {
		double host_level = 50e3 + 80e3 * urand(&seed);
		for (int v = 0; v < 2; v++) {
			struct sb_run *r = add_run(cur_runs, &ncur, "mach", "balanced", 2, 100, rep);
			snprintf(r->variant, sizeof(r->variant), "%s", v ? "B" : "A");
			double level = host_level + 15e3 * urand(&seed);
			give_samples(r, 200, level + (v ? hold_ns : 0), 60e3, 0.01, 1.5e6, &seed);
			r->metrics.rate_accuracy = 0.98 + 0.04 * urand(&seed);
		}
	}
	eval_cfg(&ccfg, &res);
	const struct gate_check *k = find_check(&res, GATE_REGRESSION, "mach", 2,
						 "suspend_window_p50_ns");
	assert_non_null(k);
	*hit = k->state == GATE_FAIL;
	assert_int_equal(res.nnotes, 1);
	assert_non_null(strstr(res.notes[0], "same-run A/B"));
	size_t failed = res.failed;
	gate_result_free(&res);
	return failed;
}

static void test_same_run_ab(void **state)
{
	(void)state;
	assert_int_equal(gate_config_parse("regress rate_accuracy off-one 0.05\n"
					   "regress suspend_window_p50_ns up 5us 25%\n"
					   "regress suspend_window_p99_ns up 20us 25%\n",
					   "c", &ccfg, err, sizeof(err)), 0);
	int hit, hits = 0;
	size_t false_alarms = 0;
	for (uint64_t t = 0; t < 50; t++) {
		false_alarms += ab_trial(1000 + t, 0, &hit);
		hits += ab_trial(2000 + t, 30e3, &hit) > 0 && hit;
	}
	free_samples();
	ncur = 0;
	printf("A/B: HEAD vs HEAD %zu regressions in 50 files; 30 us hold found in %d of 50\n",
	       false_alarms, hits);
	if (false_alarms != 0 || hits != 50)
		fail_msg("HEAD vs HEAD: %zu regressions in 50 files (want 0); 30 us hold found in "
			 "%d of 50 (want 50)", false_alarms, hits);
}

static char tmpdir[] = "/tmp/sbgate.XXXXXX";

static void test_junit_and_json(void **state)
{
	(void)state;
	struct gate_result res;
	char path[256], buf[65536];
	add_cell(base_runs, &nbase, "ctimer", 2, 5, 0.99, NAN);
	add_cell(cur_runs, &ncur, "ctimer", 2, 5, 0.80, NAN);
	eval(&res, 1);
	struct gate_side c = { .path = "cur<&>.h5", .host = &host_b,
				.runs = cur_runs, .nruns = ncur };

	snprintf(path, sizeof(path), "%s/g.xml", tmpdir);
	assert_int_equal(gate_write_junit(path, &res, err, sizeof(err)), 0);
	FILE *f = fopen(path, "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), "tests=\"%zu\" failures=\"%zu\"", res.nchecks, res.failed);
	assert_non_null(strstr(buf, want));
	assert_non_null(strstr(buf, "<failure message=\"regressed"));
	size_t cases = 0;
	for (const char *p = buf; (p = strstr(p, "<testcase")); p++)
		cases++;
	assert_int_equal(cases, res.nchecks);
	unlink(path);

	/* a reason cut inside a character (the first byte of µ) stays valid UTF-8 JSON; a
	 * whole µ is kept */
	for (size_t i = 0; i < res.nchecks; i++)
		snprintf(res.checks[i].reason, sizeof(res.checks[i].reason), "9.0µs = 427.0\xc2");
	snprintf(path, sizeof(path), "%s/g.json", tmpdir);
	assert_int_equal(gate_write_json(path, NULL, &c, &res, err, sizeof(err)), 0);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_non_null(strstr(buf, "\"verdict\": \"fail\""));
	assert_non_null(strstr(buf, "\"current\": \"cur<&>.h5\""));
	assert_non_null(strstr(buf, "\"p\": null")); /* budgets have no p-value */
	assert_non_null(strstr(buf, "\"9.0µs = 427.0\\ufffd\""));
	snprintf(path, sizeof(path), "%s/g.json.tmp", tmpdir);
	assert_int_not_equal(access(path, F_OK), 0); /* renamed into place */
	unlink(strcat(strcpy(buf, tmpdir), "/g.json"));
	snprintf(path, sizeof(path), "%s/g.xml", tmpdir);
	assert_int_equal(gate_write_junit(path, &res, err, sizeof(err)), 0);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_non_null(strstr(buf, "9.0µs = 427.0&#xfffd;"));
	unlink(path);

	assert_int_equal(gate_write_json("/nonexistent/x.json", NULL, &c, &res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot create"));
	gate_result_free(&res);
}

/* --- the CLI (runs build/sampbench) --- */

static char bin[512];

/* Runs bin with args; stdout and stderr into out. Returns the exit status. */
static int run(char *out, size_t outlen, const char *const *args)
{
	return sbrun(bin, args, out, outlen, out, outlen);
}


static char out[1 << 16];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_cli_bad_input_exits_2(void **state)
{
	(void)state;
	char budgets[256], bad[256], cur[256];
	snprintf(budgets, sizeof(budgets), "%s/ok.budgets", tmpdir);
	snprintf(bad, sizeof(bad), "%s/bad.budgets", tmpdir);
	snprintf(cur, sizeof(cur), "%s/not.h5", tmpdir);
	write_file(budgets, "budget * failed_runs == 0\n");
	write_file(bad, "# fine\nbudget * failed_runs ==\n");
	write_file(cur, "not hdf5\n");

	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", budgets, "/nonexistent.h5")), 2);
	assert_non_null(strstr(out, "cannot read current run file '/nonexistent.h5'"));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", budgets, cur)), 2);
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", bad, cur)), 2);
	assert_non_null(strstr(out, "bad.budgets:2: "));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", "/nonexistent", cur)), 2);
	assert_int_equal(run(out, sizeof(out), ARGS("gate")), 2);
	assert_non_null(strstr(out, "missing CURRENT.h5"));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--bogus", cur)), 2);
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--undecided", "maybe", cur)), 2);
	assert_non_null(strstr(out, "invalid --undecided 'maybe' (expected fail or pass)"));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--help")), 0);

	char matrix[256];
	snprintf(matrix, sizeof(matrix), "%s/m", tmpdir);
	write_file(matrix, "[p]\nsamplers = ctimer\nworkloads = skewed\nthreads = 2\n"
			   "hz = 100\nreps = 1\nduration = 0.1\n\nsamplers = none\n");
	assert_int_equal(run(out, sizeof(out), ARGS("bench", "--matrix", matrix, "-o", cur, "-f")), 2);
	assert_non_null(strstr(out, "/m:9: 'samplers' set twice"));
	write_file(matrix, "[p]\nsamplers = ctimer\nworkloads = skewed\n");
	assert_int_equal(run(out, sizeof(out), ARGS("bench", "--matrix", matrix, "-p", "quick",
						    "-o", cur, "-f")), 2);
	assert_non_null(strstr(out, "unknown profile 'quick' (profiles: p)"));
	assert_int_equal(run(out, sizeof(out), ARGS("baseline", "/nonexistent.h5")), 2);
	unlink(budgets);
	unlink(bad);
	unlink(cur);
	unlink(matrix);
}

/* --- a merged file of two hosts (sampbench merge) --- */

/* Writes runs[0..n) of host h to path through the results API, as a run on h would. */
static void write_runs(const char *path, const struct sb_host *h, const struct sb_run *runs,
		       size_t n)
{
	struct sb_h5 *f = h5_create(path, h, 1, err, sizeof(err));
	if (!f)
		fail_msg("%s", err);
	for (size_t i = 0; i < n; i++)
		if (h5_append_run(f, &runs[i]) != 0)
			fail_msg("%s", h5_strerror(f));
	h5_set_complete(f, 1);
	assert_int_equal(h5_close(f), 0);
}

/* `gate` exits 1 on an undecided check alone, 0 with --undecided pass (the row and the
 * count stay), and the JSON says "undecided". */
static void test_cli_undecided_exit(void **state)
{
	(void)state;
	char f[256], budgets[256], json[256];
	snprintf(f, sizeof(f), "%s/und.h5", tmpdir);
	snprintf(budgets, sizeof(budgets), "%s/und.budgets", tmpdir);
	snprintf(json, sizeof(json), "%s/und.json", tmpdir);
	write_file(budgets, "budget * overhead >= 0.9 sign-test far 0.7\n");
	ncur = 0;
	for (int i = 0; i < 3; i++) {
		struct sb_run *r = add_run(cur_runs, &ncur, "ctimer", "balanced", 2, 100, i);
		r->metrics.overhead = 0.8;
		r->run_id = i;
	}
	write_runs(f, &host_a, cur_runs, ncur);
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", budgets, "--json", json, f)), 1);
	assert_non_null(strstr(out, "gate: FAIL: 1 checks, 0 failed"));
	assert_non_null(strstr(out, "1 undecided (too few runs to judge)"));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", budgets, "--undecided",
						    "pass", f)), 0);
	assert_non_null(strstr(out, "gate: PASS: 1 checks, 0 failed"));
	assert_non_null(strstr(out, "1 undecided (too few runs to judge; --undecided=pass)"));
	FILE *j = fopen(json, "r");
	assert_non_null(j);
	char text[4096];
	size_t n = fread(text, 1, sizeof(text) - 1, j);
	text[n] = 0;
	fclose(j);
	assert_non_null(strstr(text, "\"undecided\": 1"));
	assert_non_null(strstr(text, "\"state\": \"undecided\""));
	assert_non_null(strstr(text, "\"exit_code\": 1"));
	unlink(f);
	unlink(budgets);
	unlink(json);
}

/* The gate check of (host, kind, sampler, metric), or NULL. */
static const struct gate_check *find_host_check(const struct gate_result *res, const char *host,
						const char *sampler, const char *metric)
{
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		if (k->kind == GATE_BUDGET && !strcmp(k->host, host) && !strcmp(k->sampler, sampler) &&
		    !strcmp(k->metric, metric))
			return k;
	}
	return NULL;
}

/* Two hosts, one bench each, merged: the same cells on both, host beta's ctimer broken and
 * its rendezvous floor 5x lower. One gate invocation judges each host apart. */
static void test_merged_hosts_judged_per_host(void **state)
{
	(void)state;
	static const char text[] =
		"budget ctimer rate_accuracy >= 0.95\n"
		"budget mach suspend_window_p99_ns <= 2.0 * host.rendezvous_p99_ns\n";
	char a[256], b[256], m[256], budgets[256], json[256], junit[256];
	struct sb_host alpha = host_a, beta = host_a;
	snprintf(a, sizeof(a), "%s/alpha.h5", tmpdir);
	snprintf(b, sizeof(b), "%s/beta.h5", tmpdir);
	snprintf(m, sizeof(m), "%s/merged.h5", tmpdir);
	snprintf(budgets, sizeof(budgets), "%s/hosts.budgets", tmpdir);
	snprintf(json, sizeof(json), "%s/hosts.json", tmpdir);
	snprintf(junit, sizeof(junit), "%s/hosts.xml", tmpdir);
	write_file(budgets, text);
	snprintf(alpha.host, sizeof(alpha.host), "alpha");
	snprintf(alpha.fingerprint, sizeof(alpha.fingerprint), "x86_64-2cpu-vm-0000aaaa");
	snprintf(beta.host, sizeof(beta.host), "beta");
	snprintf(beta.fingerprint, sizeof(beta.fingerprint), "x86_64-2cpu-vm-0000bbbb");
	assert_int_equal(host_fact_set(&alpha, "rendezvous_p99_ns", 150e3), 0);
	assert_int_equal(host_fact_set(&beta, "rendezvous_p99_ns", 30e3), 0);

	/* the same cells on both hosts: mach's window 250 us everywhere, ctimer's rate 0.99
	 * on alpha and 0.80 on beta */
	add_cell(cur_runs, &ncur, "ctimer", 2, 3, 0.99, NAN);
	add_cell(cur_runs, &ncur, "mach", 2, 3, 1.0, 250e3);
	for (size_t i = 0; i < ncur; i++)
		cur_runs[i].run_id = (int64_t)i;
	write_runs(a, &alpha, cur_runs, ncur);
	for (size_t i = 0; i < 3; i++)
		cur_runs[i].metrics.rate_accuracy = 0.80 + 0.002 * (double)i;
	write_runs(b, &beta, cur_runs, ncur);
	assert_int_equal(run(out, sizeof(out), ARGS("merge", "-f", m, a, b)), 0);

	/* the merged file keeps beta's own facts beside its runs */
	struct sb_host root;
	struct sb_run *runs;
	struct h5_run_hosts hosts;
	size_t n;
	assert_int_equal(h5_read_hosts(m, &root, &runs, &n, 0, &hosts, err, sizeof(err)), 0);
	assert_int_equal(n, 12);
	assert_int_equal(hosts.n, 2);
	assert_string_equal(hosts.v[hosts.of_run[11]].host, "beta");
	assert_true(host_fact(&hosts.v[hosts.of_run[11]], "rendezvous_p99_ns") == 30e3);
	assert_true(host_fact(&hosts.v[hosts.of_run[0]], "rendezvous_p99_ns") == 150e3);

	struct gate_result res;
	struct gate_side side = { .path = m, .host = &root, .runs = runs, .nruns = n,
				  .hosts = hosts.v, .nhosts = hosts.n, .run_host = hosts.of_run };
	assert_int_equal(gate_config_parse(text, "hosts", &ccfg, err, sizeof(err)), 0);
	assert_int_equal(gate_eval(&ccfg, NULL, &side, &res), 0);
	/* (a) the rate budget fails on beta only */
	const struct gate_check *ka = find_host_check(&res, "alpha", "ctimer", "rate_accuracy");
	const struct gate_check *kb = find_host_check(&res, "beta", "ctimer", "rate_accuracy");
	assert_non_null(ka);
	assert_non_null(kb);
	assert_int_equal(ka->state, GATE_PASS);
	assert_int_equal(kb->state, GATE_FAIL);
	/* (b) the host-fact budget's limit is each host's own fact: 2 x 150 us passes 250 us
	 * on alpha, 2 x 30 us fails it on beta */
	ka = find_host_check(&res, "alpha", "mach", "suspend_window_p99_ns");
	kb = find_host_check(&res, "beta", "mach", "suspend_window_p99_ns");
	assert_non_null(ka);
	assert_non_null(kb);
	assert_true(ka->baseline == 300e3 && ka->state == GATE_PASS);
	assert_true(kb->baseline == 60e3 && kb->state == GATE_FAIL);
	/* (c) a cell per host: 3 runs each, not the 6 of both, and each host's own median */
	kb = find_host_check(&res, "beta", "ctimer", "rate_accuracy");
	assert_int_equal(kb->ncur, 3);
	assert_true(fabs(kb->current - 0.802) < 1e-9);
	assert_int_equal(res.nchecks, 4);
	assert_int_equal(res.nhosts, 2);
	assert_int_equal(res.hosts[0].failed + res.hosts[1].failed, 2);
	assert_int_equal(res.hosts[!strcmp(res.hosts[0].host, "alpha")].failed, 2);
	gate_result_free(&res);
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
	h5_run_hosts_free(&hosts);

	/* the CLI: each row and the verdict name the host; JSON and JUnit too */
	int rc = run(out, sizeof(out), ARGS("gate", "--budgets", budgets, "--json", json,
					    "--junit", junit, m));
	if (rc != 1 || !strstr(out, "gate: FAIL (alpha PASS, beta FAIL): 4 checks, 2 failed") ||
	    !strstr(out, "✓ alpha/ctimer/skewed/2t/100Hz") ||
	    !strstr(out, "✗ beta/ctimer/skewed/2t/100Hz") ||
	    !strstr(out, "✗ beta/mach/skewed/2t/100Hz"))
		fail_msg("want per-host rows and verdicts, got exit %d:\n%s", rc, out);
	FILE *f = fopen(json, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	fclose(f);
	assert_non_null(strstr(out, "{\"host\": \"beta\", \"fingerprint\": \"x86_64-2cpu-vm-0000bbbb\", "
				    "\"verdict\": \"fail\""));
	assert_non_null(strstr(out, "\"state\": \"fail\", \"host\": \"beta\", \"sampler\": \"ctimer\""));
	assert_null(strstr(out, "\"state\": \"fail\", \"host\": \"alpha\""));
	f = fopen(junit, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	fclose(f);
	assert_non_null(strstr(out, "<testcase classname=\"beta/ctimer/skewed/2t/100Hz\""));

	/* one host's file alone: no host in its rows (output as before) */
	rc = run(out, sizeof(out), ARGS("gate", "--budgets", budgets, a));
	if (rc != 0 || !strstr(out, "✓ ctimer/skewed/2t/100Hz") || !strstr(out, "gate: PASS: "))
		fail_msg("want the single-host output, got exit %d:\n%s", rc, out);
	unlink(a);
	unlink(b);
	unlink(m);
	unlink(budgets);
	unlink(json);
	unlink(junit);
}

int main(void)
{
	const char *b = getenv("BUILD");
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mwu_against_scipy),
		cmocka_unit_test(test_mwu_symmetry_nan_and_empty),
		cmocka_unit_test(test_config_parses),
		cmocka_unit_test(test_config_errors_name_the_line),
		cmocka_unit_test_setup(test_same_data_passes, setup),
		cmocka_unit_test_setup(test_regression_needs_significance_and_effect, setup),
		cmocka_unit_test_setup(test_budget_conditions_use_host_facts, setup),
		cmocka_unit_test_setup(test_variant_conditions, setup),
		cmocka_unit_test_setup(test_sign_test_budget, setup),
		cmocka_unit_test_setup(test_worst_budget, setup),
		cmocka_unit_test(test_adaptive_calls),
		cmocka_unit_test_setup(test_adaptive_cells, setup),
		cmocka_unit_test_setup(test_adaptive_regression, setup),
		cmocka_unit_test_setup(test_unreported_names_both, setup),
		cmocka_unit_test_setup(test_reference_budget_and_missing_reference, setup),
		cmocka_unit_test_setup(test_missing_cells_failed_runs_and_host_mismatch, setup),
		cmocka_unit_test_setup(test_junit_and_json, setup),
		cmocka_unit_test(test_cli_bad_input_exits_2),
		cmocka_unit_test_setup(test_class_rules_by_what_a_sampler_is, setup),
		cmocka_unit_test_setup(test_nan_claimed_fails_unclaimed_not_measured, setup),
		cmocka_unit_test_setup(test_footprint_rules, setup),
		cmocka_unit_test_setup(test_unwalkable_needs_thread_ids, setup),
		cmocka_unit_test_setup(test_expect_line_exempts_with_reason, setup),
		cmocka_unit_test_setup(test_host_fact_and_floor_budgets, setup),
		cmocka_unit_test_setup(test_calm_budget_needs_a_calm_none, setup),
		cmocka_unit_test_setup(test_per_run_quantile_budget, setup),
		cmocka_unit_test_setup(test_pooled_quantile_budget, setup),
		cmocka_unit_test_setup(test_undecided_and_far, setup),
		cmocka_unit_test_setup(test_pooled_too_few_samples_undecided, setup),
		cmocka_unit_test_setup(test_cli_undecided_exit, setup),
		cmocka_unit_test_setup(test_under_reporting_does_not_pay, setup),
		cmocka_unit_test_setup(test_timing_compared_within_one_fingerprint, setup),
		cmocka_unit_test_setup(test_same_run_ab, setup),
		cmocka_unit_test_setup(test_inline_frames_claim, setup),
		cmocka_unit_test_setup(test_merged_hosts_judged_per_host, setup),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rmdir(tmpdir) != 0)
		fprintf(stderr, "test_gate: cannot remove %s: %s\n", tmpdir, strerror(errno));
	return rc;
}
