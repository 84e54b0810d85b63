/* extproc.c - the process of an out-of-process sampler (extproc.h). */
#include "sampler/extproc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/sample.h"
#include "platform/platform.h"
#include "sampler/threads.h"

void extproc_register_self(struct extproc_regs *regs, int slot)
{
	uint32_t i = atomic_fetch_add(&regs->n, 1);
	if (i >= EXTPROC_MAX_REG) {
		atomic_fetch_add_explicit(&regs->overflow, 1, memory_order_relaxed);
		return;
	}
	struct extproc_reg *r = &regs->reg[i];
	r->tid = sb_gettid();
	r->slot = slot;
	r->lo = sb_self_bounds.lo;
	r->hi = sb_self_bounds.hi;
	r->last_cpu_ns = 0; /* a thread's CPU clock starts at 0, like the workload's truth */
	atomic_store_explicit(&r->ready, 1, memory_order_release);
}

int extproc_lookup(struct extproc_regs *regs, int32_t tid)
{
	uint32_t n = atomic_load_explicit(&regs->n, memory_order_acquire);

	if (n > EXTPROC_MAX_REG)
		n = EXTPROC_MAX_REG;
	/* Newest first: a tid reused by churn names the latest registration. */
	for (uint32_t i = n; i-- > 0;)
		if (atomic_load_explicit(&regs->reg[i].ready, memory_order_acquire) &&
		    regs->reg[i].tid == tid)
			return (int)i;
	return -1;
}

int extproc_start(struct extproc *p, extproc_main_fn main, void *arg, int timeout_ms)
{
	int ready[2] = { -1, -1 }, stopp[2] = { -1, -1 }, rc = -1, e = 0;

	p->pid = -1;
	p->stop_wr = -1;
	p->cpu_ns = NAN;
	p->exit_status = -1;
	if (plat_pipe_cloexec(ready) != 0 || plat_pipe_cloexec(stopp) != 0) {
		e = errno;
		goto cleanup;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		e = errno;
		goto cleanup;
	}
	if (pid == 0) {
		close(ready[0]);
		close(stopp[1]);
		main(arg, ready[1], stopp[0]);
		_exit(127); /* main must not return */
	}
	close(ready[1]);
	close(stopp[0]);
	ready[1] = stopp[0] = -1;

	int status = ETIMEDOUT, n;
	struct pollfd pf = { ready[0], POLLIN, 0 };
	do
		n = poll(&pf, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n > 0 && read(ready[0], &status, sizeof(status)) != (ssize_t)sizeof(status))
		status = EPIPE; /* it died before reporting */
	if (status != 0) {
		e = status;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto cleanup;
	}
	p->pid = pid;
	p->stop_wr = stopp[1];
	stopp[1] = -1;
	rc = 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (stopp[i] >= 0)
			close(stopp[i]);
	}
	if (rc != 0)
		errno = e;
	return rc;
}

int extproc_stop(struct extproc *p, int timeout_ms)
{
	if (p->pid < 0)
		return 0;
	close(p->stop_wr);
	p->stop_wr = -1;

	int status = 0, killed = 0;
	struct rusage ru;
	uint64_t t0 = sb_now_ns();
	for (;;) {
		pid_t w = wait4(p->pid, &status, WNOHANG, &ru);
		if (w == p->pid)
			break;
		if (w < 0 && errno != EINTR) {
			memset(&ru, 0, sizeof(ru));
			break;
		}
		if (!killed && sb_now_ns() - t0 > (uint64_t)timeout_ms * 1000000ull) {
			kill(p->pid, SIGKILL);
			killed = 1;
		}
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	p->cpu_ns = (double)ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3 +
		    (double)ru.ru_stime.tv_sec * 1e9 + ru.ru_stime.tv_usec * 1e3;
	p->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	p->pid = -1;
	return killed ? 1 : p->exit_status != 0 ? 2 : 0;
}
