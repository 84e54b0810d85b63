/* server.c - a server's threads: a few busy, the rest blocked for the whole run, as in a
 * thread-per-connection server or a JVM's pools (the table in docs/workloads.md).
 *
 * Slots 0..busy-1 spin on verified work as balanced does; every other slot blocks until
 * the end, alternately in poll(2) on a pipe nobody writes to before the end and in a
 * futex wait on a word of its own, as a pool thread parks on its own condition variable
 * (a JVM's Parker, Go's per-thread note), so that thousands of waiters spread over the
 * kernel's futex hash as a real pool's do (Darwin: 100 ms kevent waits,
 * platform/darwin/inline.h). Each
 * issues its system call itself (platform.h), so that the workload's function is the
 * leaf while the thread is blocked: its stack can be judged like any other (`offcpu`).
 * busy is `param`, default 2, and at most threads-1, so that at least one thread idles.
 * Once the busy threads are done (the deadline) and gone (they left the sampler, their
 * `ends`, and exited: a busy thread that the woken thousands keep from a CPU on its way
 * out would still be sampled, its wait outside its truth counted as its samples), a
 * helper thread (no slot: its CPU is the harness's) wakes the others: one byte into the pipe (poll then returns in every thread
 * at once, and in any that comes late), then `done` set and each waiter's word set and
 * woken. Thousands of threads
 * waking at once wait long for a CPU; the busy threads have ended by then. Truth:
 * the busy threads' CPU, the idle ones' next to nothing (their start and end), every
 * thread alive the whole run; an interrupted wait counts in `eintr`. Threads get 256 KiB
 * stacks unless --stack says otherwise, so that 10,000 of them fit in a modest address
 * space. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform/platform.h"
#include "sampler/threads.h"
#include "workloads/workload.h"

#define SERVER_BUSY_DEFAULT 2
#define SERVER_STACK_KB 256
#define SERVER_EXIT_WAIT_NS 1000000000ull

struct server_wl {
	int busy;         /* slots [0, busy) spin */
	int pipe_fds[2];  /* poll waits on [0]; the wake-up writes one byte to [1] */
	_Atomic uint32_t done; /* 1: the run is over */
	_Atomic uint32_t *words; /* threads: the word each futex waiter waits on, 1 once woken */
	_Atomic uint32_t start_failed; /* 1: a thread never started, the busy may be missing */
	pthread_t waker;
};

/* Blocks in poll until the pipe is readable (the end of the run). */
static __attribute__((PLAT_DISTINCT_FN, noinline)) void server_poll(struct server_wl *s,
								     struct wl_truth *t)
{
	long r = (long)wl_keep(0); /* a call first: the frame record is set up before the wait */

	while ((r = plat_leaf_poll(s->pipe_fds[0], POLLIN)) < 0)
		if (r == -EINTR)
			atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
}

/* Blocks in a futex wait on its own word until the run is over. */
static __attribute__((PLAT_DISTINCT_FN, noinline)) void server_wait(struct server_wl *s,
								     struct wl_truth *t, int index)
{
	wl_keep(0); /* a call first: the frame record is set up before the wait (workload.h) */
	while (!atomic_load_explicit(&s->done, memory_order_acquire))
		if (plat_leaf_wait_word(&s->words[index], 0) == -EINTR)
			atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
}

/* How far the busy threads are: BUSY_RUNNING until every busy slot's thread has left the
 * sampler (sb_thread_end), BUSY_LEFT until each has also exited (the sampler's own exit
 * hooks run after sb_thread_end: mach's registry holds the thread until then), BUSY_GONE
 * after, or at once when a thread never started. Where the system cannot tell an exit
 * (Darwin), leaving the sampler is gone enough. */
enum { BUSY_RUNNING, BUSY_LEFT, BUSY_GONE };
static int server_busy_state(const struct wl_ctx *ctx, struct server_wl *s)
{
	int state = BUSY_GONE;

	if (atomic_load(&s->start_failed))
		return BUSY_GONE;
	for (int i = 0; i < s->busy; i++) {
		if (atomic_load(&ctx->truth[i].ends) == 0)
			return BUSY_RUNNING;
		if (plat_thread_gone(atomic_load(&ctx->truth[i].tid)) == 0)
			state = BUSY_LEFT;
	}
	return state;
}

