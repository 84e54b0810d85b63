/* mixed.c - per thread, a known mix of spinning, sleeping and blocking.
 *
 * Each round a thread spins on wl_unit for MIXED_SPIN_NS of wall time, sleeps
 * MIXED_SLEEP_NS (clock_nanosleep, absolute, so a signal does not shorten it) and then
 * blocks reading its pipe, which a helper thread feeds one byte every MIXED_FEED_NS.
 * Truth: cpu_ns as usual, offcpu_ns = wall time spent inside the sleep and the read.
 *
 * The sleep and the read issue their syscall themselves (inline `syscall` on x86_64 Linux,
 * platform/linux/inline.h; Darwin goes through libSystem, docs/darwin.md), so
 * while a thread is off-CPU its leaf is mixed_sleep or mixed_block, not a frameless libc
 * wrapper that would hide them from a frame-pointer walk: the offcpu_sample_fraction
 * metric classifies samples by that leaf. A CPU-time sampler should put (almost) no
 * samples there; a wall-clock sampler should put offcpu_true_fraction there.
 *
 * errno: set to WL_ERRNO_SENTINEL before the sleep and checked after the read (Linux,
 * where neither touches it): integrity_errno, besides wl_unit's own check. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sampler/threads.h"
#include "workloads/integrity.h"
#include "workloads/workload.h"

#define MIXED_SPIN_NS 2000000ull
#define MIXED_SLEEP_NS 1000000ull
#define MIXED_FEED_NS 1000000ull

struct mixed {
	int fds[SB_MAX_THREADS][2];
	pthread_t helper;
	_Atomic int stop;
};


/* Sleeps until `until_ns` (CLOCK_MONOTONIC); counts interruptions. */
static __attribute__((PLAT_DISTINCT_FN)) void mixed_sleep(struct wl_truth *t, uint64_t until_ns)
{
	while (plat_leaf_sleep_until(until_ns) == -EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
}

/* Blocks until the helper's next byte(s) arrive; returns bytes read, 0 at EOF. */
static __attribute__((PLAT_DISTINCT_FN)) long mixed_block(struct wl_truth *t, int fd)
{
	char buf[64];
	long rc;

	while ((rc = plat_leaf_read(fd, buf, sizeof(buf))) == -EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	return rc;
}

static __attribute__((PLAT_DISTINCT_FN)) void mixed_thread(struct wl_ctx *ctx, int index)
{
	struct mixed *m = ctx->priv;
	struct wl_truth *t = &ctx->truth[index];
	uint64_t off = 0;

	while (sb_now_ns() < ctx->deadline_ns) {
		uint64_t t0 = sb_now_ns();
		do
			wl_unit(ctx, index);
		while (sb_now_ns() - t0 < MIXED_SPIN_NS);
		wl_progress_idle();

		uint64_t s0 = sb_now_ns();
		errno = WL_ERRNO_SENTINEL;
		mixed_sleep(t, s0 + MIXED_SLEEP_NS);
		long rc = mixed_block(t, m->fds[index][0]);
#ifdef __linux__
		/* the leaves issue their system calls inline: nothing in them sets errno, so any
		 * other value is a handler's that ran while the thread slept or blocked */
		wl_errno_expect(t, WL_ERRNO_SENTINEL);
#endif
		uint64_t s2 = sb_now_ns();
		off += s2 - s0;
		if (rc <= 0)
			break; /* the helper is gone: nothing left to block on */
	}
	atomic_fetch_add(&t->offcpu_ns, off);
}

/* Feeds every worker's pipe one byte per period until the workers are joined. Writes are
 * non-blocking: a worker that stopped reading must not stall the others. */
static void *mixed_helper(void *p)
{
	struct wl_ctx *ctx = p;
	struct mixed *m = ctx->priv;
	uint64_t next = sb_now_ns();

	sb_thread_begin(-1);
	while (!atomic_load(&m->stop)) {
		next += MIXED_FEED_NS;
		plat_sleep_until_ns(next);
		for (int i = 0; i < ctx->threads; i++) {
			char c = 1;
			if (write(m->fds[i][1], &c, 1) < 0 && errno != EAGAIN)
				break;
		}
	}
	atomic_fetch_add(&ctx->aux_cpu_ns, sb_thread_cpu_ns());
	sb_thread_end();
	return NULL;
}

static int mixed_setup(struct wl_ctx *ctx)
{
	struct mixed *m = calloc(1, sizeof(*m));
	int i;

	if (!m)
		return -1;
	for (i = 0; i < ctx->threads && i < SB_MAX_THREADS; i++) {
		if (plat_pipe_cloexec(m->fds[i]) != 0)
			goto fail;
		fcntl(m->fds[i][1], F_SETFL, O_NONBLOCK);
	}
	ctx->priv = m;
	return 0;
fail:
	while (i-- > 0) {
		close(m->fds[i][0]);
		close(m->fds[i][1]);
	}
	free(m);
	return -1;
}

static void mixed_teardown(struct wl_ctx *ctx)
{
	struct mixed *m = ctx->priv;
	for (int i = 0; i < ctx->threads && i < SB_MAX_THREADS; i++) {
		close(m->fds[i][0]);
		close(m->fds[i][1]);
	}
	free(m);
	ctx->priv = NULL;
}

static int mixed_run(struct wl_ctx *ctx)
{
	struct mixed *m = ctx->priv;
	int e = pthread_create(&m->helper, NULL, mixed_helper, ctx);
	if (e != 0) {
		errno = e;
		return -1;
	}
	int rc = wl_run_threads(ctx, ctx->threads, mixed_thread);
	atomic_store(&m->stop, 1);
	pthread_join(m->helper, NULL);
	return rc;
}

const struct workload workload_mixed = {
	.name = "mixed",
	.description = "per thread: spin 2 ms, sleep 1 ms, block on a pipe fed every 1 ms",
	.thread_main = mixed_thread,
	.run = mixed_run,
	.setup = mixed_setup,
	.teardown = mixed_teardown,
	.chain = { (const void *)mixed_thread, NULL },
	.offcpu = { (const void *)mixed_sleep, (const void *)mixed_block, NULL },
};
