/* defect_weights.c - test plugin: weights every sample with half its period (a unit slip that halves a profile).
 * gate-untimed: caught by the samples' content, whatever the host's load
 * gate-expects: magnitude_error */
#define DEFECT_NAME "defect-half-weights"
#define DEFECT_DESC "DEFECT: weights every sample with half its period (a unit slip that halves a profile)"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)pcs;
	(void)seq;
	s->weight_ns /= 2;
	return 1;
}
