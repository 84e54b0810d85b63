/* runcmp.h - two runs, or two hosts, compared value by value: what a file read back, merged,
 * resumed or copied must keep. Doubles are equal when they are the same number or both NaN. */
#ifndef SB_TEST_RUNCMP_H
#define SB_TEST_RUNCMP_H

#include <stddef.h>

#include "core/run.h"

enum runcmp_flags {
	RUNCMP_NO_ID = 1u << 0,      /* run_id and repetition may differ (merge renumbers) */
	RUNCMP_NO_SAMPLES = 1u << 1, /* skip samples, frames, symbols and the pause log (a
				      * read with load_samples == 0) */
};

/* Compares a and b: identity (sampler, workload, threads, hz, duration, repetition, status,
 * reason, start time, clock, wall time, variant), every metric, thread rows, stats,
 * progress rows, pause histogram and, unless RUNCMP_NO_SAMPLES, samples, frames, symbols
 * and the pause log. Returns 0 when equal, else -1 with the first difference, one line,
 * in why (why may be NULL). */
int runcmp(const struct sb_run *a, const struct sb_run *b, unsigned flags, char *why,
	   size_t len);

/* Compares every field of two hosts: names, build, fingerprint, facts and the calibration
 * table. Returns 0 when equal, else -1 with the first difference in why. */
int hostcmp(const struct sb_host *a, const struct sb_host *b, char *why, size_t len);

/* The first run of runs[0..n) with a's cell and repetition (sampler, workload, threads,
 * hz, repetition, variant), or NULL. */
const struct sb_run *runcmp_find(const struct sb_run *a, const struct sb_run *runs, size_t n);

#endif
