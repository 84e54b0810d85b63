/* slots.c - 256 slot-unique leaf functions, so that a PC alone names the workload thread,
 * and 256 slot-unique entry functions through which every workload thread runs, so that
 * any stack that reaches the thread's bottom names it too (work outside the slot leaves,
 * as in hotspot, or a leaf in libc). Beyond 256 threads slot i runs in the functions of
 * i mod 256 (WL_SLOT_FNS): a PC names its thread modulo 256.
 *
 * The leaves live in their own section (sb_slots): the linker brackets it with
 * __start_sb_slots/__stop_sb_slots, and slot ranges are the gaps between sorted entry
 * addresses. no_icf stops GCC from folding the identical bodies into one. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "sampler/threads.h"
#include "workloads/integrity.h"
#include "workloads/workload.h"

#define SLOT_ATTR __attribute__((PLAT_DISTINCT_FN, used, PLAT_CODE_SECTION("sb_slots")))

/* The workloads' xorshift (workload.h); the leaf stays frameless on purpose (deep.c). */
#define SLOT_BODY                                                                        \
	{                                                                                \
		uint64_t x;                                                              \
		WL_XORSHIFT(x, seed, iters);                                             \
		__asm__ volatile("" : "+r"(x));                                          \
		return x;                                                                \
	}

/* Names carry the slot number in three decimal digits (wl_slot_leaf_042 is slot 42):
 * D10(X, a) makes a0..a9, D100(X, a) makes a00..a99. */
