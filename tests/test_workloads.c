/* test_workloads.c - the ground-truth workloads (mixed, churn, deep, hotspot, syscall,
 * malloclock) and the metrics they make possible.
 *
 * For each workload: (a) alone under `none`, through the runner: status ok, no checksum
 * errors, truth consistent (CPU <= alive time per slot, workload-specific truth); (b) under
 * ctimer (and a wall sampler where one is available): the workload's metric is computed
 * and lies in a range a correct sampler reaches and a broken one does not. Runs go through
 * runner_run() in this process, so the harness's symbols resolve against this binary.
 * Durations are 0.5-1 s; bounds are wide for a noisy 2-core VM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/support/live_run.h"
#include "tests/support/sbrun.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/run.h"
#include "results/h5io.h"
#include "harness/runner.h"
#include "platform/platform.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

#define SLACK_NS 5000000ull /* clock reads around fn are not atomic with the CPU clock */

/* ThreadSanitizer defers an asynchronous signal to its next interceptor and then hands the
 * handler the context saved when the signal arrived, whose stack has moved on: a stack
 * walked by a signal-based sampler (ctimer) is meaningless in a SANITIZE=thread build, so
 * the stack checks of those samplers are left out there (their counts are still checked). */
#ifdef __SANITIZE_THREAD__
#define SIGNAL_STACKS_VALID 0
#else
#define SIGNAL_STACKS_VALID 1
#endif


static void run_spec(const char *sampler, const char *workload, int threads, double hz,
		     double dur, uint32_t param, struct sb_run *r)
{
	struct run_spec spec = {
		.sampler = sampler_find(sampler),
		.workload = workload_find(workload),
		.threads = threads,
		.hz = hz,
		.duration_s = dur,
		.param = param,
		.seed = 7,
	};
	assert_non_null(spec.sampler);
	assert_non_null(spec.workload);
	live_run = r;
	run_free(r); /* a static run: empty, or left by a failed assert */
	memset(r, 0, sizeof(*r));
	assert_int_equal(runner_run(&spec, 0, r), 0);
	if (r->status != SB_RUN_OK)
		print_message("%s on %s: %s\n", sampler, workload, r->reason);
}

/* Runs and requires a scored status (ok, or lossy: a wall sampler that lost samples on
 * a loaded host; the rate bounds of each test judge that), no corruption and CPU <= alive
 * time in every slot. */
static void run_ok(const char *sampler, const char *workload, int threads, double hz,
		   double dur, uint32_t param, struct sb_run *r)
{
	run_spec(sampler, workload, threads, hz, dur, param, r);
	assert_true(run_scored(r->status));
	assert_true(r->metrics.checksum_errors == 0);
	assert_int_equal((int)r->nthread_rows, threads);
	for (size_t i = 0; i < r->nthread_rows; i++) {
		const struct sb_thread_row *t = &r->thread_rows[i];
		assert_true(t->os_threads >= 1);
		assert_true(t->alive_ns > 0);
		assert_true(t->cpu_ns <= t->alive_ns + SLACK_NS * t->os_threads);
		assert_true(t->offcpu_ns <= t->alive_ns + SLACK_NS);
	}
}

/* Returns 1 when sampler `name` exists and is usable here; prints why not otherwise. */
static int usable(const char *name)
{
	const struct sampler *s = sampler_find(name);
	char why[256] = "";
	if (!s) {
		print_message("%s: not built in\n", name);
		return 0;
	}
	if (s->available && s->available(why, sizeof(why)) != 0) {
		print_message("%s: not available: %s\n", name, why);
		return 0;
	}
	return 1;
}

/* Every workload in the table declares its expected chain; the test sampler is hidden. */
static void test_registered(void **state)
{
	(void)state;
	assert_non_null(workload_at(0));
	for (size_t i = 0; workload_at(i); i++)
		assert_non_null(workload_at(i)->chain[0]);
	const struct sampler *b = sampler_find("test-malloc-in-handler");
	assert_non_null(b);
	assert_true(b->flags & SB_SAMPLER_TEST); /* hidden from `list` */
}

/* The table walk for run: every registered sampler usable here (test samplers aside)
 * takes a short run of balanced, scored, with samples unless it is the baseline, which
 * takes none. A new sampler is exercised here without a new line. */
static void test_every_sampler(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	for (size_t i = 0; sampler_at(i); i++) {
		const struct sampler *s = sampler_at(i);
		if ((s->flags & SB_SAMPLER_TEST) || !usable(s->name))
			continue;
		run_ok(s->name, "balanced", 2, 250, 0.1, 0, &r); /* 50 samples expected */
		print_message("%-16s %zu samples\n", s->name, r.nsamples);
		if (s->flags & SB_SAMPLER_BASELINE)
			assert_int_equal(r.nsamples, 0);
		else
			assert_true(r.nsamples > 0);
		run_free(&r);
	}
}

