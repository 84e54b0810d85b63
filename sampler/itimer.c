/* itimer.c - setitimer(ITIMER_PROF) + SIGPROF, process-wide, as gperftools and old Go do.
 *
 * The kernel charges the process's CPU time and delivers SIGPROF to a thread that is
 * running when the timer expires, so per-thread attribution is the kernel's. The timer is
 * checked at the scheduler tick: it cannot fire faster than CONFIG_HZ.
 * stop_latency_ns is NaN: the expiry is measured in process CPU time shared by all
 * threads, so no per-thread delay can be derived from it. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "sampler/sampler.h"
#include "sampler/sigsample.h"

static struct sb_sink *itimer_sink;
static uint32_t itimer_max_depth;
static double itimer_period_ns;
static _Atomic int itimer_running;
static struct sigsample_counters itimer_counters;

static void itimer_handler(int sig, siginfo_t *si, void *ucp)
{
	(void)sig;
	(void)si;
	uint64_t t0 = sb_now_ns();
	atomic_fetch_add_explicit(&itimer_counters.signals, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&itimer_running, memory_order_acquire)) {
		atomic_fetch_add_explicit(&itimer_counters.late, 1, memory_order_relaxed);
		return;
	}
	sigsample_record(itimer_sink, ucp, t0, itimer_period_ns, NAN, itimer_max_depth, NULL,
			 &itimer_counters);
}

static int itimer_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct sigaction sa;

	itimer_sink = sink;
	itimer_max_depth = cfg->max_depth;
	itimer_period_ns = 1e9 / cfg->hz;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = itimer_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return -1;

	long usec = (long)(1e6 / cfg->hz);
	if (usec < 1)
		usec = 1;
	struct itimerval it = {
		.it_interval = { usec / 1000000, usec % 1000000 },
		.it_value = { usec / 1000000, usec % 1000000 },
	};
	atomic_store(&itimer_running, 1);
	if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
		atomic_store(&itimer_running, 0);
		return -1;
	}
	return 0;
}

/* The handler stays installed: a SIGPROF may still be pending in some thread after the
 * timer is disarmed, and the default action would kill the process. */
static int itimer_stop(void)
{
	struct itimerval zero;
	memset(&zero, 0, sizeof(zero));
	setitimer(ITIMER_PROF, &zero, NULL);
	atomic_store(&itimer_running, 0);
	return 0;
}

static int itimer_stats(struct sb_stat *out, int max)
{
	return sigsample_stats(&itimer_counters, out, max);
}

const struct sampler sampler_itimer = {
	.name = "itimer",
	.description = "setitimer(ITIMER_PROF) + SIGPROF, process-wide (gperftools, old Go)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PROCESS_SIGNAL,
	.flags = SB_SAMPLER_TICK_DRIVEN | SB_SAMPLER_IN_PROCESS,
	.start = itimer_start,
	.stop = itimer_stop,
	.stats = itimer_stats,
	.signal = sigsample_sigprof,
};
