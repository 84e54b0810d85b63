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
 * progress tick. */
#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define ALIAS_ITERS 2000 /* iterations per chunk: a few µs, as hotspot's calls */
#define ALIAS_DEFAULT_HZ 100

#define ALIAS_ATTR __attribute__((PLAT_DISTINCT_FN))

/* Keeps the phase functions non-leaf (a frame record of their own; see hotspot.c). */
static ALIAS_ATTR uint64_t alias_keep(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

/* Runs chunks until sb_now_ns() reaches until_ns; returns the iterations done. */
#define ALIAS_BODY                                                                        \
	{                                                                                 \
		uint64_t done = 0;                                                        \
		do {                                                                      \
			uint64_t x = seed | 1;                                            \
			for (uint64_t i = 0; i < ALIAS_ITERS; i++) {                      \
				x ^= x << 13;                                             \
				x ^= x >> 7;                                              \
				x ^= x << 17;                                             \
			}                                                                 \
			x = alias_keep(x);                                                \
			if (x != expected)                                                \
				atomic_fetch_add_explicit(&t->checksum_errors, 1,         \
							  memory_order_relaxed);          \
			done += ALIAS_ITERS;                                              \
			wl_progress_tick();                                               \
		} while (sb_now_ns() < until_ns);                                         \
		return done;                                                              \
	}

static ALIAS_ATTR uint64_t alias_a(struct wl_truth *t, uint64_t seed, uint64_t expected,
				   uint64_t until_ns) ALIAS_BODY
static ALIAS_ATTR uint64_t alias_b(struct wl_truth *t, uint64_t seed, uint64_t expected,
				   uint64_t until_ns) ALIAS_BODY

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

const struct workload workload_alias = {
	.name = "alias",
	.description = "first quarter of each sampling period (wall clock) in one function, "
		       "the rest in another",
	.thread_main = alias_thread,
	.chain = { (const void *)alias_thread, NULL },
	.funcs = { (const void *)alias_a, (const void *)alias_b, NULL },
	.func_share = { 0.25, 0.75 },
	.func_share_measured = true,
};
