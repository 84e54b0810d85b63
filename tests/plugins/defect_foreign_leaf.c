/* defect_foreign_leaf.c - test plugin: every other sample's stack starts in its own signal
 * handler (the walk began in the handler's frame, then reached the interrupted code), so
 * half the leaves lie in the plugin's module. Samples with a leaf outside the workload's code
 * are not judged for the chain (docs/gate.md, "Stacks through code without frame
 * pointers"); the bound on their share catches a sampler hiding stacks there.
 * gate-untimed: caught by the stacks' content, whatever the host's load
 * gate-expects: stack_unwalkable_fraction */
#define DEFECT_NAME "defect-foreign-leaf"
#define DEFECT_DESC "DEFECT: every other stack starts in its own signal handler"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	if (seq % 2 || s->depth == 0 || s->depth >= MAX_FRAMES)
		return 1;
	memmove(pcs + 1, pcs, s->depth * sizeof(*pcs));
	pcs[0] = (uint64_t)(uintptr_t)handler + 16;
	s->depth++;
	return 1;
}
