/* pausehist.h - the log-linear histogram of observed pauses (HdrHistogram's layout): fixed
 * memory, two significant digits (1/128 relative width) from 1 µs to 17 s, one counter per
 * bucket. Written by workload threads (workloads/progress.c) with no allocation and no
 * lock; read by the metrics (analysis/metrics.c) and stored per run (results/). Header only:
 * the bucket arithmetic must be the same on both sides. */
#ifndef SB_CORE_PAUSEHIST_H
#define SB_CORE_PAUSEHIST_H

#include <stdint.h>

#define SB_PAUSE_UNIT_SHIFT 10 /* values are counted in 1.024 µs units */
#define SB_PAUSE_SUB 128       /* sub-buckets per power of two: 2 significant digits */
#define SB_PAUSE_MAX_UNITS (1ull << 24) /* 17.2 s; longer pauses land in the last bucket */
#define SB_PAUSE_BUCKETS 2304  /* index of SB_PAUSE_MAX_UNITS - 1, plus one */

/* Bucket of a pause of ns nanoseconds: below 256 units one bucket per unit, above that
 * SB_PAUSE_SUB buckets per power of two. */
static inline unsigned sb_pause_bucket(uint64_t ns)
{
	uint64_t v = ns >> SB_PAUSE_UNIT_SHIFT;
	if (v >= SB_PAUSE_MAX_UNITS)
		v = SB_PAUSE_MAX_UNITS - 1;
	if (v < 2 * SB_PAUSE_SUB)
		return (unsigned)v;
	unsigned k = (unsigned)(63 - __builtin_clzll(v)) - 7; /* v >> k is in [128, 256) */
	return SB_PAUSE_SUB * k + (unsigned)(v >> k);
}

/* Lowest value of bucket i, in ns; the bucket ends where bucket i + 1 starts. */
static inline uint64_t sb_pause_bucket_lo(unsigned i)
{
	if (i < 2 * SB_PAUSE_SUB)
		return (uint64_t)i << SB_PAUSE_UNIT_SHIFT;
	unsigned k = i / SB_PAUSE_SUB - 1;
	return ((uint64_t)(i - SB_PAUSE_SUB * k) << k) << SB_PAUSE_UNIT_SHIFT;
}

#endif