static void test_mixed(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	run_ok("none", "mixed", 2, 250, 0.5, 0, &r);
	for (size_t i = 0; i < r.nthread_rows; i++) {
		const struct sb_thread_row *t = &r.thread_rows[i];
		assert_true(t->offcpu_ns > 0);
		/* Spin 2 ms, sleep 1 ms, block ~1 ms: neither share can be near 0 or 1. */
		double off = (double)t->offcpu_ns / (double)t->alive_ns;
		assert_true(off > 0.1 && off < 0.8);
		assert_true(t->cpu_ns + t->offcpu_ns <= t->alive_ns + 2 * SLACK_NS);
	}
	assert_true(isnan(r.metrics.offcpu_sample_fraction)); /* no samples */
	run_free(&r);

	/* A CPU-time sampler gives sleeping and blocked time (almost) no samples. */
	run_ok("ctimer", "mixed", 2, 250, 1.0, 0, &r);
	print_message("ctimer mixed: samples %.0f offcpu_sample_fraction %.3f true %.3f "
		      "stack_correct %.3f\n", r.metrics.nsamples, r.metrics.offcpu_sample_fraction,
		      r.metrics.offcpu_true_fraction, r.metrics.stack_correct_fraction);
	assert_false(isnan(r.metrics.offcpu_sample_fraction));
	assert_true(r.metrics.offcpu_true_fraction > 0.1);
	assert_true(r.metrics.offcpu_sample_fraction < 0.1);
	assert_true(!SIGNAL_STACKS_VALID || r.metrics.stack_correct_fraction > 0.8);
	run_free(&r);

	/* A wall-clock sampler splits them: its off-CPU share follows the truth. Run through
	 * the binary, as make bench does (2 s runs there: 0.343-0.388 against 0.35 in ten
	 * runs of two benches). Run in this process (runner_run), ptrace and mach both gave
	 * 0.39-0.53 against 0.35 (ptrace: one failure of this bound in ten make checks at
	 * 250 Hz, one at 97 Hz in CI): an excess of the in-process path that is not
	 * explained yet. 97 Hz, not 250: a 4 ms period is the
	 * workload's own cycle (spin 2, sleep 1, block ~1 ms). */
	if (!usable("ptrace")) {
		print_message("skipped: ptrace cannot run here\n");
		skip();
	}
	const char *b = getenv("BUILD");
	char bin[512], h5[] = "/tmp/sbmixed.XXXXXX", path[600], err[512];
	int fd = mkstemp(h5);
	assert_true(fd >= 0);
	close(fd);
	unlink(h5);
	snprintf(path, sizeof(path), "%s.h5", h5);
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	assert_int_equal(sbrun(bin, ARGS("run", "-q", "-s", "ptrace", "-w", "mixed", "-t", "2", "-z",
					 "97", "-d", "1.5", "-o", path), NULL, 0, NULL, 0), 0);
	struct sb_run *runs = NULL;
	size_t n = 0;
	if (h5_read(path, NULL, &runs, &n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	unlink(path);
	assert_int_equal(n, 1);
	print_message("ptrace mixed: samples %.0f offcpu_sample_fraction %.3f true %.3f\n",
		      runs[0].metrics.nsamples, runs[0].metrics.offcpu_sample_fraction,
		      runs[0].metrics.offcpu_true_fraction);
	double off = runs[0].metrics.offcpu_sample_fraction;
	double truth = runs[0].metrics.offcpu_true_fraction;
	run_free(&runs[0]);
	free(runs);
	assert_true(fabs(off - truth) < 0.15);
}

static void test_churn(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	const uint32_t total = 203; /* not a multiple of the roles: the remainder must run too */

	run_ok("none", "churn", 4, 250, 0.5, total, &r);
	uint32_t sum = 0;
	for (size_t i = 0; i < r.nthread_rows; i++) {
		const struct sb_thread_row *t = &r.thread_rows[i];
		uint32_t share = total / 4 + ((uint32_t)t->index < total % 4);
		assert_int_equal(t->os_threads, share);
		assert_true(t->ops >= t->os_threads); /* each thread does at least one unit */
		sum += t->os_threads;
	}
	assert_int_equal(sum, total);
	run_free(&r);

	run_ok("ctimer", "churn", 4, 250, 0.5, total, &r);
	print_message("ctimer churn: samples %.0f rate_accuracy %.3f thread_tvd %.3f "
		      "stack_correct %.3f\n", r.metrics.nsamples, r.metrics.rate_accuracy,
		      r.metrics.thread_tvd, r.metrics.stack_correct_fraction);
	assert_true(r.metrics.nsamples > 0);
	assert_true(!SIGNAL_STACKS_VALID || r.metrics.stack_correct_fraction > 0.8);
	assert_true(r.metrics.thread_tvd < 0.3);
	run_free(&r);
}

/* Median depth of samples on workload threads. */
static uint32_t median_depth(const struct sb_run *r)
{
	uint32_t *d = calloc(r->nsamples + 1, sizeof(*d));
	size_t n = 0;
	assert_non_null(d);
	for (size_t i = 0; i < r->nsamples; i++)
		if (r->samples[i].thread_index >= 0)
			d[n++] = r->samples[i].depth;
	uint32_t m = 0;
	for (size_t i = 0; i < n; i++) { /* selection by counting: n is small */
		size_t below = 0, equal = 0;
		for (size_t j = 0; j < n; j++) {
			below += d[j] < d[i];
			equal += d[j] == d[i];
		}
		if (below <= n / 2 && below + equal > n / 2)
			m = d[i];
	}
	free(d);
	return m;
}

static void test_deep(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	/* Every frame checks its callee's result: depth + 1 on an intact return path. */
	run_ok("none", "deep", 2, 250, 0.5, 50, &r);
	run_free(&r);
	if (!SIGNAL_STACKS_VALID) {
		print_message("ctimer deep: stack checks left out under ThreadSanitizer\n");
		return;
	}

	run_ok("ctimer", "deep", 2, 250, 0.5, 50, &r);
	uint32_t med = median_depth(&r);
	print_message("ctimer deep 50: samples %.0f median depth %u stack_correct %.3f "
		      "truncated %.3f\n", r.metrics.nsamples, med,
		      r.metrics.stack_correct_fraction, r.metrics.truncated_fraction);
	/* 50 + bottom, f0, thread, trampoline, pthread's frames: a few more than 50. */
	assert_true(med >= 50 + 3 && med <= 50 + 12);
	assert_true(r.metrics.stack_correct_fraction > 0.8);
	assert_true(r.metrics.truncated_fraction < 0.05);
	run_free(&r);

	/* Deeper than SB_MAX_FRAMES: cut, flagged, the root of the chain out of reach, and
	 * judged on the chain's leaf side, which a cut stack still holds. */
	run_ok("ctimer", "deep", 2, 250, 0.5, 400, &r);
	print_message("ctimer deep 400: samples %.0f stack_correct %.3f truncated %.3f\n",
		      r.metrics.nsamples, r.metrics.stack_correct_fraction,
		      r.metrics.truncated_fraction);
	assert_true(r.metrics.truncated_fraction > 0.9);
	assert_true(r.metrics.stack_correct_fraction > 0.8);
	for (size_t i = 0; i < r.nsamples; i++)
		if (r.samples[i].flags & SB_SAMPLE_TRUNCATED)
			assert_true(r.samples[i].depth <= SB_MAX_FRAMES);
	run_free(&r);
}

static void test_hotspot(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	/* In-process: the work split per function is exactly the declared one. */
	const struct workload *w = workload_find("hotspot");
	struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
	struct wl_ctx ctx = { .threads = 1, .duration_s = 0.1, .seed = 3, .truth = truth };
	assert_non_null(truth);
	assert_int_equal(workload_run(w, &ctx), 0);
	double ops[WL_MAX_FUNCS], sum = 0;
	int n = 0;
	for (; n < WL_MAX_FUNCS && w->funcs[n]; n++)
		sum += ops[n] = (double)atomic_load(&truth[0].func_ops[n]);
	assert_int_equal(n, 3);
	assert_true(sum > 0);
	for (int k = 0; k < n; k++)
		assert_true(fabs(ops[k] / sum - w->func_share[k]) < 1e-9);
	assert_true(atomic_load(&truth[0].checksum_errors) == 0);
	free(truth);

	run_ok("none", "hotspot", 1, 250, 0.5, 0, &r);
	assert_true(isnan(r.metrics.function_tvd));
	run_free(&r);

	run_ok("ctimer", "hotspot", 2, 250, 1.0, 0, &r);
	print_message("ctimer hotspot: samples %.0f function_tvd %.3f stack_correct %.3f\n",
		      r.metrics.nsamples, r.metrics.function_tvd, r.metrics.stack_correct_fraction);
	/* Sampling noise of n samples over three shares is about 1/sqrt(n); a sampler that
	 * spread samples evenly over the three would be at 0.27. */
	assert_true(r.metrics.nsamples >= 30);
	assert_true(r.metrics.function_tvd < 0.05 + 1 / sqrt(r.metrics.nsamples));
	assert_true(r.metrics.stack_correct_fraction > 0.8);
	run_free(&r);
}

/* Share of the run's measured work (func_work stats) that declared function k did. */
/* server beyond 256 threads: two busy slots, the rest blocked until slot 0 wakes them at
 * the deadline (the watchdog fails a run whose wake-up is lost), every thread's truth;
 * mach-idle samples every thread every tick, the idle ones as cold spans, and judges
 * their stacks through the slot functions' names modulo 256. */
static void test_server(void **state)
{
	(void)state;
	static struct sb_run r;

	run_ok("mach-idle", "server", 300, 100, 1.0, 0, &r);
	uint64_t busy_cpu = 0, idle_cpu_max = 0;
	int idle_long = 0; /* idle threads that lived half the run: each must go cold */
	for (size_t i = 0; i < r.nthread_rows; i++) {
		const struct sb_thread_row *t = &r.thread_rows[i];
		if (t->index < 2)
			busy_cpu += t->cpu_ns;
		else if (t->cpu_ns > idle_cpu_max)
			idle_cpu_max = t->cpu_ns;
		idle_long += t->index >= 2 && t->alive_ns >= 500000000ull;
	}
	print_message("server 300: busy cpu %.2f s, idle max %.2f ms, rate %.3f busy %.3f "
		      "stack_correct %.3f, %d idle threads lived 0.5 s, %.0f cold spans\n",
		      (double)busy_cpu / 1e9, (double)idle_cpu_max / 1e6,
		      r.metrics.wall_rate_accuracy, r.metrics.busy_rate_accuracy,
		      r.metrics.stack_correct_fraction, idle_long, run_stat(&r, "cold_spans"));
	assert_true(busy_cpu > 1000000000ull); /* two threads spinning most of 1 s */
	assert_true(idle_cpu_max < 20000000ull);
	assert_true(r.metrics.busy_rate_accuracy > 0.9);
	assert_true(r.metrics.wall_rate_accuracy > 0.9);
	assert_true(r.metrics.stack_correct_fraction > 0.9);
	/* Every thread starts at once in the plain build (298 lived 0.5 s); under
	 * ThreadSanitizer, starting 300 threads takes most of the run (147 to 200 did). */
	assert_true(idle_long >= 50);
	assert_true(run_stat(&r, "cold_spans") >= idle_long);
	run_free(&r);
}

/* A sampler whose hooks keep the busy slots 0 and 1 on their way out: thread_stop takes
 * 30 ms, and so does a thread-specific destructor set at thread_start, which runs as the
 * thread exits, after sb_thread_end (as a sampler's own exit hook does: mach's registry
 * holds a thread until then). Each stands for the time a busy thread may wait for a CPU
 * behind the woken herd while a sampler still holds it. */
static _Atomic uint64_t busy_stop_ns, busy_exit_ns, idle_stop_first_ns;
static pthread_key_t slow_exit_key;

/* Raises *last to now. */
static void note_last(_Atomic uint64_t *last)
{
	uint64_t now = sb_now_ns(), seen = atomic_load(last);
	while (now > seen && !atomic_compare_exchange_weak(last, &seen, now))
		;
}

static void slow_exit(void *v)
{
	(void)v;
	plat_sleep_until_ns(sb_now_ns() + 30000000);
	note_last(&busy_exit_ns);
}

static void slow_busy_start(int index)
{
	if (index == 0 || index == 1)
		pthread_setspecific(slow_exit_key, (void *)1);
}

static void slow_busy_stop(int index)
{
	if (index < 0) /* the waker, which has no slot */
		return;
	if (index < 2) {
		plat_sleep_until_ns(sb_now_ns() + 30000000);
		note_last(&busy_stop_ns);
		return;
	}
	uint64_t zero = 0;
	atomic_compare_exchange_strong(&idle_stop_first_ns, &zero, sb_now_ns());
}

/* server wakes its idle threads only once the busy ones are gone: else a busy thread
 * preempted by the herd stays sampled outside its truth window (at 10,000 threads, 26
 * samples past its 200, busy_rate_accuracy 1.13). In-process, under a stub sampler with
 * slow exit hooks; the first idle thread's stop must come after the busy ones' hooks all
 * returned (Linux; where an exit cannot be told, after their thread_stop). */
static void test_server_busy_out_first(void **state)
{
	(void)state;
	static const struct sampler slow = {
		.name = "slow-exit", .thread_start = slow_busy_start, .thread_stop = slow_busy_stop
	};
	struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
	struct wl_ctx ctx = { .threads = 8, .duration_s = 0.1, .seed = 3, .truth = truth };

	assert_non_null(truth);
	assert_int_equal(pthread_key_create(&slow_exit_key, slow_exit), 0);
	atomic_store(&busy_stop_ns, 0);
	atomic_store(&busy_exit_ns, 0);
	atomic_store(&idle_stop_first_ns, 0);
	sb_active_sampler = &slow;
	int rc = workload_run(workload_find("server"), &ctx);
	sb_active_sampler = NULL;
	pthread_key_delete(slow_exit_key);
	assert_int_equal(rc, 0);
	uint64_t idle = atomic_load(&idle_stop_first_ns), stop = atomic_load(&busy_stop_ns),
		 gone = atomic_load(&busy_exit_ns);
	print_message("server: first idle stop %.1f ms after the busy threads' thread_stop, "
		      "%.1f ms after their exit hooks\n", ((double)idle - (double)stop) / 1e6,
		      ((double)idle - (double)gone) / 1e6);
	assert_true(stop > 0 && gone > 0 && idle > 0);
	assert_true(idle > stop);
#ifdef __linux__
	assert_true(idle > gone);
#endif
	for (int i = 0; i < ctx.threads; i++)
		assert_int_equal((int)atomic_load(&truth[i].ends), 1);
	free(truth);
}

static double work_share(const struct sb_run *r, int k, int n)
{
	double w[WL_MAX_FUNCS], sum = 0;
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), WL_FUNC_WORK_STAT, i);
		sum += w[i] = run_stat(r, name);
	}
	assert_true(sum > 0);
	return w[k] / sum;
}

