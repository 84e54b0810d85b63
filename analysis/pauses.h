/* pauses.h - the metrics of what the workload threads lived through (docs/metrics.md,
 * "Observed pauses"): the progress clock's pauses of a run, each reported suspend window
 * checked against the pause its thread saw, and the excess over the `none` runs. */
#ifndef SB_PAUSES_H
#define SB_PAUSES_H

#include <stddef.h>
#include <stdint.h>

struct sb_run;
struct sb_gap_row;

/* Sets pause_p50_ns .. pause_fraction from r's progress rows and histogram, and
 * window_observed_* / window_report_ratio from its samples and logged pauses. NaN where r
 * has no progress clock (older files, exec, imports, a workload with no compute phase) or
 * no sample carries a suspend window. Called by metrics_compute. */
void metrics_pauses(struct sb_run *r);

/* Sets r's pause_excess_p99_ns and pause_excess_fraction against the mean of the ok
 * `none` runs among done[0..ndone) of r's workload, threads, duration and variant (as the
 * overhead's reference); NaN when there is none or it has no progress clock. */
void metrics_pause_excess(struct sb_run *r, const struct sb_run *done, size_t ndone);

/* The observed pause on slot `slot` of r covering time t (a sample's time): its logged
 * gap in *gap. Returns 1 when found, 0 when the thread saw no pause then (its clock ran,
 * the log covers t), -1 when unknown (no clock on that slot, t past the log's end).
 * Needs r's gaps (files read with samples). */
int pause_covering(const struct sb_run *r, int slot, uint64_t t, const struct sb_gap_row **gap);

struct sb_sample;
/* A sample's observed window: the pause its thread lived through at the sample's time
 * (pause_covering), 0 when the thread saw none; NaN when the sample reports no suspend
 * window (or was peeked, not stopped) or the thread's pauses there are unknown. */
double pause_observed_window(const struct sb_run *r, const struct sb_sample *s);

#endif
