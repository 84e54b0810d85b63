/* calibrate.c - this host's floors (calibrate.h): the portable part. The system call,
 * the thread CPU clock and the suspend primitives of thread_ctl.h (the Linux signal
 * rendezvous, Darwin's thread_suspend) are timed here; calibrate_linux.c and
 * calibrate_darwin.c time what only their platform has. Each mechanism is timed with
 * sb_now_ns() around the primitive itself, a few hundred times:
 *   syscall            getppid(2)
 *   thread_cpu_clock   clock_gettime(CLOCK_THREAD_CPUTIME_ID), what mach reads per thread
 *   futex_cross        FUTEX_WAKE -> partner wakes -> FUTEX_WAKE back, threads on two CPUs
 *   futex_same         the same round trip with both threads on one CPU
 *   signal_cross       tgkill(2) to a thread spinning on another CPU until its handler runs
 *   rendezvous_stop    mach's stop (thread_ctl.h) of one busy thread: request -> parked
 *   rendezvous_window  request -> released (the sampler's view: mach's suspend window)
 *   rendezvous         request -> parked -> released -> the thread runs its own code again
 *   rendezvous_busy    a tick on a busy machine: a spinning thread per CPU (up to 3), all
 *                      requested at once, each released after it parks: request -> released
 *   rendezvous_busy_observed  the same tick from each spinning thread's side: the longest
 *                      gap between two reads of its clock in the tick, wake-up after the
 *                      release and the wait for its CPU included (window_observed's floor)
 *   ptrace_interrupt   PTRACE_INTERRUPT -> stop seen by waitpid -> PTRACE_CONT returned
 * The rendezvous uses the production code (spin budget included) with an empty walk and
 * the sampler's scheduling class, so it is the floor of the mach sampler on this host. */
#include "harness/calibrate.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "core/sample.h"
#include "harness/calibrate_int.h"
#include "sampler/thread_ctl.h"
#include "sampler/threads.h"

#define CAL_RT_PRIORITY 10  /* the mach sampler's SCHED_FIFO priority */

void cal_gap(uint64_t ns)
{
	struct timespec ts = { 0, (long)ns };
	nanosleep(&ts, NULL);
}

