/* gate_eval.c - the gate's evaluation: each host's cells checked against the budgets (class
 * rules, host facts, floors, pooled quantiles, expect lines), regressions against a baseline
 * or inside an A/B file (gate_regress.c) added, and the result assembled. Cells and hosts
 * are in gate_cells.c. Only ok runs give metric values; failed and skipped runs are counted in the
 * pseudo metrics failed_runs, skipped_runs and lossy_runs. */
#include "analysis/gate_int.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/mwu.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

/* --- evaluation --- */

/* Value of a numeric condition variable for cell c on host h; NaN when unknown. */
static double var_value(int v, const struct cell *c, const struct sb_host *h)
{
	switch (v) {
	case V_THREADS: return c->threads;
	case V_HZ: return c->hz;
	case V_CORES: return h->nproc > 0 ? h->nproc : NAN;
	case V_TICK: return h->tick_hz > 0 ? h->tick_hz : NAN;
	}
	return NAN;
}

/* Value of a name variable (sampler, build, clock, scope) for cell c on host h. */
static const char *name_value(int v, const struct cell *c, const struct sb_host *h)
{
	switch (v) {
	case V_SAMPLER: return c->sampler;
	case V_BUILD: return h->build;
	case V_CLOCK: return c->cls.clock == SB_CLOCK_WALL ? "wall" : "cpu";
	case V_SCOPE: return (c->cls.caps & SB_CAP_PROCESS_WIDE) ? "process" : "thread";
	}
	return "";
}

/* Is name variable v of cell c on host h `name`? A cell's workload is named without its
 * build variant (`workload=hotspot` holds on hotspot@nofp: docs/workloads.md
 * "Variants"), and `variant` is that variant, fp for the plain build. */
static int name_is(int v, const struct cell *c, const struct sb_host *h, const char *name)
{
	const char *at = strchr(c->workload, '@');
	size_t plain = at ? (size_t)(at - c->workload) : strlen(c->workload);

	if (v == V_WORKLOAD)
		return strlen(name) == plain && !strncmp(c->workload, name, plain);
	if (v == V_VARIANT)
		return !strcmp(at ? at + 1 : WL_VARIANT_FP, name);
	return !strcmp(name_value(v, c, h), name);
}

/* Does the cell's class claim capability `name` (`has=weights`, `has=tick`)? */
static int class_has(const struct gate_class *cls, const char *name)
{
	if (!strcmp(name, "tick"))
		return cls->tick_driven;
	for (size_t i = 0; i < GATE_NCAPS; i++)
		if (!strcmp(name, gate_cap_names[i].name))
			return !!(cls->caps & gate_cap_names[i].cap);
	return 0;
}

/* Does budget b apply to cell c? A condition on an unknown host fact (tick) is false. */
static int budget_applies(const struct gate_budget *b, const struct cell *c,
			  const struct sb_host *h)
{
	if (b->nsamplers) {
		int hit = 0;
		for (int i = 0; i < b->nsamplers && !hit; i++)
			hit = !strcmp(b->samplers[i], c->sampler);
		if (!hit)
			return 0;
	}
	for (int i = 0; i < b->nconds; i++) {
		const struct gate_cond *k = &b->conds[i];
		if (k->lhs == V_HAS) {
			if (class_has(&c->cls, k->name) != (k->op == GATE_EQ))
				return 0;
			continue;
		}
		if (IS_NAME_VAR(k->lhs)) {
			if (name_is(k->lhs, c, h, k->name) != (k->op == GATE_EQ))
				return 0;
			continue;
		}
		double a = var_value(k->lhs, c, h);
		double r = k->rhs >= 0 ? var_value(k->rhs, c, h) : k->value;
		if (isnan(a) || isnan(r) || !gate_op_holds(k->op, a, r))
			return 0;
	}
	return 1;
}


/* The capability a metric needs, for "NaN: failure or not measured": a cap bit; 0 when
 * every sampler must give it (it counts samples or the run); -1 when it needs something
 * outside the sampler (a `none` run for overhead, host calibration for floor ratios); -2
 * when it comes from the harness's process accounting (not in tool or exec runs); -3 when
 * it checks a claim the sampler may not make (sampler_cpu_unreported_fraction). */
static long metric_needs(const char *m)
{
	static const struct { const char *prefix; long cap; } needs[] = {
		{ "thread_tvd", SB_CAP_THREAD_IDS },  { "wall_thread_tvd", SB_CAP_THREAD_IDS },
		{ "magnitude_error", SB_CAP_WEIGHTS },
		/* a sample's slot against its stack's: both (a tool's recipe may claim one) */
		{ "misattributed_fraction", SB_CAP_STACKS | SB_CAP_THREAD_IDS },
		{ "stack_correct_fraction", SB_CAP_STACKS | SB_CAP_THREAD_IDS },
		{ "stack_unwalkable_fraction", SB_CAP_STACKS | SB_CAP_THREAD_IDS },
		{ "function_tvd", SB_CAP_STACKS }, { "function_misfit", SB_CAP_STACKS },
		{ "truncated_fraction", SB_CAP_STACKS }, { "offcpu_sample_fraction", SB_CAP_STACKS },
		{ "stop_latency_", SB_CAP_STOP_LATENCY }, { "suspend_window_", SB_CAP_SUSPEND_WINDOW },
		/* the footprint: the harness's process accounting, and a claim to check */
		{ "sampler_cpu_measured_", -2 }, { "rss_", -2 }, { "sampler_cpu_unreported_", -3 },
		{ "overhead", -1 }, { "sampler_cpu_", -1 }, { "offcpu_true", -1 },
		{ "eintr_", -1 }, { "short_io_", -1 }, { "interval_", -1 }, { "wall_rate", -1 },
		{ "window_", SB_CAP_SUSPEND_WINDOW }, { "pause_excess_", -1 },
		/* the program's own checks: runs made by exec and tools have none */
		{ "integrity_", -1 }, { "stack_peak_", -1 },
	};
	size_t n = strlen(m);
	if (n > 12 && !strcmp(m + n - 12, "_floor_ratio"))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(needs); i++)
		if (!strncmp(m, needs[i].prefix, strlen(needs[i].prefix)))
			return needs[i].cap;
	return 0;
}

