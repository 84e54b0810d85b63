/* broken.c - a deliberately broken sampler, for the harness's own tests.
 *
 * test-malloc-in-handler is ctimer (a per-thread CPU timer signalling its own thread) with
 * one bug in front of its handler: it mallocs and frees a block there, which POSIX forbids
 * (malloc is not async-signal-safe). When the signal lands while the thread holds its
 * malloc arena lock (malloclock keeps threads in the allocator), the handler's malloc
 * waits on that lock forever: the thread deadlocks on itself. The first block is larger
 * than glibc's tcache limit so it always goes through the arena and its lock; a second,
 * large one does the same for allocators with bigger thread caches (ASan's).
 * tests/test_watchdog.c proves the runner's watchdog turns that hang into a failed run.
 * Hidden from `list`. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"

#define BROKEN_ALLOC_MIN 2048 /* above tcache's 1032-byte limit: always takes the lock */
/* Large blocks reach the locks of allocators with thread caches too (ASan's: its secondary
 * allocator and its quarantine, which a large free soon drains under a global mutex). */
#define BROKEN_ALLOC_BIG (256 * 1024)

extern const struct sampler sampler_ctimer;

static struct sigaction ctimer_action; /* the healthy handler, called after the bug */
static _Atomic uint64_t broken_allocs;

static void broken_handler(int sig, siginfo_t *si, void *ucp)
{
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
	ctimer_action.sa_sigaction(sig, si, ucp);
}

/* Starts ctimer, then puts the broken handler in front of ctimer's SIGPROF handler. */
static int broken_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct sigaction sa;

	if (sampler_ctimer.start(cfg, sink) != 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = broken_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, &ctimer_action) != 0) {
		sampler_ctimer.stop();
		return -1;
	}
	return 0;
}

static int broken_stop(void)
{
	return sampler_ctimer.stop();
}

static void broken_thread_start(int index)
{
	sampler_ctimer.thread_start(index);
}

static void broken_thread_stop(int index)
{
	sampler_ctimer.thread_stop(index);
}

static int broken_stats(struct sb_stat *out, int max)
{
	int n = sampler_ctimer.stats(out, max);
	if (n < max)
		out[n++] = (struct sb_stat){ "handler_mallocs",
					     (double)atomic_load(&broken_allocs) };
	return n;
}

const struct sampler sampler_test_malloc_in_handler = {
	.name = "test-malloc-in-handler",
	.description = "BROKEN on purpose: mallocs in its SIGPROF handler (watchdog test)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_TEST | SB_SAMPLER_TICK_DRIVEN,
	.start = broken_start,
	.stop = broken_stop,
	.stats = broken_stats,
	.thread_start = broken_thread_start,
	.thread_stop = broken_thread_stop,
};
