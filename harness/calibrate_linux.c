/* calibrate_linux.c - this host's floors on Linux (calibrate.h).
 *
 * Each mechanism is timed with sb_now_ns() (CLOCK_MONOTONIC through the vDSO, ~25 ns)
 * around the primitive itself, a few hundred times:
 *   syscall            getppid(2)
 *   thread_cpu_clock   clock_gettime(CLOCK_THREAD_CPUTIME_ID), what mach reads per thread
 *   futex_cross        FUTEX_WAKE -> partner wakes -> FUTEX_WAKE back, threads on two CPUs
 *   futex_same         the same round trip with both threads on one CPU
 *   signal_cross       tgkill(2) to a thread spinning on another CPU until its handler runs
 *   rendezvous_stop    mach's rendezvous (thread_ctl.h) of one busy thread: request -> parked
 *   rendezvous_window  request -> released (the sampler's view: mach's suspend window)
 *   rendezvous         request -> parked -> released -> the thread runs its own code again
 *   ptrace_interrupt   PTRACE_INTERRUPT -> stop seen by waitpid -> PTRACE_CONT returned
 * The rendezvous uses the production code (spin budget included) with an empty walk and
 * the sampler's scheduling class, so it is the floor of the mach sampler on this host. */
#include "calibrate.h"

#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/metrics.h"
#include "../sampler/sample.h"
#include "../sampler/thread_ctl.h"
#include "../sampler/threads.h"

#define CAL_FAST_REPS 1000  /* syscalls and clock reads */
#define CAL_RT_REPS 300     /* round trips */
#define CAL_GAP_NS 500000ull /* between round trips: let CPUs go idle, as between ticks */
#define CAL_SIG_OFFSET 6    /* SIGRTMIN+6: not the rendezvous' +5 */
#define CAL_RT_PRIORITY 10  /* the mach sampler's SCHED_FIFO priority */

struct cal_series {
	const char *name;
	double v[CAL_FAST_REPS];
	int n;
	char reason[SB_NAME_LEN];
};