/* metric_needs for cell c: on a build whose measured functions are inlined (variant
 * inline), a tool's function shares also need its frames to name inlined functions. A
 * sampler's frames are PCs, which sampbench names with the functions inlined at each
 * (DWARF inline chains): it needs no more than stacks. */
static long cell_metric_needs(const char *m, const struct cell *c)
{
	long need = metric_needs(m);

	if (need > 0 && (need & SB_CAP_STACKS) && c->cls.recipe && !strncmp(m, "function_", 9) &&
	    name_is(V_VARIANT, c, NULL, "inline"))
		need |= SB_CAP_INLINE_FRAMES;
	return need;
}

static const char *cap_name(long cap)
{
	for (size_t i = 0; i < GATE_NCAPS; i++)
		if (gate_cap_names[i].cap == (unsigned long)cap)
			return gate_cap_names[i].name;
	return "?";
}

/* The expect line exempting (sampler, metric), or NULL. */
static const struct gate_expect *find_expect(const struct gate_config *cfg, const char *sampler,
					     const char *metric)
{
	for (int i = 0; i < cfg->nexpects; i++)
		if (!strcmp(cfg->expects[i].sampler, sampler) &&
		    !strcmp(cfg->expects[i].metric, metric))
			return &cfg->expects[i];
	return NULL;
}

/* Sets k's state and reason from `ok`, turning a failure into EXEMPT when an expect line
 * names it. */
static void settle(const struct gate_config *cfg, struct gate_check *k, int ok)
{
	k->state = ok ? GATE_PASS : GATE_FAIL;
	if (ok)
		return;
	const struct gate_expect *e = find_expect(cfg, k->sampler, k->metric);
	if (!e)
		return;
	char was[sizeof(k->reason)];
	snprintf(was, sizeof(was), "%s", k->reason);
	k->state = GATE_EXEMPT;
	snprintf(k->reason, sizeof(k->reason), "EXPECTED (%.40s:%d: %.160s): %.90s", cfg->name,
		 e->line, e->reason, was);
}

/* Does another sampler of the file give `metric` in c's (workload, threads, hz)? Tells a
 * metric the workload does not define from one this sampler failed to measure. */
static int measured_nearby(const struct gate_side *side, const struct cells *cs,
			   const struct cell *c, const char *metric, double *buf)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cell *o = &cs->v[i];
		if (o != c && !strcmp(o->workload, c->workload) && o->threads == c->threads &&
		    o->hz == c->hz && gate_cell_values(side, o, metric, buf) > 0)
			return 1;
	}
	return 0;
}

/* Whether any ok run of the cell holds a sample. */
static int cell_sampled(const struct gate_side *side, const struct cell *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (run_scored(r->status) && r->nsamples > 0)
			return 1;
	}
	return 0;
}

/* A `calm` budget (a stop-time limit near the host's floors, which are measured at the
 * file's start and end) is judged only where the cell's `none` runs lost at most this share
 * of their compute time to the host's other load: 0.015-0.019 in calm quick benches,
 * 0.02-0.51 by run under two CPU hogs switched on and off every few seconds, where mach's
 * window p99 (1.8 ms) failed 3 x a calm busy floor (docs/gate.md). */
#define GATE_BUSY_NONE_PAUSE_FRACTION 0.1

/* The largest pause_fraction of the `none` runs of c's workload, threads and rate (NaN
 * without one): how much of its time the host's other load took from a thread that was
 * not sampled. */
static double none_pause_max(const struct gate_side *side, const struct cells *cs,
			     const struct cell *c)
{
	const struct cell *nc = gate_cells_find(cs, "none", c->workload, c->threads, c->hz);
	double most = NAN;

	if (!nc || nc->n == 0)
		return NAN;
	double *v = malloc(nc->n * sizeof(*v));
	size_t n = v ? gate_cell_values(side, nc, "pause_fraction", v) : 0;
	for (size_t i = 0; i < n; i++)
		if (isnan(most) || v[i] > most)
			most = v[i];
	free(v);
	return most;
}

/* A pooled quantile against limit: fails only when its one-sided confidence bound lies
 * beyond the limit. Without a bound at this level (too few samples), a point estimate
 * beyond the limit is undecided (the test could not fail it), one within it passes. */
static void judge_pooled(const struct gate_config *cfg, const struct gate_budget *b,
			 const struct pooled *pl, double limit, const char *lim,
			 struct gate_check *k)
{
	int upper = b->op == GATE_LE || b->op == GATE_LT;
	double bound = upper ? pl->lo : pl->hi;
	int ok = isinf(bound) ? gate_op_holds(b->op, pl->est, limit)
			      : gate_op_holds(b->op, bound, limit);
	int undecided = isinf(bound) && !ok;
	char es[32], bs[32];
	gate_fmt_value(es, sizeof(es), b->metric, pl->est);
	gate_fmt_value(bs, sizeof(bs), b->metric, bound);
	k->current = pl->est;
	k->ncur = (int)pl->n;
	snprintf(k->reason, sizeof(k->reason), "%s %s %s: pooled p%g of %zu samples %s, "
		 "%g%% %s bound %s (%s:%d)",
		 undecided ? "too few samples to judge" : ok ? "budget" : "OVER BUDGET",
		 gate_op_names[b->op], lim, pl->q * 100, pl->n, es, (1 - cfg->alpha) * 100,
		 upper ? "lower" : "upper", isinf(bound) ? "none (too few)" : bs, cfg->name,
		 b->line);
	if (undecided)
		k->state = GATE_UNDECIDED;
	else
		settle(cfg, k, ok);
}

