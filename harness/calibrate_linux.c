/* calibrate_linux.c - the floors only Linux has (calibrate_int.h): futex round trips
 * across and within a CPU, a signal to a thread running on another CPU, and the ptrace
 * interrupt round trip. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sample.h"
#include "harness/calibrate_int.h"
#include "sampler/threads.h"

#define CAL_SIG_OFFSET 6    /* SIGRTMIN+6: not the rendezvous' +5 */

/* Shared (no FUTEX_PRIVATE_FLAG), as the rendezvous' own futexes (thread_ctl_linux.c). */
static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* The first two CPUs this process may run on; -1 when it has only one. */
static int two_cpus(int *a, int *b)
{
	cpu_set_t set;

	*a = *b = -1;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (*a < 0)
			*a = c;
		else {
			*b = c;
			return 0;
		}
	}
	return -1;
}

static int pin(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(t, sizeof(set), &set);
}

/* --- futex ping-pong ------------------------------------------------------------------ */

static struct {
	_Atomic uint32_t ping, pong;
	_Atomic int stop;
} fx;

static void *futex_partner(void *arg)
{
	(void)arg;
	for (uint32_t seen = 0;;) {
		uint32_t v = atomic_load(&fx.ping);
		if (atomic_load(&fx.stop))
			return NULL;
		if (v == seen) {
			futex(&fx.ping, FUTEX_WAIT, v);
			continue;
		}
		seen = v;
		atomic_store(&fx.pong, v);
		futex(&fx.pong, FUTEX_WAKE, 1);
	}
}

/* Round trips with the partner on cpu_b and us on cpu_a (same CPU when equal). */
static void time_futex(struct cal_series *s, int cpu_a, int cpu_b)
{
	pthread_t t;

	memset(&fx, 0, sizeof(fx));
	if (pthread_create(&t, NULL, futex_partner, NULL) != 0) {
		snprintf(s->reason, sizeof(s->reason), "pthread_create failed");
		return;
	}
	pin(t, cpu_b);
	pin(pthread_self(), cpu_a);
	for (uint32_t i = 1; i <= CAL_RT_REPS; i++) {
		cal_gap(CAL_GAP_NS / 5);
		uint64_t t0 = sb_now_ns();
		atomic_store(&fx.ping, i);
		futex(&fx.ping, FUTEX_WAKE, 1);
		uint32_t v;
		while ((v = atomic_load(&fx.pong)) != i)
			futex(&fx.pong, FUTEX_WAIT, v);
		s->v[s->n++] = (double)(sb_now_ns() - t0);
	}
	atomic_store(&fx.stop, 1);
	atomic_fetch_add(&fx.ping, 1);
	futex(&fx.ping, FUTEX_WAKE, 1);
	pthread_join(t, NULL);
}

/* --- a signal to a running thread --------------------------------------------------- */

static struct {
	_Atomic uint64_t handled_ns;
	_Atomic int stop;
	_Atomic pid_t tid;
} sg;

static void cal_handler(int sig)
{
	(void)sig;
	atomic_store(&sg.handled_ns, sb_now_ns());
}

static void *spinner(void *arg)
{
	(void)arg;
	atomic_store(&sg.tid, sb_gettid());
	while (!atomic_load_explicit(&sg.stop, memory_order_relaxed))
		;
	return NULL;
}

static int start_spinner(pthread_t *t)
{
	atomic_store(&sg.stop, 0);
	atomic_store(&sg.tid, 0);
	if (pthread_create(t, NULL, spinner, NULL) != 0)
		return -1;
	while (atomic_load(&sg.tid) == 0)
		sched_yield();
	return 0;
}

static void stop_spinner(pthread_t t)
{
	atomic_store(&sg.stop, 1);
	pthread_join(t, NULL);
}

static void time_signal(struct cal_series *s, int cpu_a, int cpu_b)
{
	struct sigaction sa, old;
	pthread_t t;
	int signo = SIGRTMIN + CAL_SIG_OFFSET;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cal_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, &old) != 0 || start_spinner(&t) != 0) {
		snprintf(s->reason, sizeof(s->reason), "cannot install handler");
		return;
	}
	pin(t, cpu_b);
	pin(pthread_self(), cpu_a);
	for (int i = 0; i < CAL_RT_REPS; i++) {
		cal_gap(CAL_GAP_NS / 5);
		atomic_store(&sg.handled_ns, 0);
		uint64_t t0 = sb_now_ns(), deadline = t0 + 100000000ull;
		if (syscall(SYS_tgkill, getpid(), atomic_load(&sg.tid), signo) != 0)
			break;
		uint64_t h;
		while ((h = atomic_load(&sg.handled_ns)) == 0 && sb_now_ns() < deadline)
			;
		if (h)
			s->v[s->n++] = (double)(h - t0);
	}
	stop_spinner(t);
	sigaction(signo, &old, NULL);
}

/* --- ptrace --------------------------------------------------------------------------- */

static void time_ptrace(struct cal_series *s)
{
	pid_t child = fork();
	int status;

	if (child < 0) {
		snprintf(s->reason, sizeof(s->reason), "fork failed");
		return;
	}
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (volatile unsigned long x = 0;; x++)
			;
	}
	if (ptrace(PTRACE_SEIZE, child, NULL, NULL) != 0) {
		snprintf(s->reason, sizeof(s->reason), "ptrace not permitted (%s)", strerror(errno));
		goto cleanup;
	}
	for (int i = 0; i < CAL_RT_REPS; i++) {
		cal_gap(CAL_GAP_NS / 5);
		uint64_t t0 = sb_now_ns();
		if (ptrace(PTRACE_INTERRUPT, child, NULL, NULL) != 0 ||
		    waitpid(child, &status, __WALL) != child || !WIFSTOPPED(status) ||
		    ptrace(PTRACE_CONT, child, NULL, NULL) != 0)
			break;
		s->v[s->n++] = (double)(sb_now_ns() - t0);
	}
cleanup:
	kill(child, SIGKILL);
	waitpid(child, &status, __WALL);
}

void calibrate_platform(struct cal_series *futex_cross, struct cal_series *futex_same,
			struct cal_series *signal_cross, struct cal_series *ptrace_interrupt)
{
	cpu_set_t saved;
	int a, b;
	int have_aff = sched_getaffinity(0, sizeof(saved), &saved) == 0;

	if (two_cpus(&a, &b) == 0) {
		time_futex(futex_cross, a, b);
		time_futex(futex_same, a, a);
		time_signal(signal_cross, a, b);
	} else {
		snprintf(futex_cross->reason, sizeof(futex_cross->reason), "one CPU");
		snprintf(signal_cross->reason, sizeof(signal_cross->reason), "one CPU");
		time_futex(futex_same, 0, 0);
	}
	if (have_aff)
		sched_setaffinity(0, sizeof(saved), &saved);
	time_ptrace(ptrace_interrupt);
}
