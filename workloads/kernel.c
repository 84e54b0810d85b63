/* kernel.c - CPU in the kernel: each round a thread computes in kernel_user, then copies
 * 256 KiB from the page cache in kernel_sys (one pread of an anonymous file every thread
 * shares).
 *
 * The pread is issued inline (platform/linux/inline.h), so while the kernel copies, the
 * thread's user PC is in kernel_sys: a sampler that stops it or signals it then (the
 * signal is taken on the way back to user space) names kernel_sys; one that walks kernel
 * stacks (perf) shows the kernel's frames above it. A sampler that counts only user time,
 * or that cannot stop a thread in the kernel, charges kernel_user with kernel_sys's share.
 *
 * Truth: func_ops[k], the thread's own CPU clock across each phase (ns), written as the
 * run's func_work stats: the split between user and kernel time as the thread measured it,
 * about half each here (the kernel's own per-thread user/system split agrees within its
 * tick sampling: tests/test_workloads.c). The data read is checked (checksum_errors), a
 * short read counts in short_io, an interrupted one in eintr. ops counts rounds. Built
 * three times (workload.h "build variants"): kernel, kernel@nofp, kernel@inline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "platform/platform.h"
#include "workloads/workload.h"

#define KERN_BYTES (256 * 1024) /* read per round: about as long as the user phase */
#define KERN_USER_ITERS 6000    /* iterations per user phase */
#define KERN_FILL 0x5a

#define KERN_ATTR __attribute__((PLAT_DISTINCT_FN))

struct kernel_wl {
	int fd; /* anonymous, KERN_BYTES of KERN_FILL */
};

/* wl_keep() keeps kernel_user non-leaf (a frame record of its own: workload.h). */
WL_SPLIT_FN void kernel_user(struct wl_truth *t, uint64_t seed, uint64_t expected)
{
	uint64_t x;
	WL_XORSHIFT(x, seed, KERN_USER_ITERS);
	if (wl_keep(x) != expected)
		atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
	wl_progress_tick();
}

WL_SPLIT_FN void kernel_sys(struct wl_truth *t, int fd, unsigned char *buf)
{
	long n;

	buf[0] = buf[KERN_BYTES - 1] = 0;
	while ((n = plat_leaf_pread(fd, buf, KERN_BYTES, 0)) == -EINTR)
		atomic_fetch_add_explicit(&t->eintr, 1, memory_order_relaxed);
	if (n != KERN_BYTES)
		atomic_fetch_add_explicit(&t->short_io, 1, memory_order_relaxed);
	else if (buf[0] != KERN_FILL || buf[KERN_BYTES - 1] != KERN_FILL)
		atomic_fetch_add_explicit(&t->checksum_errors, 1, memory_order_relaxed);
	wl_progress_tick();
}

static KERN_ATTR void kernel_thread(struct wl_ctx *ctx, int index)
{
	struct kernel_wl *k = ctx->priv;
	struct wl_truth *t = &ctx->truth[index];
	uint64_t seed = ctx->seed | 1, expected = wl_unit_expected(seed, KERN_USER_ITERS);
	uint64_t user = 0, sys = 0;
	unsigned char *buf = malloc(KERN_BYTES);

	if (!buf) {
		atomic_fetch_add(&t->checksum_errors, 1);
		return;
	}
	uint64_t c0 = sb_thread_cpu_ns();
	while (sb_now_ns() < ctx->deadline_ns) {
		kernel_user(t, seed, expected);
		uint64_t c1 = sb_thread_cpu_ns();
		kernel_sys(t, k->fd, buf);
		uint64_t c2 = sb_thread_cpu_ns();
		user += c1 - c0;
		sys += c2 - c1;
		c0 = c2;
		atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
	}
	atomic_fetch_add(&t->func_ops[0], user);
	atomic_fetch_add(&t->func_ops[1], sys);
	free(buf);
}

/* The file every thread reads: an anonymous file (memfd; Darwin: unlinked in $TMPDIR),
 * close-on-exec, filled before the threads start. */
static int kernel_setup(struct wl_ctx *ctx)
{
	struct kernel_wl *k = calloc(1, sizeof(*k));
	static unsigned char fill[KERN_BYTES];

	if (!k)
		return -1;
	if ((k->fd = plat_anon_fd("sb-kernel")) < 0) {
		free(k);
		return -1;
	}
	memset(fill, KERN_FILL, sizeof(fill));
	if (pwrite(k->fd, fill, sizeof(fill), 0) != (ssize_t)sizeof(fill)) {
		close(k->fd);
		free(k);
		return -1;
	}
	ctx->priv = k;
	return 0;
}

static void kernel_teardown(struct wl_ctx *ctx)
{
	struct kernel_wl *k = ctx->priv;
	close(k->fd);
	free(k);
}

const struct workload WL_WORKLOAD(kernel) = {
	.name = "kernel" WL_VARIANT_TAG,
	.description = "half the CPU in user code, half in the kernel copying a file from "
		       "the page cache",
	.thread_main = kernel_thread,
	.setup = kernel_setup,
	.teardown = kernel_teardown,
	.chain = { (const void *)kernel_thread, NULL },
	.funcs = { (const void *)kernel_user, (const void *)kernel_sys, NULL },
	.func_share = { 0.5, 0.5 },
	.func_share_measured = true,
	.variant = WL_VARIANT_NAME,
};
