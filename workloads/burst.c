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
 * the sleeps; ops, the chunks done. Every chunk's result is checked (checksum_errors). */
#include <errno.h>

#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define BURST_ITERS 2000             /* iterations per chunk: a few µs, as hotspot's calls */
#define BURST_LONG_NS 5000000ull     /* a long burst */
#define BURST_SHORT_NS 50000ull      /* a short burst */
#define BURST_SHORTS (BURST_LONG_NS / BURST_SHORT_NS) /* short bursts per long one */

#define BURST_ATTR __attribute__((PLAT_DISTINCT_FN))

/* Keeps the burst functions non-leaf (a frame record of their own; see hotspot.c). */
static BURST_ATTR uint64_t burst_keep(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

/* Runs chunks for ns of wall time; returns the iterations done. */
#define BURST_BODY                                                                        \
	{                                                                                 \
		uint64_t done = 0, until = sb_now_ns() + ns;                              \
		do {                                                                      \
			uint64_t x = seed | 1;                                            \
			for (uint64_t i = 0; i < BURST_ITERS; i++) {                      \
				x ^= x << 13;                                             \
				x ^= x >> 7;                                              \
				x ^= x << 17;                                             \
			}                                                                 \
			x = burst_keep(x);                                                \
			if (x != expected)                                                \
				atomic_fetch_add_explicit(&t->checksum_errors, 1,         \
							  memory_order_relaxed);          \
			done += BURST_ITERS;                                              \
			wl_progress_tick();                                               \
		} while (sb_now_ns() < until);                                            \
		return done;                                                              \
	}

static BURST_ATTR uint64_t burst_long(struct wl_truth *t, uint64_t seed, uint64_t expected,
				      uint64_t ns) BURST_BODY
static BURST_ATTR uint64_t burst_short(struct wl_truth *t, uint64_t seed, uint64_t expected,
				       uint64_t ns) BURST_BODY

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
		uint64_t done = burst_long(t, seed, expected, BURST_LONG_NS);
		atomic_fetch_add_explicit(&t->func_ops[0], done, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->ops, done / BURST_ITERS, memory_order_relaxed);
		off += burst_sleep(t, BURST_LONG_NS);
		for (uint64_t k = 0; k < BURST_SHORTS && sb_now_ns() < ctx->deadline_ns; k++) {
			done = burst_short(t, seed, expected, BURST_SHORT_NS);
			atomic_fetch_add_explicit(&t->func_ops[1], done, memory_order_relaxed);
			atomic_fetch_add_explicit(&t->ops, done / BURST_ITERS, memory_order_relaxed);
			off += burst_sleep(t, BURST_SHORT_NS);
		}
	}
	atomic_fetch_add(&t->offcpu_ns, off);
}

const struct workload workload_burst = {
	.name = "burst",
	.description = "equal CPU in 5 ms and in 50 us bursts, each followed by a sleep as "
		       "long",
	.thread_main = burst_thread,
	.chain = { (const void *)burst_thread, NULL },
	.funcs = { (const void *)burst_long, (const void *)burst_short, NULL },
	.func_share = { 0.5, 0.5 },
	.func_share_measured = true,
	.offcpu = { (const void *)burst_sleep, NULL },
};
