/* sigsample.h - the part signal-driven samplers share: turn a handler's ucontext into a
 * sample in the sink. */
#ifndef SB_SIGSAMPLE_H
#define SB_SIGSAMPLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "sampler/fpwalk.h"
#include "sampler/sampler.h"

struct sigsample_counters {
	_Atomic uint64_t signals;     /* handler entries */
	_Atomic uint64_t dropped;     /* samples lost to a full sink */
	_Atomic uint64_t walk_errors; /* walks that stopped on an invalid frame */
	_Atomic uint64_t late;        /* signals that arrived after stop() */
	_Atomic uint64_t handler_ns;  /* time spent in handlers: the sampler's own CPU */
};

/* Walks the calling thread's interrupted context uc into pcs[0..max_depth), leaf first,
 * storing the count in *depth: fp_walk's contract (fpwalk.h) for a walker that starts from
 * a handler's ucontext. Async-signal-safe. */
typedef enum sb_walk_end (*sigsample_walk_fn)(const void *uc, uint64_t *pcs,
					      uint32_t max_depth, uint32_t *depth);

/* Records one sample of the interrupted context ucp for the calling thread, its stack
 * walked by walk (NULL: by frame records, fp_walk). t0 is sb_now_ns() at handler entry;
 * the handler's duration is the suspend window. Async-signal-safe; preserves errno. */
void sigsample_record(struct sb_sink *sink, const void *ucp, uint64_t t0, double weight_ns,
		      double stop_latency_ns, uint32_t max_depth, sigsample_walk_fn walk,
		      struct sigsample_counters *c);

/* Writes the counters as stats; returns how many (at most max). */
int sigsample_stats(const struct sigsample_counters *c, struct sb_stat *out, int max);

/* SIGPROF: the signal of the setitimer and timer_create samplers (struct sampler's
 * signal hook). */
int sigsample_sigprof(void);

#endif
