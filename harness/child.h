/* child.h - one child process under the harness's control, for `run`/`bench` (runner.c:
 * sampler + workload in a forked child) and `exec` (cmd_exec.c: a foreign program).
 *
 * The child dies with the harness (plat_die_with_parent: a sampler's stopped threads, or
 * a program in the middle of a run, never outlive it), optionally leads a process group
 * of its own (so a kill reaches the helper processes it forked too, e.g. the ptrace
 * tracer), and is waited for with wait4 (status and rusage) under an optional deadline
 * and interrupt flag, either of which kills it. */
#ifndef SB_CHILD_H
#define SB_CHILD_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "core/run.h"
#include "core/sample.h"

struct child {
	pid_t pid;     /* -1 when none */
	int own_group; /* it leads process group pid: kills go to the group */
};

struct child_wait_opts {
	double timeout_s;                /* kill after this long; <= 0: no deadline */
	const volatile int *interrupted; /* kill when *interrupted is set; NULL: never */
	uint64_t poll_ns;                /* between two looks at the child */
	/* Optional: called at every look while the child runs (polls counts from 0). */
	void (*poll)(void *arg, uint64_t polls);
	void *arg;
	/* Call poll once more when the child has exited, before it is reaped: its
	 * /proc/PID/stat and its main thread's files hold their final values then. */
	int poll_exited;
};

struct child_exit {
	int status;       /* wait status */
	struct rusage ru; /* of the child (and the children it reaped) */
	int killed;       /* the deadline passed or *interrupted was set: killed */
	int interrupted;  /* killed because of *interrupted */
};

/* Forks a child that runs body(arg), which must not return (it _exits or execs). The
 * child first arranges to die with this process and, with own_group, makes a process
 * group of its own (set on both sides of the fork, so a kill right after it reaches the
 * group). Returns 0 in the parent with c filled, -1 with errno when fork failed. */
int child_start(struct child *c, int own_group, void (*body)(void *arg), void *arg);

/* SIGKILL to the child (its group when it leads one). Does not reap it. */
void child_kill(const struct child *c);

/* Waits for the child, looking every opts->poll_ns: kills it once when the deadline
 * passes or *interrupted is set, and goes on until it is reaped. Returns 0 with e filled
 * and c->pid = -1, or -1 with errno when wait4 failed (e holds what is known: status 0,
 * no rusage; the child is not reaped). */
int child_wait(struct child *c, const struct child_wait_opts *opts, struct child_exit *e);

/* Moves sink's samples and frames into r (r->samples, r->frames: malloc'd, r owns
 * them). A sample whose frames were not all reserved inside the frame capacity is
 * dropped. Returns 0, or -1 when out of memory. */
int child_collect_sink(struct sb_run *r, const struct sb_sink *sink);

/* Appends the stats child_utime_ns and child_stime_ns from ru (run_add_stat). */
void child_add_rusage_stats(struct sb_run *r, const struct rusage *ru);

#endif
