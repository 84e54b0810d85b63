/* fault_drop.c - `fault-drop`: the healthy ctimer sampler, but 30% of its samples are lost
 * at random (a ring buffer that overwrites, a handler that bails out under contention).
 * The gate must fail it on rate_accuracy. */
#include "sampler/fault_sink.h"
#include "sampler/sampler.h"

#define FAULT_DROP_FRACTION 0.30

extern const struct sampler sampler_ctimer;

static struct {
	struct sb_sink *sink;
	size_t mark;
	uint64_t seed;
	size_t dropped;
} F;

static int drop_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	F.sink = sink;
	F.mark = sink_count(sink);
	F.seed = cfg->seed ^ 0xd809ull;
	F.dropped = 0;
	return sampler_ctimer.start(cfg, sink);
}

/* After ctimer's stop no handler writes any more: drop then. */
static int drop_stop(void)
{
	int rc = sampler_ctimer.stop();
	F.dropped = fault_sink_drop(F.sink, F.mark, FAULT_DROP_FRACTION, F.seed);
	return rc;
}

static int drop_stats(struct sb_stat *out, int max)
{
	int n = sampler_ctimer.stats(out, max - 1);
	out[n++] = (struct sb_stat){ "fault_dropped", (double)F.dropped };
	return n;
}

static void drop_thread_start(int index)
{
	if (sampler_ctimer.thread_start)
		sampler_ctimer.thread_start(index);
}

static void drop_thread_stop(int index)
{
	if (sampler_ctimer.thread_stop)
		sampler_ctimer.thread_stop(index);
}

const struct sampler sampler_fault_drop = {
	.name = "fault-drop",
	.description = "FAULT: ctimer losing 30% of its samples at random (gate: rate_accuracy)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_FAULT | SB_SAMPLER_TICK_DRIVEN,
	.start = drop_start,
	.stop = drop_stop,
	.stats = drop_stats,
	.thread_start = drop_thread_start,
	.thread_stop = drop_thread_stop,
};
