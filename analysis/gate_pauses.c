/* gate_pauses.c - what the gate says about observed pauses and tails: the worst run of a
 * cell, where in it the worst stop or pause happened, and the two numbers behind a
 * window_report_ratio (docs/gate.md, "Observed pauses"). */
#include "analysis/gate_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/mwu.h"
#include "analysis/pauses.h"
#include "core/run.h"

const struct sb_run *gate_worst_run(const struct gate_side *side, const struct cell *c,
				    const char *metric, enum gate_op op, double *v)
{
	int mi = gate_metric_index(metric), low = op == GATE_GE || op == GATE_GT;
	const struct sb_run *worst = NULL;

	*v = NAN;
	if (mi < 0)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (!run_scored(r->status))
			continue;
		double x = *(const double *)((const char *)&r->metrics + sb_metric_infos[mi].offset);
		if (!isnan(x) && (isnan(*v) || (low ? x < *v : x > *v))) {
			*v = x;
			worst = r;
		}
	}
	return worst;
}

/* Earliest time the run's samples or logged pauses know: "s into the run" counts from it. */
static uint64_t run_t0(const struct sb_run *r)
{
	uint64_t t0 = UINT64_MAX;
	for (size_t i = 0; i < r->nsamples; i++)
		if (r->samples[i].time_ns < t0)
			t0 = r->samples[i].time_ns;
	for (size_t i = 0; i < r->ngaps; i++)
		if (r->gaps[i].start_ns < t0)
			t0 = r->gaps[i].start_ns;
	return t0;
}

void gate_pause_where(const struct sb_run *r, const char *metric, char *buf, size_t len)
{
	double best = -1;
	int slot = -1;
	uint64_t at = 0;

	if (!strcmp(metric, "pause_max_ns")) {
		for (size_t i = 0; i < r->ngaps; i++)
			if ((double)r->gaps[i].pause_ns > best) {
				best = (double)r->gaps[i].pause_ns;
				slot = r->gaps[i].index;
				at = r->gaps[i].start_ns;
			}
	} else if (!strcmp(metric, "window_observed_max_ns") ||
		   !strcmp(metric, "stop_latency_max_ns") || !strcmp(metric, "suspend_window_max_ns")) {
		int observed = !strcmp(metric, "window_observed_max_ns");
		size_t field = !strcmp(metric, "stop_latency_max_ns")
				       ? offsetof(struct sb_sample, stop_latency_ns)
				       : offsetof(struct sb_sample, suspend_window_ns);
		for (size_t i = 0; i < r->nsamples; i++) {
			const struct sb_sample *s = &r->samples[i];
			double x = observed ? pause_observed_window(r, s)
					    : *(const double *)((const char *)s + field);
			if (!isnan(x) && x > best) {
				best = x;
				slot = s->thread_index;
				at = s->time_ns;
			}
		}
	}
	if (best < 0) {
		snprintf(buf, len, "run %lld", (long long)r->run_id);
		return;
	}
	snprintf(buf, len, "run %lld, thread %d, %.3f s into the run", (long long)r->run_id, slot,
		 (double)(at - run_t0(r)) / 1e9);
}

void gate_window_detail(const struct gate_side *side, const struct cell *c, char *buf,
			size_t len)
{
	double *v = malloc((c->n + 1) * sizeof(*v));
	char o[32] = "-", rep[32] = "-";

	if (v) {
		size_t n = gate_cell_values(side, c, "window_observed_p50_ns", v);
		gate_fmt_value(o, sizeof(o), "window_observed_p50_ns", median_of(v, n));
		n = gate_cell_values(side, c, "suspend_window_p50_ns", v);
		gate_fmt_value(rep, sizeof(rep), "suspend_window_p50_ns", median_of(v, n));
	}
	free(v);
	snprintf(buf, len, "threads lived through %s, the sampler reported %s (medians of the "
		 "runs' p50)", o, rep);
}
