/* test_gperftools.c - the gperftools and gperftools-pt samplers: their API contract, and
 * one real `sampbench run` of both on `skewed` (4 threads, 100 Hz, 1 s) read back from
 * HDF5. Skips, saying why, when libprofiler or build/sampbench is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/run.h"
#include "results/h5io.h"
#include "sampler/sampler.h"

static const char *const names[] = { "gperftools", "gperftools-pt" };

/* Skips the calling test when libprofiler cannot be loaded. */
static void need_libprofiler(void)
{
	char why[256] = "";
	const struct sampler *s = sampler_find("gperftools");
	assert_non_null(s);
	if (s->available(why, sizeof(why)) != 0) {
		print_message("skipped: %s\n", why);
		skip();
	}
}

static void test_table_entries(void **state)
{
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		const struct sampler *s = sampler_find(names[i]);
		assert_non_null(s);
		assert_int_equal(s->clock, SB_CLOCK_CPU);
		assert_true(s->flags & SB_SAMPLER_TICK_DRIVEN);
		assert_non_null(s->available);
		assert_non_null(s->stats);
	}
	/* without the registration hook per-thread mode gathers nothing */
	assert_non_null(sampler_find("gperftools-pt")->thread_start);
}

/* available() must not load libprofiler into the caller: that would fix its frequency
 * before start() can set CPUPROFILE_FREQUENCY. */
static void test_available_does_not_load(void **state)
{
	(void)state;
	need_libprofiler();
	char why[256] = "";
	assert_int_equal(sampler_find("gperftools-pt")->available(why, sizeof(why)), 0);
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[512];
	int loaded = 0;
	while (fgets(line, sizeof(line), f))
		loaded |= strstr(line, "libprofiler") != NULL;
	fclose(f);
	assert_false(loaded);
}

static void test_bad_calls(void **state)
{
	(void)state;
	const struct sampler *s = sampler_find("gperftools");
	struct sb_config cfg = { .hz = 0, .threads = 1, .duration_s = 1 };

	errno = 0;
	assert_int_equal(s->start(&cfg, NULL), -1);
	assert_int_equal(errno, EINVAL);
	cfg.hz = NAN;
	assert_int_equal(s->start(&cfg, NULL), -1);
	errno = 0;
	assert_int_equal(s->stop(), -1); /* never started */
	assert_int_equal(errno, EINVAL);
}

static const struct sb_run *find_run(const struct sb_run *runs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(runs[i].sampler, name) == 0)
			return &runs[i];
	fail_msg("no run of %s in the file", name);
	return NULL;
}

/* Checks one run. tvd_max: see test_cli_run. */
static void check_run(const struct sb_run *r, double tvd_max)
{
	if (r->status != SB_RUN_OK)
		fail_msg("%s run is %s: %s", r->sampler, run_status_name(r->status), r->reason);
	print_message("%s skewed 4 thr 100 Hz 1 s: samples %.0f rate_accuracy %.3f "
		      "thread_tvd %.3f interrupts %.0f evictions %.0f\n",
		      r->sampler, r->metrics.nsamples, r->metrics.rate_accuracy,
		      r->metrics.thread_tvd, run_stat(r, "interrupts"), run_stat(r, "evictions"));
	assert_true(r->nsamples > 0);
	assert_int_equal(r->metrics.checksum_errors, 0);

	/* the profile holds every sample libprofiler took, and each became one sink sample.
	 * samples_gathered is read just before ProfilerStop (which resets it) while the timer
	 * still runs: a SIGPROF in between lands in the profile but not in it (CI saw the two
	 * differ once, under ASan). */
	double total = run_stat(r, "total_count");
	double gathered = run_stat(r, "samples_gathered");
	if (!(gathered <= total && total <= gathered + 2))
		fail_msg("%s: profile has %.0f samples, samples_gathered %.0f", r->sampler, total,
			 gathered);
	assert_true(total == run_stat(r, "interrupts"));
	assert_true(total == (double)r->nsamples);
	assert_true(run_stat(r, "parse_errors") == 0);
	assert_true(run_stat(r, "period_us") == 10000);

	size_t attributed = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		assert_int_equal(s->tid, -1);
		assert_true(isnan(s->stop_latency_ns) && isnan(s->suspend_window_ns));
		assert_true(s->weight_ns == 1e7);
		assert_true(s->depth > 0);
		if (s->thread_index >= 0) {
			assert_true(s->thread_index < 4);
			attributed++;
		}
	}
	/* the rest are workload threads in pthread_barrier_wait, a PC no slot owns.
	 * ThreadSanitizer delivers a signal at the thread's next interceptor, not where the
	 * timer fired, so more of them land in the barrier (gperftools-pt: 0.83). */
	double frac = (double)attributed / (double)r->nsamples;
