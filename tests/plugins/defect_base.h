/* defect_base.h - the skeleton of the defective test plugins: a per-thread CPU-timer
 * sampler (examples/ctimer_plugin.c, cut down) written against nothing but
 * sampler/sampbench_sampler.h, with one hook where each defect goes. Each defect_*.c
 * defines DEFECT_NAME, DEFECT_DESC, DEFECT_CAPS (the class it declares, ABI 2) and
 * defect_edit(), then includes this file; its `gate-expects:` comment names the metric the
 * gate must fail it on (tests/gate_defects.sh).
 *
 * defect_edit(s, pcs, seq) runs in the signal handler on every sample before it is pushed:
 * it may change the sample and returns 1 to push it, 0 to drop it. Async-signal-safe only.
 * DEFECT_START: a function start() calls once the handler is installed, before sampling
 * begins (outside any signal handler).
 * DEFECT_STOP: a function stop() calls first.
 * DEFECT_HANDLER(): a statement the handler runs on every sample after the push, before it
 * restores errno (what a defect does to the interrupted thread: its errno, its stack).
 * DEFECT_THREAD_START(index) / DEFECT_THREAD_STOP(index): statements thread_start() and
 * thread_stop() run first, in the workload thread (what a defect does to the thread's state).
 * DEFECT_STATS: the plugin's stats() (what it claims about itself, e.g. sampler_cpu_ns).
 * DEFECT_ONE_PROCESS_TIMER: instead of one timer per thread on the thread's CPU clock, one
 * process-CPU-clock timer whose signal goes to the first thread only. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/plugins/plugin_setup.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#ifdef DEFECT_ONE_PROCESS_TIMER
static _Atomic int timer_taken;
#endif
static _Atomic uint64_t n_samples;

static __thread timer_t my_timer;
static __thread int my_armed;

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq);

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	int saved_errno = errno;
	uint64_t pcs[MAX_FRAMES];
	struct sampbench_sample s;

	if (!atomic_load(&running) || !my_armed || si->si_code != SI_TIMER) {
		errno = saved_errno;
		return;
	}
	uint64_t t0 = sink->now_ns();
	memset(&s, 0, sizeof(s));
	s.depth = sink->walk_ucontext(uc, pcs, max_depth, &s.flags);
	s.frames = pcs;
	sink->self(&s.tid, &s.thread_index, NULL, NULL);
	s.time_ns = t0;
	s.weight_ns = (double)period_ns * (1 + (si->si_overrun > 0 ? si->si_overrun : 0));
	s.stop_latency_ns = NAN;
	s.suspend_window_ns = NAN;
	if (defect_edit(&s, pcs, atomic_fetch_add(&n_samples, 1))) {
		if (isnan(s.suspend_window_ns))
			s.suspend_window_ns = (double)(sink->now_ns() - t0);
		sink->push(sink->ctx, &s);
	}
#ifdef DEFECT_HANDLER
	DEFECT_HANDLER();
#endif
	errno = saved_errno;
}

static void thread_start(int index)
{
	(void)index;
#ifdef DEFECT_THREAD_START
	DEFECT_THREAD_START(index);
#endif
	struct sigevent sev;
	clockid_t clock = CLOCK_THREAD_CPUTIME_ID;

#ifdef DEFECT_ONE_PROCESS_TIMER
	if (atomic_exchange(&timer_taken, 1))
		return; /* the defect: only the first thread ever hears the timer */
	clock = CLOCK_PROCESS_CPUTIME_ID;
#endif
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(clock, &sev, &my_timer) != 0)
		return;
	struct itimerspec its = {
		.it_interval = { (time_t)(period_ns / 1000000000ull), (long)(period_ns % 1000000000ull) },
		.it_value = { (time_t)(period_ns / 1000000000ull), (long)(period_ns % 1000000000ull) },
	};
	my_armed = 1;
	if (timer_settime(my_timer, 0, &its, NULL) != 0) {
		my_armed = 0;
		timer_delete(my_timer);
	}
}

static void thread_stop(int index)
{
	(void)index;
#ifdef DEFECT_THREAD_STOP
	DEFECT_THREAD_STOP(index);
#endif
	if (!my_armed)
		return;
	my_armed = 0;
	timer_delete(my_timer);
}

static int start(const struct sampbench_config *cfg, const struct sampbench_sink *s)
{
	if (plugin_setup(cfg, s) != 0)
		return -1;
#ifdef DEFECT_START
	DEFECT_START();
#endif
	atomic_store(&running, 1);
	return 0;
}

static int stop(void)
{
#ifdef DEFECT_STOP
	DEFECT_STOP();
#endif
	atomic_store(&running, 0);
	return 0;
}

SAMPBENCH_EXPORT const struct sampbench_sampler sampbench_sampler = {
	.abi_version = SAMPBENCH_SAMPLER_ABI,
	.struct_size = sizeof(struct sampbench_sampler),
	.name = DEFECT_NAME,
	.description = DEFECT_DESC,
	.clock = SAMPBENCH_CLOCK_CPU,
	.start = start,
	.stop = stop,
	.thread_start = thread_start,
	.thread_stop = thread_stop,
#ifdef DEFECT_STATS
	.stats = DEFECT_STATS,
#endif
	.caps = DEFECT_CAPS,
};
