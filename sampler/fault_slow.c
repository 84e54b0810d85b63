/* fault_slow.c - `fault-slow`: the healthy mach sampler, but every thread it stops is held
 * 2 ms more before it runs its own code again (a sampler that walks slowly, symbolizes or
 * allocates while the target is suspended). The gate must fail it on the suspend-time
 * budget (suspend_window_p99_ns).
 *
 * mach stops a thread with a signal rendezvous (thread_ctl.h): the target's handler parks
 * until released. This wrapper chains that handler: after mach's handler returns (the
 * thread was released), the target busy-waits FAULT_SLOW_HOLD_NS in signal context, so it
 * is kept from running for its window plus the hold. mach measured its window up to the
 * release; at stop, the hold is added to every sample of a stopped thread. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "sampler/fault_sink.h"
#include "sampler/sampler.h"
#include "sampler/thread_ctl.h"

#define FAULT_SLOW_HOLD_NS 2000000ull

extern const struct sampler sampler_mach;

static struct {
	struct sb_sink *sink;
	size_t mark;
	struct sigaction healthy; /* mach's rendezvous handler */
	_Atomic uint64_t holds, max_hold_ns;
	size_t widened;
} F;

/* Async-signal-safe: the healthy handler, then a busy wait on the monotonic clock. */
static void slow_handler(int sig, siginfo_t *si, void *uc)
{
	F.healthy.sa_sigaction(sig, si, uc);
	uint64_t t0 = sb_now_ns(), t;
	while ((t = sb_now_ns()) - t0 < FAULT_SLOW_HOLD_NS)
		;
	atomic_fetch_add_explicit(&F.holds, 1, memory_order_relaxed);
	uint64_t held = t - t0, max = atomic_load_explicit(&F.max_hold_ns, memory_order_relaxed);
	while (held > max && !atomic_compare_exchange_weak(&F.max_hold_ns, &max, held))
		;
}

static int slow_available(char *why, size_t len)
{
	return sampler_mach.available ? sampler_mach.available(why, len) : 0;
}

static int slow_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct sigaction sa;

	F.sink = sink;
	F.mark = sink_count(sink);
	atomic_store(&F.holds, 0);
	atomic_store(&F.max_hold_ns, 0);
	if (sampler_mach.start(cfg, sink) != 0)
		return -1;
	/* mach's first tick is one interval away: time enough to chain its handler */
	if (sigaction(tc_signo(), NULL, &F.healthy) != 0 || !(F.healthy.sa_flags & SA_SIGINFO)) {
		sampler_mach.stop();
		return -1;
	}
	sa = F.healthy;
	sa.sa_sigaction = slow_handler;
	if (sigaction(tc_signo(), &sa, NULL) != 0) {
		sampler_mach.stop();
		return -1;
	}
	return 0;
}

static int slow_stop(void)
{
	int rc = sampler_mach.stop(); /* also removes the rendezvous handler, ours with it */
	F.widened = fault_sink_add_window(F.sink, F.mark, (double)FAULT_SLOW_HOLD_NS);
	return rc;
}

static int slow_stats(struct sb_stat *out, int max)
{
	int n = sampler_mach.stats(out, max - 3);
	out[n++] = (struct sb_stat){ "fault_holds", (double)atomic_load(&F.holds) };
	out[n++] = (struct sb_stat){ "fault_max_hold_ns", (double)atomic_load(&F.max_hold_ns) };
	out[n++] = (struct sb_stat){ "fault_windows_widened", (double)F.widened };
	return n;
}

static void slow_thread_start(int index)
{
	if (sampler_mach.thread_start)
		sampler_mach.thread_start(index);
}

const struct sampler sampler_fault_slow = {
	.name = "fault-slow",
	.description = "FAULT: mach holding every stopped thread 2 ms longer (gate: suspend "
		       "window budget)",
	.clock = SB_CLOCK_WALL,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_FAULT,
	.available = slow_available,
	.start = slow_start,
	.stop = slow_stop,
	.stats = slow_stats,
	.thread_start = slow_thread_start,
};
