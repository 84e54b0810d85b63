/* slots.c - 64 slot-unique leaf functions, so that a PC alone names the workload thread,
 * and 64 slot-unique entry functions through which every workload thread runs, so that
 * any stack that reaches the thread's bottom names it too (work outside the slot leaves,
 * as in hotspot, or a leaf in libc).
 *
 * The leaves live in their own section (sb_slots): the linker brackets it with
 * __start_sb_slots/__stop_sb_slots, and slot ranges are the gaps between sorted entry
 * addresses. no_icf stops GCC from folding the identical bodies into one. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "sampler/threads.h"
#include "workloads/workload.h"

#define SLOT_ATTR __attribute__((PLAT_DISTINCT_FN, used, PLAT_CODE_SECTION("sb_slots")))

/* xorshift64: cheap, register-only work whose result a register corruption would change. */
#define SLOT_BODY                                                                        \
	{                                                                                \
		uint64_t x = seed | 1;                                                   \
		for (uint64_t i = 0; i < iters; i++) {                                   \
			x ^= x << 13;                                                    \
			x ^= x >> 7;                                                     \
			x ^= x << 17;                                                    \
		}                                                                        \
		__asm__ volatile("" : "+r"(x));                                          \
		return x;                                                                \
	}

#define SLOT(n) static SLOT_ATTR uint64_t wl_slot_leaf_##n(uint64_t seed, uint64_t iters) SLOT_BODY
#define SLOT8(a)                                                                          \
	SLOT(a##0) SLOT(a##1) SLOT(a##2) SLOT(a##3) SLOT(a##4) SLOT(a##5) SLOT(a##6) SLOT(a##7)
SLOT8(0) SLOT8(1) SLOT8(2) SLOT8(3) SLOT8(4) SLOT8(5) SLOT8(6) SLOT8(7)

/* The entry frame: calls fn and does something after it, so the call is not a tail call
 * and the frame stays on the stack. */
#define ENTRY(n)                                                                          \
	static SLOT_ATTR void wl_slot_entry_##n(void (*fn)(struct wl_ctx *, int),         \
						struct wl_ctx *ctx, int index)          \
	{                                                                                 \
		fn(ctx, index);                                                           \
		__asm__ volatile("" ::: "memory");                                        \
	}
#define ENTRY8(a)                                                                         \
	ENTRY(a##0) ENTRY(a##1) ENTRY(a##2) ENTRY(a##3) ENTRY(a##4) ENTRY(a##5) ENTRY(a##6)   \
	ENTRY(a##7)
ENTRY8(0) ENTRY8(1) ENTRY8(2) ENTRY8(3) ENTRY8(4) ENTRY8(5) ENTRY8(6) ENTRY8(7)

typedef void (*entry_fn)(void (*)(struct wl_ctx *, int), struct wl_ctx *, int);
#define N(n) wl_slot_entry_##n
#define N8(a) N(a##0), N(a##1), N(a##2), N(a##3), N(a##4), N(a##5), N(a##6), N(a##7)
static const entry_fn entry_fns[SB_MAX_THREADS] = { N8(0), N8(1), N8(2), N8(3),
						     N8(4), N8(5), N8(6), N8(7) };

typedef uint64_t (*slot_fn)(uint64_t, uint64_t);
#define E(n) wl_slot_leaf_##n
#define E8(a) E(a##0), E(a##1), E(a##2), E(a##3), E(a##4), E(a##5), E(a##6), E(a##7)
static const slot_fn slot_fns[SB_MAX_THREADS] = { E8(0), E8(1), E8(2), E8(3),
						   E8(4), E8(5), E8(6), E8(7) };

extern const char __start_sb_slots[] PLAT_SECTION_START("sb_slots");
extern const char __stop_sb_slots[] PLAT_SECTION_STOP("sb_slots");

/* Ranges of the leaves [0, 64) and of the entries [64, 128). */
static uint64_t slot_lo[2 * SB_MAX_THREADS], slot_hi[2 * SB_MAX_THREADS];

static uint64_t fn_addr(int k)
{
	return k < SB_MAX_THREADS ? (uint64_t)(uintptr_t)slot_fns[k]
				  : (uint64_t)(uintptr_t)entry_fns[k - SB_MAX_THREADS];
}

/* Computes the ranges before main(), so wl_slot_of_pc never initialises in a handler. A
 * function ends where the next one of the section starts. */
__attribute__((constructor)) static void slot_ranges_init(void)
{
	for (int i = 0; i < 2 * SB_MAX_THREADS; i++) {
		uint64_t lo = fn_addr(i);
		uint64_t hi = (uint64_t)(uintptr_t)__stop_sb_slots;
		for (int j = 0; j < 2 * SB_MAX_THREADS; j++) {
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
	entry_fns[(unsigned)slot % SB_MAX_THREADS](fn, ctx, index);
}

uint64_t wl_slot_work(int slot, uint64_t seed, uint64_t iters)
{
	return slot_fns[(unsigned)slot % SB_MAX_THREADS](seed, iters);
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
	for (int k = 0; k < WL_UNIT_STEPS; k++) {
		uint64_t r = wl_slot_work(slot, wl_seed, iters);
		wrong |= r != atomic_load_explicit(&wl_expected, memory_order_relaxed);
		wl_progress_tick();
	}
	struct wl_truth *t = &ctx->truth[(unsigned)slot % SB_MAX_THREADS];
	atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
	if (wrong)
		atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
}

int wl_slot_of_pc(uint64_t pc)
{
	if (pc < (uint64_t)(uintptr_t)__start_sb_slots || pc >= (uint64_t)(uintptr_t)__stop_sb_slots)
		return -1;
	for (int i = 0; i < SB_MAX_THREADS; i++)
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
	for (int i = SB_MAX_THREADS; i < 2 * SB_MAX_THREADS; i++)
		if (pc >= slot_lo[i] && pc < slot_hi[i])
			return i - SB_MAX_THREADS;
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
	*lo = slot_lo[(unsigned)slot % SB_MAX_THREADS];
	*hi = slot_hi[(unsigned)slot % SB_MAX_THREADS];
}
