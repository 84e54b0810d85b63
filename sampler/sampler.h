/* sampler.h - the interface every sampler under test implements.
 *
 * A sampler is one file exposing one `const struct sampler`, plus one line in the table of
 * its platform (sampler/table_linux.c, table_darwin.c). The harness calls, inside a fresh
 * child process per run:
 *   available() -> start(cfg, sink) -> [workload runs; thread_start/thread_stop hooks]
 *   -> stop() -> stats()
 * Samples go to the preallocated sink; stats() reports the sampler's own counters. */
#ifndef SB_SAMPLER_H
#define SB_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sample.h"

/* Workload thread slots: truth rows, --threads. A PC names a slot only modulo the slot
 * functions (WL_SLOT_FNS, workloads/workload.h). */
#define SB_MAX_THREADS 10240

enum sb_clock {
	SB_CLOCK_CPU,  /* samples a thread only while it runs (setitimer, timer_create, perf) */
	SB_CLOCK_WALL, /* samples every thread every tick (suspend samplers) */
};

enum sb_sampler_flags {
	SB_SAMPLER_FAULT = 1u << 0,       /* deliberately broken, for gate tests */
	SB_SAMPLER_EXTERNAL = 1u << 1,    /* samples from another process */
	SB_SAMPLER_TICK_DRIVEN = 1u << 2, /* rate capped by the kernel tick (CONFIG_HZ) */
	SB_SAMPLER_BASELINE = 1u << 3,    /* takes no samples: the `none` reference */
	SB_SAMPLER_TEST = 1u << 4,        /* internal test sampler, hidden from `list` */
	SB_SAMPLER_IN_PROCESS = 1u << 5,  /* runs inside any program: exec's agent carries it */
};

/* What a sampler is, for the gate's class rules (docs/gate.md "Classes"): what it claims
 * to measure and how it reaches threads. A budget whose metric needs a capability the
 * sampler claims fails on NaN; one it does not claim is reported "not measured". */
enum sb_sampler_caps {
	SB_CAP_PROCESS_WIDE = 1u << 0,   /* scope: one process-wide signal, the kernel picks the
					  * thread (setitimer); unset: reaches each thread itself */
	SB_CAP_THREAD_IDS = 1u << 1,     /* samples carry the thread (tid or workload slot) */
	SB_CAP_WEIGHTS = 1u << 2,        /* samples carry the CPU time they stand for */
	SB_CAP_STACKS = 1u << 3,         /* samples carry a walked stack */
	SB_CAP_STOP_LATENCY = 1u << 4,   /* samples carry trigger -> stopped latency */
	SB_CAP_SUSPEND_WINDOW = 1u << 5, /* samples carry how long the thread was kept off CPU */
	SB_CAP_INLINE_FRAMES = 1u << 6,  /* a tool's recipe: the frames it prints name inlined
					  * functions (a sampler's frames are PCs, which
					  * sampbench names with their DWARF inline chains) */
	SB_CAP_CFI_STACKS = 1u << 7,     /* stacks unwound by the binary's call-frame information
					  * (.eh_frame), not by frame records: whole where the
					  * code has no frame pointers (the nofp builds) */
};

/* The two classes most samplers are in, named once so a variant (mach-idle, a fault) cannot
 * drift from its original. Per thread, everything a sample can carry: mach, ptrace, ctimer
 * and the faults built on them. */
#define SB_CAPS_PER_THREAD_FULL                                                             \
	(SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS | SB_CAP_STOP_LATENCY |         \
	 SB_CAP_SUSPEND_WINDOW)
/* One process-wide signal (setitimer): no stop latency, the expiry is not observable. */
#define SB_CAPS_PROCESS_SIGNAL                                                              \
	(SB_CAP_PROCESS_WIDE | SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS |         \
	 SB_CAP_SUSPEND_WINDOW)

struct sb_config {
	double hz;           /* requested sampling frequency */
	int threads;         /* workload threads */
	double duration_s;   /* workload duration */
	uint64_t seed;       /* for random phases and fault injection */
	uint32_t max_depth;  /* frames per sample, <= SB_MAX_FRAMES */
	bool idle_skip;      /* suspend samplers: reuse the stack of a thread that did not run */
	bool rt_priority;    /* suspend samplers: try SCHED_FIFO for the sampler thread */
	pid_t target_pid;    /* external samplers: the process to sample (0: the caller) */
	const char *tmpdir;  /* scratch space for samplers that write files */
};

struct sb_stat {
	const char *name; /* static string, snake_case with unit suffix where it has one */
	double value;
};

#define SB_MAX_STATS 48

struct sampler {
	const char *name;
	const char *description;
	enum sb_clock clock;
	unsigned flags; /* enum sb_sampler_flags */
	unsigned caps;  /* enum sb_sampler_caps: the class the gate judges it by */

	/* Optional. Returns 0 when the mechanism is usable here; otherwise writes why (one
	 * line) and returns -1, and the run is recorded as skipped. */
	int (*available)(char *why, size_t len);
	/* Starts sampling the calling process (or cfg->target_pid). Returns 0 or -1 with errno. */
	int (*start)(const struct sb_config *cfg, struct sb_sink *sink);
	/* Stops sampling; after it returns no sample is written. Returns 0 or -1. */
	int (*stop)(void);
	/* Writes up to max counters and returns how many. Optional. */
	int (*stats)(struct sb_stat *out, int max);
	/* Optional: called by every workload thread, from that thread, after it has announced
	 * itself and before it starts work (thread_start) / after its work (thread_stop). */
	void (*thread_start)(int index);
	void (*thread_stop)(int index);
	/* Optional, for SB_SAMPLER_IN_PROCESS samplers: the signal the sampler owns in the
	 * sampled process (exec's agent keeps the program from blocking or taking it over).
	 * NULL: it owns none. */
	int (*signal)(void);
};

/* The platform's table of samplers, NULL-terminated (table_linux.c, table_darwin.c). */
extern const struct sampler *const sb_sampler_table[];

/* The table of samplers. Returns the sampler named `name`, or NULL. */
const struct sampler *sampler_find(const char *name);
/* Iterates the table: sampler_at(0), sampler_at(1), ... until NULL. */
const struct sampler *sampler_at(size_t i);
/* Whether s runs inside a sampled program (exec's agent): a built-in flagged
 * SB_SAMPLER_IN_PROCESS. Plugins are asked by plugin_path(), not here. */
int sampler_in_process(const struct sampler *s);

/* The sampler the current process runs (set by the harness before start), so workload
 * threads can call its hooks. NULL when none. */
extern const struct sampler *sb_active_sampler;

#endif
