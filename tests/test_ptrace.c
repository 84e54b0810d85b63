/* test_ptrace.c - sampler/ptrace.c through the runner: every thread sampled with CPU-time
 * weights whose per-thread shares match the truth; threads that appear and exit while
 * sampling are followed; killing the tracer with SIGKILL mid-run leaves no thread stopped
 * or traced and the workload finishes; its rate holds (tests/support/rate_bound.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/run.h"
#include "harness/runner.h"
#include "sampler/sampler.h"
#include "tests/support/rate_bound.h"
#include "workloads/workload.h"

pid_t sb_ptrace_tracer_pid(void); /* sampler/ptrace.c, for tests */

static void run_one(const struct workload *w, int threads, double hz, double dur,
		    struct sb_run *r)
{
	struct run_spec spec = {
		.sampler = sampler_find("ptrace"),
		.workload = w,
		.threads = threads,
		.hz = hz,
		.duration_s = dur,
		.seed = 7,
	};
	assert_non_null(spec.sampler);
	memset(r, 0, sizeof(*r));
	assert_int_equal(runner_run(&spec, 0, r), 0);
}

static void test_skewed_shares(void **state)
{
	(void)state;
	struct sb_run r;
	run_one(workload_find("skewed"), 4, 100, 1.0, &r);
	if (r.status != SB_RUN_OK)
		print_message("run failed: %s\n", r.reason);
	assert_true(run_scored(r.status)); /* lossy: judged by test_rate_holds */
	print_message("ptrace skewed: samples %zu rate_accuracy %.3f thread_tvd %.3f "
		      "wall_thread_tvd %.3f stop p50 %.1f us window p50 %.1f p99 %.1f us "
		      "stop_failures %.0f\n",
		      r.nsamples, r.metrics.rate_accuracy, r.metrics.thread_tvd,
		      r.metrics.wall_thread_tvd, r.metrics.stop_latency_p50_ns / 1e3,
		      r.metrics.suspend_window_p50_ns / 1e3,
		      r.metrics.suspend_window_p99_ns / 1e3, run_stat(&r, "stop_failures"));
	assert_int_equal((int)r.nthread_rows, 4);
	for (size_t i = 0; i < r.nthread_rows; i++) {
		print_message("  slot %d: samples %llu weight %.3f s cpu %.3f s\n",
			      r.thread_rows[i].index,
			      (unsigned long long)r.thread_rows[i].samples,
			      r.thread_rows[i].weight_ns / 1e9, r.thread_rows[i].cpu_ns / 1e9);
		assert_true(r.thread_rows[i].samples > 0);
	}
	/* A wall sampler: sample counts follow alive time, CPU-time weights follow CPU. */
	assert_true(r.metrics.thread_tvd < 0.1);
	assert_true(r.metrics.wall_thread_tvd < 0.1);
	assert_true(r.metrics.misattributed_fraction < 0.02);
	size_t ran = 0;
	for (size_t i = 0; i < r.nsamples; i++) {
		const struct sb_sample *s = &r.samples[i];
		assert_true(s->thread_index >= 0 && s->thread_index < 4);
		assert_false(isnan(s->stop_latency_ns));
		assert_true(s->suspend_window_ns >= s->stop_latency_ns);
		assert_true(s->depth >= 1);
		ran += (s->flags & SB_SAMPLE_RAN) != 0;
	}
	assert_true(ran > 0);
	assert_true(run_stat(&r, "sampler_exit_status") == 0);
	assert_true(run_stat(&r, "threads_detached") >= 1); /* at least the main thread */
	assert_true(run_stat(&r, "sampler_cpu_ns") > 0);
	run_free(&r);
}

/* Churn: 10 waves of 3 short-lived threads, all created after the tracer attached. */
#define CHURN_WAVES 10
#define CHURN_THREADS 3

static void churn_thread(struct wl_ctx *ctx, int index)
{
	uint64_t end = sb_now_ns() + 60000000ull;
	(void)ctx;
	while (sb_now_ns() < end)
		wl_unit(ctx, index);
}

static int churn_run(struct wl_ctx *ctx)
{
	for (int w = 0; w < CHURN_WAVES; w++)
		if (wl_run_threads(ctx, CHURN_THREADS, churn_thread) != 0)
			return -1;
	return 0;
}

static const struct workload churn_wl = {
	.name = "test_churn",
	.description = "waves of short-lived threads",
	.run = churn_run,
};