#ifdef __SANITIZE_THREAD__
	const double min_frac = 0.7;
#else
	const double min_frac = 0.9;
#endif
	if (frac < min_frac)
		fail_msg("%s: only %.2f of the samples were attributed to a thread", r->sampler,
			 frac);

	assert_int_equal(r->nthread_rows, 4);
	for (size_t i = 0; i < 4; i++)
		if (r->thread_rows[i].samples == 0)
			fail_msg("%s: thread %zu got no samples", r->sampler, i);
	/* skewed: thread 3 does 4x the work of thread 0; charging threads alike fails this */
	assert_true(r->thread_rows[3].samples >= 2 * r->thread_rows[0].samples);
	if (!(r->metrics.thread_tvd < tvd_max))
		fail_msg("%s: thread_tvd %.3f, limit %.2f", r->sampler, r->metrics.thread_tvd,
			 tvd_max);
}

/* The whole path: CLI, child per run, dlopen'ed libprofiler, profile parse, HDF5 write and
 * read. thread_tvd < 0.1 is too tight at ~100 samples on this shared 2-core VM: measured
 * over 24 runs each, gperftools (process-wide setitimer, the kernel's choice of thread)
 * had a mean of 0.07-0.105 and a maximum of 0.214; gperftools-pt a mean of 0.03-0.056 and a
 * maximum of 0.145, mostly barrier samples no slot owns. A sampler charging every thread
 * alike scores 0.2 with the ordering check failing; one charging one thread scores > 0.6.
 * Under ASan the process-wide timer's bias reached 0.31, so gperftools gets the same 0.35
 * as its budget in ci/budgets; the ordering check still fails a sampler charging alike. */
static void test_cli_run(void **state)
{
	(void)state;
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char bin[512], dir[] = "/tmp/sampbench-test-gperftools-XXXXXX", path[600], cmd[2048];
	char err[256] = "";
	struct sb_host host;
	struct sb_run *runs = NULL;
	size_t nruns = 0;

	need_libprofiler();
	snprintf(bin, sizeof(bin), "%s/sampbench", build);
	if (access(bin, X_OK) != 0) {
		print_message("skipped: %s not built\n", bin);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.h5", dir);
	snprintf(cmd, sizeof(cmd),
		 "'%s' run --sampler gperftools,gperftools-pt --workload skewed --threads 4 "
		 "--hz 100 --duration 1 -q -o '%s'",
		 bin, path);
	int rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
		fail_msg("'%s' failed (status %d)", cmd, rc);
	if (h5_read(path, &host, &runs, &nruns, 1, err, sizeof(err)) != 0)
		fail_msg("cannot read %s: %s", path, err);
	assert_int_equal(nruns, 2);
	check_run(find_run(runs, nruns, "gperftools"), 0.35);
	check_run(find_run(runs, nruns, "gperftools-pt"), 0.2);
	assert_true(run_stat(find_run(runs, nruns, "gperftools-pt"), "registered_threads") >= 4);

	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_entries),
		cmocka_unit_test(test_available_does_not_load),
		cmocka_unit_test(test_bad_calls),
		cmocka_unit_test(test_cli_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
