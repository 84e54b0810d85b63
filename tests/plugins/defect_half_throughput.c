/* defect_half_throughput.c - test plugin: a per-thread CPU timer whose handler burns half
 * of every period of its thread's CPU time (5 ms in each 10 ms at 100 Hz): samples, rate,
 * weights and stacks stay right, it claims no suspend window, and the program does half
 * its work. Only the disturbance rules (overhead, pause_excess_fraction) can see it, and
 * with 3 runs only through their `far` limits (docs/gate.md).
 * gate-expects: overhead */
#define DEFECT_NAME "defect-half-throughput"
#define DEFECT_DESC "DEFECT: burns half its thread's CPU time in its handler"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_HANDLER() burn_half_period()
static void burn_half_period(void);
#include "tests/plugins/defect_base.h"

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* In the handler: spins until the thread has used half a period more CPU time
 * (clock_gettime is async-signal-safe). */
static void burn_half_period(void)
{
	uint64_t t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < period_ns / 2)
		;
}

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
