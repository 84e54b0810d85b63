/* alias.c - work that repeats in step with the sampling clock: a quarter of every sampling
 * period in alias_a, three quarters in alias_b.
 *
 * The phases are locked to CLOCK_MONOTONIC, not to the thread's start: at every instant t
 * a thread runs alias_a when t mod P < P/4, else alias_b, where P is the sampling period
 * of the run (1/hz) divided by the workload's param (default 1), so every thread of every
 * run is in the same phase at the same instant. A sampler whose sample instants also keep
 * a fixed phase modulo P (an absolute-deadline loop, a CPU timer that fires on the kernel
 * tick, an hrtimer) sees the same phase at every sample and charges one function with
 * everything: the aliasing of Mytkowicz et al. (PLDI 2010). A sampler with random sample
 * instants sees the true split.
 *
 * Truth: func_ops[k], the iterations each function did (same loop body, so the split of
 * iterations is the split of CPU time), written as the run's func_work stats; the split is
 * about 25/75 but measured, not declared: a thread kept from running in one phase shifts
 * it. ops counts chunks; each chunk's result is checked (checksum_errors) and ends with a
 * progress tick. Built three times (workload.h "build variants"): alias, alias@nofp,
 * alias@inline. */
#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define ALIAS_ITERS WL_CHUNK_ITERS
#define ALIAS_DEFAULT_HZ 100

#define ALIAS_ATTR __attribute__((PLAT_DISTINCT_FN))

/* Each runs chunks until its phase ends (WL_CHUNK_FN); returns the iterations done. */
WL_CHUNK_FN(WL_SPLIT_FN, alias_a)
WL_CHUNK_FN(WL_SPLIT_FN, alias_b)

/* The phase period in ns: the sampling period over param. */
static uint64_t alias_period_ns(const struct wl_ctx *ctx)
{
	double hz = ctx->sample_hz > 0 ? ctx->sample_hz : ALIAS_DEFAULT_HZ;
	double p = 1e9 / hz / (ctx->param ? ctx->param : 1);
	return p >= 1000 ? (uint64_t)p : 1000;
}

static ALIAS_ATTR void alias_thread(struct wl_ctx *ctx, int index)
{
	struct wl_truth *t = &ctx->truth[index];
	uint64_t seed = ctx->seed | 1, expected = wl_unit_expected(seed, ALIAS_ITERS);
	uint64_t period = alias_period_ns(ctx), now;

	while ((now = sb_now_ns()) < ctx->deadline_ns) {
		uint64_t base = now - now % period, split = base + period / 4;
		int k = now < split ? 0 : 1;
		uint64_t done = k == 0 ? alias_a(t, seed, expected, split)
				       : alias_b(t, seed, expected, base + period);
		atomic_fetch_add_explicit(&t->func_ops[k], done, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->ops, done / ALIAS_ITERS, memory_order_relaxed);
	}
}

const struct workload WL_WORKLOAD(alias) = {
	.name = "alias" WL_VARIANT_TAG,
	.description = "first quarter of each sampling period (wall clock) in one function, "
		       "the rest in another",
	.thread_main = alias_thread,
	.chain = { (const void *)alias_thread, NULL },
	.funcs = { (const void *)alias_a, (const void *)alias_b, NULL },
	.func_share = { 0.25, 0.75 },
	.func_share_measured = true,
	.variant = WL_VARIANT_NAME,
};
