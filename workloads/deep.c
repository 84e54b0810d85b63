/* deep.c - recursion to `param` frames (default 200, 2..2000), then spin at the bottom.
 *
 * The recursion cycles through DEEP_NFUNCS distinct functions, chosen so the frame above
 * the bottom is always deep_f0, then deep_f1, ...: frame n (counting from the bottom) runs
 * in deep_f{n % DEEP_NFUNCS}. Every frame adds 1 to its callee's result after the call,
 * which keeps the call from becoming a tail call (each frame really exists) and lets the
 * thread check that its return path was intact: the result must be depth + 1.
 *
 * Truth: the exact chain (leaf first) slot leaf, wl_unit, deep_bottom, deep_f0, deep_f1,
 * ..., deep_f{depth % DEEP_NFUNCS}, deep_thread, wl_trampoline, ...: a walk from the bottom
 * has depth + 7 frames with pthread's own (wl_unit is invisible to frame-pointer walks:
 * the slot leaf has no frame record). Above SB_MAX_FRAMES (256) every sample from the
 * bottom must be flagged truncated. Built twice (workload.h "build variants"): deep and
 * deep@nofp; the recursion through a table of functions cannot be inlined. */
#include "platform/platform.h"
#include "workloads/workload.h"

#define DEEP_DEFAULT 200
#define DEEP_MIN 2
#define DEEP_MAX 2000
#define DEEP_NFUNCS 8

#define DEEP_ATTR __attribute__((PLAT_DISTINCT_FN))

typedef uint64_t (*deep_fn)(struct wl_ctx *ctx, int index, uint32_t n);
static const deep_fn deep_fns[DEEP_NFUNCS];

static DEEP_ATTR uint64_t deep_bottom(struct wl_ctx *ctx, int index)
{
	while (sb_now_ns() < ctx->deadline_ns)
		wl_unit(ctx, index);
	return 0;
}

#define DEEP_FN(k)                                                                        \
	static DEEP_ATTR uint64_t deep_f##k(struct wl_ctx *ctx, int index, uint32_t n)    \
	{                                                                                 \
		uint64_t r = n ? deep_fns[(n - 1) % DEEP_NFUNCS](ctx, index, n - 1)       \
			       : deep_bottom(ctx, index);                                 \
		__asm__ volatile("" : "+r"(r));                                           \
		return r + 1;                                                             \
	}
DEEP_FN(0) DEEP_FN(1) DEEP_FN(2) DEEP_FN(3) DEEP_FN(4) DEEP_FN(5) DEEP_FN(6) DEEP_FN(7)

static const deep_fn deep_fns[DEEP_NFUNCS] = { deep_f0, deep_f1, deep_f2, deep_f3,
					       deep_f4, deep_f5, deep_f6, deep_f7 };

static uint32_t deep_depth(const struct wl_ctx *ctx)
{
	uint32_t d = ctx->param ? ctx->param : DEEP_DEFAULT;
	return d < DEEP_MIN ? DEEP_MIN : d > DEEP_MAX ? DEEP_MAX : d;
}

static DEEP_ATTR void deep_thread(struct wl_ctx *ctx, int index)
{
	uint32_t depth = deep_depth(ctx);
	uint64_t r = deep_fns[depth % DEEP_NFUNCS](ctx, index, depth);

	__asm__ volatile("" : "+r"(r));
	if (r != (uint64_t)depth + 1)
		atomic_fetch_add(&ctx->truth[index].checksum_errors, 1);
}

const struct workload WL_WORKLOAD(deep) = {
	.name = "deep" WL_VARIANT_TAG,
	.description = "recursion to --param frames (default 200, max 2000), spinning at the bottom",
	.thread_main = deep_thread,
	/* Not wl_unit: the slot leaf below it has no frame record (GCC omits it in leaf
	 * functions), so a frame-pointer walk from the leaf cannot see wl_unit. */
	.chain = { (const void *)deep_bottom, (const void *)deep_f0, (const void *)deep_f1,
		   (const void *)deep_f2, (const void *)deep_thread, NULL },
	.variant = WL_VARIANT_NAME,
};
