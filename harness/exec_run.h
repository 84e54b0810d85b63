/* exec_run.h - one run of `sampbench exec`: the program once, under one sampler. */
#ifndef SB_EXEC_RUN_H
#define SB_EXEC_RUN_H

#include <stdint.h>

#include "core/run.h"
#include "harness/exec_mode.h"
#include "sampler/sampler.h"

/* Runs t's program once under s and fills r (r's arrays are malloc'd and owned by r;
 * workload = cmdline). The truth is each thread's CPU time from /proc; the symbols come
 * from the program's own memory map. Returns the program's wait status, or -1 when it
 * did not run (r says why: failed, or skipped when no mode can sample with s). */
int exec_run(const struct exec_target *t, const struct sampler *s, int64_t run_id,
	     const char *cmdline, struct sb_run *r);

#endif
