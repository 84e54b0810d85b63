/* defect_one_thread.c - test plugin: one process-wide CPU timer whose signal reaches only the first thread (seed 000's bug).
 * gate-untimed: caught by the samples' content, whatever the host's load
 * gate-expects: thread_tvd */
#define DEFECT_NAME "defect-one-thread"
#define DEFECT_DESC "DEFECT: one process-wide CPU timer whose signal reaches only the first thread (seed 000's bug)"
#define DEFECT_CAPS SAMPBENCH_CAP_PROCESS_WIDE | SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | \
		     SAMPBENCH_CAP_STACKS | SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_ONE_PROCESS_TIMER
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
