/* busy_helper.h - the cost defects (defect_busy_*.c) but for what they claim: a helper
 * thread started by the plugin's start() spins "polling for the next tick" at SCHED_IDLE
 * priority until stop() joins it, so it takes whatever CPU the workload leaves idle (mixed:
 * its threads sleep and block; balanced: none); busy_cpu_ns is its own CPU clock at its
 * end. The plugin is defect_base.h's per-thread CPU timer with every sample pushed as
 * taken. A defect defines DEFECT_NAME, DEFECT_DESC and BUSY_CLAIM (the expression its
 * stats() reports as sampler_cpu_ns; busy_cpu_ns and n_samples are in scope), then
 * includes this file. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static pthread_t busy_thread;
static _Atomic int busy_run, busy_started;
static _Atomic uint64_t busy_cpu_ns;

static void *busy_main(void *p)
{
	(void)p;
	struct sched_param sp = { 0 };
	struct timespec ts;

	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	while (atomic_load_explicit(&busy_run, memory_order_relaxed))
		; /* the defect: a poll loop that never sleeps between ticks */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	atomic_store(&busy_cpu_ns, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	return NULL;
}

static void busy_start(void)
{
	atomic_store(&busy_run, 1);
	atomic_store(&busy_started, pthread_create(&busy_thread, NULL, busy_main, NULL) == 0);
}

static void busy_stop(void)
{
	atomic_store(&busy_run, 0);
	if (atomic_exchange(&busy_started, 0))
		pthread_join(busy_thread, NULL);
}

#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_START busy_start
#define DEFECT_STOP busy_stop
#define DEFECT_STATS claim_stats
struct sampbench_stat;
static int claim_stats(struct sampbench_stat *out, int max);
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}

/* What the plugin says its sampling cost: BUSY_CLAIM. */
static int claim_stats(struct sampbench_stat *out, int max)
{
	if (max < 1)
		return 0;
	out[0] = (struct sampbench_stat){ "sampler_cpu_ns", (double)(BUSY_CLAIM) };
	return 1;
}