static void gap(uint64_t ns)
{
	struct timespec ts = { 0, (long)ns };
	nanosleep(&ts, NULL);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
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

static void time_syscall(struct cal_series *s)
{
	for (int i = 0; i < CAL_FAST_REPS; i++) {
		uint64_t t0 = sb_now_ns();
		syscall(SYS_getppid);
		s->v[s->n++] = (double)(sb_now_ns() - t0);
	}
}

static void time_thread_clock(struct cal_series *s)
{
	for (int i = 0; i < CAL_FAST_REPS; i++) {
		uint64_t t0 = sb_now_ns();
		(void)sb_thread_cpu_ns();
		s->v[s->n++] = (double)(sb_now_ns() - t0);
	}
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
		gap(CAL_GAP_NS / 5);
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
	_Atomic uint64_t alive_ns;
} sg;

static void cal_handler(int sig)
{
	(void)sig;
	atomic_store(&sg.handled_ns, sb_now_ns());
}

static void *spinner(void *arg)
{
	struct tc_park *park = arg;

	if (park)
		tc_attach_self(park, 1);
	atomic_store(&sg.tid, sb_gettid());
	while (!atomic_load_explicit(&sg.stop, memory_order_relaxed))
		atomic_store_explicit(&sg.alive_ns, sb_now_ns(), memory_order_relaxed);
	return NULL;
}

static int start_spinner(pthread_t *t, struct tc_park *park)
{
	atomic_store(&sg.stop, 0);
	atomic_store(&sg.tid, 0);
	if (pthread_create(t, NULL, spinner, park) != 0)
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
	if (sigaction(signo, &sa, &old) != 0 || start_spinner(&t, NULL) != 0) {
		snprintf(s->reason, sizeof(s->reason), "cannot install handler");
		return;
	}
	pin(t, cpu_b);
	pin(pthread_self(), cpu_a);
	for (int i = 0; i < CAL_RT_REPS; i++) {
		gap(CAL_GAP_NS / 5);
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

/* --- the rendezvous of thread_ctl.h, empty walk ------------------------------------- */

struct rdv_out {
	struct cal_series *stop, *window, *run;
};

static void *rendezvous_sampler(void *arg)
{
	struct rdv_out *o = arg;
	struct tc_park park;
	pthread_t t;

	struct sched_param sp = { .sched_priority = CAL_RT_PRIORITY };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* as mach, when permitted */
	memset(&park, 0, sizeof(park));
	if (start_spinner(&t, &park) != 0)
		return NULL;
	for (int i = 0; i < CAL_RT_REPS; i++) {
		struct tc_target g = { .park = &park, .tid = atomic_load(&sg.tid), .ident = 1 };
		struct sb_regs regs;
		uint64_t parked_ns = 0;

		gap(CAL_GAP_NS);
		int my_cpu = tc_begin_tick(0, 0);
		if (tc_request(&g) != TC_PENDING)
			continue;
		g.deadline_ns = g.req_ns + TC_TIMEOUT_NS;
		int r;
		while ((r = tc_poll(&g)) == TC_PENDING) {
			uint32_t bell = tc_doorbell();
			if (sb_now_ns() >= g.deadline_ns) {
				r = tc_cancel(&g);
				break;
			}
			int cpu = tc_park_cpu(&park);
			if (tc_poll(&g) == TC_PENDING)
				tc_wait_spin(bell, g.deadline_ns, cpu >= 0 && cpu != my_cpu);
		}
		if (r != TC_PARKED)
			continue;
		tc_get_state(&g, &regs, &parked_ns);
		tc_resume(&g);
		uint64_t released = sb_now_ns(), deadline = released + 100000000ull, alive;
		while ((alive = atomic_load(&sg.alive_ns)) <= released && sb_now_ns() < deadline)
			;
		o->stop->v[o->stop->n++] = (double)(parked_ns - g.req_ns);
		o->window->v[o->window->n++] = (double)(released - g.req_ns);
		o->run->v[o->run->n++] = (double)(alive - g.req_ns);
	}
	stop_spinner(t);
	return NULL;
}

static void time_rendezvous(struct rdv_out *o)
{
	pthread_t t;

	if (tc_init() != 0) {
		snprintf(o->run->reason, sizeof(o->run->reason), "cannot install handler");
		return;
	}
	if (pthread_create(&t, NULL, rendezvous_sampler, o) == 0)
		pthread_join(t, NULL);
	tc_fini();
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
		gap(CAL_GAP_NS / 5);
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

/* --- rows and facts ------------------------------------------------------------------- */

static void add_row(struct sb_host *h, struct cal_series *s, const char *phase)
{
	struct sb_calib_row *row;

	if (h->ncalib >= SB_CALIB_MAX)
		return;
	row = &h->calib[h->ncalib++];
	memset(row, 0, sizeof(*row));
	snprintf(row->name, sizeof(row->name), "%s", s->name);
	snprintf(row->phase, sizeof(row->phase), "%s", phase);
	snprintf(row->reason, sizeof(row->reason), "%s", s->reason);
	row->n = s->n;
	row->p50_ns = row->p99_ns = row->max_ns = NAN;
	if (s->n == 0) {
		if (!row->reason[0])
			snprintf(row->reason, sizeof(row->reason), "no measurement completed");
		return;
	}
	row->p50_ns = quantile(s->v, (size_t)s->n, 0.50);
	row->p99_ns = quantile(s->v, (size_t)s->n, 0.99);
	row->max_ns = quantile(s->v, (size_t)s->n, 1.0);
	if (strcmp(phase, "start") == 0) {
		char name[SB_NAME_LEN];
		snprintf(name, sizeof(name), "%s_p50_ns", s->name);
		host_fact_set(h, name, row->p50_ns);
		snprintf(name, sizeof(name), "%s_p99_ns", s->name);
		host_fact_set(h, name, row->p99_ns);
		snprintf(name, sizeof(name), "%s_max_ns", s->name);
		host_fact_set(h, name, row->max_ns);
	}
}

int calibrate_host(struct sb_host *h, const char *phase)
{
	enum { SYSCALL, CLOCK, FUTEX_X, FUTEX_S, SIGNAL, RDV_STOP, RDV_WIN, RDV, PTRACE, NSERIES };
	static const char *const names[NSERIES] = {
		"syscall",	   "thread_cpu_clock", "futex_cross",	    "futex_same",
		"signal_cross",	   "rendezvous_stop",  "rendezvous_window", "rendezvous",
		"ptrace_interrupt",
	};
	struct cal_series *s = calloc(NSERIES, sizeof(*s));
	cpu_set_t saved;
	int a, b, before = h->ncalib;

	if (!s)
		return 0;
	for (int i = 0; i < NSERIES; i++)
		s[i].name = names[i];
	int have_aff = sched_getaffinity(0, sizeof(saved), &saved) == 0;

	time_syscall(&s[SYSCALL]);
	time_thread_clock(&s[CLOCK]);
	if (two_cpus(&a, &b) == 0) {
		time_futex(&s[FUTEX_X], a, b);
		time_futex(&s[FUTEX_S], a, a);
		time_signal(&s[SIGNAL], a, b);
	} else {
		for (int i = FUTEX_X; i <= SIGNAL; i++)
			if (i != FUTEX_S)
				snprintf(s[i].reason, sizeof(s[i].reason), "one CPU");
		time_futex(&s[FUTEX_S], 0, 0);
	}
	if (have_aff)
		sched_setaffinity(0, sizeof(saved), &saved);
	/* The spin budget comes from the futex floor, so the rendezvous is timed with the
	 * budget the samplers will use. */
	if (strcmp(phase, "start") == 0 && s[FUTEX_X].n > 0) {
		struct sb_host tmp;
		memset(&tmp, 0, sizeof(tmp));
		host_fact_set(&tmp, "futex_cross_p50_ns", quantile(s[FUTEX_X].v, (size_t)s[FUTEX_X].n, 0.5));
		tc_set_spin_ns(calibrate_spin_budget(&tmp));
	}
	struct rdv_out o = { &s[RDV_STOP], &s[RDV_WIN], &s[RDV] };
	time_rendezvous(&o);
	time_ptrace(&s[PTRACE]);

	for (int i = 0; i < NSERIES; i++)
		add_row(h, &s[i], phase);
	if (strcmp(phase, "start") == 0)
		host_fact_set(h, "spin_budget_ns", (double)tc_spin_ns());
	free(s);
	return h->ncalib - before;
}

uint64_t calibrate_spin_budget(const struct sb_host *h)
{
	double f = host_fact(h, "futex_cross_p50_ns");

	if (!(f > 0))
		return TC_SPIN_DEFAULT_NS;
	double b = 2.0 * f;
	if (b < 10000.0)
		b = 10000.0;
	if (b > 150000.0)
		b = 150000.0;
	return (uint64_t)b;
}
