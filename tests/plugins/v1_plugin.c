/* v1_plugin.c - a plugin as built against ABI version 1 (no `caps`): it must keep loading,
 * judged with the v1 defaults of sampbench_sampler.h. Never started. */
#include <errno.h>
#include <stddef.h>

#include "sampbench_sampler.h"

static int start(const struct sampbench_config *cfg, const struct sampbench_sink *sink)
{
	(void)cfg;
	(void)sink;
	errno = ENOSYS;
	return -1;
}

static int stop(void)
{
	return 0;
}

SAMPBENCH_EXPORT const struct sampbench_sampler sampbench_sampler = {
	.abi_version = 1,
	.struct_size = offsetof(struct sampbench_sampler, caps), /* the v1 struct */
	.name = "v1-plugin",
	.clock = SAMPBENCH_CLOCK_WALL,
	.start = start,
	.stop = stop,
};
