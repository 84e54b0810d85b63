/* gate_eval.c - the gate's evaluation: cells (sampler, workload, threads, hz) and their
 * repetitions, sampler classes, budgets (class rules, host facts, floors, pooled quantiles,
 * expect lines) and regressions (U test against a baseline, pooled tests inside an A/B
 * file). Only ok runs give metric values; failed and skipped runs are counted in the
 * pseudo metrics failed_runs and skipped_runs. */
#include "analysis/gate_int.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/mwu.h"
#include "sampler/sampler.h"

/* --- cells --- */

void gate_class_of(const char *sampler, const struct sb_run *runs, size_t n,
		   struct gate_class *cls)
{
	const struct sb_run *r = NULL;
	const struct sampler *s = sampler_find(sampler);

	memset(cls, 0, sizeof(*cls));
	for (size_t i = 0; i < n; i++)
		if (!strcmp(runs[i].sampler, sampler) && (!r || runs[i].status == SB_RUN_OK))
			if (!r || r->status != SB_RUN_OK)
				r = &runs[i];
	cls->clock = r ? r->clock : s ? (int)s->clock : SB_CLOCK_CPU;
	double caps = r ? run_stat(r, "class_caps") : NAN;
	if (!isnan(caps)) { /* a plugin: what it declared through the ABI (sampler/plugin.c) */
		double abi = run_stat(r, "class_abi");
		cls->caps = (unsigned)caps & 0xffffu;
		cls->tick_driven = ((unsigned)caps >> 16) & 1;
		if (abi == 1)
			snprintf(cls->source, sizeof(cls->source), "plugin ABI 1: v1 defaults assumed "
				 "(thread_ids, weights, stacks, per-thread)");
		else
			snprintf(cls->source, sizeof(cls->source), "declared by the plugin (ABI %g)",
				 abi);
	} else if (s) {
		cls->caps = s->caps;
		cls->tick_driven = !!(s->flags & SB_SAMPLER_TICK_DRIVEN);
		cls->baseline = !!(s->flags & SB_SAMPLER_BASELINE);
		snprintf(cls->source, sizeof(cls->source), "built-in table");
	} else {
		/* Unknown to this sampbench and no class in the file: judge it by every rule. */
		cls->caps = SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS |
			    SB_CAP_STOP_LATENCY | SB_CAP_SUSPEND_WINDOW;
		snprintf(cls->source, sizeof(cls->source), "unknown sampler, no class in the file: "
			 "every capability assumed");
	}
}

/* "cpu clock, per-thread, tick-driven, claims thread_ids,weights (built-in table)" */
static void fmt_class(char *buf, size_t len, const struct gate_class *c)
{
	size_t u = (size_t)snprintf(buf, len, "%s clock, %s%s, claims ",
				    c->clock == SB_CLOCK_WALL ? "wall" : "cpu",
				    (c->caps & SB_CAP_PROCESS_WIDE) ? "process-wide signal" : "per-thread",
				    c->tick_driven ? ", tick-driven" : "");
	int any = 0;
	for (size_t i = 1; i < GATE_NCAPS && u < len; i++)
		if (c->caps & gate_cap_names[i].cap)
			u += (size_t)snprintf(buf + u, len - u, "%s%s", any++ ? "," : "",
					      gate_cap_names[i].name);
	if (u < len)
		snprintf(buf + u, len - u, "%s (%s)", any ? "" : "nothing", c->source);
}

static int same_cell(const struct cell *c, const struct sb_run *r)
{
	return !strcmp(c->sampler, r->sampler) && !strcmp(c->workload, r->workload) &&
	       c->threads == r->threads && c->hz == r->hz;
}

void gate_cells_free(struct cells *cs)
{
	free(cs->v);
	free(cs->idx);
	memset(cs, 0, sizeof(*cs));
}

int gate_cells_build(const struct gate_side *side, struct cells *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->v = calloc(side->nruns + 1, sizeof(*cs->v));
	cs->idx = calloc(side->nruns + 1, sizeof(*cs->idx));
	if (!cs->v || !cs->idx) {
		gate_cells_free(cs);
		return -1;
	}
	/* two passes: count per cell, then place the indices contiguously */
	size_t *cell_of = calloc(side->nruns + 1, sizeof(*cell_of));
	if (!cell_of) {
		gate_cells_free(cs);
		return -1;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		const struct sb_run *r = &side->runs[i];
		size_t c = 0;
		while (c < cs->n && !same_cell(&cs->v[c], r))
			c++;
		if (c == cs->n)
			cs->v[cs->n++] = (struct cell){ .sampler = r->sampler, .workload = r->workload,
							 .threads = r->threads, .hz = r->hz };
		cell_of[i] = c;
		cs->v[c].n++;
		cs->v[c].failed += r->status == SB_RUN_FAILED;
		cs->v[c].skipped += r->status == SB_RUN_SKIPPED;
	}
	size_t off = 0;
	for (size_t c = 0; c < cs->n; c++) {
		cs->v[c].runs = cs->idx + off;
		off += cs->v[c].n;
		cs->v[c].n = 0;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		struct cell *c = &cs->v[cell_of[i]];
		c->runs[c->n++] = i;
	}
	for (size_t c = 0; c < cs->n; c++)
		gate_class_of(cs->v[c].sampler, side->runs, side->nruns, &cs->v[c].cls);
	free(cell_of);
	return 0;
}

