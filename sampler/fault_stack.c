/* fault_stack.c - `fault-stack`: the healthy ctimer sampler, but one frame in five is taken
 * from another thread's stack at the same depth (a walker that strays onto a foreign
 * stack, a per-CPU buffer reused across threads). The gate must fail it on stack
 * correctness: stack_correct_fraction, and misattributed_fraction when the corrupted frame
 * is the leaf. */
#include "sampler/fault_sink.h"
#include "sampler/sampler.h"

#define FAULT_STACK_ONE_IN 5

extern const struct sampler sampler_ctimer;

static struct {
	struct sb_sink *sink;
	size_t mark;
	uint64_t seed;
	size_t corrupted;
} F;

static int stack_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	F.sink = sink;
	F.mark = sink_count(sink);
	F.seed = cfg->seed ^ 0x57ac4ull;
	F.corrupted = 0;
	return sampler_ctimer.start(cfg, sink);
}

static int stack_stop(void)
{
	int rc = sampler_ctimer.stop();
	F.corrupted = fault_sink_corrupt(F.sink, F.mark, FAULT_STACK_ONE_IN, F.seed);
	return rc;
}

static int stack_stats(struct sb_stat *out, int max)
{
	int n = sampler_ctimer.stats(out, max - 1);
	out[n++] = (struct sb_stat){ "fault_frames_corrupted", (double)F.corrupted };
	return n;
}

static void stack_thread_start(int index)
{
	if (sampler_ctimer.thread_start)
		sampler_ctimer.thread_start(index);
}

static void stack_thread_stop(int index)
{
	if (sampler_ctimer.thread_stop)
		sampler_ctimer.thread_stop(index);
}

const struct sampler sampler_fault_stack = {
	.name = "fault-stack",
	.description = "FAULT: ctimer with one frame in five from another thread's stack "
		       "(gate: stack correctness)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_FAULT | SB_SAMPLER_TICK_DRIVEN,
	.start = stack_start,
	.stop = stack_stop,
	.stats = stack_stats,
	.thread_start = stack_thread_start,
	.thread_stop = stack_thread_stop,
};
