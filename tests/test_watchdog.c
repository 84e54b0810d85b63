/* test_watchdog.c - the harness catches a sampler that deadlocks its target.
 *
 * test-malloc-in-handler mallocs in its SIGPROF handler; on malloclock the handler soon
 * interrupts a thread holding its arena lock and waits on that lock forever. The runner's
 * watchdog must kill the child and record "deadlock suspected", within its limit: the
 * test itself must never hang. A single run almost always deadlocks within a second; up to
 * ATTEMPTS runs are allowed so that a lucky run does not fail the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "core/run.h"
#include "harness/runner.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

#define ATTEMPTS 3
#define WATCHDOG_S 2.5
#define DURATION_S 1.0

static void test_malloc_in_handler_deadlocks(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__ /* TSan runs handlers outside the allocator: nothing deadlocks */
	skip();
#endif
	struct run_spec spec = {
		.sampler = sampler_find("test-malloc-in-handler"),
		.workload = workload_find("malloclock"),
		.threads = 4,
		.hz = 1000,
		.duration_s = DURATION_S,
		.seed = 11,
		.watchdog_s = WATCHDOG_S,
	};
	int caught = 0;

	assert_non_null(spec.sampler);
	assert_non_null(spec.workload);
	for (int i = 0; i < ATTEMPTS && !caught; i++) {
		struct sb_run r;
		spec.repetition = i;
		uint64_t t0 = sb_now_ns();
		assert_int_equal(runner_run(&spec, i, &r), 0);
		double took = (double)(sb_now_ns() - t0) / 1e9;
		print_message("attempt %d: %s after %.2f s: %s\n", i, run_status_name(r.status),
			      took, r.reason);
		/* The watchdog bounds the run: a little over its limit, never a hang. */
		assert_true(took < WATCHDOG_S + 2.0);
		if (r.status == SB_RUN_FAILED && strstr(r.reason, "deadlock suspected")) {
			assert_non_null(strstr(r.reason, "workload")); /* stuck while it ran */
			caught = 1;
		}
		run_free(&r);
	}
	assert_true(caught);
}

/* The same workload under a correct signal sampler finishes: the deadlock is the
 * sampler's, not malloclock's. */
static void test_ctimer_does_not_deadlock(void **state)
{
	(void)state;
	struct run_spec spec = {
		.sampler = sampler_find("ctimer"),
		.workload = workload_find("malloclock"),
		.threads = 4,
		.hz = 1000,
		.duration_s = 0.5,
		.seed = 11,
		.watchdog_s = WATCHDOG_S,
	};
	struct sb_run r;
	assert_int_equal(runner_run(&spec, 0, &r), 0);
	if (r.status != SB_RUN_OK)
		print_message("ctimer on malloclock: %s\n", r.reason);
	assert_int_equal(r.status, SB_RUN_OK);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malloc_in_handler_deadlocks),
		cmocka_unit_test(test_ctimer_does_not_deadlock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