const struct cell *gate_cells_find(const struct cells *cs, const char *sampler,
				   const char *workload, int threads, double hz)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cell *c = &cs->v[i];
		if (!strcmp(c->sampler, sampler) && !strcmp(c->workload, workload) &&
		    c->threads == threads && c->hz == hz)
			return c;
	}
	return NULL;
}

size_t gate_cell_values(const struct gate_side *side, const struct cell *c, const char *metric,
			double *out)
{
	int pi = gate_pseudo_index(metric), mi;
	size_t k = 0;

	if (pi >= 0) {
		out[0] = pi == 0 ? c->failed : c->skipped;
		return 1;
	}
	mi = gate_metric_index(metric);
	if (mi < 0)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status != SB_RUN_OK)
			continue;
		double v = *(const double *)((const char *)&r->metrics + sb_metric_infos[mi].offset);
		if (!isnan(v))
			out[k++] = v;
	}
	return k;
}

/* --- hosts --- */

/* What groups runs into one host: the fingerprint, or the host name without one. */
static const char *host_key(const struct sb_host *h)
{
	return h->fingerprint[0] ? h->fingerprint : h->host;
}

void gate_hosts_free(struct gate_hostset *hs)
{
	free(hs->host);
	free(hs->label);
	free(hs->of_run);
	memset(hs, 0, sizeof(*hs));
}

int gate_hosts_group(const struct gate_side *side, struct gate_hostset *hs)
{
	size_t cap = side->hosts && side->nhosts ? side->nhosts : 1;

	memset(hs, 0, sizeof(*hs));
	hs->host = calloc(cap, sizeof(*hs->host));
	hs->label = calloc(cap, sizeof(*hs->label));
	hs->of_run = calloc(side->nruns + 1, sizeof(*hs->of_run));
	if (!hs->host || !hs->label || !hs->of_run) {
		gate_hosts_free(hs);
		return -1;
	}
	if (!side->hosts || side->nhosts == 0) {
		hs->host[hs->n++] = side->host;
		snprintf(hs->label[0], sizeof(hs->label[0]), "%s", side->host->host);
		return 0; /* of_run: all 0 */
	}
	for (size_t i = 0; i < side->nruns; i++) {
		const struct sb_host *h = &side->hosts[side->run_host[i]];
		size_t g = 0;
		while (g < hs->n && strcmp(host_key(hs->host[g]), host_key(h)))
			g++;
		if (g == hs->n)
			hs->host[hs->n++] = h;
		hs->of_run[i] = g;
	}
	if (hs->n == 0)
		hs->host[hs->n++] = side->host;
	for (size_t g = 0; g < hs->n; g++) {
		int shared = 0;
		for (size_t o = 0; o < hs->n; o++)
			shared |= o != g && !strcmp(hs->host[o]->host, hs->host[g]->host);
		snprintf(hs->label[g], sizeof(hs->label[g]), "%s",
			 shared ? hs->host[g]->fingerprint : hs->host[g]->host);
	}
	return 0;
}

long gate_hosts_find(const struct gate_hostset *hs, const struct sb_host *h)
{
	for (size_t g = 0; g < hs->n; g++)
		if (!strcmp(host_key(hs->host[g]), host_key(h)))
			return (long)g;
	return -1;
}

int gate_side_of_host(const struct gate_side *side, const struct gate_hostset *hs, size_t g,
		      struct gate_side *out, struct sb_run **runs)
{
	size_t n = 0;

	*runs = malloc((side->nruns + 1) * sizeof(**runs));
	if (!*runs)
		return -1;
	for (size_t i = 0; i < side->nruns; i++)
		if (hs->of_run[i] == g)
			(*runs)[n++] = side->runs[i];
	*out = (struct gate_side){ .path = side->path, .host = hs->host[g], .runs = *runs,
				   .nruns = n, .only = side->only };
	return 0;
}

/* --- evaluation --- */

