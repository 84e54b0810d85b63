/* workload.h - synthetic programs whose truth is known.
 *
 * A workload is one file exposing one `const struct workload`, plus one line in
 * workloads/table.c. The framework (workload.c) spawns the threads, announces each one
 * (sb_thread_begin), measures its CPU and alive time, and stores the truth in the
 * preallocated truth table the harness passes in. */
#ifndef SB_WORKLOAD_H
#define SB_WORKLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/run.h"
#include "sampler/sampler.h"
#include "workloads/progress.h"

#define WL_MAX_CHAIN 8   /* expected call chain entries (issue: stack correctness) */
#define WL_MAX_FUNCS 4   /* functions with a known CPU split (hotspot) */

/* Truth for one workload slot. Several OS threads may share a slot (churn): fields add up.
 * Lives in shared memory; written by workload threads with atomics or once at their end. */
struct wl_truth {
	_Atomic uint64_t cpu_ns;          /* CLOCK_THREAD_CPUTIME_ID, read by the thread itself */
	/* the same time as the kernel splits it between user and system mode (getrusage
	 * RUSAGE_THREAD around the same span: sampled at the tick), read by the thread */
	_Atomic uint64_t user_ns, sys_ns;
	_Atomic uint64_t alive_ns;        /* wall time from its start to its end */
	_Atomic uint64_t offcpu_ns;       /* time it meant to sleep or block (mixed) */
	_Atomic uint64_t ops;             /* work units done */
	_Atomic uint64_t checksum_errors; /* work units whose result was wrong */
	_Atomic uint64_t eintr;           /* interrupted syscalls seen (syscall) */
	_Atomic uint64_t short_io;        /* short reads or writes seen (syscall) */
	_Atomic uint32_t os_threads;      /* OS threads that ran in this slot */
	/* OS threads of this slot that have left the sampler (sb_thread_end returned): from
	 * then on none of its samples can come, so a workload may crowd the CPUs */
	_Atomic uint32_t ends;
	_Atomic int32_t tid;              /* last OS tid in this slot */
	/* work per declared function, in units proportional to its CPU time (hotspot, alias,
	 * burst): iterations of the same loop body */
	_Atomic uint64_t func_ops[WL_MAX_FUNCS];
	/* What the threads checked about themselves (workloads/integrity.h): */
	_Atomic uint64_t integrity_errno;  /* checks that found errno not what the code left */
	_Atomic uint64_t integrity_sigmask; /* threads whose signal mask changed under them */
	_Atomic uint64_t integrity_signal; /* threads whose signal to themselves did not arrive */
	_Atomic uint64_t stack_peak;       /* deepest stack use of the slot's threads, bytes */
	/* The name the slot's thread had at its end, read by the thread itself; written by
	 * that thread only (a slot's threads run one after another), read after the join. */
	char name[SB_THREAD_NAME_LEN];
};

struct wl_ctx {
	/* the workload's name, which its threads name themselves after ("<name>-<slot>");
	 * workload_run sets it, NULL names them "wl-<slot>" */
	const char *workload;
	int threads;          /* workload threads requested */
	double duration_s;    /* how long to run */
	uint64_t seed;
	uint32_t param;       /* workload-specific knob (deep: depth, churn: total), 0: default */
	double sample_hz;     /* the run's sampling rate, for work in step with it (alias); 0: unknown */
	uint64_t deadline_ns; /* sb_now_ns() at which threads stop */
	struct wl_truth *truth; /* SB_MAX_THREADS slots, zeroed by the harness */
	/* WL_PAUSE_SLOTS slots (progress.h), zeroed, or NULL: no progress clock */
	struct wl_pauses *pauses;
	void *priv;           /* workload-private state */
	uint32_t stack_kb;    /* workload threads' stack size in KiB, 0: the system default */
	/* CPU of the workload's own helper threads (mixed's feeder, churn's drivers), which
	 * are no slot: each adds its thread clock at its end, and the harness counts it as its
	 * own, not the sampler's (docs/metrics.md "What the sampler costs the process"). */
	_Atomic uint64_t aux_cpu_ns;
};

