/* ctimer.c - one timer_create(CLOCK_THREAD_CPUTIME_ID) per thread, SIGEV_THREAD_ID, as Go
 * does since 1.18. Each thread's timer measures only its own CPU time and signals only
 * itself, so attribution cannot go to the wrong thread. Overruns (expiries merged into one
 * signal) are added to the sample's weight. The first expiry gets a random phase within
 * the period: with phase 0 every short-lived thread would be charged alike (Go #40435).
 *
 * stop_latency_ns is the thread CPU time that elapsed between the expiry and the handler:
 * CPU timers are checked at the tick, so this shows the tick granularity. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "sampler/ctimer.h"
#include "sampler/sampler.h"
#include "sampler/sigsample.h"
#include "sampler/threads.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static struct sb_sink *ctimer_sink;
static uint32_t ctimer_max_depth;
static uint64_t ctimer_period_ns;
static uint64_t ctimer_seed;
static _Atomic int ctimer_running;
static struct sigsample_counters ctimer_counters;
static sigsample_walk_fn ctimer_walk; /* NULL: frame records */
static _Atomic uint64_t ctimer_overruns, ctimer_timers, ctimer_timer_errors;

static __thread timer_t ctimer_timer SB_TLS;
static __thread int ctimer_armed SB_TLS;

static void ctimer_handler(int sig, siginfo_t *si, void *ucp)
{
	(void)sig;
	uint64_t t0 = sb_now_ns();
	atomic_fetch_add_explicit(&ctimer_counters.signals, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&ctimer_running, memory_order_acquire) || !ctimer_armed ||
	    si->si_code != SI_TIMER) {
		atomic_fetch_add_explicit(&ctimer_counters.late, 1, memory_order_relaxed);
		return;
	}
	int saved_errno = errno;
	int overrun = si->si_overrun > 0 ? si->si_overrun : 0;
	atomic_fetch_add_explicit(&ctimer_overruns, (uint64_t)overrun, memory_order_relaxed);

	double lag = NAN;
	struct itimerspec cur;
	if (timer_gettime(ctimer_timer, &cur) == 0) {
		double left = (double)cur.it_value.tv_sec * 1e9 + (double)cur.it_value.tv_nsec;
		lag = (double)ctimer_period_ns - left;
		if (lag < 0)
			lag = 0;
	}
	errno = saved_errno;
	sigsample_record(ctimer_sink, ucp, t0, (double)ctimer_period_ns * (1 + overrun), lag,
			 ctimer_max_depth, ctimer_walk, &ctimer_counters);
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Called by each workload thread, from itself: its timer counts its own CPU time. */
static void ctimer_thread_start(int index)
{
	(void)index;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_notify_thread_id = sb_gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &ctimer_timer) != 0) {
		atomic_fetch_add_explicit(&ctimer_timer_errors, 1, memory_order_relaxed);
		return;
	}
	uint64_t phase = 1 + splitmix64(ctimer_seed ^ (uint64_t)sb_gettid()) % ctimer_period_ns;
	struct itimerspec its = {
		.it_interval = { (time_t)(ctimer_period_ns / 1000000000ull),
				 (long)(ctimer_period_ns % 1000000000ull) },
		.it_value = { (time_t)(phase / 1000000000ull), (long)(phase % 1000000000ull) },
	};
	ctimer_armed = 1;
	if (timer_settime(ctimer_timer, 0, &its, NULL) != 0) {
		ctimer_armed = 0;
		timer_delete(ctimer_timer);
		atomic_fetch_add_explicit(&ctimer_timer_errors, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&ctimer_timers, 1, memory_order_relaxed);
}

static void ctimer_thread_stop(int index)
{
	(void)index;
	if (!ctimer_armed)
		return;
	ctimer_armed = 0;
	timer_delete(ctimer_timer);
}

int ctimer_start_walk(const struct sb_config *cfg, struct sb_sink *sink, sigsample_walk_fn walk)
{
	struct sigaction sa;

	ctimer_walk = walk;
	ctimer_sink = sink;
	ctimer_max_depth = cfg->max_depth;
	ctimer_period_ns = (uint64_t)(1e9 / cfg->hz);
	if (ctimer_period_ns == 0)
		ctimer_period_ns = 1;
	ctimer_seed = cfg->seed;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ctimer_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return -1;
	atomic_store(&ctimer_running, 1);
	return 0;
}

static int ctimer_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	return ctimer_start_walk(cfg, sink, NULL);
}

/* Threads delete their own timers in thread_stop; a thread still alive keeps an armed
 * timer whose signals are counted as late and ignored. */
static int ctimer_stop(void)
{
	atomic_store(&ctimer_running, 0);
	return 0;
}

static int ctimer_stats(struct sb_stat *out, int max)
{
	int n = sigsample_stats(&ctimer_counters, out, max);
	struct sb_stat st[] = {
		{ "overruns", (double)atomic_load(&ctimer_overruns) },
		{ "timers_created", (double)atomic_load(&ctimer_timers) },
		{ "timer_errors", (double)atomic_load(&ctimer_timer_errors) },
	};
	for (size_t i = 0; n < max && i < ARRAY_SIZE(st); i++)
		out[n++] = st[i];
	return n;
}

const struct sampler sampler_ctimer = {
	.name = "ctimer",
	.description = "per-thread timer_create(CLOCK_THREAD_CPUTIME_ID), SIGEV_THREAD_ID (Go)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_TICK_DRIVEN | SB_SAMPLER_IN_PROCESS,
	.start = ctimer_start,
	.stop = ctimer_stop,
	.stats = ctimer_stats,
	.thread_start = ctimer_thread_start,
	.thread_stop = ctimer_thread_stop,
	.signal = sigsample_sigprof,
};