static struct gate_check *add_check(struct gate_result *res, size_t *cap, const struct cell *c,
				    enum gate_kind kind, const char *metric)
{
	if (res->nchecks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct gate_check *v = realloc(res->checks, ncap * sizeof(*v));
		if (!v)
			return NULL;
		res->checks = v;
		*cap = ncap;
	}
	struct gate_check *k = &res->checks[res->nchecks++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->state = GATE_PASS;
	snprintf(k->sampler, sizeof(k->sampler), "%s", c->sampler);
	snprintf(k->workload, sizeof(k->workload), "%s", c->workload);
	k->threads = c->threads;
	k->hz = c->hz;
	snprintf(k->metric, sizeof(k->metric), "%s", metric);
	k->baseline = k->current = k->p = k->effect = NAN;
	return k;
}

static int op_holds(enum gate_op op, double a, double b)
{
	switch (op) {
	case GATE_LE: return a <= b;
	case GATE_GE: return a >= b;
	case GATE_LT: return a < b;
	case GATE_GT: return a > b;
	case GATE_EQ: return a == b;
	case GATE_NE: return a != b;
	}
	return 0;
}

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

/* Value of a name variable (workload, sampler, build, clock, scope) for cell c on host h. */
static const char *name_value(int v, const struct cell *c, const struct sb_host *h)
{
	switch (v) {
	case V_WORKLOAD: return c->workload;
	case V_SAMPLER: return c->sampler;
	case V_BUILD: return h->build;
	case V_CLOCK: return c->cls.clock == SB_CLOCK_WALL ? "wall" : "cpu";
	case V_SCOPE: return (c->cls.caps & SB_CAP_PROCESS_WIDE) ? "process" : "thread";
	}
	return "";
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
			if ((strcmp(name_value(k->lhs, c, h), k->name) == 0) != (k->op == GATE_EQ))
				return 0;
			continue;
		}
		double a = var_value(k->lhs, c, h);
		double r = k->rhs >= 0 ? var_value(k->rhs, c, h) : k->value;
		if (isnan(a) || isnan(r) || !op_holds(k->op, a, r))
			return 0;
	}
	return 1;
}

void gate_fmt_value(char *buf, size_t len, const char *metric, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (gate_is_ns_metric(metric))
		snprintf(buf, len, "%.1fµs", v / 1e3);
	else if (v == floor(v) && fabs(v) < 1e9)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

static double bad_change(enum gate_dir dir, double base, double cur)
{
	switch (dir) {
	case GATE_UP: return cur - base;
	case GATE_DOWN: return base - cur;
	case GATE_OFF_ONE: return fabs(cur - 1) - fabs(base - 1);
	}
	return NAN;
}

/* P(X >= k) for X ~ Binomial(n, 1/2): the one-sided sign test of "k of n runs over". */
static double sign_test_p(int k, int n)
{
	double p = 0, c = 1; /* c = C(n, j) */
	for (int j = 0; j <= n; j++) {
		if (j >= k)
			p += c;
		c = c * (n - j) / (j + 1);
	}
	return p / pow(2.0, n);
}

/* Quantile metrics judged on every sample of a cell pooled over its repetitions. */
static const struct { const char *metric; size_t field; double q; } pooled_metrics[] = {
	{ "stop_latency_p50_ns", offsetof(struct sb_sample, stop_latency_ns), 0.5 },
	{ "stop_latency_p99_ns", offsetof(struct sb_sample, stop_latency_ns), 0.99 },
	{ "suspend_window_p50_ns", offsetof(struct sb_sample, suspend_window_ns), 0.5 },
	{ "suspend_window_p99_ns", offsetof(struct sb_sample, suspend_window_ns), 0.99 },
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A cell's pooled quantile with its distribution-free one-sided confidence bounds. */
struct pooled {
	size_t n;          /* samples pooled (0: the runs carry no samples) */
	double q, est;     /* the quantile and its point estimate (type 7, as metrics.c) */
	double lo, hi;     /* X_(l) <= q-quantile with prob >= 1-a; X_(u) >= it likewise */
};

/* P(Bin(n, q) = k) for every k, into pmf[0..n] (log-space, so n of 10^5 is fine). */
static void binom_pmf(size_t n, double q, double *pmf)
{
	for (size_t k = 0; k <= n; k++)
		pmf[k] = exp(lgamma((double)n + 1) - lgamma((double)k + 1) -
			     lgamma((double)(n - k) + 1) + (double)k * log(q) +
			     (double)(n - k) * log1p(-q));
}

/* Pools metric's per-sample values over the cell's ok runs and bounds its quantile: X_(l)
 * with l the largest rank such that P(Bin(n,q) >= l) >= 1 - alpha (the quantile is at or
 * above X_(l) with that confidence), X_(u) with u the smallest such that
 * P(Bin(n,q) <= u - 1) >= 1 - alpha. Order statistics only: no assumption on the
 * distribution, only independent samples. Returns 0 (pl->n = 0 when no samples), -1 when
 * out of memory or the metric is not a pooled one. */
static int pooled_quantile(const struct gate_side *side, const struct cell *c, const char *metric,
			   double alpha, struct pooled *pl)
{
	size_t field = 0, total = 0, n = 0;
	int pi = -1;

	memset(pl, 0, sizeof(*pl));
	pl->est = pl->lo = pl->hi = NAN;
	for (size_t i = 0; i < ARRAY_SIZE(pooled_metrics); i++)
		if (!strcmp(pooled_metrics[i].metric, metric))
			pi = (int)i;
	if (pi < 0)
		return -1;
	field = pooled_metrics[pi].field;
	pl->q = pooled_metrics[pi].q;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status == SB_RUN_OK && r->samples)
			total += r->nsamples;
	}
	if (total == 0)
		return 0;
	double *v = malloc(total * sizeof(*v)), *pmf = malloc((total + 1) * sizeof(*pmf));
	if (!v || !pmf) {
		free(v);
		free(pmf);
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status != SB_RUN_OK || !r->samples)
			continue;
		for (size_t j = 0; j < r->nsamples; j++) {
			/* as metrics.c: a wall sampler's idle non-workload threads are left out */
			if (r->clock == SB_CLOCK_WALL && r->samples[j].thread_index < 0)
				continue;
			double x = *(const double *)((const char *)&r->samples[j] + field);
			if (!isnan(x))
				v[n++] = x;
		}
	}
	pl->n = n;
	if (n > 0) {
		qsort(v, n, sizeof(*v), cmp_double);
		double h = (double)(n - 1) * pl->q;
		size_t k = (size_t)h;
		pl->est = k + 1 < n ? v[k] + (h - (double)k) * (v[k + 1] - v[k]) : v[n - 1];
		binom_pmf(n, pl->q, pmf);
		double tail = 0; /* P(Bin >= l), l going down from n */
		size_t l = 0;
		for (size_t r = n; r >= 1; r--) {
			tail += pmf[r];
			if (tail >= 1 - alpha) {
				l = r;
				break;
			}
		}
		double head = 0; /* P(Bin <= u - 1), u going up from 1 */
		size_t u = 0;
		for (size_t r = 1; r <= n; r++) {
			head += pmf[r - 1];
			if (head >= 1 - alpha) {
				u = r;
				break;
			}
		}
		pl->lo = l ? v[l - 1] : -INFINITY; /* too few samples: no bound at this level */
		pl->hi = u ? v[u - 1] : INFINITY;
	}
	free(v);
	free(pmf);
	return 0;
}

