/* burst.c - the same CPU in bursts of very different lengths: burst_long runs 5 ms at a
 * time, burst_short 50 µs, each burst followed by a sleep as long as itself.
 *
 * Each round a thread runs one long burst and its sleep, then 100 short bursts and theirs:
 * equal CPU in both functions by construction, at a duty cycle of one half. A sampler
 * whose chance of seeing a burst depends on its length, not just on the CPU it takes
 * (one that samples a thread only at the kernel tick while it runs, one that skips a
 * thread that slept through its previous sample), charges the two functions unequally:
 * the CPU analogue of Go's TestBlockProfileBias.
 *
 * The sleeps issue their system call inline (platform/linux/inline.h) in burst_sleep, so
 * a sleeping thread's leaf is burst_sleep (declared off-CPU), never a frameless libc
 * wrapper. Truth: func_ops[k], the iterations each function did (same loop body, so their
 * split is the split of CPU), written as the run's func_work stats; offcpu_ns, the time in
 * the sleeps; ops, the chunks done. Every chunk's result is checked (checksum_errors).
 * Built three times (workload.h "build variants"): burst, burst@nofp, burst@inline. */
#include <errno.h>

#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define BURST_ITERS WL_CHUNK_ITERS
#define BURST_LONG_NS 5000000ull     /* a long burst */
#define BURST_SHORT_NS 50000ull      /* a short burst */
#define BURST_SHORTS (BURST_LONG_NS / BURST_SHORT_NS) /* short bursts per long one */

#define BURST_ATTR __attribute__((PLAT_DISTINCT_FN))

/* Each runs chunks until until_ns (WL_CHUNK_FN); returns the iterations done. */
WL_CHUNK_FN(WL_SPLIT_FN, burst_long)
WL_CHUNK_FN(WL_SPLIT_FN, burst_short)

/* Sleeps ns (absolute deadline: a signal does not shorten it); returns the wall time
 * slept. Counts interruptions. */
static BURST_ATTR uint64_t burst_sleep(struct wl_truth *t, uint64_t ns)
{
	uint64_t s0 = sb_now_ns();
	wl_progress_idle();
	while (plat_leaf_sleep_until(s0 + ns) == -EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	return sb_now_ns() - s0;
}

static BURST_ATTR void burst_thread(struct wl_ctx *ctx, int index)
{
	struct wl_truth *t = &ctx->truth[index];
	uint64_t seed = ctx->seed | 1, expected = wl_unit_expected(seed, BURST_ITERS);
	uint64_t off = 0;

	while (sb_now_ns() < ctx->deadline_ns) {
		uint64_t done = burst_long(t, seed, expected, sb_now_ns() + BURST_LONG_NS);
		atomic_fetch_add_explicit(&t->func_ops[0], done, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->ops, done / BURST_ITERS, memory_order_relaxed);
		off += burst_sleep(t, BURST_LONG_NS);
		for (uint64_t k = 0; k < BURST_SHORTS && sb_now_ns() < ctx->deadline_ns; k++) {
			done = burst_short(t, seed, expected, sb_now_ns() + BURST_SHORT_NS);
			atomic_fetch_add_explicit(&t->func_ops[1], done, memory_order_relaxed);
			atomic_fetch_add_explicit(&t->ops, done / BURST_ITERS, memory_order_relaxed);
			off += burst_sleep(t, BURST_SHORT_NS);
		}
	}
	atomic_fetch_add(&t->offcpu_ns, off);
}

const struct workload WL_WORKLOAD(burst) = {
	.name = "burst" WL_VARIANT_TAG,
	.description = "equal CPU in 5 ms and in 50 us bursts, each followed by a sleep as "
		       "long",
	.thread_main = burst_thread,
	.chain = { (const void *)burst_thread, NULL },
	.funcs = { (const void *)burst_long, (const void *)burst_short, NULL },
	.func_share = { 0.5, 0.5 },
	.func_share_measured = true,
	.offcpu = { (const void *)burst_sleep, NULL },
	.variant = WL_VARIANT_NAME,
};
