/* sampbench_sampler.h - the bring-your-own-sampler ABI (version 2).
 *
 * A plugin is a shared object that exports one symbol, `sampbench_sampler`, of type
 * `const struct sampbench_sampler`. sampbench loads it with dlopen() when a sampler name
 * contains a '/' (`--sampler ./my_sampler.so`) and runs it like a built-in sampler, in
 * `run`, `bench` and `exec`. This header is the whole contract: it uses no sampbench
 * internals, so a plugin builds with nothing but this file:
 *
 *     cc -shared -fPIC -O2 -fno-omit-frame-pointer -I path/to/sampler my.c -o my.so
 *
 * Call order, inside a fresh process per run:
 *   available() -> start(cfg, sink) -> [workload; thread_start/thread_stop per thread]
 *   -> stop() -> stats()
 * Samples go through sink->push(), which is lock-free and async-signal-safe, so it may be
 * called from a signal handler or while another thread is stopped.
 *
 * Compatibility: abi_version 2 (this header) appends the class fields (`caps`) to
 * struct sampbench_sampler; plugins built against version 1 keep loading, judged with the
 * documented v1 defaults (SAMPBENCH_CAPS_V1_DEFAULT; the gate names them in its verdict).
 * Any other version, or a struct_size smaller than its version's struct, is refused with
 * a clear error. */
#ifndef SAMPBENCH_SAMPLER_H
#define SAMPBENCH_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SAMPBENCH_SAMPLER_ABI 2
#define SAMPBENCH_SAMPLER_SYMBOL "sampbench_sampler"

/* What a plugin exports; put this in front of its definition. */
#define SAMPBENCH_EXPORT __attribute__((visibility("default")))

enum sampbench_clock {
	SAMPBENCH_CLOCK_CPU = 0,  /* samples a thread only while it runs */
	SAMPBENCH_CLOCK_WALL = 1, /* samples every thread every tick, running or not */
};

enum sampbench_sample_flags { /* same bits as sampbench's own samples */
	SAMPBENCH_SAMPLE_TRUNCATED = 1u << 0,  /* the walk stopped at max_depth */
	SAMPBENCH_SAMPLE_RAN = 1u << 1,        /* the thread used CPU since its previous sample */
	SAMPBENCH_SAMPLE_WALK_ERROR = 1u << 2, /* the walk stopped on an invalid frame */
	SAMPBENCH_SAMPLE_REUSED = 1u << 3,     /* stack reused without stopping the thread */
};

/* The sampler's class (`caps`): what it claims to measure and how it reaches threads. The
 * gate (`sampbench gate`, docs/gate.md) picks its rules by class, never by name: a metric
 * a claimed capability needs that comes out NaN fails the gate; an unclaimed one is
 * reported "not measured". Metrics that come out measured are judged either way. */
enum sampbench_caps {
	SAMPBENCH_CAP_PROCESS_WIDE = 1u << 0,   /* one process-wide signal (setitimer): the kernel
						 * picks the thread; unset: reaches each thread */
	SAMPBENCH_CAP_THREAD_IDS = 1u << 1,     /* samples carry tid / thread_index */
	SAMPBENCH_CAP_WEIGHTS = 1u << 2,        /* samples carry weight_ns */
	SAMPBENCH_CAP_STACKS = 1u << 3,         /* samples carry frames */
	SAMPBENCH_CAP_STOP_LATENCY = 1u << 4,   /* samples carry stop_latency_ns */
	SAMPBENCH_CAP_SUSPEND_WINDOW = 1u << 5, /* samples carry suspend_window_ns */
	SAMPBENCH_CAP_CFI_STACKS = 1u << 7,     /* frames unwound by call-frame information
						 * (.eh_frame), not frame records: judged on
						 * code without frame pointers too */
	SAMPBENCH_CAP_TICK_DRIVEN = 1u << 16,   /* rate capped by the kernel tick (CONFIG_HZ) */
};

/* What a version-1 plugin (no caps field) is assumed to be: per-thread, with thread ids,
 * weights and stacks, no latencies, tick-driven when its clock is CPU. */
#define SAMPBENCH_CAPS_V1_DEFAULT                                                          \
	(SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS)

