/* hotspot.c - three leaf functions with a known split of the work: 60/30/10.
 *
 * Every thread loops over rounds of 6 calls of hotspot_60, 3 of hotspot_30 and 1 of
 * hotspot_10, each of HOT_ITERS iterations (a few µs) with a progress tick after it
 * (workloads/progress.h). The three bodies are the same latency-bound xorshift loop
 * (WL_XORSHIFT), so the split of instructions and of cycles is 60/30/10 by construction;
 * call overhead is one call and one clock read per thousands of iterations. Truth:
 * func_share in the workload (0.6, 0.3, 0.1) and per slot func_ops[k], the iterations each
 * function did. Each result is checked against the reference, so a sampler corrupting
 * registers shows in checksum_errors. Built three times (workload.h "build variants"):
 * hotspot, hotspot@nofp, hotspot@inline. */
#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define HOT_ITERS WL_CHUNK_ITERS

#define HOT_ATTR __attribute__((PLAT_DISTINCT_FN))

/* The three bodies are one (WL_XORSHIFT); wl_keep() makes them non-leaf, so each gets a
 * frame record and a correct walk names hotspot_thread above it. */
#define HOT_FN(name)                                                                      \
	WL_SPLIT_FN uint64_t name(uint64_t seed, uint64_t iters)                          \
	{                                                                                 \
		uint64_t x;                                                               \
		WL_XORSHIFT(x, seed, iters);                                              \
		x = wl_keep(x);                                                           \
		__asm__ volatile("" : "+r"(x)); /* no tail call: the frame stays */       \
		return x;                                                                 \
	}
HOT_FN(hotspot_60)
HOT_FN(hotspot_30)
HOT_FN(hotspot_10)

/* `calls` calls of fn, each result checked and each followed by a progress tick, then
 * their iterations added to func_ops[k]. A macro, so the calls are direct: the inline
 * variant inlines them. */
#define HOT_CALLS(fn, calls, k)                                                           \
	do {                                                                              \
		for (uint64_t c = 0; c < (calls); c++) {                                  \
			if (fn(seed, HOT_ITERS) != expected)                              \
				atomic_fetch_add_explicit(&t->checksum_errors, 1,         \
							  memory_order_relaxed);          \
			wl_progress_tick();                                               \
		}                                                                         \
		atomic_fetch_add_explicit(&t->func_ops[k], (calls) * HOT_ITERS,           \
					  memory_order_relaxed);                          \
	} while (0)

static HOT_ATTR void hotspot_thread(struct wl_ctx *ctx, int index)
{
	struct wl_truth *t = &ctx->truth[index];
	uint64_t seed = ctx->seed | 1, expected = wl_unit_expected(seed, HOT_ITERS);

	while (sb_now_ns() < ctx->deadline_ns) {
		HOT_CALLS(hotspot_60, 6, 0);
		HOT_CALLS(hotspot_30, 3, 1);
		HOT_CALLS(hotspot_10, 1, 2);
		atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
	}
}

const struct workload WL_WORKLOAD(hotspot) = {
	.name = "hotspot" WL_VARIANT_TAG,
	.description = "each thread splits its work 60/30/10 over three leaf functions",
	.thread_main = hotspot_thread,
	.chain = { (const void *)hotspot_thread, NULL },
	.funcs = { (const void *)hotspot_60, (const void *)hotspot_30, (const void *)hotspot_10,
		   NULL },
	.func_share = { 0.6, 0.3, 0.1 },
	.variant = WL_VARIANT_NAME,
};