/* A sign-test budget on the cell's n run values v: FAIL when every run is beyond the
 * rule's `far` value (its size alone), or when more than half are over the limit and
 * the one-sided sign test gives p < alpha; UNDECIDED when most are over, p >= alpha, and
 * even n of n over could not reach alpha (fewer than 5 runs at 0.05); else PASS (at most
 * half over, or a test that could have rejected and did not). Fills k->p and why. */
static int count_over(const struct gate_budget *b, const double *v, size_t n, double limit,
		      int *far)
{
	int over = 0;
	*far = 0;
	for (size_t j = 0; j < n; j++) {
		over += !gate_op_holds(b->op, v[j], limit);
		*far += !isnan(b->far) && !gate_op_holds(b->op, v[j], b->far);
	}
	return over;
}

/* The sign test's verdict on k of n runs over: FAIL at p < alpha; UNDECIDED when most are
 * over and even n of n could not reach alpha; else PASS. */
static enum gate_state sign_verdict(int k, int n, double alpha)
{
	if (2 * k <= n)
		return GATE_PASS;
	if (sign_test_p(k, n) < alpha)
		return GATE_FAIL;
	return sign_test_p(n, n) >= alpha ? GATE_UNDECIDED : GATE_PASS;
}

int gate_sign_call(int over, int n, int nmax, double alpha)
{
	if (nmax < n)
		nmax = n;
	/* the verdict only moves from PASS towards FAIL or UNDECIDED as runs go over, so the
	 * fewest (none of the rest over) and the most (all over) bound every outcome */
	enum gate_state few = sign_verdict(over, nmax, alpha);
	enum gate_state most = sign_verdict(over + nmax - n, nmax, alpha);
	return few == most ? (int)few : -1;
}

int gate_median_call(const double *v, size_t n, int nmax, enum gate_op op, double limit)
{
	int ok = 0;
	for (size_t i = 0; i < n; i++)
		ok += gate_op_holds(op, v[i], limit);
	if (n > 0 && (int)n >= nmax)
		return gate_op_holds(op, median_of(v, n), limit) ? GATE_PASS : GATE_FAIL;
	/* the median of nmax runs is their middle order statistic (the mean of the two
	 * middle ones for even nmax): more than half on one side hold it there */
	if (2 * ok > nmax)
		return GATE_PASS;
	if (2 * ((int)n - ok) > nmax)
		return GATE_FAIL;
	return -1;
}

/* The runs an adaptive cell c may still add (0 for a fixed cell or one at its maximum). */
static int runs_to_come(const struct cell *c)
{
	return c->reps_max > (int)c->n ? c->reps_max - (int)c->n : 0;
}

static enum gate_state judge_sign_test(const struct gate_config *cfg,
				       const struct gate_budget *b, const double *v, size_t n,
				       double limit, const struct cell *c, struct gate_check *k,
				       char *why, size_t len)
{
	int far;
	int over = count_over(b, v, n, limit, &far);
	double p = sign_test_p(over, (int)n), best = sign_test_p((int)n, (int)n);
	k->p = p;
	snprintf(why, len, ", %d of %zu runs over, sign test p=%.3f", over, n, p);
	if (n > 0 && far == (int)n) {
		char fs[32];
		gate_fmt_value(fs, sizeof(fs), b->metric, b->far);
		snprintf(why + strlen(why), len - strlen(why), ", every run beyond %s (far): "
			 "fails on its size", fs);
		return GATE_FAIL;
	}
	int more = runs_to_come(c);
	int call = more ? gate_sign_call(over, (int)n, (int)n + more, cfg->alpha) : -1;
	if (call >= 0) {
		/* adaptive: the verdict at the cell's maximum, which no run to come changes */
		snprintf(why + strlen(why), len - strlen(why), "; the same for any %d runs more",
			 more);
		return (enum gate_state)call;
	}
	if (2 * over <= (int)n)
		return GATE_PASS;
	if (p < cfg->alpha)
		return GATE_FAIL;
	if (best >= cfg->alpha) {
		snprintf(why + strlen(why), len - strlen(why), "; %zu of %zu would give p=%.3f, "
			 "not < %g", n, n, best, cfg->alpha);
		return GATE_UNDECIDED;
	}
	return GATE_PASS;
}

/* One budget judged on one cell: what its steps share. */
struct bjudge {
	const struct gate_config *cfg;
	const struct gate_side *cur;
	const struct cells *cs;
	const struct cell *c;
	const struct gate_budget *b;
	struct gate_check *k; /* the check being judged, in the result */
	double *buf;          /* scratch for values (the caller's) */
	size_t n;             /* the cell's values of the metric */
	double limit;         /* the budget's limit in this cell */
	char lim[128];        /* the limit as the verdict prints it */
};

/* Whether budget b is judged on cell c: it applies, and the `none` reference (which takes
 * no samples) gets only the run-level budgets and the program's own integrity checks. */
static int budget_judged_on(const struct gate_budget *b, const struct cell *c,
			    const struct sb_host *h)
{
	if (!budget_applies(b, c, h))
		return 0;
	return !(c->cls.baseline && gate_pseudo_index(b->metric) < 0 &&
		 strcmp(b->metric, "checksum_errors") && strncmp(b->metric, "integrity_", 10));
}

/* The limit of a budget written against a host fact (`2.0 * host.F`) or another sampler
 * (`none.M + V`) into j->limit and j->lim. Returns 0, or -1 when the fact or the reference
 * is missing (the check is then settled: not measured, or a warning). */