static void time_syscall(struct cal_series *s)
{
	for (int i = 0; i < CAL_FAST_REPS; i++) {
		uint64_t t0 = sb_now_ns();
		(void)getppid();
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

/* A busy thread for the rendezvous: bound to park, publishes that it runs. */
static struct {
	_Atomic int stop;
	_Atomic pid_t tid;
	_Atomic uint64_t alive_ns;
} busy;

static void *spinner(void *arg)
{
	tc_attach_self(arg, 1);
	atomic_store(&busy.tid, sb_gettid());
	while (!atomic_load_explicit(&busy.stop, memory_order_relaxed))
		atomic_store_explicit(&busy.alive_ns, sb_now_ns(), memory_order_relaxed);
	return NULL;
}

/* --- the rendezvous of thread_ctl.h, empty walk ------------------------------------- */

struct rdv_out {
	struct cal_series *stop, *window, *run, *busy, *busy_observed;
};

static void *rendezvous_sampler(void *arg)
{
	struct rdv_out *o = arg;
	struct tc_park park;
	pthread_t t;

	memset(&park, 0, sizeof(park));
	atomic_store(&busy.stop, 0);
	atomic_store(&busy.tid, 0);
	/* The busy thread first, at the normal policy like a workload thread (threads inherit
	 * their creator's policy); then the sampler's SCHED_FIFO, as mach, when permitted. */
	if (pthread_create(&t, NULL, spinner, &park) != 0)
		return NULL;
	while (atomic_load(&busy.tid) == 0)
		sched_yield();
	struct sched_param sp = { .sched_priority = CAL_RT_PRIORITY };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	for (int i = 0; i < CAL_RT_REPS; i++) {
		struct tc_target g = { .park = &park, .tid = atomic_load(&busy.tid), .ident = 1 };
		struct sb_regs regs;
		uint64_t parked_ns = 0;

		cal_gap(CAL_GAP_NS);
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
		while ((alive = atomic_load(&busy.alive_ns)) <= released && sb_now_ns() < deadline)
			;
		o->stop->v[o->stop->n++] = (double)(parked_ns - g.req_ns);
		o->window->v[o->window->n++] = (double)(released - g.req_ns);
		/* a spinner that did not run again within the 100 ms counts as the time waited
		 * (a lower bound), never as its last clock read before the request */
		o->run->v[o->run->n++] = (double)((alive > released ? alive : sb_now_ns()) - g.req_ns);
	}
	atomic_store(&busy.stop, 1);
	pthread_join(t, NULL);
	return NULL;
}

/* The rendezvous of one tick on a busy machine: a spinning thread per CPU (so one shares
 * the sampler's CPU, as with `threads <= cores` busy workloads), all requested at once
 * and each released right after it parks, as mach's early policy does, with an empty walk.
 * The floor of mach's suspend window on a busy machine: the sampler has to leave its CPU
 * for the co-located target to park. */
#define CAL_BUSY_MAX 3
struct bspin {
	struct tc_park park;
	_Atomic pid_t tid;
	_Atomic uint64_t alive_ns; /* its last clock read */
	_Atomic uint64_t gap_ns;   /* its longest gap since the sampler zeroed it */
	pthread_t t;
};
static _Atomic int bstop;

/* Spins reading its clock, as a workload thread's progress clock does, and keeps its
 * longest gap between two reads: the pause it lived through. */
static void *bspinner(void *arg)
{
	struct bspin *b = arg;
	uint64_t last = sb_now_ns();

	tc_attach_self(&b->park, 1);
	atomic_store(&b->tid, sb_gettid());
	while (!atomic_load_explicit(&bstop, memory_order_relaxed)) {
		uint64_t now = sb_now_ns();
		if (now - last > atomic_load_explicit(&b->gap_ns, memory_order_relaxed))
			atomic_store_explicit(&b->gap_ns, now - last, memory_order_relaxed);
		atomic_store_explicit(&b->alive_ns, now, memory_order_release);
		last = now;
	}
	return NULL;
}

/* After a tick: waits (up to 100 ms) until each spinner ran again after released_ns,
 * then records the longest gap each saw. */
static void record_observed(struct cal_series *obs, struct bspin *b, int nb,
			    const uint64_t *released_ns)
{
	uint64_t deadline = sb_now_ns() + 100000000ull;

	for (int i = 0; i < nb; i++) {
		if (!released_ns[i])
			continue;
		/* sleeping, not spinning: the sampler is SCHED_FIFO and would keep the spinner
		 * that shares its CPU from running */
		while (atomic_load_explicit(&b[i].alive_ns, memory_order_acquire) <= released_ns[i]) {
			if (sb_now_ns() > deadline)
				return;
			cal_gap(20000);
		}
		obs->v[obs->n++] = (double)atomic_load(&b[i].gap_ns);
	}
}

static void *rendezvous_busy_sampler(void *arg)
{
	struct rdv_out *o = arg;
	struct cal_series *s = o->busy;
	struct bspin b[CAL_BUSY_MAX];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nb = ncpu < 1 ? 1 : ncpu > CAL_BUSY_MAX ? CAL_BUSY_MAX : (int)ncpu, started = 0;

	memset(b, 0, sizeof(b));
	atomic_store(&bstop, 0);
	for (; started < nb; started++)
		if (pthread_create(&b[started].t, NULL, bspinner, &b[started]) != 0)
			break;
	for (int i = 0; i < started; i++)
		while (atomic_load(&b[i].tid) == 0)
			sched_yield();
	struct sched_param sp = { .sched_priority = CAL_RT_PRIORITY };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* after: they stay normal */
	for (int rep = 0; started == nb && rep < CAL_RT_REPS && s->n + nb <= CAL_FAST_REPS; rep++) {
		struct tc_target g[CAL_BUSY_MAX];
		int pending[CAL_BUSY_MAX], npend = 0;
		uint64_t released[CAL_BUSY_MAX] = { 0 };

		cal_gap(CAL_GAP_NS);
		for (int i = 0; i < nb; i++)
			atomic_store(&b[i].gap_ns, 0);
		tc_begin_tick(0, 0);
		for (int i = 0; i < nb; i++) {
			g[i] = (struct tc_target){ .park = &b[i].park, .tid = atomic_load(&b[i].tid),
						   .ident = 1 };
			if (tc_request(&g[i]) == TC_PENDING) {
				g[i].deadline_ns = g[i].req_ns + TC_TIMEOUT_NS;
				pending[npend++] = i;
			}
		}
		while (npend > 0) {
			uint32_t bell = tc_doorbell();
			uint64_t now = sb_now_ns(), next = UINT64_MAX;
			for (int k = 0; k < npend;) {
				struct tc_target *t = &g[pending[k]];
				int r = tc_poll(t);
				if (r == TC_PENDING && now >= t->deadline_ns)
					r = tc_cancel(t);
				if (r == TC_PARKED) {
					struct sb_regs regs;
					uint64_t parked_ns;
					tc_get_state(t, &regs, &parked_ns);
					tc_resume(t);
					released[pending[k]] = sb_now_ns();
					s->v[s->n++] = (double)(released[pending[k]] - t->req_ns);
				}
				if (r != TC_PENDING) {
					pending[k] = pending[--npend];
					continue;
				}
				if (t->deadline_ns < next)
					next = t->deadline_ns;
				k++;
			}
			if (npend > 0)
				tc_wait(bell, next);
		}
		if (o->busy_observed)
			record_observed(o->busy_observed, b, nb, released);
	}
	atomic_store(&bstop, 1);
	for (int i = 0; i < started; i++)
		pthread_join(b[i].t, NULL);
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
	if (o->busy && pthread_create(&t, NULL, rendezvous_busy_sampler, o) == 0)
		pthread_join(t, NULL);
	tc_fini();
}

/* 2 x the cross-CPU futex round trip's p50, within [10 us, 150 us]; 50 us unknown. */
static uint64_t spin_budget_of(double futex_cross_p50_ns)
{
	if (!(futex_cross_p50_ns > 0))
		return TC_SPIN_DEFAULT_NS;
	double b = 2.0 * futex_cross_p50_ns;
	if (b < 10000.0)
		b = 10000.0;
	if (b > 150000.0)
		b = 150000.0;
	return (uint64_t)b;
}

/* --- rows and facts ------------------------------------------------------------------- */

void cal_add_row(struct sb_host *h, struct cal_series *s, const char *phase)
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
	} else {
		/* the worse p99 of start and end: how calm the host was over the whole bench,
		 * for budgets that are not applicable on a host too loaded to judge them */
		char name[SB_NAME_LEN], start[SB_NAME_LEN];
		snprintf(start, sizeof(start), "%s_p99_ns", s->name);
		snprintf(name, sizeof(name), "%s_worst_p99_ns", s->name);
		double a = host_fact(h, start);
		host_fact_set(h, name, isnan(a) || row->p99_ns > a ? row->p99_ns : a);
	}
}