static int is_pooled_metric(const char *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(pooled_metrics); i++)
		if (!strcmp(pooled_metrics[i].metric, m))
			return 1;
	return 0;
}

/* Timing metrics depend on the machine: compared only within one host fingerprint (or
 * inside one A/B file). Correctness metrics may be compared across machines. */
static int is_timing_metric(const char *m)
{
	size_t n = strlen(m);
	return gate_is_ns_metric(m) || (n > 12 && !strcmp(m + n - 12, "_floor_ratio")) ||
	       !strcmp(m, "sampler_cpu_fraction") || !strcmp(m, "overhead");
}

/* How regressions are judged: across files (baseline) or inside one A/B file. */
struct reg_mode {
	int timing;       /* compare timing metrics (same fingerprint, or A/B) */
	int ab;           /* same-run A/B: pooled quantiles compared on their samples */
	double alpha_ab;  /* A/B: per-comparison level of the pooled tests (Bonferroni) */
};

/* One run's quantile q of a per-sample field, as metrics.c computes it; NaN when none. */
static double run_quantile(const struct sb_run *r, size_t field, double q, double *buf)
{
	size_t n = 0;
	for (size_t j = 0; j < r->nsamples; j++) {
		if (r->clock == SB_CLOCK_WALL && r->samples[j].thread_index < 0)
			continue;
		double x = *(const double *)((const char *)&r->samples[j] + field);
		if (!isnan(x))
			buf[n++] = x;
	}
	return quantile(buf, n, q);
}

/* Pairs A's and B's runs by repetition (interleaved: they shared the host's state) and
 * counts the pairs in which B's own quantile is worse. */
