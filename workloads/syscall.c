/* syscall.c - tight loops of interruptible syscalls, counting every disturbance.
 *
 * Each round a thread does nanosleep(SYS_WAIT_NS), writes and reads back a block on its
 * own pipe, waits on a futex that nobody wakes (timeout SYS_WAIT_NS; Darwin: an empty
 * kevent wait, platform.h) and calls select()
 * with no descriptors (same timeout). nanosleep, futex with a timeout and select return
 * EINTR when a signal handler runs, even under SA_RESTART; a pipe read or write of at most
 * PIPE_BUF bytes is never short. Truth with no sampler: eintr = short_io = 0, so every
 * count under a sampler is a disturbance the sampler caused (eintr_per_1k_samples,
 * short_io_per_1k_samples). ops counts rounds. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"
#include "workloads/workload.h"

#define SYS_WAIT_NS 20000
#define SYS_IO_BYTES 256

struct syscall_wl {
	int fds[SB_MAX_THREADS][2];
	_Atomic uint32_t futex_word[SB_MAX_THREADS]; /* stays 0: waits always time out */
};

static void syscall_io(struct wl_truth *t, int fds[2])
{
	char out[SYS_IO_BYTES], in[SYS_IO_BYTES];
	ssize_t n;

	memset(out, 0x5a, sizeof(out));
	while ((n = write(fds[1], out, sizeof(out))) < 0 && errno == EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	if (n >= 0 && n != (ssize_t)sizeof(out))
		atomic_fetch_add_explicit(&t->short_io, 1, memory_order_relaxed);
	/* Read back exactly what was written so the pipe never fills. */
	size_t left = n > 0 ? (size_t)n : 0;
	while (left > 0) {
		ssize_t r = read(fds[0], in, left);
		if (r < 0 && errno == EINTR) {
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

	if (nanosleep(&wait, NULL) != 0 && errno == EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);

	syscall_io(t, s->fds[index]);

	if (plat_wait_word(&s->futex_word[index], 0, SYS_WAIT_NS) == -EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);

	struct timeval tv = { 0, SYS_WAIT_NS / 1000 };
	if (select(0, NULL, NULL, NULL, &tv) < 0 && errno == EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
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
