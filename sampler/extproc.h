/* extproc.h - the process of an out-of-process sampler (ptrace on Linux, mach-task on
 * Darwin). It is forked from the sampled process, reports once that it is ready (or why it
 * cannot sample), samples until asked to stop, and is reaped with its CPU time and exit
 * status. Whatever the sampler does to the sampled threads, and how it undoes it when the
 * process dies, stays in the sampler. */
#ifndef SB_EXTPROC_H
#define SB_EXTPROC_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define EXTPROC_MAX_REG 4096 /* registrations per run (churn beyond is counted) */

/* One workload thread as its thread_start hook announced it. */
struct extproc_reg {
	_Atomic int ready;    /* published last */
	int32_t tid;          /* sb_gettid() */
	int32_t slot;
	uint64_t lo, hi;      /* its stack bounds */
	uint64_t last_cpu_ns; /* the sampler process's (mach-task: CPU time at the previous
			       * sample); 0 at registration */
};

/* The workload threads, in a MAP_SHARED mapping the sampler creates before the fork: the
 * sampled process's hooks append, the sampler process looks up. */
struct extproc_regs {
	_Atomic uint32_t n;        /* appended so far, overflow included */
	_Atomic uint64_t overflow; /* registrations beyond EXTPROC_MAX_REG, lost */
	struct extproc_reg reg[EXTPROC_MAX_REG];
};

/* From a sampler's thread_start hook, in the sampled process: publishes the calling
 * thread's tid, slot and stack bounds. Lock-free; counts an overflow when full. */
void extproc_register_self(struct extproc_regs *regs, int slot);

/* In the sampler process: the index in regs->reg of tid's latest registration (tids are
 * recycled under churn), or -1. */
int extproc_lookup(struct extproc_regs *regs, int32_t tid);

struct extproc {
	pid_t pid;       /* -1 when not running */
	int stop_wr;     /* closing it asks the process to finish */
	double cpu_ns;   /* its user + system CPU time; NaN until extproc_stop() */
	int exit_status; /* its exit status or 128 + signal; -1 until extproc_stop() */
};

/* The process's main: writes one int on ready_wr (0: sampling; else an errno saying why
 * not) and closes it, then samples until stop_rd reaches EOF. Must not return. */
typedef void (*extproc_main_fn)(void *arg, int ready_wr, int stop_rd);

/* Forks a process running main(arg, ...) and waits up to timeout_ms for its report.
 * Returns 0 with p running, or -1 with errno (the reported errno; EPIPE when it died
 * before reporting; ETIMEDOUT), the process then killed and reaped. */
int extproc_start(struct extproc *p, extproc_main_fn main, void *arg, int timeout_ms);

/* Asks p to finish (EOF on its stop pipe), waits up to timeout_ms, then kills it; reaps it
 * and records cpu_ns and exit_status. Returns 0 when it exited 0 by itself, 1 when it had
 * to be killed, 2 when it exited otherwise; 0 when p was not running. */
int extproc_stop(struct extproc *p, int timeout_ms);

#endif
