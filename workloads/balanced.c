/* balanced.c - N threads spinning on equal work until the deadline. Truth: equal CPU shares
 * when threads <= cores; the scheduler's split otherwise (measured, not assumed). */
#include "workloads/workload.h"

static void balanced_thread(struct wl_ctx *ctx, int index)
{
	while (sb_now_ns() < ctx->deadline_ns)
		wl_unit(ctx, index);
}

const struct workload workload_balanced = {
	.name = "balanced",
	.description = "N threads spinning on equal work",
	.thread_main = balanced_thread,
	.chain = { (const void *)balanced_thread, NULL },
};
