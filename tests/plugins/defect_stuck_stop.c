/* defect_stuck_stop.c - test plugin: an honest sampler (it reports the time it held each
 * thread) that once in every 150 samples leaves the thread stopped for 40 ms, as a resume
 * that comes late (a suspend count off by one, a sampler thread descheduled while it holds
 * its target). Pooled quantiles cannot see a defect of 0.7 % of the stops; a tail rule can.
 * gate-expects: suspend_window_max_ns */
#define DEFECT_NAME "defect-stuck-stop"
#define DEFECT_DESC "DEFECT: leaves one thread stopped 40 ms once every 150 samples"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)pcs;
	(void)s;
	if (seq % 150 == 75) {
		struct timespec hold = { 0, 40000000 };
		nanosleep(&hold, NULL);
	}
	return 1; /* the base reports the time really spent here */
}
