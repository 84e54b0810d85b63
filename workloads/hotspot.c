/* hotspot.c - three leaf functions with a known split of the work: 60/30/10.
 *
 * Every thread loops over rounds of 6 calls of hotspot_60, 3 of hotspot_30 and 1 of
 * hotspot_10, each of HOT_ITERS iterations (a few µs) with a progress tick after it
 * (workloads/progress.h). The three bodies are the same latency-bound xorshift loop (one
 * dependent chain: no alignment or port effect can change its speed), so the split of
 * instructions and of cycles is 60/30/10 by construction; call overhead is one call and
 * one clock read per thousands of iterations. Truth: func_share in the workload (0.6, 0.3, 0.1) and per slot
 * func_ops[k], the iterations each function did. Each result is checked against the
 * reference, so a sampler corrupting registers shows in checksum_errors. */
#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define HOT_ITERS 2000

#define HOT_ATTR __attribute__((PLAT_DISTINCT_FN))

/* GCC gives leaf functions no frame record even with -fno-omit-frame-pointer, and a walk
 * from a frameless leaf skips its caller. The call to hot_keep() after the loop makes the
 * three functions non-leaf, so they get a frame and a correct walk names hotspot_thread. */
static HOT_ATTR uint64_t hot_keep(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

#define HOT_BODY                                                                          \
	{                                                                                 \
		uint64_t x = seed | 1;                                                    \
		for (uint64_t i = 0; i < iters; i++) {                                    \
			x ^= x << 13;                                                     \
			x ^= x >> 7;                                                      \
			x ^= x << 17;                                                     \
		}                                                                         \
		x = hot_keep(x);                                                          \
		__asm__ volatile("" : "+r"(x));                                           \
		return x;                                                                 \
	}

static HOT_ATTR uint64_t hotspot_60(uint64_t seed, uint64_t iters) HOT_BODY
static HOT_ATTR uint64_t hotspot_30(uint64_t seed, uint64_t iters) HOT_BODY
static HOT_ATTR uint64_t hotspot_10(uint64_t seed, uint64_t iters) HOT_BODY

typedef uint64_t (*hot_fn)(uint64_t, uint64_t);
static const hot_fn hot_fns[] = { hotspot_60, hotspot_30, hotspot_10 };
static const uint64_t hot_calls[] = { 6, 3, 1 };
#define HOT_N ARRAY_SIZE(hot_fns)

static HOT_ATTR void hotspot_thread(struct wl_ctx *ctx, int index)
{
	struct wl_truth *t = &ctx->truth[index];
	uint64_t seed = ctx->seed | 1, expected = wl_unit_expected(seed, HOT_ITERS);

	while (sb_now_ns() < ctx->deadline_ns) {
		for (size_t k = 0; k < HOT_N; k++) {
			for (uint64_t c = 0; c < hot_calls[k]; c++) {
				if (hot_fns[k](seed, HOT_ITERS) != expected)
					atomic_fetch_add_explicit(&t->checksum_errors, 1,
								  memory_order_relaxed);
				wl_progress_tick();
			}
			atomic_fetch_add_explicit(&t->func_ops[k], hot_calls[k] * HOT_ITERS,
						  memory_order_relaxed);
		}
		atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
	}
}

const struct workload workload_hotspot = {
	.name = "hotspot",
	.description = "each thread splits its work 60/30/10 over three leaf functions",
	.thread_main = hotspot_thread,
	.chain = { (const void *)hotspot_thread, NULL },
	.funcs = { (const void *)hotspot_60, (const void *)hotspot_30, (const void *)hotspot_10,
		   NULL },
	.func_share = { 0.6, 0.3, 0.1 },
};
