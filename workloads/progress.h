/* progress.h - the progress clock: each workload thread reads CLOCK_MONOTONIC at every
 * unit boundary (a few µs of work apart) and records each gap that is longer than its own
 * shortest step by SB_PAUSE_MIN_NS or more: a time it did not run its code, whoever took
 * it (a sampler's stop, a signal handler, the scheduler, the hypervisor). This is the
 * program's own account of the pauses it lived through (docs/metrics.md, "Observed
 * pauses"), the truth the suspend windows a sampler reports are checked against.
 *
 * Memory: one struct wl_pauses per slot, preallocated by the harness (shared with it),
 * written only by the slot's thread (churn's threads of one slot run one after another),
 * never allocated or locked; the per-thread state is thread-local. Only compute phases
 * count: a workload calls wl_progress_idle() before it sleeps or blocks. */
#ifndef SB_WL_PROGRESS_H
#define SB_WL_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/pausehist.h"

#define SB_PAUSE_MIN_NS 10000 /* a gap this much over the thread's step is a pause */
#define WL_PAUSE_LOG 4096     /* pauses logged with their time, per slot */
/* Slots with a progress clock: the first 256. Each slot's record is ~80 KB (its log and
 * histogram), so thousands of (mostly idle) threads go without one. */
#define WL_PAUSE_SLOTS 256

struct wl_gap {
	uint64_t start_ns, gap_ns, pause_ns;
};

/* One slot's pauses (zeroed before the run). */
struct wl_pauses {
	_Atomic uint64_t active_ns; /* added by each thread of the slot at its end */
	_Atomic uint64_t steps;
	_Atomic uint64_t step_ns;   /* shortest step of the slot's threads; 0: none yet */
	_Atomic uint64_t pauses;
	_Atomic uint64_t pause_ns;
	_Atomic uint64_t logged;    /* pauses offered to log[]; the first WL_PAUSE_LOG kept */
	_Atomic uint32_t hist[SB_PAUSE_BUCKETS];
	struct wl_gap log[WL_PAUSE_LOG];
};

struct wl_ctx;

/* Starts the calling thread's clock on ctx's slot `index` (no clock when ctx->pauses is
 * NULL: every tick is then a no-op). The framework calls it around thread_main. */
void wl_progress_begin(struct wl_ctx *ctx, int index);
/* Adds the thread's active time and steps to its slot and stops its clock. */
void wl_progress_end(void);
/* One unit boundary: reads the clock and records the gap since the previous tick when it
 * is a pause. */
void wl_progress_tick(void);
/* The thread is about to sleep or block: the gap until its next tick is not counted. */
void wl_progress_idle(void);

#endif
