/* test_calibrate.c - host calibration rows and facts, the fingerprint, and the
 * floor-relative metrics computed from them. No timing bounds: only structure, order
 * (p50 <= p99 <= max), the facts made from known samples and the arithmetic of the
 * ratios. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/metrics.h"
#include "core/run.h"
#include "harness/calibrate.h"
#include "harness/calibrate_int.h"
#include "harness/host.h"
#include "sampler/sampler.h"
#include "sampler/thread_ctl.h"
#include "tests/support/sbrun.h"

static const char *const mechanisms[] = {
	"syscall",	 "thread_cpu_clock",  "futex_cross", "futex_same",	 "signal_cross",
	"rendezvous_stop", "rendezvous_window", "rendezvous",  "rendezvous_busy",
	"rendezvous_busy_observed", "ptrace_interrupt",
};
#define NMECH (sizeof(mechanisms) / sizeof(mechanisms[0]))

static const struct sb_calib_row *row(const struct sb_host *h, const char *name,
				      const char *phase)
{
	for (int i = 0; i < h->ncalib; i++)
		if (!strcmp(h->calib[i].name, name) && !strcmp(h->calib[i].phase, phase))
			return &h->calib[i];
	return NULL;
}

static void test_rows_and_facts(void **state)
{
	struct sb_host *h = calloc(1, sizeof(*h));

	(void)state;
	assert_int_equal(calibrate_host(h, "start"), (int)NMECH);
	assert_int_equal(calibrate_host(h, "end"), (int)NMECH);
	for (size_t i = 0; i < NMECH; i++) {
		for (int ph = 0; ph < 2; ph++) {
			const struct sb_calib_row *c = row(h, mechanisms[i], ph ? "end" : "start");
			assert_non_null(c);
			if (c->n == 0) { /* not permitted here: it must say why */
				assert_true(c->reason[0] != 0);
				assert_true(isnan(c->p50_ns));
				continue;
			}
			assert_true(c->p50_ns > 0);
			assert_true(c->p50_ns <= c->p99_ns);
			assert_true(c->p99_ns <= c->max_ns);
		}
		/* Facts exist only where measured (their values: test_facts_from_samples). */
		char name[SB_NAME_LEN];
		snprintf(name, sizeof(name), "%s_p99_ns", mechanisms[i]);
		const struct sb_calib_row *c = row(h, mechanisms[i], "start");
		assert_int_equal(isnan(host_fact(h, name)), c->n == 0);
	}
	/* These need nothing but this process: always measured. */
	assert_true(row(h, "syscall", "start")->n > 0);
	assert_true(row(h, "rendezvous", "start")->n > 0);
	/* What the spinning threads saw includes their own stop: the busy tick's observed
	 * gaps are at least its stops (request -> parked) at the median. */
	assert_true(row(h, "rendezvous_busy_observed", "start")->n > 0);
	assert_true(host_fact(h, "rendezvous_busy_observed_p50_ns") >=
		    host_fact(h, "rendezvous_stop_p50_ns"));
	/* The rendezvous ends after the thread parked and was released: its phases nest. */
	assert_true(host_fact(h, "rendezvous_stop_p50_ns") <= host_fact(h, "rendezvous_p50_ns"));
	assert_float_equal(host_fact(h, "spin_ns"), (double)tc_spin_ns(), 0.5);
	assert_float_equal(host_fact(h, "spin_budget_ns"), (double)calibrate_spin_budget(h), 0.5);
	free(h);
}

/* Series of known samples through cal_add_row: each fact is the quantile of the samples
 * worked out here (linear interpolation between order statistics, metrics.h), not a copy
 * of a row made by the same code. */
static struct cal_series series;

static void fill(const char *name, int n, double first)
{
	memset(&series, 0, sizeof(series));
	series.name = name;
	/* first .. first + n - 1, shuffled (37 is prime to the sizes used) */
	for (int i = 0; i < n; i++)
		series.v[i] = first + (double)((i * 37) % n);
	series.n = n;
}

