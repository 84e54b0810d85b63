/* calibrate_int.h - what calibrate.c (portable: rows, facts, the system call, the thread
 * CPU clock, the suspend primitives of thread_ctl.h) shares with calibrate_linux.c and
 * calibrate_darwin.c (the mechanisms only one platform has). Private to harness/ and its
 * test. */
#ifndef SB_CALIBRATE_INT_H
#define SB_CALIBRATE_INT_H

#include "core/run.h"

#define CAL_FAST_REPS 1000  /* system calls and clock reads */
#define CAL_RT_REPS 300     /* round trips */
#define CAL_GAP_NS 500000ull /* between round trips: let CPUs go idle, as between ticks */

struct cal_series {
	const char *name;
	double v[CAL_FAST_REPS];
	int n;
	char reason[SB_NAME_LEN];
};

/* Appends s's row for phase ("start" or "end") to h: n, p50, p99 and max of s->v, or NaN
 * and the reason when s has no samples. The start phase also sets the facts
 * <name>_p50_ns, _p99_ns and _max_ns; the end phase sets <name>_worst_p99_ns, the larger
 * p99 of both phases. Sorts s->v in place. */
void cal_add_row(struct sb_host *h, struct cal_series *s, const char *phase);

/* Sleeps ns (< 1 s). */
void cal_gap(uint64_t ns);

/* The platform's own mechanisms: futex round trips across and within a CPU, a signal to
 * a thread running on another CPU, the out-of-process stop (ptrace). Each series gets its
 * samples, or n = 0 and the reason. */
void calibrate_platform(struct cal_series *futex_cross, struct cal_series *futex_same,
			struct cal_series *signal_cross, struct cal_series *ptrace_interrupt);

#endif
