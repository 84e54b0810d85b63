/* none.c - runs the workload with nothing attached: the reference for `overhead`. */
#include "sampler/sampler.h"

static int none_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	(void)cfg;
	(void)sink;
	return 0;
}

static int none_stop(void)
{
	return 0;
}

const struct sampler sampler_none = {
	.name = "none",
	.description = "no sampler: the workload alone, reference for overhead",
	.clock = SB_CLOCK_CPU,
	.caps = 0,
	.flags = SB_SAMPLER_BASELINE,
	.start = none_start,
	.stop = none_stop,
};
