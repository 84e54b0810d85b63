/* table_darwin.c - the samplers under test on Darwin: the seeds' comparison (mach against
 * setitimer), gperftools (Homebrew's libprofiler), the out-of-process mach-task, and the
 * portable faults. No ctimer (no timer_create), perf or ptrace: those are Linux's. */
#include <stddef.h>

#include "sampler/sampler.h"

extern const struct sampler sampler_none;
extern const struct sampler sampler_itimer;
extern const struct sampler sampler_mach, sampler_mach_idle;
extern const struct sampler sampler_mach_task;
extern const struct sampler sampler_gperftools;
extern const struct sampler sampler_fault_misdeliver, sampler_fault_slow;

const struct sampler *const sb_sampler_table[] = {
	&sampler_none,
	&sampler_itimer,
	&sampler_mach,
	&sampler_mach_idle,
	&sampler_mach_task,
	&sampler_gperftools,
	&sampler_fault_misdeliver, &sampler_fault_slow,
	NULL,
};