static void test_churn_followed(void **state)
{
	(void)state;
	struct sb_run r;
	run_one(&churn_wl, CHURN_THREADS, 200, 1.0, &r);
	if (r.status != SB_RUN_OK)
		print_message("run failed: %s\n", r.reason);
	assert_true(run_scored(r.status)); /* lossy: judged by test_rate_holds */

	/* Distinct sampled tids: every one was born after attach (only the runner's main
	 * thread existed then, and it is never sampled). */
	int32_t seen[CHURN_WAVES * CHURN_THREADS * 4];
	size_t nseen = 0;
	for (size_t i = 0; i < r.nsamples; i++) {
		int32_t tid = r.samples[i].tid;
		size_t k = 0;
		while (k < nseen && seen[k] != tid)
			k++;
		if (k == nseen && nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = tid;
	}
	print_message("ptrace churn: %zu samples from %zu tids, clones %.0f exits %.0f "
		      "attached %.0f\n", r.nsamples, nseen, run_stat(&r, "clones_followed"),
		      run_stat(&r, "exits_followed"), run_stat(&r, "threads_attached"));
	assert_true(nseen >= CHURN_WAVES * CHURN_THREADS * 8 / 10);
	assert_true(run_stat(&r, "clones_followed") >= CHURN_WAVES * CHURN_THREADS);
	assert_true(run_stat(&r, "exits_followed") >= CHURN_WAVES * CHURN_THREADS);
	assert_true(run_stat(&r, "threads_attached") >= 1); /* the runner child's main thread */
	for (size_t i = 0; i < r.nthread_rows; i++)
		assert_int_equal((int)r.thread_rows[i].os_threads, CHURN_WAVES);
	run_free(&r);
}

/* SIGKILL: a helper thread kills the tracer while 4 threads are sampled at 1 kHz (so the
 * tracer is often in the middle of a stop), waits until it is dead, and checks that no
 * thread is still traced or stopped and that the workload keeps making progress. */
struct kill_report {
	int killed;
	int traced_after;  /* threads with TracerPid != 0 after the tracer died */
	int stopped_after; /* threads in state t/T after the tracer died */
	uint64_t ops_at_kill, ops_later;
};

static struct kill_report *kill_rep; /* MAP_SHARED: written in the runner's child */

static uint64_t total_ops(struct wl_ctx *ctx)
{
	uint64_t n = 0;
	for (int i = 0; i < ctx->threads; i++)
		n += atomic_load(&ctx->truth[i].ops);
	return n;
}

static int tracer_dead(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static void scan_threads(struct kill_report *rep)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[300], line[256];
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "State:", 6) && strpbrk(line + 6, "tT"))
				rep->stopped_after++;
			if (!strncmp(line, "TracerPid:", 10) && atoi(line + 10) != 0)
				rep->traced_after++;
		}
		fclose(f);
	}
	closedir(d);
}

static void *killer(void *p)
{
	struct wl_ctx *ctx = p;
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	pid_t tracer = sb_ptrace_tracer_pid();
	if (tracer <= 0 || kill(tracer, SIGKILL) != 0)
		return NULL;
	kill_rep->killed = 1;
	while (!tracer_dead(tracer))
		usleep(1000);
	scan_threads(kill_rep);
	kill_rep->ops_at_kill = total_ops(ctx);
	ts.tv_nsec = 200000000;
	nanosleep(&ts, NULL);
	kill_rep->ops_later = total_ops(ctx);
	return NULL;
}

static void busy_thread(struct wl_ctx *ctx, int index)
{
	while (sb_now_ns() < ctx->deadline_ns)
		wl_unit(ctx, index);
}

static int kill_run(struct wl_ctx *ctx)
{
	pthread_t k;
	if (pthread_create(&k, NULL, killer, ctx) != 0)
		return -1;
	int rc = wl_run_threads(ctx, ctx->threads, busy_thread);
	pthread_join(k, NULL);
	return rc;
}

static const struct workload kill_wl = {
	.name = "test_kill",
	.description = "busy threads; the tracer is SIGKILLed mid-run",
	.run = kill_run,
};

static void test_sigkill_tracer(void **state)
{
	(void)state;
	kill_rep = mmap(NULL, sizeof(*kill_rep), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(kill_rep != MAP_FAILED);
	for (int rep = 0; rep < 3; rep++) {
		struct sb_run r;
		memset(kill_rep, 0, sizeof(*kill_rep));
		run_one(&kill_wl, 4, 1000, 1.0, &r);
		print_message("ptrace sigkill %d: status %s (%s), samples %zu, traced after %d, "
			      "stopped after %d, ops %llu -> %llu, wall %.2f s\n", rep,
			      run_status_name(r.status), r.reason, r.nsamples,
			      kill_rep->traced_after, kill_rep->stopped_after,
			      (unsigned long long)kill_rep->ops_at_kill,
			      (unsigned long long)kill_rep->ops_later, r.wall_s);
		assert_int_equal(kill_rep->killed, 1);
		assert_int_equal(kill_rep->traced_after, 0);
		assert_int_equal(kill_rep->stopped_after, 0);
		assert_true(kill_rep->ops_later > kill_rep->ops_at_kill);
		/* The workload ran to its end; stop() reports the dead tracer as a failure. */
		assert_true(r.wall_s >= 1.0);
		assert_null(strstr(r.reason, "watchdog"));
		assert_true(r.status == SB_RUN_OK || strstr(r.reason, "sampler stop failed"));
		assert_true(r.nsamples > 0);
		for (size_t i = 0; i < r.nthread_rows; i++)
			assert_true(r.thread_rows[i].ops > 0);
		run_free(&r);
	}
	munmap(kill_rep, sizeof(*kill_rep));
}

/* Samples against the truth's count: a ptrace that loses a fifth of its ticks fails. */
static void test_rate_holds(void **state)
{
	(void)state;
	rate_bound_hold("ptrace");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_holds),
		cmocka_unit_test(test_skewed_shares),
		cmocka_unit_test(test_churn_followed),
		cmocka_unit_test(test_sigkill_tracer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