static int resolve_limit(struct bjudge *j)
{
	const struct gate_budget *b = j->b;
	const struct gate_config *cfg = j->cfg;
	struct gate_check *k = j->k;
	char rvs[32];

	j->limit = b->value;
	gate_fmt_value(j->lim, sizeof(j->lim), b->metric, j->limit);
	if (b->host_fact[0]) {
		double f = host_fact(j->cur->host, b->host_fact);
		if (isnan(f)) {
			k->state = GATE_NA;
			snprintf(k->reason, sizeof(k->reason), "not measured: the file has no "
				 "host fact %s (no calibration) for %s %g * host.%s (%s:%d)",
				 b->host_fact, gate_op_names[b->op], b->value, b->host_fact,
				 cfg->name, b->line);
			return -1;
		}
		j->limit = b->value * f;
		gate_fmt_value(rvs, sizeof(rvs), b->host_fact, f);
		snprintf(j->lim, sizeof(j->lim), "%g x host %s %s = ", b->value, b->host_fact, rvs);
		size_t u = strlen(j->lim);
		gate_fmt_value(j->lim + u, sizeof(j->lim) - u, b->metric, j->limit);
	}
	if (b->ref_sampler[0]) {
		const struct cell *c = j->c;
		const struct cell *rc = gate_cells_find(j->cs, b->ref_sampler, c->workload,
							c->threads, c->hz);
		size_t rn = rc ? gate_cell_values(j->cur, rc, b->ref_metric, j->buf) : 0;
		double rv = median_of(j->buf, rn);
		if (isnan(rv)) {
			/* without `none` runs a limit against none is not measured, as
			 * overhead is; another missing reference is a warning */
			int none = !strcmp(b->ref_sampler, "none");
			k->state = none ? GATE_NA : GATE_WARN;
			snprintf(k->reason, sizeof(k->reason), "%sno %s %s in this cell to "
				 "compare with (%s:%d)", none ? "not measured: " : "",
				 b->ref_sampler, b->ref_metric, cfg->name, b->line);
			return -1;
		}
		j->limit = rv + b->value;
		char vs[32]; /* the margin in the metric's unit: "+ 10000.0µs", not "+1e+07" */
		gate_fmt_value(rvs, sizeof(rvs), b->ref_metric, rv);
		gate_fmt_value(vs, sizeof(vs), b->metric, fabs(b->value));
		snprintf(j->lim, sizeof(j->lim), "%s %s %c %s = ", b->ref_sampler, rvs,
			 b->value < 0 ? '-' : '+', vs);
		size_t u = strlen(j->lim);
		gate_fmt_value(j->lim + u, sizeof(j->lim) - u, b->metric, j->limit);
	}
	k->baseline = j->limit;
	return 0;
}

/* Settles the check as not applicable when the host does not allow judging the budget
 * here: a `calm` budget in a busy cell, or a limit below the host's floor. Returns 1 when
 * it did, else 0. */
static int host_disallows(struct bjudge *j)
{
	const struct gate_budget *b = j->b;
	const struct gate_config *cfg = j->cfg;
	struct gate_check *k = j->k;

	if (b->calm) {
		double busy = none_pause_max(j->cur, j->cs, j->c);
		if (busy > GATE_BUSY_NONE_PAUSE_FRACTION) {
			k->state = GATE_NA;
			snprintf(k->reason, sizeof(k->reason), "not applicable: the host was "
				 "busy in this cell (a none run lost %.1f%% of its time, over "
				 "%.0f%%), the floors of the file's start and end do not "
				 "describe it (%s:%d)", busy * 100,
				 GATE_BUSY_NONE_PAUSE_FRACTION * 100, cfg->name, b->line);
			return 1;
		}
	}
	if (!b->floor_fact[0])
		return 0;
	double fl = host_fact(j->cur->host, b->floor_fact) * b->floor_factor;
	if (isnan(fl) && j->cur->host->ncalib > 0) {
		/* calibrated, but before this floor was measured: whether the host
		 * allows the budget is unknown (without any calibration the
		 * budget is judged as written) */
		k->state = GATE_NA;
		snprintf(k->reason, sizeof(k->reason), "not measured: the file's "
			 "calibration has no host fact %s, the floor of %s %s (%s:%d)",
			 b->floor_fact, gate_op_names[b->op], j->lim, cfg->name, b->line);
		return 1;
	}
	if (!isnan(fl) && !gate_op_holds(b->op, fl, j->limit)) {
		char fs[32];
		gate_fmt_value(fs, sizeof(fs), b->floor_fact, fl);
		k->state = GATE_NA;
		snprintf(k->reason, sizeof(k->reason), "absolute budget not applicable: "
			 "floor %s (%g x host %s) is not %s %s (%s:%d)", fs,
			 b->floor_factor, b->floor_fact, gate_op_names[b->op], j->lim,
			 cfg->name, b->line);
		return 1;
	}
	return 0;
}

/* Settles a check whose cell gave no value of the metric: a warning when nothing ran, not
 * measured when nobody could have measured it or the sampler does not claim it, else a
 * verdict on the NaNs. */
static void judge_without_values(struct bjudge *j)
{
	const struct gate_budget *b = j->b;
	const struct gate_config *cfg = j->cfg;
	const struct cell *c = j->c;
	struct gate_check *k = j->k;
	long need = cell_metric_needs(b->metric, c);
	int ran = c->n > (size_t)(c->failed + c->skipped);

	if (!ran) {
		k->state = GATE_WARN;
		snprintf(k->reason, sizeof(k->reason), "no values (%d failed, %d skipped "
			 "runs) for budget %s %s (%s:%d)", c->failed, c->skipped,
			 gate_op_names[b->op], j->lim, cfg->name, b->line);
	} else if (!measured_nearby(j->cur, j->cs, c, b->metric, j->buf)) {
		/* the workload does not define it (misattributed_fraction on hotspot,
		 * whose leaves are shared): nobody could have measured it */
		k->state = GATE_NA;
		snprintf(k->reason, sizeof(k->reason), "not measured: no sampler of this "
			 "file gives it on %s (%s:%d)", c->workload, cfg->name, b->line);
	} else if (need > 0 && (c->cls.caps & (unsigned long)need) != (unsigned long)need) {
		unsigned long miss = (unsigned long)need & ~(unsigned long)c->cls.caps;
		k->state = GATE_NA;
		snprintf(k->reason, sizeof(k->reason), "not measured: %s does not claim "
			 "%s (%s:%d)", c->sampler, cap_name((long)(miss & -miss)),
			 cfg->name, b->line);
	} else if (!cell_sampled(j->cur, c)) {
		/* a fraction of samples has no value without samples; whether
		 * none was right is the counting rules' question (rate_accuracy,
		 * which says where the mechanism allows none: churn, syscall) */
		k->state = GATE_NA;
		snprintf(k->reason, sizeof(k->reason), "not measured: no samples in "
			 "any run, counts are judged by the rate rules (%s:%d)",
			 cfg->name, b->line);
	} else if (need < 0) {
		k->state = GATE_NA;
		snprintf(k->reason, sizeof(k->reason), "not measured: %s (%s:%d)",
			 need == -3 ? "the sampler reports no sampler_cpu_ns to check"
			 : need == -2 ? "no process accounting in its runs (a tool's or "
					"exec run, or an older file)"
				      : "needs a `none` run or host calibration in the file",
			 cfg->name, b->line);
	} else {
		snprintf(k->reason, sizeof(k->reason), "NaN in every run, yet %s (%s:%d)",
			 need > 0 ? "the sampler claims it" : "every sampler must give it",
			 cfg->name, b->line);
		settle(cfg, k, 0);
	}
}