static void test_facts_from_samples(void **state)
{
	struct sb_host *h = calloc(1, sizeof(*h));

	(void)state;
	assert_non_null(h);
	/* 1..101: p50 is the 51st value, p99 at rank 0.99 * 100 = 99 is 100, max 101 */
	fill("syscall", 101, 1);
	cal_add_row(h, &series, "start");
	assert_int_equal(h->ncalib, 1);
	assert_int_equal(h->calib[0].n, 101);
	assert_float_equal(h->calib[0].p50_ns, 51, 1e-9);
	assert_float_equal(h->calib[0].p99_ns, 100, 1e-9);
	assert_float_equal(h->calib[0].max_ns, 101, 1e-9);
	assert_float_equal(host_fact(h, "syscall_p50_ns"), 51, 1e-9);
	assert_float_equal(host_fact(h, "syscall_p99_ns"), 100, 1e-9);
	assert_float_equal(host_fact(h, "syscall_max_ns"), 101, 1e-9);
	assert_true(isnan(host_fact(h, "syscall_worst_p99_ns"))); /* an end-phase fact */

	/* A calmer end: the start's p99 stays the worst, and the start's facts stay. 11..31:
	 * p99 at rank 19.8 is 30.8. */
	fill("syscall", 21, 11);
	cal_add_row(h, &series, "end");
	assert_float_equal(h->calib[1].p99_ns, 30.8, 1e-9);
	assert_float_equal(host_fact(h, "syscall_worst_p99_ns"), 100, 1e-9);
	assert_float_equal(host_fact(h, "syscall_p50_ns"), 51, 1e-9);
	assert_float_equal(host_fact(h, "syscall_p99_ns"), 100, 1e-9);

	/* A busier end: its p99 is the worst. 1001..1201: p99 at rank 198 is 1199. */
	memset(h, 0, sizeof(*h));
	fill("futex_cross", 101, 1);
	cal_add_row(h, &series, "start");
	fill("futex_cross", 201, 1001);
	cal_add_row(h, &series, "end");
	assert_float_equal(host_fact(h, "futex_cross_worst_p99_ns"), 1199, 1e-9);
	assert_float_equal(host_fact(h, "futex_cross_p99_ns"), 100, 1e-9);

	/* Nothing measured: a row with the reason, NaN quantiles, no fact. */
	memset(h, 0, sizeof(*h));
	fill("ptrace_interrupt", 0, 0);
	cal_add_row(h, &series, "start");
	assert_int_equal(h->calib[0].n, 0);
	assert_string_equal(h->calib[0].reason, "no measurement completed");
	assert_true(isnan(h->calib[0].p99_ns));
	assert_true(isnan(host_fact(h, "ptrace_interrupt_p99_ns")));
	free(h);
}

static void test_spin_budget_bounds(void **state)
{
	struct sb_host h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(calibrate_spin_budget(&h), 50000);
	host_fact_set(&h, "futex_cross_p50_ns", 20000);
	assert_int_equal(calibrate_spin_budget(&h), 40000);
	host_fact_set(&h, "futex_cross_p50_ns", 1000);
	assert_int_equal(calibrate_spin_budget(&h), 10000);
	host_fact_set(&h, "futex_cross_p50_ns", 1e6);
	assert_int_equal(calibrate_spin_budget(&h), 150000);
}

static void test_fingerprint(void **state)
{
	struct sb_host a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.nproc = 2;
	host_fact_set(&a, "syscall_p50_ns", 230);
	host_fact_set(&a, "futex_cross_p50_ns", 50000);
	b = a;
	host_fingerprint(&a);
	host_fingerprint(&b);
	assert_string_equal(a.fingerprint, b.fingerprint);
	/* The class is read from the host, never timed: floors on either side of where a
	 * bucket's edge was (128 ns), or 4x dearer, are one class (the mitigations that make
	 * syscalls dearer are read from the kernel). */
	host_fact_set(&a, "syscall_p50_ns", 127);
	host_fingerprint(&a);
	for (double ns = 130; ns < 1100; ns *= 2.8) { /* 130, 364, 1019 */
		host_fact_set(&b, "syscall_p50_ns", ns);
		host_fingerprint(&b);
		assert_string_equal(a.fingerprint, b.fingerprint);
	}
	b = a;
	b.nproc = 8;
	host_fingerprint(&b);
	assert_string_not_equal(a.fingerprint, b.fingerprint);
}

