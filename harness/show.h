/* show.h - the run table that `show`, `run` and `bench` print. */
#ifndef SB_SHOW_H
#define SB_SHOW_H

#include <stddef.h>
#include <stdio.h>

#include "core/run.h"

/* Prints the host facts as one line. */
void show_host(FILE *out, const struct sb_host *h);

/* Prints the machine fingerprint and the calibration table (µs), or one line saying the
 * file has none. */
void show_calibration(FILE *out, const struct sb_host *h);

/* Prints runs as a table, one row per run: id, sampler, workload, threads, hz, rep, status,
 * samples, rate_accuracy, magnitude_error, thread_tvd, window p99 (µs), stop p50 (µs).
 * NaN prints as `-`; a failed or skipped run shows its reason instead of metrics. */
void show_table(FILE *out, const struct sb_run *runs, size_t n);

/* Like show_table() with the metric columns named in metrics[0..nmetrics) (SB_METRICS
 * names; ns metrics print in µs). Unknown names are left out. */
void show_table_metrics(FILE *out, const struct sb_run *runs, size_t n,
			const char *const *metrics, size_t nmetrics);

/* Prints each run's identity and then one metric per line (all of them when metrics is
 * NULL, else the nmetrics named ones), in the metric's own unit. */
void show_vertical(FILE *out, const struct sb_run *runs, size_t n, const char *const *metrics,
		   size_t nmetrics);

/* Prints the footprint table: one row per sampler with the medians over its ok runs of
 * the CPU the process measured for it and the CPU it claimed (% of a core), the CPU it did
 * not report, its private memory's peak above `none` and growth, and the integrity
 * metrics when the file has them (worst run); `-` where a metric is missing or NaN. */
void show_footprint(FILE *out, const struct sb_run *runs, size_t n);

#endif
