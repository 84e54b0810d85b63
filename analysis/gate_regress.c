/* gate_regress.c - the gate's regression checks: the U test of a cell against its baseline,
 * and pooled-quantile and sign tests of the two sides of one A/B file. */
#include "analysis/gate_int.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/mwu.h"
#include "analysis/pauses.h"
#include "sampler/sampler.h"

static double bad_change(enum gate_dir dir, double base, double cur)
{
	switch (dir) {
	case GATE_UP: return cur - base;
	case GATE_DOWN: return base - cur;
	case GATE_OFF_ONE: return fabs(cur - 1) - fabs(base - 1);
	}
	return NAN;
}

double sign_test_p(int k, int n)
{
	double p = 0, c = 1; /* c = C(n, j) */
	for (int j = 0; j <= n; j++) {
		if (j >= k)
			p += c;
		c = c * (n - j) / (j + 1);
	}
	return p / pow(2.0, n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* P(Bin(n, q) = k) for every k, into pmf[0..n] (log-space, so n of 10^5 is fine). */
static void binom_pmf(size_t n, double q, double *pmf)
{
	for (size_t k = 0; k <= n; k++)
		pmf[k] = exp(lgamma((double)n + 1) - lgamma((double)k + 1) -
			     lgamma((double)(n - k) + 1) + (double)k * log(q) +
			     (double)(n - k) * log1p(-q));
}

int pooled_quantile(const struct gate_side *side, const struct cell *c, const char *metric,
		    double alpha, struct pooled *pl)
{
	const struct gate_pooled_metric *pm = gate_pooled_find(metric);
	size_t field = 0, total = 0, n = 0;

	memset(pl, 0, sizeof(*pl));
	pl->est = pl->lo = pl->hi = NAN;
	if (!pm)
		return -1;
	field = pm->field;
	pl->q = pm->q;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (run_scored(r->status) && r->samples)
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
		if (!run_scored(r->status) || !r->samples)
			continue;
		for (size_t j = 0; j < r->nsamples; j++) {
			/* as metrics.c: a wall sampler's idle non-workload threads are left out */
			if (r->clock == SB_CLOCK_WALL && r->samples[j].thread_index < 0)
				continue;
			double x = field == GATE_OBSERVED_WINDOW
					   ? pause_observed_window(r, &r->samples[j])
					   : *(const double *)((const char *)&r->samples[j] + field);
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

/* Timing metrics depend on the machine: compared only within one host fingerprint (or
 * inside one A/B file). Correctness metrics may be compared across machines. */
static int is_timing_metric(const char *m)
{
	size_t n = strlen(m);
	return gate_is_ns_metric(m) || (n > 12 && !strcmp(m + n - 12, "_floor_ratio")) ||
	       !strcmp(m, "sampler_cpu_fraction") || !strcmp(m, "overhead");
}

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
	const struct gate_pooled_metric *pm = gate_pooled_find(metric);
	size_t field = pm ? pm->field : 0, total = 0;
	double q = pm ? pm->q : 0.5;
	*worse = *pairs = 0;
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
			if (rb->repetition != ra->repetition || !run_scored(ra->status) ||
			    !run_scored(rb->status))
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
	} else if (apart && k->effect > rule->min_abs && 2 * worse > pairs &&
		   !consistent && sign_test_p(pairs, pairs) >= cfg->alpha) {
		/* worse beyond the minimum and apart, but too few pairs for the sign test */
		k->state = GATE_UNDECIDED;
		snprintf(k->reason, sizeof(k->reason), "too few runs to judge (A/B, pooled p%g): "
			 "worse by more than %s, bounds apart (A %s, B %s), worse in %d of %d pairs, "
			 "which can give p=%.3f at best, not < %g (%.40s:%d)", pa.q * 100, lim, al, bl,
			 worse, pairs, sign_test_p(pairs, pairs), cfg->alpha, cfg->name, rule->line);
	} else {
		snprintf(k->reason, sizeof(k->reason), "A/B pooled p%g: %s (bounds A %s, B %s at "
			 "%.3g; worse in %d of %d pairs; minimum %s)", pa.q * 100,
			 apart && consistent ? "changed, within the minimum" : "no significant change",
			 al, bl, mode->alpha_ab, worse, pairs, lim);
	}
	return 1;
}

/* The smallest two-sided p the exact U test can give with na and nb values without ties:
 * 2 / C(na + nb, na) (3 vs 3: 0.1, 3 vs 4: 0.057, 4 vs 4: 0.029), 1 when a side is empty. */
static double mwu_best_p(size_t na, size_t nb)
{
	double c = 1;
	if (na == 0 || nb == 0)
		return 1;
	for (size_t i = 1; i <= na; i++)
		c = c * (double)(nb + i) / (double)i;
	return 2 / c < 1 ? 2 / c : 1;
}

void regression_checks(const struct gate_config *cfg, const struct gate_side *base,
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
		} else if (k->effect > need && mwu_best_p(nb, nc) >= cfg->alpha) {
			/* worse beyond the minimum, but no outcome of so few runs could have
			 * been significant: not a pass */
			k->state = GATE_UNDECIDED;
			snprintf(k->reason, sizeof(k->reason), "too few runs to judge: worse by more "
				 "than %s, but %zu vs %zu reps can give p=%.3f at best, not < %g (%s:%d)",
				 lim, nc, nb, mwu_best_p(nb, nc), cfg->alpha, cfg->name, rule->line);
		} else {
			snprintf(k->reason, sizeof(k->reason), "no significant change%s",
				 mwu_best_p(nb, nc) >= cfg->alpha ? " (too few reps to reach p < alpha, "
				 "within the minimum effect)" : "");
		}
	}
}