/* Judges a budget on the cell's run values: their median, the worst run (`worst`) or the
 * sign test over the runs (`sign-test`), and settles the check. */
static void judge_runs(struct bjudge *j)
{
	const struct gate_budget *b = j->b;
	const struct gate_config *cfg = j->cfg;
	struct gate_check *k = j->k;
	int ok = gate_op_holds(b->op, k->current, j->limit);
	char why[200] = "";

	if (b->worst) {
		/* a tail: one run over the limit anywhere in the cell is a verdict */
		const struct sb_run *wr = gate_worst_run(j->cur, j->c, b->metric, b->op,
							 &k->current);
		ok = gate_op_holds(b->op, k->current, j->limit);
		if (wr) {
			char where[160];
			gate_pause_where(wr, b->metric, where, sizeof(where));
			snprintf(why, sizeof(why), ", worst of %zu runs: %s", j->n, where);
		}
	} else if (b->sign_test) {
		/* buf may hold the reference's values */
		size_t n = gate_cell_values(j->cur, j->c, b->metric, j->buf);
		enum gate_state st = judge_sign_test(cfg, b, j->buf, n, j->limit, j->c, k, why,
						     sizeof(why));
		if (st == GATE_UNDECIDED) {
			k->state = GATE_UNDECIDED;
			/* widths bound the reason (384): the -O1 sanitizer builds check it */
			snprintf(k->reason, sizeof(k->reason), "too few runs to judge %s %.100s%.150s "
				 "(%.40s:%d)", gate_op_names[b->op], j->lim, why, cfg->name, b->line);
			return;
		}
		ok = st == GATE_PASS;
	}
	if (!ok && (!strcmp(b->metric, "window_report_ratio") ||
		    !strcmp(b->metric, "window_unreported_p50_ns"))) {
		char d[120];
		gate_window_detail(j->cur, j->c, d, sizeof(d));
		snprintf(why + strlen(why), sizeof(why) - strlen(why), ", %s", d);
	}
	snprintf(k->reason, sizeof(k->reason), "%s %s %.100s%.150s (%.40s:%d)",
		 ok ? "budget" : "OVER BUDGET", gate_op_names[b->op], j->lim, why, cfg->name,
		 b->line);
	settle(cfg, k, ok);
}

/* Whether more runs of j's adaptive cell could change the verdict of its settled check
 * (docs/gate.md "Adaptive repetitions"): never in a cell of a fixed count or at its
 * maximum, nor for a check not judged on the runs' values (not applicable, not
 * measured, a warning, an expected failure), a rule on each run (`worst`), a count
 * (failed_runs) or a `far` failure of every run: those judge the runs held. A pooled
 * quantile too short of samples for its bound is open. Otherwise the call of the median
 * (on the runs' own values, pooled quantiles too) or of the sign test at the cell's
 * maximum. */
static int check_open(const struct bjudge *j)
{
	const struct cell *c = j->c;
	const struct gate_budget *b = j->b;
	enum gate_state st = j->k->state;
	int more = runs_to_come(c), far;

	if (!more)
		return 0;
	if ((int)c->n < c->reps_min)
		return 1;
	if ((st != GATE_PASS && st != GATE_FAIL && st != GATE_UNDECIDED) || b->worst ||
	    gate_pseudo_index(b->metric) >= 0)
		return 0;
	if (st == GATE_UNDECIDED && !b->sign_test)
		return 1; /* a pooled bound short of samples: more runs bring more */
	size_t n = gate_cell_values(j->cur, c, b->metric, j->buf);
	if (n == 0)
		return 0;
	if (!b->sign_test)
		return gate_median_call(j->buf, n, (int)n + more, b->op, j->limit) < 0;
	int over = count_over(b, j->buf, n, j->limit, &far);
	if (far == (int)n)
		return 0;
	return gate_sign_call(over, (int)n, (int)n + more, j->cfg->alpha) < 0;
}

/* Adds the row of adaptive cell c: its repetitions and whether its checks, res's rows
 * from first on, were decided; a warning when one was still open below the maximum (the
 * bench ended first). */
static void reps_check(struct gate_result *res, size_t *cap, const struct cell *c,
		       size_t first)
{
	char open[160] = "";
	size_t u = 0;
	int nopen = 0;

	for (size_t i = first; i < res->nchecks; i++)
		if (res->checks[i].open && ++nopen && u < sizeof(open))
			u += (size_t)snprintf(open + u, sizeof(open) - u, "%s%s", u ? ", " : "",
					      res->checks[i].metric);
	struct gate_check *k = add_check(res, cap, c, GATE_REPS, "reps");
	if (!k)
		return;
	k->current = (double)c->n;
	k->ncur = (int)c->n;
	if (nopen) {
		k->state = GATE_WARN;
		snprintf(k->reason, sizeof(k->reason), "reps %zu of %d..%d: undecided, the bench "
			 "ended before its maximum (%d open: %.150s)", c->n, c->reps_min,
			 c->reps_max, nopen, open);
	} else if (c->cls.baseline && (int)c->n > c->reps_min) {
		snprintf(k->reason, sizeof(k->reason), "reps %zu of %d..%d: the reference, run "
			 "first in every repetition its group made", c->n, c->reps_min, c->reps_max);
	} else if ((int)c->n >= c->reps_max) {
		snprintf(k->reason, sizeof(k->reason), "reps %zu of %d..%d: undecided until the "
			 "maximum, judged on %zu runs", c->n, c->reps_min, c->reps_max, c->n);
	} else {
		snprintf(k->reason, sizeof(k->reason), "reps %zu of %d..%d: decided", c->n,
			 c->reps_min, c->reps_max);
	}
}

