/* churn.c - threads created and exiting continuously.
 *
 * ctx->threads roles run concurrently; each role starts its share of `param` (default
 * WL_CHURN_DEFAULT) OS threads one after another in its slot, and each of those works
 * 1-20 ms (wall, drawn from the seed) and exits. Threads started after the deadline do a
 * single unit, so the run ends near the deadline whatever `param` is, and the slot's
 * os_threads still add up to `param`. Truth (cpu, alive, ops, os_threads) is summed per
 * slot by the framework. Tests sampler registries, the first tick of short threads
 * (Go #40435) and races between a sample and a thread's exit. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "platform/platform.h"
#include "workloads/workload.h"

#define WL_CHURN_DEFAULT 2000
#define CHURN_MIN_MS 1
#define CHURN_MAX_MS 20

struct churn {
	struct wl_ctx *ctx;
	uint32_t total;
	_Atomic uint32_t started[SB_MAX_THREADS]; /* threads started so far per role */
	_Atomic int failed;
};

static uint64_t churn_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* One short-lived OS thread: works its drawn lifetime (at least one unit). */
static __attribute__((PLAT_DISTINCT_FN)) void churn_child(struct wl_ctx *ctx, int index)
{
	struct churn *c = ctx->priv;
	uint32_t k = atomic_fetch_add(&c->started[index], 1);
	uint64_t r = churn_mix(ctx->seed ^ ((uint64_t)index << 32) ^ k);
	uint64_t life = (CHURN_MIN_MS + r % (CHURN_MAX_MS - CHURN_MIN_MS + 1)) * 1000000ull;
	uint64_t t0 = sb_now_ns();

	do
		wl_unit(ctx, index);
	while (sb_now_ns() - t0 < life && sb_now_ns() < ctx->deadline_ns);
}

struct churn_role {
	struct churn *c;
	int index;
	pthread_t thread;
};

/* A role's driver: not a workload thread itself, it only starts and joins. */
static void *churn_driver(void *p)
{
	struct churn_role *role = p;
	struct churn *c = role->c;
	int n = c->ctx->threads;
	uint32_t share = c->total / (uint32_t)n + ((uint32_t)role->index < c->total % (uint32_t)n);

	for (uint32_t i = 0; i < share; i++) {
		if (wl_run_one(c->ctx, role->index, churn_child) != 0) {
			atomic_store(&c->failed, errno ? errno : EAGAIN);
			break;
		}
	}
	atomic_fetch_add(&c->ctx->aux_cpu_ns, sb_thread_cpu_ns());
	return NULL;
}

static int churn_run(struct wl_ctx *ctx)
{
	int n = ctx->threads, started = 0, rc = 0;
	struct churn *c = calloc(1, sizeof(*c));
	struct churn_role *roles = calloc((size_t)n, sizeof(*roles));

	if (!c || !roles) {
		rc = -1;
		goto cleanup;
	}
	c->ctx = ctx;
	c->total = ctx->param ? ctx->param : WL_CHURN_DEFAULT;
	ctx->priv = c;
	for (; started < n; started++) {
		roles[started] = (struct churn_role){ c, started, 0 };
		int e = pthread_create(&roles[started].thread, NULL, churn_driver, &roles[started]);
		if (e != 0) {
			errno = e;
			rc = -1;
			break;
		}
	}
	for (int i = 0; i < started; i++)
		pthread_join(roles[i].thread, NULL);
	if (rc == 0 && atomic_load(&c->failed)) {
		errno = atomic_load(&c->failed);
		rc = -1;
	}
	ctx->priv = NULL;
cleanup:
	free(roles);
	free(c);
	return rc;
}

const struct workload workload_churn = {
	.name = "churn",
	.description = "threads living 1-20 ms, --param in total (default 2000), --threads at once",
	.thread_main = churn_child,
	.run = churn_run,
	.chain = { (const void *)churn_child, NULL },
};
