/* skewed.c - thread i does (i+1) units per round, then waits at a barrier, so its CPU share
 * is (i+1)/sum: a sampler that spreads samples evenly shows up in thread_tvd. */
#include <pthread.h>
#include <stdlib.h>

#include "platform/platform.h"
#include "workloads/workload.h"

#define SKEWED_UNITS_PER_STEP 4

struct skewed {
	plat_barrier_t barrier;
	_Atomic int stop;
};

static int skewed_setup(struct wl_ctx *ctx)
{
	struct skewed *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	if (plat_barrier_init(&s->barrier, (unsigned)ctx->threads) != 0) {
		free(s);
		return -1;
	}
	ctx->priv = s;
	return 0;
}

static void skewed_teardown(struct wl_ctx *ctx)
{
	struct skewed *s = ctx->priv;
	plat_barrier_destroy(&s->barrier);
	free(s);
	ctx->priv = NULL;
}

/* Two barriers per round: one thread decides whether to stop between them, so all threads
 * leave on the same round and none waits forever. */
static void skewed_thread(struct wl_ctx *ctx, int index)
{
	struct skewed *s = ctx->priv;
	for (;;) {
		for (int u = 0; u < (index + 1) * SKEWED_UNITS_PER_STEP; u++)
			wl_unit(ctx, index);
		wl_progress_idle();
		if (plat_barrier_wait(&s->barrier) == PLAT_BARRIER_SERIAL)
			atomic_store(&s->stop, sb_now_ns() >= ctx->deadline_ns);
		plat_barrier_wait(&s->barrier);
		if (atomic_load(&s->stop))
			break;
	}
}

const struct workload workload_skewed = {
	.name = "skewed",
	.description = "thread i does (i+1) units of work per round (barrier-synchronised)",
	.thread_main = skewed_thread,
	.setup = skewed_setup,
	.teardown = skewed_teardown,
	.chain = { (const void *)skewed_thread, NULL },
};
