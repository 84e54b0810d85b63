/* syscall.c - tight loops of interruptible syscalls, counting every disturbance.
 *
 * Each round a thread does nanosleep(SYS_WAIT_NS), writes and reads back a block on its
 * own pipe, waits on a futex that nobody wakes (timeout SYS_WAIT_NS; Darwin: an empty
 * kevent wait, platform.h) and calls select()
 * with no descriptors (same timeout). nanosleep, futex with a timeout and select return
 * EINTR when a signal handler runs, even under SA_RESTART; a pipe read or write of at most
 * PIPE_BUF bytes is never short. Truth with no sampler: eintr = short_io = 0, so every
 * count under a sampler is a disturbance the sampler caused (eintr_per_1k_samples,
 * short_io_per_1k_samples). ops counts rounds.
 *
 * errno: each call starts from WL_ERRNO_SENTINEL; after it errno must be the sentinel when
 * it succeeded (no wrapper touches errno then) or what it set, both right after the call
 * (a handler that ran as the call returned) and after a little work (one that ran in it):
 * integrity_errno. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"
#include "workloads/integrity.h"
#include "workloads/workload.h"

#define SYS_WAIT_NS 20000
#define SYS_IO_BYTES 256
#define SYS_SETTLE_ITERS 256 /* work between a call and errno's second check: ~0.3 us */

struct syscall_wl {
	int fds[SB_MAX_THREADS][2];
	_Atomic uint32_t futex_word[SB_MAX_THREADS]; /* stays 0: waits always time out */
};

/* errno after a call that returned ok (1) or failed: checked now and after a little work in
 * the slot's leaf; then the next call's sentinel is set. */
static void syscall_errno(struct wl_truth *t, int index, int ok)
{
	int want = ok ? WL_ERRNO_SENTINEL : errno;

	wl_errno_expect(t, want);
	wl_slot_work(index, (uint64_t)want, SYS_SETTLE_ITERS);
	wl_errno_expect(t, want);
	errno = WL_ERRNO_SENTINEL;
}

static void syscall_io(struct wl_truth *t, int index, int fds[2])
{
	char out[SYS_IO_BYTES], in[SYS_IO_BYTES];
	ssize_t n;

	memset(out, 0x5a, sizeof(out));
	for (;;) {
		errno = WL_ERRNO_SENTINEL;
		n = write(fds[1], out, sizeof(out));
		if (n >= 0 || errno != EINTR)
			break;
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	}
	syscall_errno(t, index, n >= 0);
	if (n >= 0 && n != (ssize_t)sizeof(out))
		atomic_fetch_add_explicit(&t->short_io, 1, memory_order_relaxed);
	/* Read back exactly what was written so the pipe never fills. */
	size_t left = n > 0 ? (size_t)n : 0;
	while (left > 0) {
		ssize_t r = read(fds[0], in, left);
		int intr = r < 0 && errno == EINTR;
		syscall_errno(t, index, r >= 0);
		if (intr) {
			atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
			continue;
		}
		if (r <= 0)
			break;
		if ((size_t)r != left)
			atomic_fetch_add_explicit(&t->short_io, 1, memory_order_relaxed);
		left -= (size_t)r;
	}
}

/* One round. A function of its own so that syscall_thread stays visible to frame-pointer
 * walks: a sample in a frameless libc wrapper loses the wrapper's caller (this function),
 * not syscall_thread. */
static __attribute__((PLAT_DISTINCT_FN)) void syscall_round(struct syscall_wl *s,
							      struct wl_truth *t, int index)
{
	const struct timespec wait = { 0, SYS_WAIT_NS };

	errno = WL_ERRNO_SENTINEL;
	int rc = nanosleep(&wait, NULL);
	if (rc != 0 && errno == EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	syscall_errno(t, index, rc == 0);

	syscall_io(t, index, s->fds[index]);

	long w = plat_wait_word(&s->futex_word[index], 0, SYS_WAIT_NS);
	if (w == -EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	syscall_errno(t, index, w == 0);

	struct timeval tv = { 0, SYS_WAIT_NS / 1000 };
	rc = select(0, NULL, NULL, NULL, &tv);
	if (rc < 0 && errno == EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	syscall_errno(t, index, rc >= 0);
}

static __attribute__((PLAT_DISTINCT_FN)) void syscall_thread(struct wl_ctx *ctx, int index)
{
	struct syscall_wl *s = ctx->priv;
	struct wl_truth *t = &ctx->truth[index];

	while (sb_now_ns() < ctx->deadline_ns) {
		syscall_round(s, t, index);
		atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
	}
}

static int syscall_setup(struct wl_ctx *ctx)
{
	struct syscall_wl *s = calloc(1, sizeof(*s));
	int i;

	if (!s)
		return -1;
	for (i = 0; i < ctx->threads && i < SB_MAX_THREADS; i++)
		if (plat_pipe_cloexec(s->fds[i]) != 0)
			goto fail;
	ctx->priv = s;
	return 0;
fail:
	while (i-- > 0) {
		close(s->fds[i][0]);
		close(s->fds[i][1]);
	}
	free(s);
	return -1;
}

static void syscall_teardown(struct wl_ctx *ctx)
{
	struct syscall_wl *s = ctx->priv;
	for (int i = 0; i < ctx->threads && i < SB_MAX_THREADS; i++) {
		close(s->fds[i][0]);
		close(s->fds[i][1]);
	}
	free(s);
	ctx->priv = NULL;
}

const struct workload workload_syscall = {
	.name = "syscall",
	.description = "loops of nanosleep, pipe write+read, futex wait, select (counts EINTR)",
	.thread_main = syscall_thread,
	.setup = syscall_setup,
	.teardown = syscall_teardown,
	.chain = { (const void *)syscall_thread, NULL },
};
