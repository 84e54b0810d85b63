/* malloclock.c - threads hammering malloc/free of varied sizes.
 *
 * Each thread keeps MLK_SLOTS live blocks and replaces a random one per step: 70% small
 * (16 B - 1 KiB, tcache), 25% medium (1 - 32 KiB, the arena under its lock), 5% large
 * (32 - 256 KiB, partly mmap). So a thread is inside the allocator, often holding its
 * arena lock, most of the time: a sampler that allocates or locks while a target is
 * interrupted (in a handler, or while it is stopped) deadlocks here, and the runner's
 * watchdog records it. Every block carries its tag at both ends, checked before free:
 * heap corruption shows in checksum_errors. ops counts replacements. */
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"
#include "workloads/workload.h"

#define MLK_SLOTS 64

struct mlk_block {
	unsigned char *p;
	size_t size;
	uint64_t tag;
};

static uint64_t mlk_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static size_t mlk_size(uint64_t r)
{
	uint64_t kind = r % 100, v = r >> 8;
	if (kind < 70)
		return 16 + v % (1024 - 16);
	if (kind < 95)
		return 1024 + v % (32 * 1024 - 1024);
	return 32 * 1024 + v % (224 * 1024);
}

/* Returns 1 when both tags are intact. */
static int mlk_check(const struct mlk_block *b)
{
	uint64_t head;
	memcpy(&head, b->p, sizeof(head));
	return head == b->tag && b->p[b->size - 1] == (unsigned char)b->tag;
}

/* Frees b (after checking its tags) and allocates a new block into it. A function of its
 * own so that a walk from a frameless libc entry point loses this frame, not
 * malloclock_thread (walks from inside the allocator's internals may fail anyway: glibc is
 * built without frame pointers). */
static __attribute__((PLAT_DISTINCT_FN)) void mlk_replace(struct wl_truth *t,
							    struct mlk_block *b, uint64_t *x)
{
	if (b->p) {
		if (!mlk_check(b))
			atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
		free(b->p);
	}
	b->size = mlk_size(mlk_next(x));
	b->tag = mlk_next(x);
	b->p = malloc(b->size);
	if (!b->p) {
		atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
		return;
	}
	memcpy(b->p, &b->tag, sizeof(b->tag));
	b->p[b->size - 1] = (unsigned char)b->tag;
	atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
}

static __attribute__((PLAT_DISTINCT_FN)) void malloclock_thread(struct wl_ctx *ctx, int index)
{
	struct wl_truth *t = &ctx->truth[index];
	struct mlk_block blocks[MLK_SLOTS];
	uint64_t x = (ctx->seed ^ ((uint64_t)index << 40)) | 1;

	memset(blocks, 0, sizeof(blocks));
	while (sb_now_ns() < ctx->deadline_ns)
		for (int step = 0; step < 64; step++) {
			mlk_replace(t, &blocks[mlk_next(&x) % MLK_SLOTS], &x);
			if (step % 8 == 7)
				wl_progress_tick();
		}
	for (int i = 0; i < MLK_SLOTS; i++) {
		if (blocks[i].p && !mlk_check(&blocks[i]))
			atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
		free(blocks[i].p);
	}
}

const struct workload workload_malloclock = {
	.name = "malloclock",
	.description = "threads doing malloc/free of varied sizes (catches samplers that allocate)",
	.thread_main = malloclock_thread,
	.chain = { (const void *)malloclock_thread, NULL },
};
