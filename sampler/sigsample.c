/* sigsample.c - shared signal-handler sampling. */
#include "sampler/sigsample.h"

#include <errno.h>
#include <signal.h>

#include "core/util.h"
#include "sampler/fpwalk.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"

void sigsample_record(struct sb_sink *sink, const void *ucp, uint64_t t0, double weight_ns,
		      double stop_latency_ns, uint32_t max_depth, sigsample_walk_fn walk,
		      struct sigsample_counters *c)
{
	int saved_errno = errno;
	struct sb_regs regs;
	uint64_t pcs[SB_MAX_FRAMES];
	uint32_t depth = 0;
	enum sb_walk_end end;

	if (max_depth == 0 || max_depth > SB_MAX_FRAMES)
		max_depth = SB_MAX_FRAMES;
	if (walk) {
		end = walk(ucp, pcs, max_depth, &depth);
	} else {
		regs_from_ucontext(ucp, &regs);
		end = fp_walk(&regs, &sb_self_bounds, pcs, max_depth, &depth, NULL, NULL);
	}

	struct sb_sample s = sample_unknown();
	s.time_ns = t0;
	s.tid = sb_gettid();
	s.thread_index = sb_self_index;
	s.weight_ns = weight_ns;
	s.stop_latency_ns = stop_latency_ns;
	if (end == SB_WALK_TRUNCATED) {
		s.flags |= SB_SAMPLE_TRUNCATED;
	} else if (end != SB_WALK_OK) {
		s.flags |= SB_SAMPLE_WALK_ERROR;
		atomic_fetch_add_explicit(&c->walk_errors, 1, memory_order_relaxed);
	}
	/* The handler runs instead of the thread's own code: its duration is the window. */
	uint64_t spent = sb_now_ns() - t0;
	s.suspend_window_ns = (double)spent;
	atomic_fetch_add_explicit(&c->handler_ns, spent, memory_order_relaxed);
	if (sink_push(sink, &s, pcs, depth) != 0)
		atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
	errno = saved_errno;
}

int sigsample_stats(const struct sigsample_counters *c, struct sb_stat *out, int max)
{
	struct sb_stat st[] = {
		{ "signals", (double)atomic_load(&c->signals) },
		{ "dropped", (double)atomic_load(&c->dropped) },
		{ "walk_errors", (double)atomic_load(&c->walk_errors) },
		{ "late_signals", (double)atomic_load(&c->late) },
		{ "sampler_cpu_ns", (double)atomic_load(&c->handler_ns) },
	};
	int n = 0;
	for (; n < max && n < (int)ARRAY_SIZE(st); n++)
		out[n] = st[n];
	return n;
}

int sigsample_sigprof(void)
{
	return SIGPROF;
}
