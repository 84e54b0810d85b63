/* sample.h - one sample and the preallocated sink samplers write into.
 *
 * The sink lives in memory that is allocated before a run starts (the harness maps it
 * MAP_SHARED so the parent keeps what a crashed child wrote). sink_push() is lock-free and
 * async-signal-safe: it may be called from a signal handler or while a target is stopped. */
#ifndef SB_SAMPLE_H
#define SB_SAMPLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SB_MAX_FRAMES 256 /* deeper stacks are cut and flagged SB_SAMPLE_TRUNCATED */

enum sb_sample_flags {
	SB_SAMPLE_TRUNCATED = 1u << 0, /* the walk stopped at SB_MAX_FRAMES (or the cfg limit) */
	SB_SAMPLE_RAN = 1u << 1,       /* the thread used CPU since its previous sample */
	SB_SAMPLE_WALK_ERROR = 1u << 2, /* the walk stopped on a frame that failed validation */
	SB_SAMPLE_REUSED = 1u << 3,    /* stack reused from the previous sample (idle skip) */
	SB_SAMPLE_KERNEL = 1u << 4,    /* frames include kernel addresses (perf) */
	SB_SAMPLE_PEEKED = 1u << 5,    /* read without stopping the thread: it was blocked in a
					* system call (mach on Linux, tc_peek) */
	SB_SAMPLE_DEFERRED = 1u << 6,  /* taken by the thread itself when it next ran, with the
					* registers it had at the tick: it was waiting for a CPU
					* (mach on Linux, tc_defer) */
};

/* One sample. Fields a mechanism cannot measure hold NaN (doubles) or -1 (integers). */
struct sb_sample {
	uint64_t time_ns;         /* CLOCK_MONOTONIC when the sample was taken */
	int32_t tid;              /* OS thread id, -1 when unknown */
	int32_t thread_index;     /* workload thread slot, -1 when unknown or not a workload thread */
	double weight_ns;         /* CPU time this sample stands for */
	double stop_latency_ns;   /* timer expiry / suspend request until the thread is stopped */
	double suspend_window_ns; /* how long the thread was kept from running */
	uint32_t depth;           /* frames stored, leaf first */
	uint32_t flags;           /* enum sb_sample_flags */
	uint64_t frame_offset;    /* index of the first frame in sink->frames */
	/* Ticks this sample stands for: 0 or 1, one; more, a reused stack of a thread that
	 * stayed idle that long (mach-idle's idle threads, docs/mach.md). Read it through
	 * sample_ticks(). */
	uint32_t ticks;
};

/* How many ticks sample s stands for (at least 1). */
static inline uint32_t sample_ticks(const struct sb_sample *s)
{
	return s->ticks > 1 ? s->ticks : 1;
}

/* Fixed-capacity sample store. All arrays are allocated by sink_create() before the run. */
struct sb_sink {
	size_t sample_cap;
	size_t frame_cap;
	_Atomic size_t nsamples;  /* slots reserved (may exceed sample_cap: extra are dropped) */
	_Atomic size_t nframes;   /* frame slots reserved */
	_Atomic uint64_t dropped; /* samples lost to a full sink */
	struct sb_sample *samples;
	uint64_t *frames;
};

/* Allocates a sink for sample_cap samples and frame_cap frames in one shared anonymous
 * mapping (visible to children forked afterwards). Returns NULL on failure. Free with
 * sink_destroy(). */
struct sb_sink *sink_create(size_t sample_cap, size_t frame_cap);
void sink_destroy(struct sb_sink *sink);

/* Copies one sample and its frames into the sink. Async-signal-safe. Sets s->frame_offset.
 * Returns 0, or -1 when the sink is full (the sample is counted in sink->dropped). */
int sink_push(struct sb_sink *sink, const struct sb_sample *s, const uint64_t *frames,
	      uint32_t depth);

/* Number of complete samples (reserved slots that fit the capacity). */
size_t sink_count(const struct sb_sink *sink);

/* A sample with every optional field set to "unknown". */
struct sb_sample sample_unknown(void);

/* Monotonic and thread-CPU clocks in ns. Async-signal-safe. */
uint64_t sb_now_ns(void);
uint64_t sb_thread_cpu_ns(void);

/* The process's CPU time in ns: all its threads, the exited ones too
 * (CLOCK_PROCESS_CPUTIME_ID). Returns 0, or -1 when the clock cannot be read. */
int sb_process_cpu_ns(uint64_t *ns);

#endif