int calibrate_host(struct sb_host *h, const char *phase)
{
	enum { SYSCALL, CLOCK, FUTEX_X, FUTEX_S, SIGNAL, RDV_STOP, RDV_WIN, RDV, RDV_BUSY,
	       RDV_BUSY_OBS, PTRACE, NSERIES };
	static const char *const names[NSERIES] = {
		"syscall",	   "thread_cpu_clock", "futex_cross",	    "futex_same",
		"signal_cross",	   "rendezvous_stop",  "rendezvous_window", "rendezvous",
		"rendezvous_busy",  "rendezvous_busy_observed", "ptrace_interrupt",
	};
	struct cal_series *s = calloc(NSERIES, sizeof(*s));
	int before = h->ncalib;

	if (!s)
		return 0;
	for (int i = 0; i < NSERIES; i++)
		s[i].name = names[i];
	time_syscall(&s[SYSCALL]);
	time_thread_clock(&s[CLOCK]);
	calibrate_platform(&s[FUTEX_X], &s[FUTEX_S], &s[SIGNAL], &s[PTRACE]);
	/* The rendezvous spins about as long as a cross-CPU sleep and wake-up costs here. Set
	 * that budget now, so that the rendezvous floors below, and every run forked after
	 * this, use it; SB_MACH_SPIN_NS (mach reads it at start) overrides it for both. */
	if (strcmp(phase, "start") == 0) {
		const char *env = getenv("SB_MACH_SPIN_NS");
		if (env && *env)
			tc_set_spin_ns(strtoull(env, NULL, 10));
		else if (s[FUTEX_X].n > 0)
			tc_set_spin_ns(spin_budget_of(quantile(s[FUTEX_X].v, (size_t)s[FUTEX_X].n, 0.5)));
	}
	struct rdv_out o = { &s[RDV_STOP], &s[RDV_WIN], &s[RDV], &s[RDV_BUSY], &s[RDV_BUSY_OBS] };
	time_rendezvous(&o);

	for (int i = 0; i < NSERIES; i++)
		cal_add_row(h, &s[i], phase);
	if (strcmp(phase, "start") == 0) {
		host_fact_set(h, "spin_ns", (double)tc_spin_ns()); /* what the rendezvous ran with */
		host_fact_set(h, "spin_budget_ns", (double)calibrate_spin_budget(h)); /* suggested */
	}
	free(s);
	return h->ncalib - before;
}

uint64_t calibrate_spin_budget(const struct sb_host *h)
{
	return spin_budget_of(host_fact(h, "futex_cross_p50_ns"));
}