static void test_floor_ratios(void **state)
{
	struct sb_host h;
	struct sb_run r;
	struct sb_stat_row stats[2] = { { "ticks_done", 100 }, { "sampler_cpu_ns", 2e6 } };

	(void)state;
	memset(&h, 0, sizeof(h));
	memset(&r, 0, sizeof(r));
	metrics_clear(&r.metrics);
	r.clock = SB_CLOCK_WALL;
	r.threads = 2;
	r.stats = stats;
	r.nstats = 2;
	r.metrics.stop_latency_p99_ns = 60e3;
	r.metrics.suspend_window_p50_ns = 40e3;
	r.metrics.suspend_window_p99_ns = 90e3;

	metrics_floor_ratios(&r, &h, 0); /* no calibration: NaN, never a made-up floor */
	assert_true(isnan(r.metrics.suspend_window_p99_floor_ratio));
	assert_float_equal(r.metrics.sampler_cpu_per_tick_ns, 20e3, 1e-9);

	host_fact_set(&h, "rendezvous_stop_p99_ns", 30e3);
	host_fact_set(&h, "rendezvous_p50_ns", 20e3);
	host_fact_set(&h, "rendezvous_p99_ns", 45e3);
	host_fact_set(&h, "syscall_p50_ns", 1e3);
	host_fact_set(&h, "ptrace_interrupt_p99_ns", 90e3);
	metrics_floor_ratios(&r, &h, 0);
	assert_float_equal(r.metrics.stop_latency_p99_floor_ratio, 2.0, 1e-12);
	assert_float_equal(r.metrics.suspend_window_p50_floor_ratio, 2.0, 1e-12);
	assert_float_equal(r.metrics.suspend_window_p99_floor_ratio, 2.0, 1e-12);
	assert_float_equal(r.metrics.sampler_cpu_per_tick_floor_ratio, 10.0, 1e-12);

	/* An out-of-process sampler is measured against ptrace's floor. */
	stats[0] = (struct sb_stat_row){ "ticks", 100 };
	metrics_floor_ratios(&r, &h, 1);
	assert_float_equal(r.metrics.suspend_window_p99_floor_ratio, 1.0, 1e-12);
	assert_float_equal(r.metrics.sampler_cpu_per_tick_ns, 20e3, 1e-9);

	/* A signal handler's run time is not a rendezvous: no floor. */
	r.clock = SB_CLOCK_CPU;
	metrics_floor_ratios(&r, &h, 0);
	assert_true(isnan(r.metrics.suspend_window_p99_floor_ratio));
	assert_true(isnan(r.metrics.stop_latency_p99_floor_ratio));
}

/* Every run file carries both phases, whatever tests/run.sh's SB_CALIBRATE=0 saves the
 * other tests: `run` calibrates unless told not to, and `show` prints both. */
static void test_run_file_has_both_phases(void **state)
{
	const char *b = getenv("BUILD");
	char bin[512], h5[] = "/tmp/sbcalib.XXXXXX", path[600], out[8192];
	int fd = mkstemp(h5);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(h5);
	snprintf(path, sizeof(path), "%s.h5", h5);
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	unsetenv("SB_CALIBRATE");
	assert_int_equal(sbrun(bin, ARGS("run", "-s", "none", "-w", "balanced", "-d", "0.1", "-o",
					 path), NULL, 0, NULL, 0), 0);
	assert_int_equal(sbrun(bin, ARGS("show", path), out, sizeof(out), NULL, 0), 0);
	unlink(path);
	const char *table = strstr(out, "calibration, this host's floors");
	assert_non_null(table);
	assert_non_null(strstr(table, "start p50"));
	assert_non_null(strstr(table, "end p50"));
	for (size_t i = 0; i < NMECH; i++)
		assert_non_null(strstr(table, mechanisms[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_and_facts),
		cmocka_unit_test(test_facts_from_samples),
		cmocka_unit_test(test_spin_budget_bounds),
		cmocka_unit_test(test_fingerprint),
		cmocka_unit_test(test_floor_ratios),
		cmocka_unit_test(test_run_file_has_both_phases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
