/* exec_ext.h - what `sampbench exec` does from outside the program: perf_event_open on
 * its pid, per-thread CPU truth from /proc, and symbolization from a copy of its maps. */
#ifndef SB_EXEC_EXT_H
#define SB_EXEC_EXT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "analysis/symbolize.h"
#include "core/run.h"
#include "core/sample.h"

/* ---- perf from outside ---- */

struct exec_perf;

/* Opens task-clock sampling events on pid, one per CPU, inherited by the threads it
 * creates and enabled when it calls execve (so the child must open them before it
 * execs). Returns NULL with one line in err. */
struct exec_perf *exec_perf_open(pid_t pid, double hz, char *err, size_t errlen);
/* Moves every record in the rings into sink (samples of pid only). */
void exec_perf_drain(struct exec_perf *p, struct sb_sink *sink);
/* Writes up to max counters (static names) into names/values, returns how many. */
int exec_perf_stats(const struct exec_perf *p, const char **names, double *values, int max);
void exec_perf_close(struct exec_perf *p);

/* ---- per-thread CPU truth: /proc polls and the agent's thread rows ---- */

struct exec_tid {
	pid_t tid;
	int helper;          /* a sampler thread, not the program's */
	int exact;           /* cpu_ns is the thread's own clock at its end (agent row) */
	int fd;              /* /proc/PID/task/TID/schedstat (or stat), -1 once it is gone */
	uint64_t cpu_ns;     /* last value read */
	uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC when first and last seen alive */
	/* Bounds of its life, to match an agent row: born after after_ns (the start of the
	 * last poll that listed the threads without it), dead by gone_ns (0: not seen gone) */
	uint64_t after_ns, gone_ns;
	int comm_fd;         /* /proc/PID/task/TID/comm, -1 once it is gone */
	/* its name: at the last poll that read it, or its agent row's (read at its end) */
	char name[SB_THREAD_NAME_LEN];
};

struct exec_truth {
	pid_t pid;
	int from_stat;       /* schedstat unreadable: utime+stime in clock ticks */
	int stat_fd;         /* /proc/PID/stat: the children's CPU */
	size_t n, cap;       /* entries in order of appearance; a reused tid is a new entry */
	uint64_t polls;
	uint64_t listed_ns;  /* start of the last poll that listed the threads, 0: none yet */
	uint64_t children_ns; /* cutime+cstime last read: children waited for (ticks) */
	struct exec_tid *t;
};

/* Starts following pid's threads. Returns 0 or -1. */
int exec_truth_init(struct exec_truth *tr, pid_t pid);
/* Reads every live thread's CPU time (sum_exec_runtime) and name (comm) now; new threads
 * are appended. */
void exec_truth_poll(struct exec_truth *tr);
/* The latest entry of tid, appended (cpu 0) when it was never seen; NULL when out of
 * memory. */
struct exec_tid *exec_truth_tid(struct exec_truth *tr, pid_t tid);
/* Merges one agent thread row (core/exec_shm.h): the entry of the same thread (same tid,
 * lives that overlap) or a new one takes the row's times, and its name when it has one;
 * an ended row's CPU is exact.
 * Returns 0 or -1 (out of memory). */
struct sb_exec_thread;
int exec_truth_row(struct exec_truth *tr, const struct sb_exec_thread *row);
/* Closes its files and frees its entries; a zeroed truth never started is fine too. */
void exec_truth_close(struct exec_truth *tr);

/* ---- symbolization ---- */

/* Reads /proc/PID/maps into buf (at most len bytes). Returns bytes read, 0 on failure. */
size_t exec_read_maps(pid_t pid, char *buf, size_t len);
/* Symbolizes every distinct PC of frames[0..n) against a /proc/PID/maps text (libdw
 * opens each mapped file by path). Unknown PCs get hex names. *syms is malloc'd, sorted
 * by pc; *inl (malloc'd, NULL when none) and *ninl get their inline chains, looked up
 * as inline_lookup_pc(leaves, nleaves, pc) says (none in the vdso). Returns 0 or -1 (out
 * of memory). */
int exec_symbolize(const char *maps, size_t mapslen, const uint64_t *frames, size_t n,
		   const uint64_t *leaves, size_t nleaves, struct sb_symbol **syms,
		   size_t *nsyms, struct sb_inline_frame **inl, size_t *ninl);

#endif
