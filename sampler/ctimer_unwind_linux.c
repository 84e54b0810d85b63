/* ctimer_unwind_linux.c - `ctimer-unwind`: ctimer (a per-thread CPU timer, ctimer.c) whose
 * handler walks the stack with libunwind from the binary's call frame information
 * (cfiwalk.h) instead of frame records: the in-process unwinder that needs no frame
 * pointers, as gperftools built with libunwind uses. What it costs per sample is its
 * handler time (sampler_cpu_ns over signals), beside ctimer's on the same workload. */
#include <errno.h>
#include <stdio.h>

#include "sampler/cfiwalk.h"
#include "sampler/ctimer.h"
#include "sampler/sampler.h"

extern const struct sampler sampler_ctimer;

/* ThreadSanitizer defers an asynchronous signal to its next interceptor and hands the
 * handler the context saved when it arrived, whose stack has moved on: libunwind would
 * follow frames that no longer exist, reading without bounds (fp_walk checks each frame
 * against the thread's stack; libunwind's local unwinder does not). */
static int ctimer_unwind_available(char *why, size_t len)
{
#ifdef __SANITIZE_THREAD__
	snprintf(why, len, "ThreadSanitizer defers signals: the handler's context no longer "
		 "matches the stack libunwind would read");
	return -1;
#else
	(void)why;
	(void)len;
	return 0;
#endif
}

static int ctimer_unwind_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	if (cfi_walk_init() != 0) {
		errno = EINVAL;
		return -1;
	}
	return ctimer_start_walk(cfg, sink, cfi_walk);
}

static int ctimer_unwind_stop(void)
{
	return sampler_ctimer.stop();
}

static int ctimer_unwind_stats(struct sb_stat *out, int max)
{
	return sampler_ctimer.stats(out, max);
}

static void ctimer_unwind_thread_start(int index)
{
	sampler_ctimer.thread_start(index);
}

static void ctimer_unwind_thread_stop(int index)
{
	sampler_ctimer.thread_stop(index);
}

const struct sampler sampler_ctimer_unwind = {
	.name = "ctimer-unwind",
	.description = "ctimer with stacks unwound by libunwind from .eh_frame (no frame "
		       "pointers needed)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAPS_PER_THREAD_FULL | SB_CAP_CFI_STACKS,
	.flags = SB_SAMPLER_TICK_DRIVEN | SB_SAMPLER_IN_PROCESS,
	.available = ctimer_unwind_available,
	.start = ctimer_unwind_start,
	.stop = ctimer_unwind_stop,
	.stats = ctimer_unwind_stats,
	.thread_start = ctimer_unwind_thread_start,
	.thread_stop = ctimer_unwind_thread_stop,
	.signal = sigsample_sigprof,
};
