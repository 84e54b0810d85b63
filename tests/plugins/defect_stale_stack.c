/* defect_stale_stack.c - test plugin: hands over the previous sample's stack, whichever thread it came from.
 * gate-expects: misattributed_fraction */
#define DEFECT_NAME "defect-stale-stack"
#define DEFECT_DESC "DEFECT: hands over the previous sample's stack, whichever thread it came from"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	static uint64_t last[MAX_FRAMES];
	static _Atomic uint32_t last_depth;
	uint64_t mine[MAX_FRAMES];
	uint32_t d = s->depth, ld = atomic_load(&last_depth);

	(void)seq;
	memcpy(mine, pcs, d * sizeof(*pcs));
	memcpy(pcs, last, ld * sizeof(*pcs)); /* racy by design: any stack but its own */
	memcpy(last, mine, d * sizeof(*pcs));
	atomic_store(&last_depth, d);
	s->depth = ld;
	return ld > 0;
}
