/* defect_short_report.c - test plugin: holds each sampled thread ~1.5 ms in its signal
 * handler but reports a 20 µs suspend window: its account of its stops is a lie the
 * threads' own progress clock sees through.
 * gate-expects: window_unreported_p50_ns */
#define DEFECT_NAME "defect-short-report"
#define DEFECT_DESC "DEFECT: keeps threads ~1.5 ms per sample, reports 20 us windows"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)pcs;
	(void)seq;
	struct timespec hold = { 0, 1500000 };
	nanosleep(&hold, NULL); /* off-CPU, as a thread stopped from outside */
	s->suspend_window_ns = 20000;
	return 1;
}
