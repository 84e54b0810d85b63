/* child.c - fork, death signal, process group, deadline, wait4, collect (child.h). */
#include "harness/child.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/sampler.h"

#include "platform/platform.h"

_Static_assert(SB_RUN_MAX_STATS >= SB_MAX_STATS + 40, "room for the harness's own stats");

int child_start(struct child *c, int own_group, void (*body)(void *arg), void *arg)
{
	pid_t parent = getpid();

	c->pid = -1;
	c->own_group = own_group;
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* No orphan keeps running if the harness dies (Linux); a harness that died
		 * before the death signal was armed cannot send it any more. */
		if (plat_die_with_parent() == 0 && getppid() != parent)
			_exit(127);
		if (own_group)
			setpgid(0, 0);
		body(arg);
		_exit(127); /* body must not return */
	}
	/* Also here: a kill of the group right after fork must not miss the child. Fails
	 * harmlessly when the child got there first. */
	if (own_group)
		setpgid(pid, pid);
	c->pid = pid;
	return 0;
}

void child_kill(const struct child *c)
{
	if (c->pid <= 0)
		return;
	/* The group only while the child is unreaped: its pid cannot name another group then. */
	if (!c->own_group || kill(-c->pid, SIGKILL) != 0)
		kill(c->pid, SIGKILL);
}

int child_wait(struct child *c, const struct child_wait_opts *opts, struct child_exit *e)
{
	uint64_t deadline = opts->timeout_s > 0 ? sb_now_ns() + (uint64_t)(opts->timeout_s * 1e9)
						: UINT64_MAX;
	struct timespec pause = { (time_t)(opts->poll_ns / 1000000000u),
				  (long)(opts->poll_ns % 1000000000u) };

	memset(e, 0, sizeof(*e));
	for (uint64_t polls = 0;; polls++) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (opts->poll && opts->poll_exited &&
		    waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == c->pid)
			opts->poll(opts->arg, polls); /* a zombie: the next wait4 reaps it */
		pid_t w = wait4(c->pid, &e->status, WNOHANG, &e->ru);
		if (w == c->pid)
			break;
		if (w < 0 && errno != EINTR) {
			int err = errno;
			e->status = 0;
			memset(&e->ru, 0, sizeof(e->ru));
			errno = err;
			return -1;
		}
		int interrupted = opts->interrupted && *opts->interrupted;
		if (!e->killed && (interrupted || sb_now_ns() > deadline)) {
			e->interrupted = interrupted;
			child_kill(c);
			e->killed = 1;
		}
		if (opts->poll)
			opts->poll(opts->arg, polls);
		nanosleep(&pause, NULL);
	}
	c->pid = -1;
	return 0;
}

int child_collect_sink(struct sb_run *r, const struct sb_sink *sink)
{
	size_t n = sink_count(sink);
	size_t nf = atomic_load(&sink->nframes);

	if (nf > sink->frame_cap)
		nf = sink->frame_cap;
	r->samples = malloc((n + 1) * sizeof(*r->samples));
	r->frames = malloc((nf + 1) * sizeof(*r->frames));
	if (!r->samples || !r->frames)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct sb_sample *s = &sink->samples[i];
		if (s->frame_offset + s->depth <= nf)
			r->samples[r->nsamples++] = *s;
	}
	memcpy(r->frames, sink->frames, nf * sizeof(*r->frames));
	r->nframes = nf;
	return 0;
}

void child_add_rusage_stats(struct sb_run *r, const struct rusage *ru)
{
	run_add_stat(r, "child_utime_ns",
		     (double)ru->ru_utime.tv_sec * 1e9 + ru->ru_utime.tv_usec * 1e3);
	run_add_stat(r, "child_stime_ns",
		     (double)ru->ru_stime.tv_sec * 1e9 + ru->ru_stime.tv_usec * 1e3);
}