static void paired_worse(const struct gate_side *a, const struct cell *ac, const struct gate_side *b,
			 const struct cell *bc, const char *metric, enum gate_dir dir, int *worse,
			 int *pairs)
{
	size_t field = 0, total = 0;
	double q = 0.5;
	*worse = *pairs = 0;
	for (size_t i = 0; i < ARRAY_SIZE(pooled_metrics); i++)
		if (!strcmp(pooled_metrics[i].metric, metric)) {
			field = pooled_metrics[i].field;
			q = pooled_metrics[i].q;
		}
	for (size_t i = 0; i < ac->n; i++)
		total = a->runs[ac->runs[i]].nsamples > total ? a->runs[ac->runs[i]].nsamples : total;
	for (size_t i = 0; i < bc->n; i++)
		total = b->runs[bc->runs[i]].nsamples > total ? b->runs[bc->runs[i]].nsamples : total;
	double *buf = malloc((total + 1) * sizeof(*buf));
	if (!buf)
		return;
	for (size_t i = 0; i < ac->n; i++) {
		const struct sb_run *ra = &a->runs[ac->runs[i]];
		for (size_t j = 0; j < bc->n; j++) {
			const struct sb_run *rb = &b->runs[bc->runs[j]];
			if (rb->repetition != ra->repetition || ra->status != SB_RUN_OK ||
			    rb->status != SB_RUN_OK)
				continue;
			double va = run_quantile(ra, field, q, buf), vb = run_quantile(rb, field, q, buf);
			if (isnan(va) || isnan(vb))
				break;
			(*pairs)++;
			*worse += bad_change(dir, va, vb) > 0;
			break;
		}
	}
	free(buf);
}

/* A/B, pooled quantile metric: regressed when B's quantile is worse than A's by more than
 * the rule's absolute minimum AND their one-sided confidence bounds at alpha_ab do not
 * meet (up: B's lower bound above A's upper bound) AND B was worse in its own repetition
 * pairs more often than chance (one-sided sign test, p < alpha: 5 of 5 pairs). The pooled
 * bounds treat samples as independent, which runs sharing a host state are not; the
 * paired sign test is what keeps a run-level drift from being called a regression.
 * Returns 1 when judged (k filled), 0 when the runs carry no samples (the caller falls
 * back to the U test). */
static int pooled_regression(const struct gate_config *cfg, const struct gate_rule *rule,
			     const struct gate_side *base, const struct cell *bc,
			     const struct gate_side *cur, const struct cell *cc,
			     const struct reg_mode *mode, struct gate_check *k)
{
	struct pooled pa, pb;
	if (pooled_quantile(base, bc, rule->metric, mode->alpha_ab, &pa) != 0 ||
	    pooled_quantile(cur, cc, rule->metric, mode->alpha_ab, &pb) != 0 || pa.n == 0 ||
	    pb.n == 0)
		return 0;
	k->nbase = (int)pa.n;
	k->ncur = (int)pb.n;
	k->baseline = pa.est;
	k->current = pb.est;
	k->effect = bad_change(rule->dir, pa.est, pb.est);
	int apart = rule->dir == GATE_DOWN ? pb.hi < pa.lo : pb.lo > pa.hi;
	int worse, pairs;
	paired_worse(base, bc, cur, cc, rule->metric, rule->dir, &worse, &pairs);
	k->p = pairs ? sign_test_p(worse, pairs) : NAN;
	int consistent = pairs > 0 && k->p < cfg->alpha;
	char lim[24], al[24], bl[24];
	gate_fmt_value(lim, sizeof(lim), rule->metric, rule->min_abs);
	gate_fmt_value(al, sizeof(al), rule->metric, rule->dir == GATE_DOWN ? pa.lo : pa.hi);
	gate_fmt_value(bl, sizeof(bl), rule->metric, rule->dir == GATE_DOWN ? pb.hi : pb.lo);
	if (apart && consistent && k->effect > rule->min_abs) {
		k->state = GATE_FAIL;
		snprintf(k->reason, sizeof(k->reason), "regressed (A/B, pooled p%g of %zu/%zu "
			 "samples): worse by more than %s, bounds at %.3g apart (A %s, B %s), worse in "
			 "%d of %d pairs (%.40s:%d)", pa.q * 100, pa.n, pb.n, lim, mode->alpha_ab, al,
			 bl, worse, pairs, cfg->name, rule->line);
	} else {
		snprintf(k->reason, sizeof(k->reason), "A/B pooled p%g: %s (bounds A %s, B %s at "
			 "%.3g; worse in %d of %d pairs; minimum %s)", pa.q * 100,
			 apart && consistent ? "changed, within the minimum" : "no significant change",
			 al, bl, mode->alpha_ab, worse, pairs, lim);
	}
	return 1;
}