/* The helper: once the busy threads are out, every idle thread returns, also those
 * still starting. */
static void *server_waker(void *arg)
{
	struct wl_ctx *ctx = arg;
	struct server_wl *s = ctx->priv;
	char b = 1;
	uint64_t left_ns = 0; /* when every busy thread had left the sampler */

	sb_thread_begin(-1);
	plat_sleep_until_ns(ctx->deadline_ns);
	/* a second at most from leaving the sampler to exiting: an exited thread's id taken
	 * again by a new thread must not keep the waker waiting for it */
	for (int st; (st = server_busy_state(ctx, s)) != BUSY_GONE;) {
		if (st == BUSY_LEFT && !left_ns)
			left_ns = sb_now_ns();
		if (left_ns && sb_now_ns() - left_ns > SERVER_EXIT_WAIT_NS)
			break;
		plat_sleep_until_ns(sb_now_ns() + 1000000);
	}
	while (write(s->pipe_fds[1], &b, 1) < 0 && errno == EINTR)
		;
	atomic_store_explicit(&s->done, 1, memory_order_release);
	for (int i = s->busy; i < ctx->threads; i++) {
		if (i % 2) /* a poll slot */
			continue;
		atomic_store_explicit(&s->words[i], 1, memory_order_release);
		plat_wake_word_all(&s->words[i]);
	}
	atomic_fetch_add(&ctx->aux_cpu_ns, sb_thread_cpu_ns());
	sb_thread_end();
	return NULL;
}

static __attribute__((PLAT_DISTINCT_FN, noinline)) void server_thread(struct wl_ctx *ctx,
								       int index)
{
	struct server_wl *s = ctx->priv;

	if (index < s->busy) {
		while (sb_now_ns() < ctx->deadline_ns)
			wl_unit(ctx, index);
		return;
	}
	wl_progress_idle();
	if (index % 2)
		server_poll(s, &ctx->truth[index]);
	else
		server_wait(s, &ctx->truth[index], index);
	__asm__ volatile("" ::: "memory"); /* no tail call: this frame stays under the wait */
}

static int server_setup(struct wl_ctx *ctx)
{
	struct server_wl *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->words = calloc((size_t)ctx->threads, sizeof(*s->words));
	if (!s->words || plat_pipe_cloexec(s->pipe_fds) != 0) {
		free(s->words);
		free(s);
		return -1;
	}
	s->busy = ctx->param > 0 ? (int)ctx->param : SERVER_BUSY_DEFAULT;
	if (s->busy > ctx->threads - 1)
		s->busy = ctx->threads > 1 ? ctx->threads - 1 : 1;
	if (ctx->stack_kb == 0)
		ctx->stack_kb = SERVER_STACK_KB;
	ctx->priv = s;
	return 0;
}

static int server_run(struct wl_ctx *ctx)
{
	struct server_wl *s = ctx->priv;
	int e = pthread_create(&s->waker, NULL, server_waker, ctx);

	if (e != 0) {
		errno = e;
		return -1;
	}
	int rc = wl_run_threads(ctx, ctx->threads, server_thread);
	if (rc != 0) /* a thread that never started: the waker must not wait for it */
		atomic_store(&s->start_failed, 1);
	pthread_join(s->waker, NULL);
	return rc;
}

static void server_teardown(struct wl_ctx *ctx)
{
	struct server_wl *s = ctx->priv;

	close(s->pipe_fds[0]);
	close(s->pipe_fds[1]);
	free(s->words);
	free(s);
	ctx->priv = NULL;
}

const struct workload workload_server = {
	.name = "server",
	.description = "a few threads busy (param, default 2), the rest blocked in poll and "
		       "futex waits all run",
	.thread_main = server_thread,
	.run = server_run,
	.setup = server_setup,
	.teardown = server_teardown,
	.chain = { (const void *)server_thread, NULL },
	.offcpu = { (const void *)server_poll, (const void *)server_wait, NULL },
};
