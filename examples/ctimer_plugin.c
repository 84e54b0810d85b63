/* ctimer_plugin.c - the built-in `ctimer` sampler written as a plugin, against nothing but
 * sampler/sampbench_sampler.h: a template for your own sampler.
 *
 *   cc -shared -fPIC -O2 -fno-omit-frame-pointer -I sampler examples/ctimer_plugin.c \
 *      -o ctimer_plugin.so -lrt
 *   sampbench run --sampler ./ctimer_plugin.so --workload skewed -o out.h5
 *
 * One timer_create(CLOCK_THREAD_CPUTIME_ID) per thread, SIGEV_THREAD_ID to that thread,
 * created by the thread itself from thread_start. The handler walks the interrupted stack
 * with the harness's walker (sink->walk_ucontext) and pushes one sample weighted with the
 * period times (1 + overruns). Everything in the handler is async-signal-safe. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampbench_sampler.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define MAX_FRAMES 256

static const struct sampbench_sink *sink;
static uint64_t period_ns;
static uint32_t max_depth;
static uint64_t seed;
static _Atomic int running;
static _Atomic uint64_t n_signals, n_late, n_dropped, n_timers, n_timer_errors, handler_ns;

static __thread timer_t my_timer;
static __thread int my_armed;

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	int saved_errno = errno; /* the interrupted code must find errno as it left it */
	uint64_t t0 = sink->now_ns();
	uint64_t pcs[MAX_FRAMES];
	struct sampbench_sample s;

	atomic_fetch_add(&n_signals, 1);
	if (!atomic_load(&running) || !my_armed || si->si_code != SI_TIMER) {
		atomic_fetch_add(&n_late, 1);
		errno = saved_errno;
		return;
	}
	memset(&s, 0, sizeof(s));
	s.depth = sink->walk_ucontext(uc, pcs, max_depth, &s.flags);
	s.frames = pcs;
	sink->self(&s.tid, &s.thread_index, NULL, NULL);
	s.time_ns = t0;
	s.weight_ns = (double)period_ns * (1 + (si->si_overrun > 0 ? si->si_overrun : 0));
	s.stop_latency_ns = NAN;
	uint64_t spent = sink->now_ns() - t0;
	s.suspend_window_ns = (double)spent; /* the handler runs instead of the thread */
	atomic_fetch_add(&handler_ns, spent);
	if (sink->push(sink->ctx, &s) != 0)
		atomic_fetch_add(&n_dropped, 1);
	errno = saved_errno;
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* From each thread itself: a timer on its own CPU clock that signals only it. The first
 * expiry gets a random phase so short-lived threads are not all charged alike. */
static void thread_start(int index)
{
	(void)index;
	struct sigevent sev;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_notify_thread_id = tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &my_timer) != 0) {
		atomic_fetch_add(&n_timer_errors, 1);
		return;
	}
	uint64_t phase = 1 + splitmix64(seed ^ (uint64_t)tid) % period_ns;
	struct itimerspec its = {
		.it_interval = { (time_t)(period_ns / 1000000000ull), (long)(period_ns % 1000000000ull) },
		.it_value = { (time_t)(phase / 1000000000ull), (long)(phase % 1000000000ull) },
	};
	my_armed = 1;
	if (timer_settime(my_timer, 0, &its, NULL) != 0) {
		my_armed = 0;
		timer_delete(my_timer);
		atomic_fetch_add(&n_timer_errors, 1);
		return;
	}
	atomic_fetch_add(&n_timers, 1);
}

static void thread_stop(int index)
{
	(void)index;
	if (!my_armed)
		return;
	my_armed = 0;
	timer_delete(my_timer);
}

static int start(const struct sampbench_config *cfg, const struct sampbench_sink *s)
{
	struct sigaction sa;

	if (!(cfg->hz > 0)) {
		errno = EINVAL;
		return -1;
	}
	sink = s;
	period_ns = (uint64_t)(1e9 / cfg->hz);
	if (period_ns == 0)
		period_ns = 1;
	max_depth = cfg->max_depth == 0 || cfg->max_depth > MAX_FRAMES ? MAX_FRAMES : cfg->max_depth;
	seed = cfg->seed;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return -1;
	atomic_store(&running, 1);
	return 0;
}

/* Threads delete their own timers in thread_stop; the handler stays installed because a
 * signal may still be pending somewhere, and SIGPROF's default action kills. */
static int stop(void)
{
	atomic_store(&running, 0);
	return 0;
}

static int stats(struct sampbench_stat *out, int max)
{
	const struct sampbench_stat all[] = {
		{ "signals", (double)atomic_load(&n_signals) },
		{ "late_signals", (double)atomic_load(&n_late) },
		{ "dropped", (double)atomic_load(&n_dropped) },
		{ "timers_created", (double)atomic_load(&n_timers) },
		{ "timer_errors", (double)atomic_load(&n_timer_errors) },
		{ "sampler_cpu_ns", (double)atomic_load(&handler_ns) },
	};
	int n = 0;
	for (; n < max && n < (int)(sizeof(all) / sizeof(all[0])); n++)
		out[n] = all[n];
	return n;
}

SAMPBENCH_EXPORT const struct sampbench_sampler sampbench_sampler = {
	.abi_version = SAMPBENCH_SAMPLER_ABI,
	.struct_size = sizeof(struct sampbench_sampler),
	.name = "ctimer-plugin",
	.description = "example plugin: per-thread CPU timers (the built-in ctimer as a .so)",
	.clock = SAMPBENCH_CLOCK_CPU,
	.start = start,
	.stop = stop,
	.stats = stats,
	.thread_start = thread_start,
	.thread_stop = thread_stop,
	/* ABI 2: the class the gate judges it by (docs/gate.md "Classes"). Claim only what the
	 * samples carry: a claimed capability whose metric comes out NaN fails the gate. */
	.caps = SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS |
		SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN,
};