static void regression_checks(const struct gate_config *cfg, const struct gate_side *base,
			      const struct cell *bc, const struct gate_side *cur,
			      const struct cell *cc, const struct reg_mode *mode,
			      struct gate_result *res, size_t *cap, double *bv, double *cv)
{
	for (int i = 0; i < cfg->nrules; i++) {
		const struct gate_rule *rule = &cfg->rules[i];
		if (!mode->timing && is_timing_metric(rule->metric))
			continue; /* another machine class: said once in the notes */
		size_t nb = gate_cell_values(base, bc, rule->metric, bv);
		size_t nc = gate_cell_values(cur, cc, rule->metric, cv);
		if (mode->ab && is_pooled_metric(rule->metric)) {
			struct gate_check probe = { 0 };
			if (pooled_regression(cfg, rule, base, bc, cur, cc, mode, &probe)) {
				struct gate_check *k = add_check(res, cap, cc, GATE_REGRESSION,
								 rule->metric);
				if (!k)
					return;
				probe.kind = k->kind;
				probe.p = NAN;
				memcpy(probe.sampler, k->sampler, sizeof(probe.sampler));
				memcpy(probe.workload, k->workload, sizeof(probe.workload));
				probe.threads = k->threads;
				probe.hz = k->hz;
				memcpy(probe.metric, k->metric, sizeof(probe.metric));
				*k = probe;
				continue;
			}
		}
		if (nb == 0 && nc == 0)
			continue; /* the mechanism cannot measure it: nothing to compare */
		struct gate_check *k = add_check(res, cap, cc, GATE_REGRESSION, rule->metric);
		if (!k)
			return;
		k->nbase = (int)nb;
		k->ncur = (int)nc;
		k->baseline = median_of(bv, nb);
		k->current = median_of(cv, nc);
		if (nb == 0 || nc == 0) {
			k->state = GATE_WARN;
			snprintf(k->reason, sizeof(k->reason), "no values in the %s",
				 nb == 0 ? "baseline" : "current run");
			continue;
		}
		struct mwu_result u;
		if (mwu_test(cv, nc, bv, nb, &u) == 0)
			k->p = u.p;
		k->effect = bad_change(rule->dir, k->baseline, k->current);
		double need = rule->min_abs;
		if (rule->min_rel > 0 && rule->min_rel * fabs(k->baseline) > need)
			need = rule->min_rel * fabs(k->baseline);
		char lim[32];
		gate_fmt_value(lim, sizeof(lim), rule->metric, need);
		int significant = !isnan(k->p) && k->p < cfg->alpha;
		if (significant && k->effect > need) {
			k->state = GATE_FAIL;
			snprintf(k->reason, sizeof(k->reason),
				 "regressed: worse by more than %s and p < %g (%s:%d)", lim, cfg->alpha,
				 cfg->name, rule->line);
		} else if (significant && k->effect < 0) {
			snprintf(k->reason, sizeof(k->reason), "improved (p < %g)", cfg->alpha);
		} else if (significant) {
			snprintf(k->reason, sizeof(k->reason), "changed, within %s (%s:%d)", lim,
				 cfg->name, rule->line);
		} else {
			snprintf(k->reason, sizeof(k->reason), "no significant change%s",
				 nb < 4 || nc < 4 ? " (< 4 reps a side can never reach p < 0.05)" : "");
		}
	}
}


/* The capability a metric needs, for "NaN: failure or not measured": a cap bit; 0 when
 * every sampler must give it (it counts samples or the run); -1 when it needs something
 * outside the sampler (a `none` run for overhead, host calibration for floor ratios). */
static long metric_needs(const char *m)
{
	static const struct { const char *prefix; long cap; } needs[] = {
		{ "thread_tvd", SB_CAP_THREAD_IDS },  { "wall_thread_tvd", SB_CAP_THREAD_IDS },
		{ "magnitude_error", SB_CAP_WEIGHTS }, { "misattributed_fraction", SB_CAP_STACKS },
		{ "stack_correct_fraction", SB_CAP_STACKS }, { "function_tvd", SB_CAP_STACKS },
		{ "truncated_fraction", SB_CAP_STACKS }, { "offcpu_sample_fraction", SB_CAP_STACKS },
		{ "stop_latency_", SB_CAP_STOP_LATENCY }, { "suspend_window_", SB_CAP_SUSPEND_WINDOW },
		{ "overhead", -1 }, { "sampler_cpu_", -1 }, { "offcpu_true", -1 },
		{ "eintr_", -1 }, { "short_io_", -1 }, { "interval_", -1 }, { "wall_rate", -1 },
	};
	size_t n = strlen(m);
	if (n > 12 && !strcmp(m + n - 12, "_floor_ratio"))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(needs); i++)
		if (!strncmp(m, needs[i].prefix, strlen(needs[i].prefix)))
			return needs[i].cap;
	return 0;
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
	char was[320];
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

