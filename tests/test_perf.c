/* test_perf.c - sampler/perf.c through the runner: every thread sampled, per-thread shares
 * match true CPU, no lost records, leaf frames on the right thread, CLOCK_MONOTONIC
 * timestamps, kernel frames flagged. Skips with the reason when perf is not permitted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/run.h"
#include "harness/runner.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

static void skip_unless_available(void)
{
	const struct sampler *s = sampler_find("perf");
	char why[256] = "";

	assert_non_null(s);
	if (s->available(why, sizeof(why)) != 0) {
		print_message("perf not available: %s\n", why);
		skip();
	}
}

static void run_one(const struct workload *w, int threads, double hz, double dur,
		    struct sb_run *r, uint64_t *t0, uint64_t *t1)
{
	struct run_spec spec = {
		.sampler = sampler_find("perf"),
		.workload = w,
		.threads = threads,
		.hz = hz,
		.duration_s = dur,
		.seed = 42,
	};
	memset(r, 0, sizeof(*r));
	*t0 = sb_now_ns();
	assert_int_equal(runner_run(&spec, 0, r), 0);
	*t1 = sb_now_ns();
	if (r->status != SB_RUN_OK)
		print_message("run failed: %s\n", r->reason);
	assert_int_equal(r->status, SB_RUN_OK);
}

static void test_skewed_shares(void **state)
{
	(void)state;
	skip_unless_available();
	struct sb_run r;
	uint64_t t0, t1;
	run_one(workload_find("skewed"), 4, 100, 1.0, &r, &t0, &t1);

	print_message("perf skewed: samples %zu rate_accuracy %.3f thread_tvd %.3f "
		      "misattributed %.3f lost %.0f\n",
		      r.nsamples, r.metrics.rate_accuracy, r.metrics.thread_tvd,
		      r.metrics.misattributed_fraction, run_stat(&r, "lost"));
	assert_int_equal((int)r.nthread_rows, 4);
	for (size_t i = 0; i < r.nthread_rows; i++) {
		print_message("  slot %d: samples %llu cpu %.3f s\n", r.thread_rows[i].index,
			      (unsigned long long)r.thread_rows[i].samples,
			      r.thread_rows[i].cpu_ns / 1e9);
		assert_true(r.thread_rows[i].samples > 0);
	}
	assert_true(r.metrics.thread_tvd < 0.1);
	assert_true(run_stat(&r, "lost") == 0);
	assert_true(run_stat(&r, "open_failures") == 0);
	assert_true(run_stat(&r, "fds") == 4);
	/* The kernel's callchain must start in the thread's own leaf. */
	assert_false(isnan(r.metrics.misattributed_fraction));
	assert_true(r.metrics.misattributed_fraction < 0.02);
	size_t walked = 0;
	for (size_t i = 0; i < r.nsamples; i++) {
		const struct sb_sample *s = &r.samples[i];
		assert_true(s->time_ns >= t0 && s->time_ns <= t1); /* CLOCK_MONOTONIC */
		assert_true(s->thread_index >= 0 && s->thread_index < 4);
		assert_true(s->weight_ns == 1e7); /* the period at 100 Hz */
		assert_true(isnan(s->stop_latency_ns) && isnan(s->suspend_window_ns));
		assert_true(s->depth >= 1);
		walked += s->depth >= 2;
	}
	/* The kernel walks user frame pointers: nearly every callchain goes past the leaf. A
	 * sample taken inside glibc (no frame pointers: the barrier wait) may stop at it. */
	assert_true(walked >= r.nsamples * 95 / 100);
	run_free(&r);
}

/* A thread that lives in syscalls: with kernel sampling permitted, some samples must carry
 * kernel frames, flagged, before the user frames. */
static void syscall_thread(struct wl_ctx *ctx, int index)
{
	while (sb_now_ns() < ctx->deadline_ns) {
		for (int i = 0; i < 64; i++)
			close(dup(0));
		wl_unit(ctx, index);
	}
}

static const struct workload syscall_wl = {
	.name = "test_syscalls",
	.description = "dup/close loop",
	.thread_main = syscall_thread,
};

static void test_kernel_frames(void **state)
{
	(void)state;
	skip_unless_available();
	struct sb_run r;
	uint64_t t0, t1;
	run_one(&syscall_wl, 1, 1000, 0.5, &r, &t0, &t1);
	if (run_stat(&r, "kernel_excluded") == 1) {
		run_free(&r);
		skip(); /* only user sampling permitted here */
	}
	size_t kernel = 0, with_user = 0;
	for (size_t i = 0; i < r.nsamples; i++) {
		const struct sb_sample *s = &r.samples[i];
		if (!(s->flags & SB_SAMPLE_KERNEL))
			continue;
		kernel++;
		const uint64_t *f = &r.frames[s->frame_offset];
		assert_true(f[0] >= 0xffff800000000000ull); /* leaf is a kernel address */
		for (uint32_t k = 1; k < s->depth; k++)
			if (f[k] < 0x800000000000ull) {
				with_user++;
				break;
			}
	}
	print_message("perf syscalls: %zu samples, %zu with kernel frames, %zu of those "
		      "reach user frames\n", r.nsamples, kernel, with_user);
	assert_true(kernel > 0);
	assert_true(with_user > 0);
	assert_true(run_stat(&r, "kernel_samples") == (double)kernel);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skewed_shares),
		cmocka_unit_test(test_kernel_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