/* One sample as a plugin hands it over. Unknown doubles are NaN, unknown ints -1. */
struct sampbench_sample {
	uint64_t time_ns;         /* CLOCK_MONOTONIC when it was taken (sink->now_ns()) */
	int32_t tid;              /* OS thread id */
	int32_t thread_index;     /* workload slot (sink->self()), -1 when unknown */
	double weight_ns;         /* CPU time this sample stands for */
	double stop_latency_ns;   /* trigger until the thread was stopped */
	double suspend_window_ns; /* how long the thread was kept from running */
	uint32_t flags;           /* enum sampbench_sample_flags */
	uint32_t depth;           /* frames[0..depth), leaf first */
	const uint64_t *frames;   /* PCs; copied by push() */
};

/* The sink the harness passes to start(). Every function is async-signal-safe. */
struct sampbench_sink {
	uint32_t abi_version; /* SAMPBENCH_SAMPLER_ABI */
	uint32_t struct_size; /* sizeof(struct sampbench_sink) of the harness */
	void *ctx;            /* pass back as the first argument */
	/* Copies one sample. Returns 0, or -1 when the sink is full (counted as dropped). */
	int (*push)(void *ctx, const struct sampbench_sample *s);
	/* CLOCK_MONOTONIC in ns. */
	uint64_t (*now_ns)(void);
	/* The calling thread's OS id, workload slot (-1 when none) and stack bounds [lo, hi)
	 * (0, 0 when unknown), as the harness recorded them when the thread started. */
	void (*self)(int32_t *tid, int32_t *thread_index, uint64_t *stack_lo, uint64_t *stack_hi);
	/* Optional convenience: walks the frame-pointer chain of the interrupted context
	 * `ucontext` (a signal handler's third argument) of the calling thread with the
	 * harness's validated walker. Writes up to max PCs, leaf first, and *flags
	 * (TRUNCATED / WALK_ERROR). Returns the depth. */
	uint32_t (*walk_ucontext)(const void *ucontext, uint64_t *pcs, uint32_t max,
				  uint32_t *flags);
};

/* The run's parameters. */
struct sampbench_config {
	uint32_t struct_size;
	double hz;          /* requested sampling frequency */
	int32_t threads;    /* workload threads (1 under `exec`: unknown) */
	double duration_s;  /* workload duration (0 under `exec`: unknown) */
	uint64_t seed;      /* for random phases */
	uint32_t max_depth; /* frames per sample */
};

struct sampbench_stat {
	const char *name; /* static string, snake_case with a unit suffix where it has one */
	double value;
};

/* The one exported object. name must be unique among the samplers of a run. */
struct sampbench_sampler {
	uint32_t abi_version; /* SAMPBENCH_SAMPLER_ABI */
	uint32_t struct_size; /* sizeof(struct sampbench_sampler) */
	const char *name;
	const char *description;
	int clock;            /* enum sampbench_clock */
	/* Optional. 0 when usable here; otherwise writes why (one line) and returns -1: the
	 * run is recorded as skipped. */
	int (*available)(char *why, size_t len);
	/* Required. Starts sampling the calling process. The sink outlives stop().
	 * Returns 0 or -1 with errno. */
	int (*start)(const struct sampbench_config *cfg, const struct sampbench_sink *sink);
	/* Required. After it returns, push() is not called again. Returns 0 or -1. */
	int (*stop)(void);
	/* Optional. Writes up to max counters, returns how many. Report your own CPU time
	 * as "sampler_cpu_ns" to get the sampler_cpu_fraction metric. */
	int (*stats)(struct sampbench_stat *out, int max);
	/* Optional: called by every workload thread from itself, after it started and before
	 * its work (thread_start) / after its work (thread_stop). Under `exec`, called for
	 * every thread the program creates with pthread_create, and for the main thread. */
	void (*thread_start)(int thread_index);
	void (*thread_stop)(int thread_index);
	/* ABI 2. The class: enum sampbench_caps, or-ed. Claim only what your samples carry:
	 * a claimed capability whose metric comes out NaN fails the gate. */
	uint32_t caps;
};

#ifdef __cplusplus
}
#endif

#endif