/* Adds to res one check per budget that applies to cell c, each settled: its limit
 * resolved, then judged on the cell's pooled samples (a quantile), on its runs, or on
 * the absence of values. buf holds the values of any cell (the caller's). */
static void budget_checks(const struct gate_config *cfg, const struct gate_side *cur,
			  const struct cells *cs, const struct cell *c, struct gate_result *res,
			  size_t *cap, double *buf)
{
	char cls[200];
	fmt_class(cls, sizeof(cls), &c->cls);
	for (int i = 0; i < cfg->nbudgets; i++) {
		const struct gate_budget *b = &cfg->budgets[i];
		if (!budget_judged_on(b, c, cur->host))
			continue;
		struct bjudge j = { .cfg = cfg, .cur = cur, .cs = cs, .c = c, .b = b, .buf = buf };
		j.n = gate_cell_values(cur, c, b->metric, buf);
		j.k = add_check(res, cap, c, GATE_BUDGET, b->metric);
		if (!j.k)
			return;
		snprintf(j.k->why, sizeof(j.k->why), "rule %.60s:%d `%.130s`; %s: %.170s",
			 cfg->name, b->line, b->text, c->sampler, cls);
		j.k->ncur = (int)j.n;
		j.k->current = median_of(buf, j.n);
		if (resolve_limit(&j) != 0 || host_disallows(&j))
			continue;
		/* a quantile is judged on the cell's pooled samples unless the rule asks for
		 * its runs' own values (per-run, sign-test, worst) */
		struct pooled pl;
		if (b->per_run || b->sign_test || b->worst ||
		    pooled_quantile(cur, c, b->metric, cfg->alpha, &pl) != 0 || pl.n == 0)
			pl.n = 0;
		if (j.n == 0 && pl.n == 0)
			judge_without_values(&j);
		else if (pl.n > 0)
			/* failing only when its confidence interval lies beyond the limit */
			judge_pooled(cfg, b, &pl, j.limit, j.lim, j.k);
		else
			judge_runs(&j);
		j.k->open = check_open(&j);
	}
}

static void host_warnings(const struct gate_side *base, const struct gate_side *cur,
			  struct gate_result *res)
{
	const struct sb_host *a = base->host, *b = cur->host;
	char diff[200] = "";
	size_t u = 0;

#define HOST_DIFF(cond, ...)                                                               \
	do {                                                                               \
		if ((cond) && u < sizeof(diff))                                            \
			u += (size_t)snprintf(diff + u, sizeof(diff) - u, __VA_ARGS__);    \
	} while (0)
	HOST_DIFF(strcmp(a->host, b->host), " host %s vs %s;", a->host, b->host);
	HOST_DIFF(strcmp(a->kernel, b->kernel), " kernel %s vs %s;", a->kernel, b->kernel);
	HOST_DIFF(a->nproc != b->nproc, " nproc %d vs %d;", a->nproc, b->nproc);
	HOST_DIFF(a->tick_hz != b->tick_hz, " tick %d Hz vs %d Hz;", a->tick_hz, b->tick_hz);
#undef HOST_DIFF
	if (u == 0 || res->nwarnings == (int)(sizeof(res->warnings) / sizeof(res->warnings[0])))
		return;
	if (diff[strlen(diff) - 1] == ';')
		diff[strlen(diff) - 1] = 0;
	snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
		 "baseline comes from another machine, comparisons may be meaningless:%.170s", diff);
}

