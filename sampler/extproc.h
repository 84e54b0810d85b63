/* extproc.h - the process of an out-of-process sampler (ptrace on Linux, mach-task on
 * Darwin). It is forked from the sampled process, reports once that it is ready (or why it
 * cannot sample), samples until asked to stop, and is reaped with its CPU time and exit
 * status. Whatever the sampler does to the sampled threads, and how it undoes it when the
 * process dies, stays in the sampler. */
#ifndef SB_EXTPROC_H
#define SB_EXTPROC_H

#include <sys/types.h>

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
