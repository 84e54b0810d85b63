/* defect_hang.c - test plugin: hangs the sampled thread forever in its handler after 20 samples.
 * gate-expects: failed_runs
 * gate-untimed: caught by a failed run, whatever the host's load (its 20th sample comes within
 * 0.1 s of the threads' CPU: 2 threads at 100 Hz) */
#define DEFECT_NAME "defect-hang"
#define DEFECT_DESC "DEFECT: hangs the sampled thread forever in its handler after 20 samples"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	if (seq >= 20)
		for (;;)
			pause(); /* the defect: SIGPROF stays blocked, the thread never returns */
	return 1;
}
