/* defect_drop.c - test plugin: silently loses every fourth sample.
 * gate-expects: rate_accuracy
 * gate-untimed: a quarter of the samples lost in every run, whatever the load (load only
 * takes more: the rate stays below 0.9) */
#define DEFECT_NAME "defect-drop-quarter"
#define DEFECT_DESC "DEFECT: silently loses every fourth sample"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	return seq % 4 != 3;
}