static void add_note(struct gate_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_note(struct gate_result *res, const char *fmt, ...)
{
	va_list ap;
	if (res->nnotes == (int)(sizeof(res->notes) / sizeof(res->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(res->notes[res->nnotes++], sizeof(res->notes[0]), fmt, ap);
	va_end(ap);
}

/* Splits an A/B file's runs by variant into a and b (shallow copies: the runs still own
 * their arrays). Returns 1 when the file holds both variants, 0 when not, -1 on no memory. */
static int split_variants(const struct gate_side *cur, struct sb_run **a, size_t *na,
			  struct sb_run **b, size_t *nb)
{
	*a = *b = NULL;
	*na = *nb = 0;
	for (size_t i = 0; i < cur->nruns; i++) {
		*na += !strcmp(cur->runs[i].variant, "A");
		*nb += !strcmp(cur->runs[i].variant, "B");
	}
	if (*na == 0 || *nb == 0)
		return 0;
	*a = malloc(*na * sizeof(**a));
	*b = malloc(*nb * sizeof(**b));
	if (!*a || !*b)
		return -1;
	*na = *nb = 0;
	for (size_t i = 0; i < cur->nruns; i++) {
		if (!strcmp(cur->runs[i].variant, "A"))
			(*a)[(*na)++] = cur->runs[i];
		else if (!strcmp(cur->runs[i].variant, "B"))
			(*b)[(*nb)++] = cur->runs[i];
	}
	return 1;
}

/* Across two files: warns of host differences, and compares timing metrics only when both
 * files carry the same host fingerprint (mode->timing 0 otherwise, said in a note). */
static void compare_hosts(const struct gate_side *base, const struct gate_side *cur,
			  struct reg_mode *mode, struct gate_result *res)
{
	host_warnings(base, cur, res);
	const char *fa = base->host->fingerprint, *fb = cur->host->fingerprint;
	if (fa[0] && fb[0] && !strcmp(fa, fb))
		return;
	mode->timing = 0;
	if (fa[0] && fb[0])
		add_note(res, "timing metrics were not compared: the baseline's host "
			 "fingerprint '%s' is not the current file's '%s' (timings "
			 "compare only within one machine class); correctness metrics "
			 "were", fa, fb);
	else
		add_note(res, "timing metrics were not compared: %s, so the machines "
			 "cannot be known to match; correctness metrics were",
			 !fa[0] && !fb[0] ? "neither file has a host fingerprint" :
			 !fa[0] ? "the baseline has no host fingerprint" :
				  "the current file has no host fingerprint");
}

/* Same-run A/B: one family of pooled tests, the cells of B (cc) found in A (bc) times the
 * pooled regress rules. Bonferroni over them keeps the chance of any false alarm in a
 * HEAD-vs-HEAD comparison under alpha: sets mode->alpha_ab and says so in a note. */
static void ab_family(const struct gate_config *cfg, const struct cells *cc,
		      const struct cells *bc, struct reg_mode *mode, struct gate_result *res)
{
	size_t m = 0;
	for (size_t i = 0; i < cc->n; i++)
		if (gate_cells_find(bc, cc->v[i].sampler, cc->v[i].workload, cc->v[i].threads,
				    cc->v[i].hz))
			for (int r = 0; r < cfg->nrules; r++)
				m += is_pooled_metric(cfg->rules[r].metric);
	mode->alpha_ab = cfg->alpha / (double)(m ? m : 1);
	add_note(res, "same-run A/B: variant B (candidate) judged against variant A "
		 "(reference) of this file with every regress rule, timing included (same "
		 "machine, same session); quantiles pooled over samples, %zu tests at "
		 "alpha %g/%zu, absolute minimum effects only", m, cfg->alpha, m ? m : 1);
}

/* Adds a warning check: cell c is missing on the other side (`where`). Returns 0, or -1
 * when out of memory. */
static int add_missing(struct gate_result *res, size_t *cap, const struct cell *c,
		       const char *where)
{
	struct gate_check *k = add_check(res, cap, c, GATE_MISSING, "-");
	if (!k)
		return -1;
	k->state = GATE_WARN;
	snprintf(k->reason, sizeof(k->reason), "cell missing in the %s", where);
	return 0;
}

/* Checks every cell of cur (cells cc): against its baseline cell in bc (base: regression
 * checks, or a missing cell), then the budgets; and warns of the baseline's cells cur
 * lacks. b1 and b2 hold any cell's values. Returns 0, or -1 when out of memory. */
static int check_cells(const struct gate_config *cfg, const struct gate_side *base,
		       const struct gate_side *cur, const struct cells *cc,
		       const struct cells *bc, const struct reg_mode *mode,
		       struct gate_result *res, size_t *cap, double *b1, double *b2)
{
	for (size_t i = 0; i < cc->n; i++) {
		const struct cell *c = &cc->v[i];
		size_t first = res->nchecks;
		if (cur->only && strcmp(c->sampler, cur->only))
			continue;
		if (base) {
			const struct cell *b = gate_cells_find(bc, c->sampler, c->workload,
							       c->threads, c->hz);
			if (b)
				regression_checks(cfg, base, b, cur, c, mode, res, cap, b1, b2);
			else if (add_missing(res, cap, c, mode->ab ? "A variant" : "baseline") != 0)
				return -1;
			/* an adaptive cell's U test that too few runs leave undecided is open:
			 * more runs can reach alpha (3 against 5 can, 3 against 3 cannot) */
			for (size_t k = first; k < res->nchecks && runs_to_come(c); k++)
				res->checks[k].open = res->checks[k].kind == GATE_REGRESSION &&
						      res->checks[k].state == GATE_UNDECIDED;
		}
		budget_checks(cfg, cur, cc, c, res, cap, b1);
		if (c->reps_max)
			reps_check(res, cap, c, first);
	}
	for (size_t i = 0; base && i < bc->n; i++) {
		const struct cell *b = &bc->v[i];
		if (cur->only && strcmp(b->sampler, cur->only))
			continue;
		if (gate_cells_find(cc, b->sampler, b->workload, b->threads, b->hz))
			continue;
		if (add_missing(res, cap, b, mode->ab ? "B variant" : "current run") != 0)
			return -1;
	}
	return 0;
}

/* Evaluates cfg on cur, all of one host, against base (NULL: budgets only), appending
 * to res. Returns 0 or -1 (memory). */
static int eval_host(const struct gate_config *cfg, const struct gate_side *base,
		     const struct gate_side *cur, struct gate_result *res)
{
	struct cells cc = { 0 }, bc = { 0 };
	size_t cap = 0, maxruns, na = 0, nb = 0;
	struct sb_run *ra = NULL, *rb = NULL;
	struct gate_side side_a, side_b;
	struct reg_mode mode = { .timing = 1, .alpha_ab = cfg->alpha };
	double *b1 = NULL, *b2 = NULL;
	int rc = -1;

	int ab = split_variants(cur, &ra, &na, &rb, &nb);
	if (ab < 0)
		goto cleanup;
	if (ab) {
		/* same-run A/B: B (the candidate) against A (the reference) inside the file;
		 * same machine and session, so timing metrics are compared too */
		side_a = (struct gate_side){ .path = cur->path, .host = cur->host, .runs = ra,
					     .nruns = na, .only = cur->only };
		side_b = (struct gate_side){ .path = cur->path, .host = cur->host, .runs = rb,
					     .nruns = nb, .only = cur->only };
		if (base)
			add_note(res, "the current file holds an A/B pair: the baseline '%s' is not "
				 "used", base->path ? base->path : "");
		base = &side_a;
		cur = &side_b;
		mode.ab = 1;
	}
	maxruns = cur->nruns + (base ? base->nruns : 0) + 1;
	b1 = malloc(maxruns * sizeof(*b1));
	b2 = malloc(maxruns * sizeof(*b2));
	if (!b1 || !b2 || gate_cells_build(cur, &cc) || (base && gate_cells_build(base, &bc)))
		goto cleanup;
	if (base && !ab)
		compare_hosts(base, cur, &mode, res);
	if (ab)
		ab_family(cfg, &cc, &bc, &mode, res);
	if (cur->host->tick_hz <= 0 &&
	    res->nwarnings < (int)(sizeof(res->warnings) / sizeof(res->warnings[0])))
		snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			 "the current file has no kernel tick rate: budgets conditioned on hz<=tick "
			 "are not applied");
	rc = check_cells(cfg, base, cur, &cc, &bc, &mode, res, &cap, b1, b2);
cleanup:
	/* the checks copied every name they need: the cells can go */
	gate_cells_free(&cc);
	gate_cells_free(&bc);
	free(b1);
	free(b2);
	free(ra);
	free(rb);
	return rc;
}

/* The baseline for cur's host group g: base's runs of the same fingerprint when base holds
 * several hosts (none: NULL, said in a note), else base as a whole (whose fingerprint
 * eval_host compares as for any two files). */
static const struct gate_side *base_for(const struct gate_side *base,
					const struct gate_hostset *bh, const struct sb_host *h,
					struct gate_side *sub, struct sb_run **runs,
					struct gate_result *res)
{
	if (!base || bh->n <= 1)
		return base;
	long g = gate_hosts_find(bh, h);
	if (g < 0) {
		add_note(res, "the baseline '%s' has no runs of host fingerprint '%s': budgets "
			 "only", base->path ? base->path : "", h->fingerprint);
		return NULL;
	}
	if (gate_side_of_host(base, bh, (size_t)g, sub, runs) != 0)
		return NULL;
	return sub;
}

/* Moves sub's checks, notes and warnings into res, naming host label (a file of several
 * hosts), and counts them into v. Returns 0 or -1 (memory). */
static int take_host(struct gate_result *res, size_t *cap, struct gate_result *sub,
		     const char *label, struct gate_host_verdict *v)
{
	for (size_t i = 0; i < sub->nchecks; i++) {
		struct gate_check *k = &sub->checks[i];
		if (res->nchecks == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			struct gate_check *nv = realloc(res->checks, ncap * sizeof(*nv));
			if (!nv)
				return -1;
			res->checks = nv;
			*cap = ncap;
		}
		snprintf(k->host, sizeof(k->host), "%s", label);
		res->checks[res->nchecks++] = *k;
		v->nchecks++;
		v->failed += k->state == GATE_FAIL;
		v->warned += k->state == GATE_WARN;
		v->na += k->state == GATE_NA;
		v->exempt += k->state == GATE_EXEMPT;
		v->undecided += k->state == GATE_UNDECIDED;
	}
	for (int i = 0; i < sub->nnotes; i++)
		add_note(res, "host %s: %.200s", label, sub->notes[i]);
	for (int i = 0; i < sub->nwarnings &&
	     res->nwarnings < (int)(sizeof(res->warnings) / sizeof(res->warnings[0])); i++)
		snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]), "host %s: %.200s",
			 label, sub->warnings[i]);
	return 0;
}

