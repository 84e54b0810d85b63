/* table.c - the samplers under test. A new sampler is one file plus one line here. */
#include <string.h>

#include "sampler.h"

extern const struct sampler sampler_none;
extern const struct sampler sampler_itimer;
extern const struct sampler sampler_ctimer;
extern const struct sampler sampler_perf;
extern const struct sampler sampler_ptrace;
extern const struct sampler sampler_mach;
extern const struct sampler sampler_gperftools, sampler_gperftools_pt;
extern const struct sampler sampler_fault_misdeliver, sampler_fault_drop, sampler_fault_slow,
	sampler_fault_stack;
extern const struct sampler sampler_test_malloc_in_handler;

static const struct sampler *const samplers[] = {
	&sampler_none,
	&sampler_itimer,
	&sampler_ctimer,
	&sampler_perf,
	&sampler_ptrace,
	&sampler_mach,
	&sampler_gperftools, &sampler_gperftools_pt,
	&sampler_fault_misdeliver, &sampler_fault_drop, &sampler_fault_slow, &sampler_fault_stack,
	&sampler_test_malloc_in_handler,
	NULL,
};

const struct sampler *sb_active_sampler;

const struct sampler *sampler_at(size_t i)
{
	return i < sizeof(samplers) / sizeof(samplers[0]) ? samplers[i] : NULL;
}

const struct sampler *sampler_find(const char *name)
{
	for (size_t i = 0; samplers[i]; i++)
		if (strcmp(samplers[i]->name, name) == 0)
			return samplers[i];
	return NULL;
}