static void budget_checks(const struct gate_config *cfg, const struct gate_side *cur,
			  const struct cells *cs, const struct cell *c, struct gate_result *res,
			  size_t *cap, double *buf)
{
	char cls[200];
	fmt_class(cls, sizeof(cls), &c->cls);
	for (int i = 0; i < cfg->nbudgets; i++) {
		const struct gate_budget *b = &cfg->budgets[i];
		if (!budget_applies(b, c, cur->host))
			continue;
		/* the `none` reference takes no samples: only run-level budgets apply to it */
		if (c->cls.baseline && gate_pseudo_index(b->metric) < 0 &&
		    strcmp(b->metric, "checksum_errors"))
			continue;
		size_t n = gate_cell_values(cur, c, b->metric, buf);
		struct gate_check *k = add_check(res, cap, c, GATE_BUDGET, b->metric);
		if (!k)
			return;
		snprintf(k->why, sizeof(k->why), "rule %.60s:%d `%.130s`; %s: %.170s", cfg->name,
			 b->line, b->text, c->sampler, cls);
		k->ncur = (int)n;
		k->current = median_of(buf, n);
		double limit = b->value;
		char lim[96], rvs[32];
		gate_fmt_value(lim, sizeof(lim), b->metric, limit);
		if (b->host_fact[0]) {
			double f = host_fact(cur->host, b->host_fact);
			if (isnan(f)) {
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: the file has no "
					 "host fact %s (no calibration) for %s %g * host.%s (%s:%d)",
					 b->host_fact, gate_op_names[b->op], b->value, b->host_fact,
					 cfg->name, b->line);
				continue;
			}
			limit = b->value * f;
			gate_fmt_value(rvs, sizeof(rvs), b->host_fact, f);
			snprintf(lim, sizeof(lim), "%g x host %s %s = ", b->value, b->host_fact, rvs);
			size_t u = strlen(lim);
			gate_fmt_value(lim + u, sizeof(lim) - u, b->metric, limit);
		}
		if (b->ref_sampler[0]) {
			const struct cell *rc = gate_cells_find(cs, b->ref_sampler, c->workload, c->threads,
							   c->hz);
			size_t rn = rc ? gate_cell_values(cur, rc, b->ref_metric, buf) : 0;
			double rv = median_of(buf, rn);
			if (isnan(rv)) {
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "no %s %s in this cell to compare "
					 "with (%s:%d)", b->ref_sampler, b->ref_metric, cfg->name, b->line);
				continue;
			}
			limit = rv + b->value;
			gate_fmt_value(rvs, sizeof(rvs), b->ref_metric, rv);
			snprintf(lim, sizeof(lim), "%s %s%+g = ", b->ref_sampler, rvs, b->value);
			size_t u = strlen(lim);
			gate_fmt_value(lim + u, sizeof(lim) - u, b->metric, limit);
		}
		k->baseline = limit;
		if (b->floor_fact[0]) {
			double fl = host_fact(cur->host, b->floor_fact) * b->floor_factor;
			if (!isnan(fl) && !op_holds(b->op, fl, limit)) {
				char fs[32];
				gate_fmt_value(fs, sizeof(fs), b->floor_fact, fl);
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "absolute budget not applicable: "
					 "floor %s (%g x host %s) is not %s %s (%s:%d)", fs,
					 b->floor_factor, b->floor_fact, gate_op_names[b->op], lim,
					 cfg->name, b->line);
				continue;
			}
		}
		struct pooled pl;
		if (pooled_quantile(cur, c, b->metric, cfg->alpha, &pl) != 0 || pl.n == 0)
			pl.n = 0;
		if (n == 0 && pl.n == 0) {
			long need = metric_needs(b->metric);
			int ran = c->n > (size_t)(c->failed + c->skipped);
			if (!ran) {
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "no values (%d failed, %d skipped "
					 "runs) for budget %s %s (%s:%d)", c->failed, c->skipped,
					 gate_op_names[b->op], lim, cfg->name, b->line);
			} else if (!measured_nearby(cur, cs, c, b->metric, buf)) {
				/* the workload does not define it (misattributed_fraction on hotspot,
				 * whose leaves are shared): nobody could have measured it */
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: no sampler of this "
					 "file gives it on %s (%s:%d)", c->workload, cfg->name, b->line);
			} else if (need > 0 && !(c->cls.caps & (unsigned long)need)) {
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: %s does not claim "
					 "%s (%s:%d)", c->sampler, cap_name(need), cfg->name, b->line);
			} else if (need < 0) {
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: needs a `none` run "
					 "or host calibration in the file (%s:%d)", cfg->name, b->line);
			} else {
				snprintf(k->reason, sizeof(k->reason), "NaN in every run, yet %s (%s:%d)",
					 need > 0 ? "the sampler claims it" : "every sampler must give it",
					 cfg->name, b->line);
				settle(cfg, k, 0);
			}
			continue;
		}
		if (pl.n > 0) {
			/* a quantile: judged on every sample of the cell, failing only when its
			 * confidence interval lies beyond the limit */
			int upper = b->op == GATE_LE || b->op == GATE_LT;
			double bound = upper ? pl.lo : pl.hi;
			int ok = isinf(bound) || op_holds(b->op, bound, limit);
			char es[32], bs[32];
			gate_fmt_value(es, sizeof(es), b->metric, pl.est);
			gate_fmt_value(bs, sizeof(bs), b->metric, bound);
			k->current = pl.est;
			k->ncur = (int)pl.n;
			snprintf(k->reason, sizeof(k->reason), "%s %s %s: pooled p%g of %zu samples %s, "
				 "%g%% %s bound %s (%s:%d)", ok ? "budget" : "OVER BUDGET",
				 gate_op_names[b->op], lim, pl.q * 100, pl.n, es, (1 - cfg->alpha) * 100,
				 upper ? "lower" : "upper", isinf(bound) ? "none (too few)" : bs,
				 cfg->name, b->line);
			settle(cfg, k, ok);
			continue;
		}
		int ok = op_holds(b->op, k->current, limit);
		char why[96] = "";
		if (b->sign_test) {
			/* A noisy timing metric (host stalls land in its tail): the budget fails
			 * only when the runs are over it more often than chance would make them. */
			int over = 0;
			n = gate_cell_values(cur, c, b->metric, buf); /* buf held the reference */
			for (size_t j = 0; j < n; j++)
				over += !op_holds(b->op, buf[j], limit);
			double p = sign_test_p(over, (int)n);
			ok = !(2 * over > (int)n && p < cfg->alpha);
			k->p = p;
			snprintf(why, sizeof(why), ", %d of %zu runs over, sign test p=%.3f", over, n, p);
		}
		snprintf(k->reason, sizeof(k->reason), "%s %s %s%s (%s:%d)",
			 ok ? "budget" : "OVER BUDGET", gate_op_names[b->op], lim, why, cfg->name, b->line);
		settle(cfg, k, ok);
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
	if (base && !ab) {
		host_warnings(base, cur, res);
		const char *fa = base->host->fingerprint, *fb = cur->host->fingerprint;
		if (!fa[0] || !fb[0] || strcmp(fa, fb)) {
			mode.timing = 0;
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
	}
	if (ab) {
		/* one family of pooled tests: Bonferroni over them keeps the chance of any
		 * false alarm in a HEAD-vs-HEAD comparison under alpha */
		size_t m = 0;
		for (size_t i = 0; i < cc.n; i++)
			if (gate_cells_find(&bc, cc.v[i].sampler, cc.v[i].workload, cc.v[i].threads,
				       cc.v[i].hz))
				for (int r = 0; r < cfg->nrules; r++)
					m += is_pooled_metric(cfg->rules[r].metric);
		mode.alpha_ab = cfg->alpha / (double)(m ? m : 1);
		add_note(res, "same-run A/B: variant B (candidate) judged against variant A "
			 "(reference) of this file with every regress rule, timing included (same "
			 "machine, same session); quantiles pooled over samples, %zu tests at "
			 "alpha %g/%zu, absolute minimum effects only", m, cfg->alpha, m ? m : 1);
	}
	if (cur->host->tick_hz <= 0 &&
	    res->nwarnings < (int)(sizeof(res->warnings) / sizeof(res->warnings[0])))
		snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			 "the current file has no kernel tick rate: budgets conditioned on hz<=tick "
			 "are not applied");

	for (size_t i = 0; i < cc.n; i++) {
		const struct cell *c = &cc.v[i];
		if (cur->only && strcmp(c->sampler, cur->only))
			continue;
		if (base) {
			const struct cell *b = gate_cells_find(&bc, c->sampler, c->workload, c->threads, c->hz);
			if (b) {
				regression_checks(cfg, base, b, cur, c, &mode, res, &cap, b1, b2);
			} else {
				struct gate_check *k = add_check(res, &cap, c, GATE_MISSING, "-");
				if (!k)
					goto cleanup;
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "cell missing in the %s",
					 ab ? "A variant" : "baseline");
			}
		}
		budget_checks(cfg, cur, &cc, c, res, &cap, b1);
	}
	for (size_t i = 0; base && i < bc.n; i++) {
		const struct cell *b = &bc.v[i];
		if (cur->only && strcmp(b->sampler, cur->only))
			continue;
		if (gate_cells_find(&cc, b->sampler, b->workload, b->threads, b->hz))
			continue;
		struct gate_check *k = add_check(res, &cap, b, GATE_MISSING, "-");
		if (!k)
			goto cleanup;
		k->state = GATE_WARN;
		snprintf(k->reason, sizeof(k->reason), "cell missing in the %s",
			 ab ? "B variant" : "current run");
	}
	rc = 0;
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
	}
	rc = 0;
cleanup:
	gate_hosts_free(&ch);
	gate_hosts_free(&bh);
	free(cruns);
	free(bruns);
	return rc;
}

void gate_result_free(struct gate_result *res)
{
	free(res->hosts);
	free(res->checks);
	memset(res, 0, sizeof(*res));
}

