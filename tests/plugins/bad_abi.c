/* bad_abi.c - a plugin built for a future ABI version: sampbench must refuse it. */
#include "sampbench_sampler.h"

static int start(const struct sampbench_config *cfg, const struct sampbench_sink *sink)
{
	(void)cfg;
	(void)sink;
	return 0;
}

static int stop(void)
{
	return 0;
}

SAMPBENCH_EXPORT const struct sampbench_sampler sampbench_sampler = {
	.abi_version = 99, /* a future version */
	.struct_size = sizeof(struct sampbench_sampler),
	.name = "bad-abi",
	.start = start,
	.stop = stop,
};
