/* integrity.h - what the run's process checks about itself around the sampler (the
 * workload threads check themselves: workloads/integrity.h): its signal dispositions, its
 * file descriptors and its main thread's signal mask, snapshotted before the sampler
 * starts, after it started, after the workload and after it stopped (docs/metrics.md,
 * "Integrity"). */
#ifndef SB_HARNESS_INTEGRITY_H
#define SB_HARNESS_INTEGRITY_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#define SB_FD_SCAN 1024 /* descriptors looked at: 0 .. SB_FD_SCAN-1 */

/* Every signal's disposition; ok[s] is 0 where sigaction() refused to tell (the C
 * library's own signals). */
struct sb_sigsnap {
	struct sigaction sa[NSIG];
	unsigned char ok[NSIG];
};

/* Open descriptors and which of them close on exec. */
struct sb_fdsnap {
	uint64_t open[SB_FD_SCAN / 64];
	uint64_t cloexec[SB_FD_SCAN / 64];
};

enum { SB_SNAP_BEFORE, SB_SNAP_STARTED, SB_SNAP_WORKED, SB_SNAP_STOPPED, SB_SNAP_N };

/* The snapshots of one run (the child's, about 45 KB: static storage there). */
struct sb_integrity {
	struct sb_sigsnap sig[SB_SNAP_N];
	struct sb_fdsnap fd[SB_SNAP_N];
	sigset_t mask[SB_SNAP_N]; /* the calling (main) thread's */
	/* The program's own timer (Linux): WL_SELF_SIGNAL to the main thread every
	 * SB_TIMER_PERIOD_NS from before start to after the workload. */
	int timer_armed;
#ifdef __linux__
	timer_t timer;
#endif
	uint64_t timer_t0_ns, timer_n0, timer_ticks, timer_expected;
};

#define SB_TIMER_PERIOD_NS 50000000ull /* 20 Hz: a few wake-ups of the main thread */

/* What the snapshots say, per kind (docs/metrics.md). */
struct sb_integrity_counts {
	uint64_t sigaction; /* signals changed during the run, left changed after stop other
			     * than those start() changed, or the program's own taken over */
	uint64_t fd;        /* descriptors open after stop that were not before start and
			     * that a fork+exec would inherit (no close-on-exec) */
	uint64_t fd_kept;   /* close-on-exec ones open after stop that were not before start */
	uint64_t fd_inheritable; /* opened during the run without close-on-exec */
	uint64_t sigmask;   /* snapshots after start where the main thread's mask differed */
	uint64_t timer_ticks, timer_expected; /* its expiries the handler saw; its periods */
	uint64_t timer;     /* 1 when the program's timer fired less than half as often as
			     * its period promised over the workload (integrity_signal) */
};

/* Takes snapshot `which` (SB_SNAP_*) of the calling process and thread. */
void sb_integrity_snap(struct sb_integrity *in, int which);

/* Arms the program's own timer (call with the program's handler of WL_SELF_SIGNAL
 * installed, before the sampler starts); no timer where the system has none. */
void sb_integrity_timer_arm(struct sb_integrity *in);
/* Disarms it and keeps how often it fired (call after the workload, before stop). */
void sb_integrity_timer_disarm(struct sb_integrity *in);

/* Compares the four snapshots (all taken) and the timer's count. */
void sb_integrity_count(const struct sb_integrity *in, struct sb_integrity_counts *out);

/* 1 when a and b are the same disposition (handler, flags, mask). */
int sb_sigaction_same(const struct sigaction *a, const struct sigaction *b);

#endif