struct workload {
	const char *name;
	const char *description;
	/* Runs in each of ctx->threads threads, already announced as slot `index`. The
	 * framework records cpu_ns, alive_ns, tid and os_threads for the slot. */
	void (*thread_main)(struct wl_ctx *ctx, int index);
	/* Optional: replaces the default "spawn ctx->threads threads running thread_main". */
	int (*run)(struct wl_ctx *ctx);
	/* Optional: called before threads start / after they are joined (setup, teardown). */
	int (*setup)(struct wl_ctx *ctx);
	void (*teardown)(struct wl_ctx *ctx);
	/* Expected call chain, leaf side first, as function addresses; NULL-terminated.
	 * A sample is stack-correct when its frames contain these functions in order. */
	const void *chain[WL_MAX_CHAIN];
	/* Known CPU split over functions (hotspot): addresses and true shares; NULL-terminated. */
	const void *funcs[WL_MAX_FUNCS];
	/* True CPU share of each funcs[] entry, by construction (same index; sums to 1). */
	double func_share[WL_MAX_FUNCS];
	/* The true split is what the threads measured (their func_ops, stored with the run as
	 * the func_work stats), func_share only its design: the split depends on when the
	 * threads ran (alias, burst). */
	bool func_share_measured;
	/* Functions a thread sleeps or blocks in (mixed), each issuing its syscall itself so
	 * that it is the leaf while the thread is off-CPU; NULL-terminated. */
	const void *offcpu[WL_MAX_FUNCS];
	/* The build variant (WL_VARIANT_NAME: "nofp", "inline"); NULL for the plain build. */
	const char *variant;
};

const struct workload *workload_find(const char *name);
const struct workload *workload_at(size_t i);
/* w's build `variant` ("fp" or NULL: the plain build; "nofp", "inline"): the workload
 * named "<w's name>@<variant>", w itself for fp, or NULL when w has no such build. w may be
 * a variant itself: its plain name is used. */
const struct workload *workload_variant(const struct workload *w, const char *variant);
/* 1 when variant names a build variant ("fp", "nofp", "inline"), else 0. */
int workload_variant_known(const char *variant);

/* Runs w in the calling process: setup, threads, join, teardown (ctx->workload =
 * w->name). Returns 0 or -1. */
int workload_run(const struct workload *w, struct wl_ctx *ctx);

/* The work each of w's declared functions did in the run, summed over truth's
 * SB_MAX_THREADS slots, into work[0..n). Returns n, the number of declared functions, or 0
 * when w declares none or no work was counted. The harness stores them as the run's stats
 * named WL_FUNC_WORK_STAT with the function's index. */
int wl_func_work(const struct workload *w, const struct wl_truth *truth,
		 uint64_t work[WL_MAX_FUNCS]);
#define WL_FUNC_WORK_STAT "func_work_%d"

/* Spawns n framework threads running fn(ctx, index) for index 0..n-1 and joins them,
 * recording truth per slot. Used by workload_run and by custom run() functions. */
int wl_run_threads(struct wl_ctx *ctx, int n, void (*fn)(struct wl_ctx *, int));
/* Same for one thread in slot index; returns once it exited. */
int wl_run_one(struct wl_ctx *ctx, int index, void (*fn)(struct wl_ctx *, int));

/* --- slot-unique leaf functions (slots.c) ---
 * Slot i's work runs in a leaf function of its own, so a PC identifies the slot: up to
 * WL_SLOT_FNS slots; beyond, slot i runs in the functions of i mod WL_SLOT_FNS. */
#define WL_SLOT_FNS 256

/* Does `iters` rounds of work in slot's leaf and returns the result; the result depends
 * only on (seed, iters), so callers verify it against wl_unit_expected(). */
uint64_t wl_slot_work(int slot, uint64_t seed, uint64_t iters);
uint64_t wl_unit_expected(uint64_t seed, uint64_t iters);
/* One verified unit of work in slot's leaf, in WL_UNIT_STEPS steps with a progress tick
 * after each: adds 1 to ops and to checksum_errors on a wrong result. */
void wl_unit(struct wl_ctx *ctx, int slot);
/* Slot whose leaf contains pc, or -1. Async-signal-safe. */
int wl_slot_of_pc(uint64_t pc);
/* Slot whose leaf or entry frame contains pc, or -1: for attributing a whole stack (the
 * entry frame sits near the bottom of every workload thread). Async-signal-safe. */
int wl_slot_frame_of_pc(uint64_t pc);
/* Runs fn(ctx, index) through slot's own entry function (the framework does this for
 * every workload thread). */
