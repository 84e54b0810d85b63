/* pauses.c - observed-pause metrics (pauses.h, docs/metrics.md "Observed pauses"). */
#include "analysis/pauses.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/quantile.h"
#include "core/pausehist.h"
#include "core/run.h"

/* Value at quantile q of the pooled histogram h (total counts): the middle of the bucket
 * holding the ceil(q * total)-th pause. */
static double hist_quantile(const uint64_t *h, uint64_t total, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;

	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < SB_PAUSE_BUCKETS; b++) {
		seen += h[b];
		if (seen >= want)
			return (double)(sb_pause_bucket_lo(b) + sb_pause_bucket_lo(b + 1)) / 2;
	}
	return NAN;
}

/* The slot's progress row, or NULL. */
static const struct sb_progress_row *progress_of(const struct sb_run *r, int slot)
{
	for (size_t i = 0; i < r->nprogress; i++)
		if (r->progress[i].index == slot)
			return &r->progress[i];
	return NULL;
}

/* First row of r's gaps whose slot is at least slot (rows are sorted by slot). */
static size_t gaps_from(const struct sb_run *r, int slot)
{
	size_t a = 0, b = r->ngaps;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (r->gaps[mid].index < slot)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

int pause_covering(const struct sb_run *r, int slot, uint64_t t, const struct sb_gap_row **gap)
{
	const struct sb_progress_row *p = progress_of(r, slot);
	const struct sb_gap_row *last = NULL;

	*gap = NULL;
	if (!p || !p->steps)
		return -1;
	/* the slot's gaps: one run of rows, in time order (the log's order) */
	size_t lo = gaps_from(r, slot), n = gaps_from(r, slot + 1) - lo;
	/* a sample stamped just after the resume still belongs to the pause: one step slack */
	uint64_t slack = p->step_ns ? 2 * p->step_ns : 0;
	for (size_t a = lo, b = lo + n; a < b;) {
		size_t mid = a + (b - a) / 2;
		const struct sb_gap_row *g = &r->gaps[mid];
		if (g->start_ns > t) {
			b = mid;
			continue;
		}
		last = g; /* the latest gap starting at or before t */
		a = mid + 1;
	}
	if (last && t <= last->start_ns + last->gap_ns + slack) {
		*gap = last;
		return 1;
	}
	/* a full log covers only up to its last pause */
	if (p->logged > n && (n == 0 || t > r->gaps[lo + n - 1].start_ns))
		return -1;
	return 0;
}

double pause_observed_window(const struct sb_run *r, const struct sb_sample *s)
{
	const struct sb_gap_row *g;

	/* Not judged: a peek stopped nobody, and a deferred sample's thread was off the CPU
	 * at the tick already (the gap its time falls in is the scheduler's: 16 ms once,
	 * mach-idle on mixed with other processes) and was held only by its own handler. */
	if (!(s->suspend_window_ns > 0) || s->thread_index < 0 ||
	    (s->flags & (SB_SAMPLE_PEEKED | SB_SAMPLE_DEFERRED)))
		return NAN;
	int k = pause_covering(r, s->thread_index, s->time_ns, &g);
	return k < 0 ? NAN : k ? (double)g->pause_ns : 0;
}

/* window_observed_* and window_report_ratio: each sample's reported window against the
 * observed pause on its thread at its time. */
static void window_metrics(struct sb_run *r)
{
	struct sb_metrics *m = &r->metrics;
	double *obs = malloc((r->nsamples + 1) * sizeof(*obs));
	double *rep = malloc((r->nsamples + 1) * sizeof(*rep));
	double *un = malloc((r->nsamples + 1) * sizeof(*un));
	size_t n = 0;

	if (!obs || !rep || !un)
		goto cleanup;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		double o = pause_observed_window(r, s);
		if (isnan(o))
			continue;
		obs[n] = o;
		un[n] = o - s->suspend_window_ns;
		rep[n++] = s->suspend_window_ns;
	}
	if (n == 0)
		goto cleanup;
	m->window_observed_p50_ns = quantile(obs, n, 0.5);
	m->window_observed_p99_ns = quantile(obs, n, 0.99);
	m->window_observed_max_ns = quantile(obs, n, 1.0);
	double rp50 = quantile(rep, n, 0.5);
	m->window_report_ratio = rp50 > 0 ? m->window_observed_p50_ns / rp50 : NAN;
	m->window_unreported_p50_ns = quantile(un, n, 0.5);
cleanup:
	free(obs);
	free(rep);
	free(un);
}

void metrics_pauses(struct sb_run *r)
{
	struct sb_metrics *m = &r->metrics;
	double active = 0, paused = 0;
	uint64_t total = 0, *h;

	for (size_t i = 0; i < r->nprogress; i++) {
		active += (double)r->progress[i].active_ns;
		paused += (double)r->progress[i].pause_ns;
	}
	if (!(active > 0))
		return; /* no progress clock: every pause metric stays NaN */
	m->pause_fraction = paused / active;
	h = calloc(SB_PAUSE_BUCKETS, sizeof(*h));
	if (!h)
		return;
	unsigned top = 0;
	for (size_t i = 0; i < r->npause_hist; i++) {
		unsigned b = sb_pause_bucket(r->pause_hist[i].lo_ns); /* a file's rows: any value */
		h[b] += r->pause_hist[i].count;
		total += r->pause_hist[i].count;
		if (r->pause_hist[i].count && b > top)
			top = b;
	}
	if (total) {
		m->pause_p50_ns = hist_quantile(h, total, 0.5);
		m->pause_p99_ns = hist_quantile(h, total, 0.99);
		m->pause_p999_ns = hist_quantile(h, total, 0.999);
		uint64_t exact = 0;
		for (size_t i = 0; i < r->ngaps; i++)
			if (r->gaps[i].pause_ns > exact)
				exact = r->gaps[i].pause_ns;
		/* the log's longest when it lies in the top bucket, else that bucket's middle */
		m->pause_max_ns = exact && sb_pause_bucket(exact) == top
					  ? (double)exact
					  : (double)(sb_pause_bucket_lo(top) + sb_pause_bucket_lo(top + 1)) / 2;
	} else {
		m->pause_p50_ns = m->pause_p99_ns = m->pause_p999_ns = m->pause_max_ns = 0;
	}
	free(h);
	window_metrics(r);
}

void metrics_pause_excess(struct sb_run *r, const struct sb_run *done, size_t ndone)
{
	double f = 0, p99 = 0;
	int nf = 0, np = 0;

	for (size_t i = 0; i < ndone; i++) {
		const struct sb_run *d = &done[i];
		if (strcmp(d->sampler, "none") || (d->variant[0] && strcmp(d->variant, r->variant)) ||
		    strcmp(d->workload, r->workload) || d->threads != r->threads ||
		    d->duration_s != r->duration_s || !run_scored(d->status))
			continue;
		if (!isnan(d->metrics.pause_fraction)) {
			f += d->metrics.pause_fraction;
			nf++;
		}
		if (!isnan(d->metrics.pause_p99_ns)) {
			p99 += d->metrics.pause_p99_ns;
			np++;
		}
	}
	r->metrics.pause_excess_fraction = nf ? r->metrics.pause_fraction - f / nf : NAN;
	r->metrics.pause_excess_p99_ns = np ? r->metrics.pause_p99_ns - p99 / np : NAN;
}
