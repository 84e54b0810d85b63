/* defect_stale_stack.c - test plugin: hands over the previous sample's stack, whichever thread it came from.
 * gate-untimed: caught by the samples' content, whatever the host's load
 * gate-expects: misattributed_fraction */
#define DEFECT_NAME "defect-stale-stack"
#define DEFECT_DESC "DEFECT: hands over the previous sample's stack, whichever thread it came from"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

/* Racy by design (any stack but its own, possibly torn), but word by word through relaxed
 * atomics: a data race would be undefined behaviour, and a report that fails the run in
 * a SANITIZE=thread build (whose memcpy is ThreadSanitizer's). */
static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	static _Atomic uint64_t last[MAX_FRAMES];
	static _Atomic uint32_t last_depth;
	uint64_t mine[MAX_FRAMES];
	uint32_t d = s->depth, ld = atomic_load(&last_depth);

	(void)seq;
	for (uint32_t i = 0; i < d; i++)
		mine[i] = pcs[i];
	for (uint32_t i = 0; i < ld; i++)
		pcs[i] = atomic_load_explicit(&last[i], memory_order_relaxed);
	for (uint32_t i = 0; i < d; i++)
		atomic_store_explicit(&last[i], mine[i], memory_order_relaxed);
	atomic_store(&last_depth, d);
	s->depth = ld;
	return ld > 0;
}
