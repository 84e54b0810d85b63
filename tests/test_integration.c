/* test_integration.c - itimer and ctimer for ~1 s on `skewed` with 4 threads, through the
 * real runner (fork, watchdog, shared sink). Bounds are wide for a noisy 2-core VM, but a
 * broken sampler (no samples, wrong thread, wrong rate, broken walk) fails them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/live_run.h"

#include "harness/runner.h"


/* One 1 s run of sampler on skewed at 100 Hz with threads threads into r, its sink room
 * sink_samples (0: sized for the run); fails the test unless it is scored. */
static void run_skewed_into(const char *sampler, int threads, size_t sink_samples,
			    struct sb_run *r)
{
	struct run_spec spec = {
		.sampler = sampler_find(sampler),
		.workload = workload_find("skewed"),
		.threads = threads,
		.hz = 100,
		.duration_s = 1.0,
		.seed = 1,
		.sink_samples = sink_samples,
	};
	assert_non_null(spec.sampler);
	assert_non_null(spec.workload);
	live_run = r;
	run_free(r); /* a static run: empty, or left by a failed assert */
	assert_int_equal(runner_run(&spec, 0, r), 0);
	if (!run_scored(r->status)) /* lossy: judged by the rate bounds below */
		fail_msg("%s run not ok: %s", sampler, r->reason);
	printf("%s skewed: samples %.0f rate_accuracy %.3f thread_tvd %.3f magnitude_error %.3f\n",
	       sampler, r->metrics.nsamples, r->metrics.rate_accuracy, r->metrics.thread_tvd,
	       r->metrics.magnitude_error);
}

static void run_skewed(const char *sampler, struct sb_run *r)
{
	run_skewed_into(sampler, 4, 0, r);
}

/* Common checks: samples exist, each carries its thread (tid, and the slot that tid had),
 * almost all are on workload threads, each walk reaches the slot leaf of its own thread,
 * and the workload's results were not corrupted. A process-wide SIGPROF may land on the
 * harness's main thread while it starts or joins the workers: that sample correctly says
 * slot -1, and there are few of them. A worker is in its slot only between
 * sb_thread_begin() and sb_thread_end(), exactly where its truth (CPU time) is measured:
 * a SIGPROF in its start-up or exit code (pthread's start_thread, the trampoline) says
 * slot -1 with the worker's tid, and that is right, not a window: the time is no slot's.
 * What must never happen is a wrong slot, or slot -1 on a stack inside a slot's code. */
static void check_common(const struct sb_run *r)
{
	assert_true(r->nsamples > 0);
	assert_int_equal(r->metrics.checksum_errors, 0);
	size_t own_leaf = 0, on_workers = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		if (s->tid <= 0 || s->thread_index < -1 || s->thread_index >= 4)
			fail_msg("sample %zu has tid %d, thread index %d", i, s->tid, s->thread_index);
		int slot_of_tid = -1;
		for (size_t k = 0; k < r->nthread_rows; k++)
			if (r->thread_rows[k].tid == s->tid)
				slot_of_tid = r->thread_rows[k].index;
		if (s->thread_index >= 0 && slot_of_tid != s->thread_index)
			fail_msg("sample %zu: tid %d is slot %d, sample says %d", i, s->tid,
				 slot_of_tid, s->thread_index);
		if (s->thread_index < 0) {
			for (uint32_t k = 0; k < s->depth; k++)
				if (wl_slot_frame_of_pc(r->frames[s->frame_offset + k]) >= 0)
					fail_msg("sample %zu: tid %d says slot -1 but its frame %u "
						 "is in slot %d's code", i, s->tid, k,
						 wl_slot_frame_of_pc(r->frames[s->frame_offset + k]));
			continue;
		}
		on_workers++;
		for (uint32_t k = 0; k < s->depth; k++)
			if (wl_slot_of_pc(r->frames[s->frame_offset + k]) == s->thread_index) {
				own_leaf++;
				break;
			}
	}
	if (on_workers < r->nsamples * 98 / 100)
		fail_msg("only %zu of %zu samples on workload threads", on_workers, r->nsamples);
	/* The misses are samples inside glibc's barrier code, which Debian builds without
	 * frame pointers: 0.89-0.97 for a healthy itimer here (make bench's skewed medians
	 * 0.90-0.94); a walker that stops at the leaf or loses the chain gives near 0. */
	double frac = (double)own_leaf / (double)on_workers;
	/* ThreadSanitizer delivers a signal at the thread's next interceptor, not where the
	 * timer fired, so more samples land in the barrier (as in test_gperftools): 0.78 and
	 * 0.82 in 1 of 10 TSan make checks of c010856 */