/* alias: a quarter of every sampling period in alias_a, by the wall clock; the truth is
 * measured. mach's fixed period keeps one phase against it: at least one of two runs is
 * far from the split (each run's phase is where its sampler started; near a phase edge a
 * run can land close by chance). With SB_MACH_JITTER=1 mach's instants are random and its
 * split is the true one within sampling noise (about 300 samples: 0.025 a share). */
static void test_alias(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	run_ok("none", "alias", 1, 100, 0.3, 0, &r);
	double a = work_share(&r, 0, 2);
	print_message("alias truth: %.3f in alias_a\n", a);
	assert_true(a > 0.15 && a < 0.35);
	assert_true(isnan(r.metrics.function_tvd));
	run_free(&r);
	if (!usable("mach"))
		return;

	double fixed[2];
	for (int i = 0; i < 2; i++) {
		run_ok("mach", "alias", 2, 250, 0.5, 0, &r);
		fixed[i] = r.metrics.function_tvd;
		run_free(&r);
	}
	setenv("SB_MACH_JITTER", "1", 1);
	run_ok("mach", "alias", 2, 250, 0.5, 0, &r);
	unsetenv("SB_MACH_JITTER");
	print_message("mach alias function_tvd: fixed %.3f %.3f, jittered %.3f (%.0f samples)\n",
		      fixed[0], fixed[1], r.metrics.function_tvd, r.metrics.nsamples);
	assert_true(run_stat(&r, "period_jitter") == 1);
	assert_true(r.metrics.nsamples >= 150);
	assert_true(r.metrics.function_tvd < 0.1);
	assert_true(fixed[0] > 0.12 || fixed[1] > 0.12);
	run_free(&r);
}

