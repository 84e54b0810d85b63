/* metrics.h - computing the metrics of a run (the list and the struct: core/metrics.h).
 * NaN means "the mechanism does not allow this metric" (see docs/metrics.md). */
#ifndef SB_METRICS_H
#define SB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/quantile.h"
#include "core/metrics.h"

struct sb_run;
struct workload;

/* Computes every metric of r from its samples and thread truth, and fills each thread
 * row's samples and weight_ns. w (may be NULL) supplies the expected chain and function
 * split. Metrics that need another run (overhead) are left NaN. */
void metrics_compute(struct sb_run *r, const struct workload *w);

struct sb_host;
/* Sets the floor-relative timing metrics of r (and sampler_cpu_per_tick_ns) from the
 * calibration facts of h, the host of the same file (docs/metrics.md, "Floor-relative
 * timing"). external: the sampler runs in another process (ptrace floor instead of the
 * rendezvous). NaN where h has no calibration or the sampler stops no thread. */
void metrics_floor_ratios(struct sb_run *r, const struct sb_host *h, int external);

/* Sets r's rss_peak_excess_bytes: its rss_peak_bytes minus the mean of the scored `none`
 * runs of the same cell among done[0..ndone) (0 for a `none` run; NaN without a `none`). */
void metrics_cost_excess(struct sb_run *r, const struct sb_run *done, size_t ndone);

/* 1/2 sum |a_i/sum(a) - b_i/sum(b)| over n buckets; NaN when either sum is 0. */
double tvd(const double *a, const double *b, size_t n);
#endif