#define D10(X, a) X(a##0) X(a##1) X(a##2) X(a##3) X(a##4) X(a##5) X(a##6) X(a##7) X(a##8) X(a##9)
#define D100(X, a)                                                                        \
	D10(X, a##0) D10(X, a##1) D10(X, a##2) D10(X, a##3) D10(X, a##4) D10(X, a##5)     \
	D10(X, a##6) D10(X, a##7) D10(X, a##8) D10(X, a##9)
/* Slots 000..255 */
#define D256(X)                                                                           \
	D100(X, 0) D100(X, 1) D10(X, 20) D10(X, 21) D10(X, 22) D10(X, 23) D10(X, 24)      \
	X(250) X(251) X(252) X(253) X(254) X(255)

#define SLOT(n) static SLOT_ATTR uint64_t wl_slot_leaf_##n(uint64_t seed, uint64_t iters) SLOT_BODY
D256(SLOT)

/* The entry frame: calls fn and does something after it, so the call is not a tail call
 * and the frame stays on the stack. */
#define ENTRY(n)                                                                          \
	static SLOT_ATTR void wl_slot_entry_##n(void (*fn)(struct wl_ctx *, int),         \
						struct wl_ctx *ctx, int index)          \
	{                                                                                 \
		fn(ctx, index);                                                           \
		__asm__ volatile("" ::: "memory");                                        \
	}
D256(ENTRY)

typedef void (*entry_fn)(void (*)(struct wl_ctx *, int), struct wl_ctx *, int);
#define N(n) wl_slot_entry_##n,
static const entry_fn entry_fns[WL_SLOT_FNS] = { D256(N) };

typedef uint64_t (*slot_fn)(uint64_t, uint64_t);
#define E(n) wl_slot_leaf_##n,
static const slot_fn slot_fns[WL_SLOT_FNS] = { D256(E) };
_Static_assert(sizeof(slot_fns) / sizeof(slot_fns[0]) == 256, "one leaf per slot");

extern const char __start_sb_slots[] PLAT_SECTION_START("sb_slots");
extern const char __stop_sb_slots[] PLAT_SECTION_STOP("sb_slots");

/* Ranges of the leaves [0, WL_SLOT_FNS) and of the entries [WL_SLOT_FNS, 2 x). */
static uint64_t slot_lo[2 * WL_SLOT_FNS], slot_hi[2 * WL_SLOT_FNS];

static uint64_t fn_addr(int k)
{
	return k < WL_SLOT_FNS ? (uint64_t)(uintptr_t)slot_fns[k]
				  : (uint64_t)(uintptr_t)entry_fns[k - WL_SLOT_FNS];
}

/* Computes the ranges before main(), so wl_slot_of_pc never initialises in a handler. A
 * function ends where the next one of the section starts. */
__attribute__((constructor)) static void slot_ranges_init(void)
{
	for (int i = 0; i < 2 * WL_SLOT_FNS; i++) {
		uint64_t lo = fn_addr(i);
		uint64_t hi = (uint64_t)(uintptr_t)__stop_sb_slots;
		for (int j = 0; j < 2 * WL_SLOT_FNS; j++) {
			uint64_t o = fn_addr(j);
			if (o > lo && o < hi)
				hi = o;
		}
		slot_lo[i] = lo;
		slot_hi[i] = hi;
	}
}

void wl_slot_enter(int slot, void (*fn)(struct wl_ctx *, int), struct wl_ctx *ctx, int index)
{
	entry_fns[(unsigned)slot % WL_SLOT_FNS](fn, ctx, index);
}

uint64_t wl_slot_work(int slot, uint64_t seed, uint64_t iters)
{
	return slot_fns[(unsigned)slot % WL_SLOT_FNS](seed, iters);
}

/* The reference result, computed outside the slot section. */
uint64_t wl_unit_expected(uint64_t seed, uint64_t iters)
SLOT_BODY

static volatile uint64_t wl_seed = 0x5eedULL;
/* Atomic: the first units of several threads may compute and store it at once (the same
 * value; ThreadSanitizer rightly calls a plain store a race). */
static _Atomic uint64_t wl_expected;
static _Atomic int wl_expected_ready;

void wl_unit(struct wl_ctx *ctx, int slot)
{
	const uint64_t iters = WL_UNIT_ITERS / WL_UNIT_STEPS;
	int wrong = 0;

	if (!atomic_load_explicit(&wl_expected_ready, memory_order_acquire)) {
		atomic_store_explicit(&wl_expected, wl_unit_expected(wl_seed, iters),
				      memory_order_relaxed);
		atomic_store_explicit(&wl_expected_ready, 1, memory_order_release);
	}
	/* Nothing in a unit sets errno: a handler that ran in it and did not restore errno
	 * leaves another value (integrity.h). */
	int saved = errno;
	errno = WL_ERRNO_SENTINEL;
	for (int k = 0; k < WL_UNIT_STEPS; k++) {
		uint64_t r = wl_slot_work(slot, wl_seed, iters);
		wrong |= r != atomic_load_explicit(&wl_expected, memory_order_relaxed);
		wl_progress_tick();
	}
	struct wl_truth *t = &ctx->truth[(unsigned)slot % SB_MAX_THREADS];
	wl_errno_expect(t, WL_ERRNO_SENTINEL);
	errno = saved;
	atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
	if (wrong)
		atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
}

int wl_slot_of_pc(uint64_t pc)
{
	if (pc < (uint64_t)(uintptr_t)__start_sb_slots || pc >= (uint64_t)(uintptr_t)__stop_sb_slots)
		return -1;
	for (int i = 0; i < WL_SLOT_FNS; i++)
		if (pc >= slot_lo[i] && pc < slot_hi[i])
			return i;
	return -1;
}

int wl_slot_frame_of_pc(uint64_t pc)
{
	int s = wl_slot_of_pc(pc);
	if (s >= 0 || pc < (uint64_t)(uintptr_t)__start_sb_slots ||
	    pc >= (uint64_t)(uintptr_t)__stop_sb_slots)
		return s;
	for (int i = WL_SLOT_FNS; i < 2 * WL_SLOT_FNS; i++)
		if (pc >= slot_lo[i] && pc < slot_hi[i])
			return i - WL_SLOT_FNS;
	return -1;
}

/* Samplers recover slots through the sampler layer's resolver (threads.h), never by
 * including workload headers. */
__attribute__((constructor)) static void install_slot_resolver(void)
{
	sb_set_slot_resolver(wl_slot_frame_of_pc);
}

void wl_slot_range(int slot, uint64_t *lo, uint64_t *hi)
{
	*lo = slot_lo[(unsigned)slot % WL_SLOT_FNS];
	*hi = slot_hi[(unsigned)slot % WL_SLOT_FNS];
}
