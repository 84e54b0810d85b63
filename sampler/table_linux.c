/* table_linux.c - the samplers under test on Linux. A new sampler is one file plus one
 * line here (and in table_darwin.c when it runs on Darwin too). */
#include <stddef.h>

#include "sampler/sampler.h"

extern const struct sampler sampler_none;
extern const struct sampler sampler_itimer;
extern const struct sampler sampler_ctimer, sampler_ctimer_unwind;
extern const struct sampler sampler_perf;
extern const struct sampler sampler_ptrace;
extern const struct sampler sampler_mach, sampler_mach_idle;
extern const struct sampler sampler_gperftools, sampler_gperftools_pt;
extern const struct sampler sampler_fault_misdeliver, sampler_fault_drop, sampler_fault_slow,
	sampler_fault_stack;
extern const struct sampler sampler_test_malloc_in_handler;

const struct sampler *const sb_sampler_table[] = {
	&sampler_none,
	&sampler_itimer,
	&sampler_ctimer,
	&sampler_ctimer_unwind,
	&sampler_perf,
	&sampler_ptrace,
	&sampler_mach,
	&sampler_mach_idle,
	&sampler_gperftools, &sampler_gperftools_pt,
	&sampler_fault_misdeliver, &sampler_fault_drop, &sampler_fault_slow, &sampler_fault_stack,
	&sampler_test_malloc_in_handler,
	NULL,
};
