/* defect_slow.c - test plugin: keeps every thread 2 ms in its signal handler per sample, and says so.
 * gate-expects: suspend_window */
#define DEFECT_NAME "defect-slow-handler"
#define DEFECT_DESC "DEFECT: keeps every thread 2 ms in its signal handler per sample, and says so"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)pcs;
	(void)seq;
	uint64_t t0 = sink->now_ns();
	while (sink->now_ns() - t0 < 2000000)
		;
	s->suspend_window_ns = (double)(sink->now_ns() - s->time_ns);
	return 1;
}
