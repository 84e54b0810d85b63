/* defect_leaf_only.c - test plugin: reports only the interrupted PC, never its callers (a
 * walker that gives up at the first frame). On malloclock, where walks from inside glibc's
 * allocator stop anyway (unwalkable, not judged), the samples whose leaf is the workload's
 * own code still show the chain missing.
 * gate-untimed: caught by the stacks' content, whatever the host's load
 * gate-expects: stack_correct_fraction
 * gate-workload: malloclock
 * gate-plain-only (glibc's allocator: under AddressSanitizer malloclock's time is in ASan's
 * allocator, whose leaves are not judged, and in 1 of 5 ASan/UBSan make checks not one
 * sample had a leaf in the workload's code: stack_correct_fraction not measured) */
#define DEFECT_NAME "defect-leaf-only"
#define DEFECT_DESC "DEFECT: reports only the interrupted PC, never its callers"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)pcs;
	(void)seq;
	if (s->depth > 1)
		s->depth = 1;
	return 1;
}
