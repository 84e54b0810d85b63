/* defect_skip_leaf.c - test plugin: drops the leaf frame of every stack (an off-by-one in the walk).
 * gate-untimed: caught by the samples' content, whatever the host's load
 * gate-expects: misattributed_fraction (its leaf is no thread's: NaN though it claims stacks) */
#define DEFECT_NAME "defect-skip-leaf"
#define DEFECT_DESC "DEFECT: drops the leaf frame of every stack (an off-by-one in the walk)"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)seq;
	if (s->depth < 2)
		return 0;
	memmove(pcs, pcs + 1, (s->depth - 1) * sizeof(*pcs));
	s->depth--;
	return 1;
}