#ifdef __SANITIZE_THREAD__
	const double min_frac = 0.6;
#else
	const double min_frac = 0.85;
#endif
	printf("%s: %.2f of the stacks reach their thread's slot function\n", r->sampler, frac);
	if (frac < min_frac)
		fail_msg("only %.2f of the stacks reach their thread's slot function", frac);
	assert_true(r->metrics.misattributed_fraction < 0.01);
	/* every thread got samples */
	for (size_t i = 0; i < r->nthread_rows; i++)
		assert_true(r->thread_rows[i].samples > 0);
}

static void test_ctimer_skewed(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	run_skewed("ctimer", &r);
	check_common(&r);
	/* The count scatters with the host: a signal still pending at the next expiry is an
	 * overrun, folded into the weight of the sample that is taken. 0.779-0.990 in 5
	 * fresh-clone make checks (one 1 s run each), magnitude_error 0.001-0.016 in the
	 * same runs. So the weights carry the tight bound: a sampler that drops samples
	 * (fault-drop, 30 %) misses it; one that doubles its count fails the rate's 1.3. */
	assert_true(r.metrics.rate_accuracy >= 0.6 && r.metrics.rate_accuracy <= 1.3);
	/* its own timer per thread: thread_tvd 0.006-0.086 in those runs; every sample on
	 * one thread gives 0.6-0.9 */
	assert_true(r.metrics.thread_tvd < 0.15);
	assert_true(r.metrics.magnitude_error < 0.1);
	run_free(&r);
}

/* Process-wide setitimer: Linux sends SIGPROF to a thread that is running when the
 * process timer expires, which biases attribution on a 2-core VM (thread_tvd below). */
static void test_itimer_skewed(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	run_skewed("itimer", &r);
	check_common(&r);
	assert_true(r.metrics.rate_accuracy >= 0.7 && r.metrics.rate_accuracy <= 1.3);
	/* A process-wide timer is charged to whichever thread runs at the tick: 0.011-0.149
	 * in 12 quiet runs here, 0.272 in one fresh-clone make check. 0.35 is ci/budgets'
	 * rule for the class; every sample on one thread gives 0.6-0.9 with these shares. */
	assert_true(r.metrics.thread_tvd < 0.35);
	run_free(&r);
}

/* A wall sampler whose samples overflow the harness's sink is lossy, and the reason says
 * the sink dropped them: the loss is not the sampler's alone. mach at 100 Hz on 2 threads
 * for 1 s pushes ~200 samples into room for 40. */
static void test_sink_full_named(void **state)
{
	(void)state;
	static struct sb_run r;

	run_skewed_into("mach", 2, 40, &r);
	printf("mach into a 40-sample sink: %s: %s\n", run_status_name(r.status), r.reason);
	assert_int_equal(r.status, SB_RUN_LOSSY);
	assert_non_null(strstr(r.reason, "sink was full: 40 held"));
	assert_true(r.metrics.nsamples <= 40);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ctimer_skewed, free_live_run),
		cmocka_unit_test_teardown(test_itimer_skewed, free_live_run),
		cmocka_unit_test_teardown(test_sink_full_named, free_live_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
