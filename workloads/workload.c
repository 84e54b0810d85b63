/* workload.c - the framework: spawn, announce, measure truth, join. */
#include "workloads/workload.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"
#include "sampler/threads.h"
#include "workloads/integrity.h"

struct wl_thread_arg {
	struct wl_ctx *ctx;
	int index;
	void (*fn)(struct wl_ctx *, int);
};

/* Names the calling thread "<workload>-<slot>", cut to 15 bytes as Linux keeps it. A build
 * variant's threads go by the plain name (hotspot-3, not hotspot@inline-3, which the cut
 * would leave without its slot). */
static void wl_name_self(const struct wl_ctx *ctx, int index)
{
	char name[64]; /* the whole name, then cut: no format truncation */
	const char *w = ctx->workload ? ctx->workload : "wl";
	int len = (int)strcspn(w, "@");

	snprintf(name, sizeof(name), "%.*s-%d", len < 40 ? len : 40, w, index);
	plat_thread_set_name(name);
}

/* Truth is measured around fn only: the sampler's own per-thread setup is not the
 * workload's, but its signal handlers during fn are charged to the thread, as they are in
 * any profiled program. The integrity checks bracket the sampler's hooks: the mask the
 * thread was created with must still be its mask before thread_stop. */
static void *wl_trampoline(void *p)
{
	struct wl_thread_arg *a = p;
	struct wl_truth *t = &a->ctx->truth[(unsigned)a->index % SB_MAX_THREADS];
	struct wl_integrity integ;

	wl_integrity_begin(&integ);
	wl_name_self(a->ctx, a->index);
	sb_thread_begin(a->index);
	atomic_store(&t->tid, sb_gettid());
	uint64_t u0 = 0, s0 = 0, u1 = 0, s1 = 0;
	int times = plat_thread_times_ns(&u0, &s0) == 0;
	uint64_t w0 = sb_now_ns(), c0 = sb_thread_cpu_ns();
	wl_progress_begin(a->ctx, a->index);
	wl_slot_enter(a->index, a->fn, a->ctx, a->index);
	wl_progress_end();
	uint64_t c1 = sb_thread_cpu_ns(), w1 = sb_now_ns();
	if (times && plat_thread_times_ns(&u1, &s1) == 0) {
		atomic_fetch_add(&t->user_ns, u1 > u0 ? u1 - u0 : 0);
		atomic_fetch_add(&t->sys_ns, s1 > s0 ? s1 - s0 : 0);
	}
	atomic_fetch_add(&t->cpu_ns, c1 - c0);
	atomic_fetch_add(&t->alive_ns, w1 - w0);
	atomic_fetch_add(&t->os_threads, 1);
	/* the name it has now, whatever fn did to it: that is the truth */
	plat_thread_get_name(t->name, sizeof(t->name));
	wl_integrity_end(&integ, t);
	sb_thread_end();
	atomic_fetch_add(&t->ends, 1);
	return NULL;
}

/* Thread attributes with ctx's stack size (ctx->stack_kb, 0: the default). Returns 0, or
 * -1 with errno set (a size the system refuses). */
static int wl_attr_init(const struct wl_ctx *ctx, pthread_attr_t *attr)
{
	int e = pthread_attr_init(attr);
	if (e == 0 && ctx->stack_kb > 0)
		e = pthread_attr_setstacksize(attr, (size_t)ctx->stack_kb << 10);
	if (e != 0) {
		errno = e;
		return -1;
	}
	return 0;
}

int wl_run_threads(struct wl_ctx *ctx, int n, void (*fn)(struct wl_ctx *, int))
{
	pthread_t *tids = calloc((size_t)n, sizeof(*tids));
	struct wl_thread_arg *args = calloc((size_t)n, sizeof(*args));
	int started = 0, rc = 0;
	pthread_attr_t attr;

	if (!tids || !args || wl_attr_init(ctx, &attr) != 0) {
		rc = -1;
		goto cleanup;
	}
	for (; started < n; started++) {
		args[started] = (struct wl_thread_arg){ ctx, started, fn };
		int e = pthread_create(&tids[started], &attr, wl_trampoline, &args[started]);
		if (e != 0) {
			errno = e;
			rc = -1;
			break;
		}
	}
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	pthread_attr_destroy(&attr);
cleanup:
	free(tids);
	free(args);
	return rc;
}

int wl_run_one(struct wl_ctx *ctx, int index, void (*fn)(struct wl_ctx *, int))
{
	struct wl_thread_arg arg = { ctx, index, fn };
	pthread_t t;
	pthread_attr_t attr;
	if (wl_attr_init(ctx, &attr) != 0)
		return -1;
	int e = pthread_create(&t, &attr, wl_trampoline, &arg);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		errno = e;
		return -1;
	}
	pthread_join(t, NULL);
	return 0;
}

int workload_run(const struct workload *w, struct wl_ctx *ctx)
{
	int rc;

	ctx->workload = w->name;
	if (w->setup && w->setup(ctx) != 0)
		return -1;
	ctx->deadline_ns = sb_now_ns() + (uint64_t)(ctx->duration_s * 1e9);
	if (w->run)
		rc = w->run(ctx);
	else
		rc = wl_run_threads(ctx, ctx->threads, w->thread_main);
	if (w->teardown)
		w->teardown(ctx);
	return rc;
}

int wl_func_work(const struct workload *w, const struct wl_truth *truth,
		 uint64_t work[WL_MAX_FUNCS])
{
	uint64_t sum = 0;
	int n = 0;

	for (; w && n < WL_MAX_FUNCS && w->funcs[n]; n++) {
		work[n] = 0;
		for (int i = 0; i < SB_MAX_THREADS; i++)
			work[n] += atomic_load_explicit(&truth[i].func_ops[n], memory_order_relaxed);
		sum += work[n];
	}
	return sum > 0 ? n : 0;
}

/* noinline: the call is what gives its caller a frame record, even under LTO. */
__attribute__((noinline)) uint64_t wl_keep(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}
