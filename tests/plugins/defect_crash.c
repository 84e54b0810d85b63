/* defect_crash.c - test plugin: crashes the target (SIGSEGV in its handler) after 5 samples.
 * gate-expects: failed_runs
 * gate-untimed: caught by a failed run, whatever the host's load (its sixth sample comes after
 * 60 ms of the threads' CPU at 100 Hz; a run of make check's loaded parallel lane got
 * too little CPU for 20) */
#define DEFECT_NAME "defect-crash"
#define DEFECT_DESC "DEFECT: crashes the target (SIGSEGV in its handler) after 5 samples"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	if (seq == 5)
		raise(SIGSEGV); /* the defect: what a bad pointer in a handler does */
	return 1;
}