void wl_slot_enter(int slot, void (*fn)(struct wl_ctx *, int), struct wl_ctx *ctx, int index);
/* Address range of slot's leaf, for symbolizers and tests. */
void wl_slot_range(int slot, uint64_t *lo, uint64_t *hi);

#define WL_UNIT_ITERS 20000 /* iterations per unit: ~20-40 us on this VM */
#define WL_UNIT_STEPS 5     /* progress ticks per unit: a step is a few us */

/* --- the work of the measured functions ---
 * x = iters rounds of xorshift64 from seed | 1: cheap, register-only work whose result a
 * register corruption would change, one dependent chain (no alignment or port effect
 * changes its speed). A macro, not a function: it expands in the function whose share is
 * measured, so that function holds the PC, with no inlined frame of its own in DWARF
 * (which would name every sample). */
#define WL_XORSHIFT(x, seed, iters)                                                       \
	do {                                                                              \
		(x) = (seed) | 1;                                                         \
		for (uint64_t wl_i_ = 0; wl_i_ < (iters); wl_i_++) {                      \
			(x) ^= (x) << 13;                                                 \
			(x) ^= (x) >> 7;                                                  \
			(x) ^= (x) << 17;                                                 \
		}                                                                         \
	} while (0)

/* Returns x through a call the compiler cannot see into. GCC gives a leaf function no frame
 * record even with -fno-omit-frame-pointer, and a walk from a frameless leaf skips its
 * caller: calling wl_keep() after the loop makes a measured function non-leaf, so it gets
 * a frame and a correct walk names its caller. */
uint64_t wl_keep(uint64_t x);

#define WL_CHUNK_ITERS 2000 /* iterations per chunk: a few us */

/* Defines `ATTR uint64_t NAME(t, seed, expected, until_ns)`: chunks of WL_CHUNK_ITERS
 * xorshift rounds until sb_now_ns() reaches until_ns (at least one), each result checked
 * against expected (checksum_errors) and each chunk ended by a progress tick. Returns the
 * iterations done. One body for the functions of alias and burst, which differ only in
 * when they run. */
#define WL_CHUNK_FN(ATTR, NAME)                                                           \
	ATTR uint64_t NAME(struct wl_truth *t, uint64_t seed, uint64_t expected,          \
			   uint64_t until_ns)                                             \
	{                                                                                 \
		uint64_t done = 0;                                                        \
		do {                                                                      \
			uint64_t x;                                                       \
			WL_XORSHIFT(x, seed, WL_CHUNK_ITERS);                             \
			if (wl_keep(x) != expected)                                       \
				atomic_fetch_add_explicit(&t->checksum_errors, 1,         \
							  memory_order_relaxed);          \
			done += WL_CHUNK_ITERS;                                           \
			wl_progress_tick();                                               \
		} while (sb_now_ns() < until_ns);                                         \
		return done;                                                              \
	}

/* --- build variants (docs/workloads.md "Variants") ---
 * Code as the field builds it: each workload with functions to attribute (WL_VARIANTS in
 * the Makefile) is compiled three times, each build its own struct workload in
 * workloads/table.c. fp: as every workload (frame pointers, the measured functions out of
 * line). nofp: -fomit-frame-pointer, as most distributions build. inline: the measured
 * functions (WL_SPLIT_FN) inlined into their callers, named only by DWARF's inline
 * chains. A variant's workload is named "<name>@<variant>" (hotspot@nofp) and carries the
 * variant in .variant; fp's has none. */
#define WL_VARIANT_FP "fp"
#if defined(WL_VARIANT_NOFP)
#define WL_VARIANT_NAME "nofp"
#define WL_VARIANT_TAG "@nofp"
#define WL_WORKLOAD(name) workload_##name##_nofp
#elif defined(WL_VARIANT_INLINE)
#define WL_VARIANT_NAME "inline"
#define WL_VARIANT_TAG "@inline"
#define WL_WORKLOAD(name) workload_##name##_inline
#else
#define WL_VARIANT_NAME NULL
#define WL_VARIANT_TAG ""
#define WL_WORKLOAD(name) workload_##name
#endif
/* A measured function: a distinct function of its own, or inlined into every caller in
 * the inline variant (its address, taken for .funcs, gets an out-of-line copy that only
 * names it). */
#if defined(WL_VARIANT_INLINE)
#define WL_SPLIT_FN static inline __attribute__((PLAT_INLINED_FN))
#else
#define WL_SPLIT_FN static __attribute__((PLAT_DISTINCT_FN))
#endif

#endif
