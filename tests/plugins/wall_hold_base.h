/* wall_hold_base.h - the skeleton of the wall-clock test plugins that hold threads: a
 * sampler thread of its own signals every workload thread at every tick (tgkill), and the
 * handler keeps the thread for WALL_HOLD_US (environment SB_WALL_HOLD_US overrides it,
 * read in start()) spinning on CLOCK_MONOTONIC, walks its stack and pushes the sample.
 * Each wall_*.c / defect_wall_*.c defines DEFECT_NAME, DEFECT_DESC and WALL_REPORT(held_ns),
 * the suspend window it reports for a hold of held_ns, then includes this file; a defect's
 * `gate-expects:` comment names the metric the gate must fail it on (tests/gate_defects.sh).
 * Not defect_base.h: that one is a per-thread CPU timer, and a wall sampler stops threads
 * from outside, running or not; the setup both share is plugin_setup.h. The handler is async-signal-safe (clock_gettime, the
 * sink's push and walk) and always returns: the thread resumes on every path. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/plugins/plugin_setup.h"

#define MAX_SLOTS 256

static uint64_t hold_ns;
static pthread_t ticker;
static int ticker_started;
static _Atomic int32_t slot_tid[MAX_SLOTS];  /* 0: no thread in the slot */
static _Atomic uint64_t slot_sent[MAX_SLOTS]; /* when the tick's signal was sent */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs in the stopped thread: holds it hold_ns (spinning: the thread does none of its own
 * work meanwhile), then pushes a sample reporting WALL_REPORT of the hold. */
static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	int saved_errno = errno;
	uint64_t pcs[MAX_FRAMES];
	struct sampbench_sample s;

	if (!atomic_load(&running) || si->si_code != SI_TKILL) {
		errno = saved_errno;
		return;
	}
	uint64_t t0 = mono_ns();
	memset(&s, 0, sizeof(s));
	s.depth = sink->walk_ucontext(uc, pcs, max_depth, &s.flags);
	s.frames = pcs;
	sink->self(&s.tid, &s.thread_index, NULL, NULL);
	uint64_t sent = s.thread_index >= 0 && s.thread_index < MAX_SLOTS ?
				atomic_load(&slot_sent[s.thread_index]) : 0;
	while (mono_ns() - t0 < hold_ns)
		; /* the hold */
	uint64_t t1 = mono_ns();
	s.time_ns = t0;
	s.weight_ns = (double)period_ns;
	s.stop_latency_ns = sent && sent <= t0 ? (double)(t0 - sent) : NAN;
	s.suspend_window_ns = WALL_REPORT((double)(t1 - t0));
	sink->push(sink->ctx, &s);
	errno = saved_errno;
}

/* The sampler thread: every period, one signal to each registered workload thread. */
static void *tick_loop(void *arg)
{
	(void)arg;
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	pid_t pid = getpid();
	uint64_t next = mono_ns() + period_ns;
	while (atomic_load(&running)) {
		struct timespec at = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		next += period_ns;
		for (int i = 0; i < MAX_SLOTS && atomic_load(&running); i++) {
			int32_t tid = atomic_load(&slot_tid[i]);
			if (tid <= 0)
				continue;
			atomic_store(&slot_sent[i], mono_ns());
			syscall(SYS_tgkill, pid, tid, SIGPROF);
		}
	}
	return NULL;
}

static void thread_start(int index)
{
	if (index >= 0 && index < MAX_SLOTS)
		atomic_store(&slot_tid[index], (int32_t)syscall(SYS_gettid));
}

static void thread_stop(int index)
{
	if (index >= 0 && index < MAX_SLOTS)
		atomic_store(&slot_tid[index], 0);
}

static int start(const struct sampbench_config *cfg, const struct sampbench_sink *s)
{
	const char *env = getenv("SB_WALL_HOLD_US");

	if (plugin_setup(cfg, s) != 0)
		return -1;
	hold_ns = (uint64_t)((env && atof(env) > 0 ? atof(env) : WALL_HOLD_US) * 1e3);
	atomic_store(&running, 1);
	int e = pthread_create(&ticker, NULL, tick_loop, NULL);
	if (e) {
		atomic_store(&running, 0);
		errno = e;
		return -1;
	}
	ticker_started = 1;
	return 0;
}

static int stop(void)
{
	atomic_store(&running, 0);
	if (ticker_started)
		pthread_join(ticker, NULL);
	ticker_started = 0;
	return 0;
}

SAMPBENCH_EXPORT const struct sampbench_sampler sampbench_sampler = {
	.abi_version = SAMPBENCH_SAMPLER_ABI,
	.struct_size = sizeof(struct sampbench_sampler),
	.name = DEFECT_NAME,
	.description = DEFECT_DESC,
	.clock = SAMPBENCH_CLOCK_WALL,
	.start = start,
	.stop = stop,
	.thread_start = thread_start,
	.thread_stop = thread_stop,
	.caps = SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS |
		SAMPBENCH_CAP_STOP_LATENCY | SAMPBENCH_CAP_SUSPEND_WINDOW,
};
