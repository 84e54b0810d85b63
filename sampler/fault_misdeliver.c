/* fault_misdeliver.c - `fault-misdeliver`: the healthy itimer sampler with SIGPROF blocked
 * in every workload thread, so the process-wide timer's signals all land on the main
 * thread, which is only waiting in pthread_join. That is how gperftools behaved on OS X
 * before pprof_mac_fix: the profile charges everything to one thread. The gate must fail
 * it on thread attribution (thread_tvd). */
#include <pthread.h>
#include <signal.h>

#include "sampler/sampler.h"

extern const struct sampler sampler_itimer;

static int misdeliver_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	return sampler_itimer.start(cfg, sink);
}

static int misdeliver_stop(void)
{
	return sampler_itimer.stop();
}

static int misdeliver_stats(struct sb_stat *out, int max)
{
	return sampler_itimer.stats(out, max);
}

/* Runs in each workload thread: the kernel then delivers the process-directed SIGPROF to
 * a thread that does not block it, the main one. */
static void misdeliver_thread_start(int index)
{
	sigset_t set;

	(void)index;
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

const struct sampler sampler_fault_misdeliver = {
	.name = "fault-misdeliver",
	.description = "FAULT: itimer with SIGPROF blocked in workload threads, all signals "
		       "to the main thread (gate: thread_tvd)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PROCESS_SIGNAL,
	.flags = SB_SAMPLER_FAULT | SB_SAMPLER_TICK_DRIVEN,
	.start = misdeliver_start,
	.stop = misdeliver_stop,
	.stats = misdeliver_stats,
	.thread_start = misdeliver_thread_start,
};
