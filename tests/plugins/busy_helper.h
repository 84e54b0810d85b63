/* busy_helper.h - a helper thread for the cost defects (defect_busy_*.c): started by the
 * plugin's start(), it spins "polling for the next tick" at SCHED_IDLE priority until stop()
 * joins it, so it takes whatever CPU the workload leaves idle (mixed: its threads sleep and
 * block; balanced: none). busy_cpu_ns is its own CPU clock at its end. Include after
 * defect_base.h's prerequisites; define DEFECT_START busy_start, DEFECT_STOP busy_stop. */
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