int gate_eval(const struct gate_config *cfg, const struct gate_side *base,
	      const struct gate_side *cur, struct gate_result *res)
{
	struct gate_hostset ch = { 0 }, bh = { 0 };
	struct gate_side cs, bs;
	struct sb_run *cruns = NULL, *bruns = NULL;
	size_t cap = 0;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (gate_hosts_group(cur, &ch) != 0 || (base && gate_hosts_group(base, &bh) != 0))
		goto cleanup;
	if (ch.n == 1) {
		/* one host: judged as it always was, against the baseline's runs of its
		 * fingerprint when the baseline holds several hosts */
		const struct gate_side *b = base_for(base, &bh, cur->host, &bs, &bruns, res);
		if (eval_host(cfg, b, cur, res) != 0)
			goto cleanup;
	} else {
		res->hosts = calloc(ch.n, sizeof(*res->hosts));
		if (!res->hosts)
			goto cleanup;
		res->nhosts = ch.n;
		for (size_t g = 0; g < ch.n; g++) {
			struct gate_result sub = { 0 };
			struct gate_host_verdict *v = &res->hosts[g];
			snprintf(v->host, sizeof(v->host), "%s", ch.label[g]);
			snprintf(v->fingerprint, sizeof(v->fingerprint), "%s", ch.host[g]->fingerprint);
			free(cruns);
			free(bruns);
			cruns = bruns = NULL;
			if (gate_side_of_host(cur, &ch, g, &cs, &cruns) != 0)
				goto cleanup;
			const struct gate_side *b = base_for(base, &bh, ch.host[g], &bs, &bruns,
							     &sub);
			int e = eval_host(cfg, b, &cs, &sub);
			if (e == 0)
				e = take_host(res, &cap, &sub, ch.label[g], v);
			gate_result_free(&sub);
			if (e != 0)
				goto cleanup;
		}
	}
	for (size_t i = 0; i < res->nchecks; i++) {
		res->failed += res->checks[i].state == GATE_FAIL;
		res->warned += res->checks[i].state == GATE_WARN;
		res->na += res->checks[i].state == GATE_NA;
		res->exempt += res->checks[i].state == GATE_EXEMPT;
		res->undecided += res->checks[i].state == GATE_UNDECIDED;
	}
	res->undecided_pass = cfg->undecided_pass;
	rc = 0;
cleanup:
	gate_hosts_free(&ch);
	gate_hosts_free(&bh);
	free(cruns);
	free(bruns);
	return rc;
}

int gate_failed(const struct gate_result *res)
{
	return res->failed > 0 || (res->undecided > 0 && !res->undecided_pass);
}

int gate_host_failed(const struct gate_result *res, const struct gate_host_verdict *v)
{
	return v->failed > 0 || (v->undecided > 0 && !res->undecided_pass);
}

void gate_result_free(struct gate_result *res)
{
	free(res->hosts);
	free(res->checks);
	memset(res, 0, sizeof(*res));
}
