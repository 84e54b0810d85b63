/* broken.c - a deliberately broken sampler, for the harness's own tests.
 *
 * test-malloc-in-handler samples like ctimer (a per-thread CPU timer signalling its own
 * thread) but mallocs and frees a block in the SIGPROF handler, which POSIX forbids:
 * malloc is not async-signal-safe. When the signal lands while the thread holds its malloc
 * arena lock (malloclock keeps threads in the allocator), the handler's malloc waits on
 * that lock forever: the thread deadlocks on itself. The first block is larger than glibc's
 * tcache limit so it always goes through the arena and its lock; a second, large one
 * does the same for allocators with bigger thread caches (ASan's). tests/test_watchdog.c
 * proves the runner's watchdog turns that hang into a failed run. Hidden from `list`. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler.h"
#include "sigsample.h"
#include "threads.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define BROKEN_ALLOC_MIN 2048 /* above tcache's 1032-byte limit: always takes the lock */
/* Large blocks reach the locks of allocators with thread caches too (ASan's: its secondary
 * allocator and its quarantine, which a large free soon drains under a global mutex). */
#define BROKEN_ALLOC_BIG (256 * 1024)

static struct sb_sink *broken_sink;
static uint32_t broken_max_depth;
static uint64_t broken_period_ns;
static _Atomic int broken_running;
static struct sigsample_counters broken_counters;
static _Atomic uint64_t broken_allocs;

static __thread timer_t broken_timer SB_TLS;
static __thread int broken_armed SB_TLS;

static void broken_handler(int sig, siginfo_t *si, void *ucp)
{
	(void)sig;
	uint64_t t0 = sb_now_ns();
	atomic_fetch_add_explicit(&broken_counters.signals, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&broken_running, memory_order_acquire) || !broken_armed ||
	    si->si_code != SI_TIMER) {
		atomic_fetch_add_explicit(&broken_counters.late, 1, memory_order_relaxed);
		return;
	}
	int saved_errno = errno;
	/* The bug under test: allocating inside a signal handler. */
	uint64_t n = atomic_fetch_add_explicit(&broken_allocs, 1, memory_order_relaxed);
	volatile char *p = malloc(BROKEN_ALLOC_MIN + (n % 8) * 1024);
	volatile char *big = malloc(BROKEN_ALLOC_BIG);
	if (p)
		p[0] = 1;
	if (big)
		big[0] = 1;
	free((void *)p);
	free((void *)big);
	errno = saved_errno;
	sigsample_record(broken_sink, ucp, t0, (double)broken_period_ns, NAN, broken_max_depth,
			 &broken_counters);
}

static void broken_thread_start(int index)
{
	(void)index;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_notify_thread_id = sb_gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &broken_timer) != 0)
		return;
	struct itimerspec its = {
		.it_interval = { (time_t)(broken_period_ns / 1000000000ull),
				 (long)(broken_period_ns % 1000000000ull) },
		.it_value = { (time_t)(broken_period_ns / 1000000000ull),
			      (long)(broken_period_ns % 1000000000ull) },
	};
	broken_armed = 1;
	if (timer_settime(broken_timer, 0, &its, NULL) != 0) {
		broken_armed = 0;
		timer_delete(broken_timer);
	}
}

static void broken_thread_stop(int index)
{
	(void)index;
	if (!broken_armed)
		return;
	broken_armed = 0;
	timer_delete(broken_timer);
}

static int broken_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct sigaction sa;

	broken_sink = sink;
	broken_max_depth = cfg->max_depth;
	broken_period_ns = (uint64_t)(1e9 / cfg->hz);
	if (broken_period_ns == 0)
		broken_period_ns = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = broken_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return -1;
	atomic_store(&broken_running, 1);
	return 0;
}

static int broken_stop(void)
{
	atomic_store(&broken_running, 0);
	return 0;
}

static int broken_stats(struct sb_stat *out, int max)
{
	int n = sigsample_stats(&broken_counters, out, max);
	if (n < max)
		out[n++] = (struct sb_stat){ "handler_mallocs",
					     (double)atomic_load(&broken_allocs) };
	return n;
}

const struct sampler sampler_test_malloc_in_handler = {
	.name = "test-malloc-in-handler",
	.description = "BROKEN on purpose: mallocs in its SIGPROF handler (watchdog test)",
	.clock = SB_CLOCK_CPU,
	.flags = SB_SAMPLER_TEST | SB_SAMPLER_TICK_DRIVEN,
	.start = broken_start,
	.stop = broken_stop,
	.stats = broken_stats,
	.thread_start = broken_thread_start,
	.thread_stop = broken_thread_stop,
};