/* burst: the same CPU in 5 ms and in 50 us bursts, asleep half the time. */
static void test_burst(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	run_ok("none", "burst", 1, 100, 0.3, 0, &r);
	double a = work_share(&r, 0, 2);
	double off = (double)r.thread_rows[0].offcpu_ns / (double)r.thread_rows[0].alive_ns;
	print_message("burst truth: %.3f in burst_long, %.2f of the time asleep\n", a, off);
	assert_true(a > 0.3 && a < 0.7);
	assert_true(off > 0.3);
	assert_true(r.metrics.offcpu_true_fraction > 0.3);
	run_free(&r);
}

/* kernel: the threads' own clocks split their CPU between kernel_user and kernel_sys (the
 * pread); the kernel's user/system split of the process agrees within its tick sampling
 * (250 Hz x 0.5 s: about 0.05; the two differed by up to 0.11 under ASan beside a build). */
static void test_kernel(void **state)
{
	(void)state;
	const struct workload *w = workload_find("kernel");
	struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
	struct wl_ctx ctx = { .threads = 1, .duration_s = 0.5, .seed = 3, .truth = truth };
	struct rusage r0, r1;
	uint64_t work[WL_MAX_FUNCS];

	assert_non_null(truth);
	assert_int_equal(getrusage(RUSAGE_SELF, &r0), 0);
	assert_int_equal(workload_run(w, &ctx), 0);
	assert_int_equal(getrusage(RUSAGE_SELF, &r1), 0);
	assert_int_equal(wl_func_work(w, truth, work), 2);
	double sys = (double)work[1] / (double)(work[0] + work[1]);
	double us = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6 +
		    (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec);
	double ss = (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 +
		    (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
	print_message("kernel: %.3f of the CPU in kernel_sys by the thread's clock, %.3f "
		      "system time by rusage\n", sys, ss / (us + ss));
	assert_true(sys > 0.2 && sys < 0.8);
	assert_true(fabs(sys - ss / (us + ss)) < 0.2);
	assert_true(atomic_load(&truth[0].checksum_errors) == 0);
	assert_true(atomic_load(&truth[0].short_io) == 0);
	free(truth);

	/* perf, where the host lets it walk the kernel: its share of samples in the kernel is
	 * the threads' system share (about 200 samples: 0.035 a share, the truth's tick
	 * sampling about as much). */
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	if (!usable("perf"))
		return;
	run_ok("perf", "kernel", 2, 100, 1.0, 0, &r);
	print_message("perf kernel: kernel_sample_fraction %.3f, kernel_true_fraction %.3f, "
		      "function_tvd %.3f (%.0f samples)\n", r.metrics.kernel_sample_fraction,
		      r.metrics.kernel_true_fraction, r.metrics.function_tvd, r.metrics.nsamples);
	assert_true(r.metrics.kernel_true_fraction > 0.2);
	if (!isnan(r.metrics.kernel_sample_fraction))
		assert_true(fabs(r.metrics.kernel_sample_fraction - r.metrics.kernel_true_fraction) <
			    0.2);
	assert_true(r.metrics.function_tvd < 0.2);
	run_free(&r);
}

/* --- syscall: the counting itself, with signals we send ourselves --- */

struct kicker {
	struct wl_truth *truth;
	int threads;
	_Atomic int stop;
};

static void on_usr1(int sig)
{
	(void)sig;
}

/* Signals every workload thread every 200 us, as a suspend-style sampler would. */
static void *kick(void *p)
{
	struct kicker *k = p;
	while (!atomic_load(&k->stop)) {
		for (int i = 0; i < k->threads; i++) {
			pid_t tid = atomic_load(&k->truth[i].tid);
			if (tid > 0)
				syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
		}
		usleep(200);
	}
	return NULL;
}

/* EINTR failures the workload's threads counted in run r. */
static double rows_eintr(const struct sb_run *r)
{
	double n = 0;
	for (size_t i = 0; i < r->nthread_rows; i++)
		n += (double)r->thread_rows[i].eintr;
	return n;
}

static void test_syscall(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	run_ok("none", "syscall", 2, 250, 0.5, 0, &r);
	for (size_t i = 0; i < r.nthread_rows; i++) {
		assert_true(r.thread_rows[i].ops > 0);
		assert_true(r.thread_rows[i].eintr == 0); /* truth without a sampler */
		assert_true(r.thread_rows[i].short_io == 0);
	}
	run_free(&r);

	/* A handler (even with SA_RESTART) makes nanosleep/futex/select fail with EINTR. */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
	assert_non_null(truth);
	struct kicker k = { truth, 2, 0 };
	struct wl_ctx ctx = { .threads = 2, .duration_s = 0.3, .seed = 1, .truth = truth };
	pthread_t kt;
	assert_int_equal(pthread_create(&kt, NULL, kick, &k), 0);
	assert_int_equal(workload_run(workload_find("syscall"), &ctx), 0);
	atomic_store(&k.stop, 1);
	pthread_join(kt, NULL);
	sigaction(SIGUSR1, &old, NULL);
	uint64_t eintr = atomic_load(&truth[0].eintr) + atomic_load(&truth[1].eintr);
	print_message("syscall under tgkill every 200 us: eintr %llu short_io %llu\n",
		      (unsigned long long)eintr,
		      (unsigned long long)(atomic_load(&truth[0].short_io) +
					   atomic_load(&truth[1].short_io)));
	assert_true(eintr > 0);
	free(truth);

	/* CPU timers: their signals arrive on return to user space, so on current kernels they
	 * rarely interrupt a sleep (measured: 0 EINTR in 4 runs of 9-14 samples): no
	 * expectation of the count, but the metric is the workload's own count per 1000
	 * samples. */
	run_ok("ctimer", "syscall", 2, 1000, 0.5, 0, &r);
	print_message("ctimer syscall: samples %.0f eintr %.0f eintr/1k %.2f short_io/1k %.2f\n",
		      r.metrics.nsamples, rows_eintr(&r), r.metrics.eintr_per_1k_samples,
		      r.metrics.short_io_per_1k_samples);
	if (r.metrics.nsamples > 0)
		assert_float_equal(r.metrics.eintr_per_1k_samples,
				   rows_eintr(&r) * 1000.0 / r.metrics.nsamples, 1e-9);
	run_free(&r);

	/* mach without peeks signals every thread every tick, sleeping or not: at 250 Hz the
	 * threads' 20 us waits fail with EINTR (measured: 108-188 in 5 runs, 470-770 per 1k
	 * samples), and each such failure is one the sampler's handler counted (eintr_caused
	 * counts the harness's own threads too). With peeks a blocked thread is not signalled:
	 * 0-50 per 1k samples, 0 in 1 of 4 runs. */
	if (!usable("mach")) {
		print_message("skipped: mach cannot run here\n");
		skip();
	}
	setenv("SB_MACH_PEEK", "0", 1);
	run_ok("mach", "syscall", 2, 250, 0.5, 0, &r);
	unsetenv("SB_MACH_PEEK");
	print_message("mach syscall: samples %.0f eintr %.0f eintr/1k %.2f eintr_caused %.0f\n",
		      r.metrics.nsamples, rows_eintr(&r), r.metrics.eintr_per_1k_samples,
		      run_stat(&r, "eintr_caused"));
	assert_true(rows_eintr(&r) > 0);
	assert_true(rows_eintr(&r) <= run_stat(&r, "eintr_caused"));
	assert_float_equal(r.metrics.eintr_per_1k_samples,
			   rows_eintr(&r) * 1000.0 / r.metrics.nsamples, 1e-9);
	run_free(&r);
}

/* A workload's own helper threads (mixed's pipe feeder, churn's drivers) are no slot: each
 * adds its CPU to ctx->aux_cpu_ns, which the harness counts as its own and not as the
 * sampler's (docs/metrics.md "What the sampler costs the process"). */
static void test_helper_cpu_counted(void **state)
{
	(void)state;
	const char *names[] = { "mixed", "churn" };
	for (int i = 0; i < 2; i++) {
		struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
		assert_non_null(truth);
		struct wl_ctx ctx = { .threads = 2, .duration_s = 0.2, .seed = 1, .param = 20,
				      .truth = truth };
		assert_int_equal(workload_run(workload_find(names[i]), &ctx), 0);
		uint64_t aux = atomic_load(&ctx.aux_cpu_ns);
		print_message("%s: helper CPU %.3f ms\n", names[i], aux / 1e6);
		/* it ran (more than nothing), and not more than its share of 2 cores */
		assert_true(aux > 0);
		assert_true(aux < 2 * 1000000000ull);
		free(truth);
	}
}

static void test_malloclock(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */

	run_ok("none", "malloclock", 2, 250, 0.5, 0, &r);
	for (size_t i = 0; i < r.nthread_rows; i++)
		assert_true(r.thread_rows[i].ops > 1000);
	run_free(&r);
	/* Under samplers: tests/test_watchdog.c (ctimer survives, a broken sampler hangs). */
}

/* Oversubscription is an axis: more threads than cores still finish and keep truth. */
static void test_oversubscribed(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	for (size_t i = 0; workload_at(i); i++) {
		if (workload_at(i)->variant) /* the same framework: test_variants runs them */
			continue;
		run_ok("none", workload_at(i)->name, 6, 250, 0.3, 20, &r);
		run_free(&r);
	}
}

/* Every workload's threads name themselves "<workload>-<slot>" (cut to 15 bytes, as Linux
 * keeps names), and the run's thread rows carry the names: churn's slots too, each the
 * name of its last OS thread. */
static void test_thread_names(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	for (size_t i = 0; workload_at(i); i++) {
		const char *w = workload_at(i)->name;
		run_ok("none", w, 3, 250, 0.1, 6, &r);
		for (size_t k = 0; k < r.nthread_rows; k++) {
			char full[64], want[SB_THREAD_NAME_LEN];
			/* a build variant's threads go by the plain name */
			snprintf(full, sizeof(full), "%.*s-%d", (int)strcspn(w, "@"), w,
				 (int)r.thread_rows[k].index);
			snprintf(want, sizeof(want), "%.*s", SB_THREAD_NAME_LEN - 1, full);
			assert_string_equal(r.thread_rows[k].name, want);
		}
		run_free(&r);
	}
}

/* The build variants (docs/workloads.md "Variants"): each build is in the table as
 * "<name>@<variant>" with its plain build's truth, and is what its name says. mach walks
 * frame records: on hotspot@nofp it loses hotspot_thread above the measured functions (they
 * keep no frame record), on hotspot and hotspot@inline it keeps it; function_tvd finds the
 * split in all three, in the inline build through DWARF's inline chains alone (the
 * measured functions have no code of their own there). ctimer-unwind (libunwind, from
 * .eh_frame) recovers hotspot_thread on hotspot@nofp. Mutations: the nofp objects built
 * with frame pointers (fails: mach's stacks right there), the metrics reading no inline
 * chains (fails: function_tvd NaN on hotspot@inline, no leaf names a declared function). */
static void test_variants(void **state)
{
	(void)state;
	static struct sb_run r; /* static: free_live_run() frees it if an assert fails */
	const struct workload *hot = workload_find("hotspot");
	const struct workload *nofp = workload_variant(hot, "nofp");
	const struct workload *inl = workload_variant(hot, "inline");

	assert_ptr_equal(workload_variant(hot, WL_VARIANT_FP), hot);
	assert_ptr_equal(workload_variant(hot, NULL), hot);
	assert_non_null(nofp);
	assert_non_null(inl);
	assert_string_equal(nofp->name, "hotspot@nofp");
	assert_string_equal(inl->variant, "inline");
	assert_ptr_equal(workload_variant(inl, WL_VARIANT_FP), hot);
	assert_ptr_equal(workload_variant(nofp, "inline"), inl);
	assert_null(workload_variant(workload_find("deep"), "inline"));
	assert_null(workload_variant(workload_find("balanced"), "nofp"));
	assert_false(workload_variant_known("O3"));
	for (size_t i = 0; workload_at(i); i++) {
		const struct workload *v = workload_at(i), *plain = workload_variant(v, NULL);
		assert_non_null(plain);
		assert_null(plain->variant);
		assert_true(workload_variant_known(v->variant ? v->variant : WL_VARIANT_FP));
		for (int k = 0; k < WL_MAX_FUNCS; k++) {
			assert_true(!v->funcs[k] == !plain->funcs[k]);
			assert_true(v->func_share[k] == plain->func_share[k]);
		}
		assert_true(v->func_share_measured == plain->func_share_measured);
	}
	if (!usable("mach"))
		return;
	const struct workload *builds[] = { hot, nofp, inl };
	double correct[3];
	for (int b = 0; b < 3; b++) {
		run_ok("mach", builds[b]->name, 2, 250, 0.7, 0, &r);
		correct[b] = r.metrics.stack_correct_fraction;
		print_message("mach %s: samples %.0f function_tvd %.3f stack_correct %.3f "
			      "inline rows %zu\n", builds[b]->name, r.metrics.nsamples,
			      r.metrics.function_tvd, correct[b], r.ninlines);
		assert_true(r.metrics.nsamples >= 200);
		assert_true(r.metrics.function_tvd < 0.05 + 1 / sqrt(r.metrics.nsamples));
		if (b == 2)
			assert_true(r.ninlines > 0);
		run_free(&r);
	}
	if (SIGNAL_STACKS_VALID) {
		assert_true(correct[0] > 0.8);
		assert_true(correct[1] < 0.5);
		assert_true(correct[2] > 0.8);
	}
	/* An unwinder that reads the binary's CFI recovers what the walk lost. */
	if (!SIGNAL_STACKS_VALID || !usable("ctimer-unwind"))
		return;
	run_ok("ctimer-unwind", nofp->name, 2, 250, 0.5, 0, &r);
	print_message("ctimer-unwind %s: samples %.0f stack_correct %.3f walk_errors %.0f\n",
		      nofp->name, r.metrics.nsamples, r.metrics.stack_correct_fraction,
		      run_stat(&r, "walk_errors"));
	assert_true(r.metrics.nsamples >= 100);
	assert_true(r.metrics.stack_correct_fraction > 0.8);
	run_free(&r);
}

/* Renames itself: a thread's name is the one it has at its end. */
static void rename_self(struct wl_ctx *ctx, int index)
{
	(void)ctx;
	if (index == 0)
		plat_thread_set_name("renamed-by-the-program"); /* cut to 15 bytes */
}

/* The name recorded is the one the thread has at its end, read by the thread itself: a
 * thread that renames itself keeps its own name, the others keep the framework's; without
 * a workload name the framework calls them "wl-<slot>". */
static void test_thread_renames_itself(void **state)
{
	(void)state;
	struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
	assert_non_null(truth);
	struct wl_ctx ctx = { .workload = "named", .threads = 2, .truth = truth };
	assert_int_equal(wl_run_threads(&ctx, 2, rename_self), 0);
	assert_string_equal(truth[0].name, "renamed-by-the-");
	assert_string_equal(truth[1].name, "named-1");
	memset(truth, 0, SB_MAX_THREADS * sizeof(*truth));
	ctx.workload = NULL;
	assert_int_equal(wl_run_one(&ctx, 5, rename_self), 0);
	assert_string_equal(truth[5].name, "wl-5");
	free(truth);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_registered, free_live_run),  cmocka_unit_test_teardown(test_mixed, free_live_run),
		cmocka_unit_test_teardown(test_churn, free_live_run),       cmocka_unit_test_teardown(test_deep, free_live_run),
		cmocka_unit_test_teardown(test_hotspot, free_live_run),     cmocka_unit_test_teardown(test_syscall, free_live_run),
		cmocka_unit_test_teardown(test_server, free_live_run),
		cmocka_unit_test(test_server_busy_out_first),
		cmocka_unit_test_teardown(test_malloclock, free_live_run),  cmocka_unit_test_teardown(test_oversubscribed, free_live_run),
		cmocka_unit_test_teardown(test_alias, free_live_run),       cmocka_unit_test_teardown(test_burst, free_live_run),
		cmocka_unit_test_teardown(test_kernel, free_live_run),
		cmocka_unit_test_teardown(test_variants, free_live_run),
		cmocka_unit_test(test_helper_cpu_counted),
		cmocka_unit_test_teardown(test_every_sampler, free_live_run),
		cmocka_unit_test_teardown(test_thread_names, free_live_run),
		cmocka_unit_test(test_thread_renames_itself),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
