/* mach_idle.c - `mach-idle`: the mach sampler with idle skip on (samply's policy: a thread
 * that used no CPU since its previous sample is not stopped; its previous stack is
 * recorded again). A sampler of its own, not a flag, so every file, gate cell and report
 * row tells the two policies apart by name (docs/mach.md, "Idle skip"). */
#include "sampler/sampler.h"

extern const struct sampler sampler_mach;

static int mach_idle_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct sb_config c = *cfg;

	c.idle_skip = true;
	return sampler_mach.start(&c, sink);
}

static int mach_idle_stop(void)
{
	return sampler_mach.stop();
}

static int mach_idle_stats(struct sb_stat *out, int max)
{
	return sampler_mach.stats(out, max);
}

static void mach_idle_thread_start(int index)
{
	sampler_mach.thread_start(index);
}

const struct sampler sampler_mach_idle = {
	.name = "mach-idle",
	.description = "mach with idle skip: a thread that did not run since its previous "
		       "sample is not stopped, its stack is reused",
	.clock = SB_CLOCK_WALL,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = 0,
	.start = mach_idle_start,
	.stop = mach_idle_stop,
	.stats = mach_idle_stats,
	.thread_start = mach_idle_thread_start,
};
