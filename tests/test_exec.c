/* test_exec.c - `sampbench exec` end to end: a small multithreaded program and xz,
 * profiled through the LD_PRELOAD agent (mach, ctimer, gperftools, gperftools-pt, a plugin)
 * and from outside (perf), against
 * the per-thread CPU truth (the agent's thread rows, /proc). Also: the program's exit
 * code, stdout and errno pass through untouched, its own SIGPROF handler wins, bad input
 * exits 2; programs with short threads, more threads than slots, forked children and
 * threads that block every signal are scored right or not ok with the reason.
 *
 * Bounds are wide (a noisy 2-core VM): magnitude_error < 0.15 as the issue asks, every
 * thread that used a fair amount of CPU has samples. The agent is never built with
 * sanitizers, so these tests run under SANITIZE too (only sampbench is instrumented). */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/sbrun.h"

#include "core/run.h"
#include "results/h5io.h"
#include "harness/exec_mode.h"
#include "sampler/sampler.h"

#define BIG_THREAD_NS 100000000ull /* threads with >= 100 ms of CPU must have samples */

static char build[256], bin[512], spin[512], sigprof[512], plugin[512], shortthreads[512];
static char manythreads[512], forkburn[512], blockprog[512], namedthreads[512];
static char tmpdir[] = "/tmp/sbexec.XXXXXX";

/* Runs bin with args; stdout and stderr into the given buffers (either may be NULL).
 * Returns the exit status, or 128+signal. */
static int run(char *out, size_t outlen, char *err, size_t errlen, const char *const *args)
{
	return sbrun(bin, args, out, outlen, err, errlen);
}

/* Runs sampbench with args and requires exit status 0, showing its stderr otherwise. */
static void exec_ok(char *out, size_t outlen, char *err, size_t errlen, const char *const *args)
{
	int rc = run(out, outlen, err, errlen, args);
	if (rc != 0)
		fprintf(stderr, "%s", err);
	assert_int_equal(rc, 0);
}

static char h5path[700];

/* tmpdir/NAME.h5, written into the buffer exec_read() reads back: for the -o operand. */
static const char *out_h5(const char *name)
{
	snprintf(h5path, sizeof(h5path), "%s/%s.h5", tmpdir, name);
	return h5path;
}

static void read_runs(const char *path, struct sb_run **runs, size_t *n);

/* Runs sampbench with args (whose -o operand is out_h5(...)), requires exit 0 and the
 * program's stdout equal to want, and reads that file into *runs, *n (freed with
 * free_runs). err keeps what sampbench printed on stderr. */
static void exec_read(const char *const *args, const char *want, char *err, size_t errlen,
		      struct sb_run **runs, size_t *n)
{
	char out[4096];

	exec_ok(out, sizeof(out), err, errlen, args);
	assert_string_equal(out, want);
	read_runs(h5path, runs, n);
}

static void read_runs(const char *path, struct sb_run **runs, size_t *n)
{
	char err[256];
	struct sb_host host;
	int rc = h5_read(path, &host, runs, n, 1, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "h5_read: %s\n", err);
	assert_int_equal(rc, 0);
}

static void free_runs(struct sb_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
}

/* Whether a sampler's samples name their thread in a program that is not a workload:
 * gperftools' profile has no thread ids (it names a workload's thread from its slot
 * functions, which a program has none of). */
static int names_threads(const char *sampler)
{
	return strncmp(sampler, "gperftools", 10) != 0;
}

/* Every run ok, magnitude within 15 %, every busy thread sampled (or, for a sampler that
 * names no thread, thread_tvd not measured and said so). Returns the busy thread count of
 * the first run. */
static size_t check_runs(const struct sb_run *runs, size_t n, size_t want_runs,
			 size_t min_busy)
{
	size_t busy0 = 0;
	assert_int_equal(n, want_runs);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		size_t busy = 0;
		if (r->status != SB_RUN_OK)
			fprintf(stderr, "%s: %s\n", r->sampler, r->reason);
		assert_int_equal(r->status, SB_RUN_OK);
		assert_true(r->nsamples > 0);
		for (size_t k = 0; k < r->nthread_rows; k++) {
			const struct sb_thread_row *t = &r->thread_rows[k];
			if (t->cpu_ns < BIG_THREAD_NS)
				continue;
			busy++;
			if (!names_threads(r->sampler))
				continue;
			if (t->samples == 0)
				fprintf(stderr, "%s: thread %d (tid %d, %.0f ms CPU) has no samples\n",
					r->sampler, t->index, t->tid, (double)t->cpu_ns / 1e6);
			assert_true(t->samples > 0);
		}
		if (busy < min_busy)
			for (size_t k = 0; k < r->nthread_rows; k++)
				fprintf(stderr, "%s: thread %d (tid %d): %.0f ms CPU, %zu busy of %zu wanted\n",
					r->sampler, r->thread_rows[k].index, r->thread_rows[k].tid,
					(double)r->thread_rows[k].cpu_ns / 1e6, busy, min_busy);
		assert_true(busy >= min_busy);
		if (!names_threads(r->sampler)) {
			/* not 1.0, as if every sample were on no thread */
			assert_true(isnan(r->metrics.thread_tvd));
			assert_non_null(strstr(r->reason, "no sample names its thread"));
		} else {
			assert_false(isnan(r->metrics.thread_tvd));
		}
		fprintf(stderr, "  %-8s samples %5zu  magnitude_error %.3f  thread_tvd %.3f\n",
			r->sampler, r->nsamples, r->metrics.magnitude_error, r->metrics.thread_tvd);
		assert_false(isnan(r->metrics.magnitude_error));
		/* A process-wide timer has one pending signal per process: expiries while it is
		 * pending are lost on a loaded host (ci/budgets: itimer 0.13 at load 8; 0.178
		 * and 0.189 through the wrapper at load 4-9), hence its wider bound. */
		const struct sampler *smp = sampler_find(r->sampler);
		int process_wide = smp && (smp->caps & SB_CAP_PROCESS_WIDE);
		assert_true(r->metrics.magnitude_error < (process_wide ? 0.25 : 0.15));
		/* the program's own functions are named: symbolization used its layout */
		int named = 0;
		for (size_t k = 0; k < r->nsymbols; k++)
			named |= strstr(r->symbols[k].function, "spin") != NULL ||
				 strstr(r->symbols[k].module, "lzma") != NULL;
		assert_true(named);
		if (i == 0)
			busy0 = busy;
	}
	return busy0;
}

/* spin: 3 workers + main; stdout is exactly the program's one line; exit 0 means no
 * thread saw errno change under sampling. */
static void test_spin_mach_ctimer_perf(void **state)
{
	(void)state;
	char err[16384];
	struct sb_run *runs;
	size_t n;
	/* the program's line once per sampler, and nothing else */
	exec_read(ARGS("exec", "--sampler", "mach,ctimer,perf", "-o", out_h5("spin"), "--", spin,
		       "3", "0.4"),
		  "spin: 3 threads done\nspin: 3 threads done\nspin: 3 threads done\n", err,
		  sizeof(err), &runs, &n);
	assert_non_null(strstr(err, "magn_err")); /* the table goes to stderr */
	assert_int_equal(check_runs(runs, n, 3, 4), 4);
	assert_string_equal(runs[0].sampler, "mach");
	assert_string_equal(runs[2].sampler, "perf");
	assert_non_null(strstr(runs[0].workload, "spin 3 0.4"));
	free_runs(runs, n);
}

/* The table walk for exec: every built-in flagged SB_SAMPLER_IN_PROCESS (and usable here)
 * samples a short program through the agent, in table order, and the file holds an ok run
 * of each with samples. A new in-process sampler is exercised here without a new line. */
static void test_every_in_process_sampler(void **state)
{
	(void)state;
	char list[512] = "", want[2048] = "", err[16384];
	const char *names[64];
	size_t k = 0, n;
	struct sb_run *runs;

	for (size_t i = 0; sampler_at(i) && k < 64; i++) {
		const struct sampler *s = sampler_at(i);
		char why[256];
		if (!sampler_in_process(s))
			continue;
		assert_ptr_equal(exec_mode_of(s), &exec_agent_mode);
		if (s->available && s->available(why, sizeof(why)) != 0) {
			fprintf(stderr, "%s: not available here: %s\n", s->name, why);
			continue;
		}
		names[k++] = s->name;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k > 1 ? "," : "",
			 s->name);
		strncat(want, "spin: 2 threads done\n", sizeof(want) - strlen(want) - 1);
	}
	assert_true(k >= 1);
	fprintf(stderr, "  exec --sampler %s\n", list);
	exec_read(ARGS("exec", "--sampler", list, "-o", out_h5("inproc"), "--", spin, "2", "0.3"),
		  want, err, sizeof(err), &runs, &n);
	assert_int_equal(n, k);
	for (size_t i = 0; i < n; i++) {
		if (runs[i].status != SB_RUN_OK)
			fprintf(stderr, "%s: %s\n", runs[i].sampler, runs[i].reason);
		assert_string_equal(runs[i].sampler, names[i]);
		assert_int_equal(runs[i].status, SB_RUN_OK);
		assert_true(runs[i].nsamples > 0);
	}
	free_runs(runs, n);
}

/* gperftools' profiler through the agent (libprofiler loaded into the program, its
 * records read back from the profile it writes) and its per-thread variant: the same
 * program and truth as above, each run ok, sample count within 15 % of the threads' CPU
 * time at 100 Hz, the program's functions named, most of the weight on its spinning leaf.
 * Without thread ids in its profile, thread_tvd is not measured. It hung every thread
 * until the agent stopped unblocking SIGPROF inside libprofiler's own handler. */
static void test_spin_gperftools(void **state)
{
	(void)state;
	char err[16384];
	struct sb_run *runs;
	size_t n;
	exec_read(ARGS("exec", "--sampler", "gperftools,gperftools-pt", "-o", out_h5("gperftools"),
		       "--", spin, "3", "0.4"),
		  "spin: 3 threads done\nspin: 3 threads done\n", err, sizeof(err), &runs, &n);
	/* the side-by-side profile counts samples that name no thread: the program's leaf */
	const char *leaf = strstr(err, "\nspin_slice ");
	assert_non_null(leaf);
	assert_true(atof(leaf + strlen("\nspin_slice ")) >= 80.0);
	assert_int_equal(check_runs(runs, n, 2, 4), 4);
	assert_string_equal(runs[0].sampler, "gperftools");
	assert_string_equal(runs[1].sampler, "gperftools-pt");
	free_runs(runs, n);
}

/* exit 3 passes through, and is recorded; itimer too keeps errno intact. */
static void test_exit_code_passes_through(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/exit.h5", tmpdir);
	int rc = run(out, sizeof(out), err, sizeof(err),
		     ARGS("exec", "--sampler", "itimer", "--hz", "250", "-o", h5, "--", spin, "1",
			  "0.1", "3"));
	assert_int_equal(rc, 3);
	assert_string_equal(out, "spin: 1 threads done\n");
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 1);
	assert_int_equal(runs[0].status, SB_RUN_OK);
	assert_true(run_stat(&runs[0], "exit_code") == 3);
	free_runs(runs, n);
}

/* The program takes SIGPROF: ctimer stops with one line, the program's handler stays,
 * the run is marked failed with the reason. mach, whose signal is another, is not
 * disturbed: ok, its truth exact (the main thread's own clock at exit). */
static void test_program_signal_handler_wins(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/sig.h5", tmpdir);
	int rc = run(out, sizeof(out), err, sizeof(err),
		     ARGS("exec", "--sampler", "ctimer,mach", "-o", h5, "--", sigprof));
	assert_int_equal(rc, 0); /* 1 would mean its handler was not in place */
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "sampbench-agent: the program installs its own SIGPROF"));
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 2);
	assert_int_equal(runs[0].status, SB_RUN_FAILED);
	assert_non_null(strstr(runs[0].reason, "signal"));
	assert_string_equal(runs[1].sampler, "mach");
	assert_int_equal(runs[1].status, SB_RUN_OK);
	assert_true(run_stat(&runs[1], "truth_cpu_cover") >= 0.95);
	/* 0.2 s of CPU, 19-23 samples at 100 Hz on a loaded 2-vCPU VM */
	assert_true(runs[1].metrics.magnitude_error < 0.3);
	free_runs(runs, n);
}

/* A plugin runs through the agent like a built-in. */
static void test_plugin_under_exec(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/plugin.h5", tmpdir);
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("exec", "--sampler", plugin, "-o", h5, "--", spin, "2", "0.3"));
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_string_equal(runs[0].sampler, "ctimer-plugin");
	check_runs(runs, n, 1, 2);
	assert_true(run_stat(&runs[0], "integrity_sigmask") == 0);
	free_runs(runs, n);
}

/* A sampler that blocks signals in its thread_start (tests/plugins/defect_sigblock.c):
 * the main thread's mask once start() and its thread_start hook ran, before main(),
 * differs from its mask before the sampler started: integrity_sigmask (the workers
 * inherit the blocked mask from main, so theirs do not change). Mutation: agent_init
 * without the main thread's check_mask (0 counted, this test fails). */
static void test_sampler_changed_mask(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700], defect[600];
	snprintf(h5, sizeof(h5), "%s/sigblock.h5", tmpdir);
	snprintf(defect, sizeof(defect), "%s/tests/plugins/defect_sigblock.so", build);
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("exec", "--sampler", defect, "-o", h5, "--", spin, "2", "0.2"));
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 1);
	assert_true(run_stat(&runs[0], "integrity_sigmask") >= 1);
	assert_true(runs[0].metrics.integrity_violations >= 1);
	free_runs(runs, n);
}

/* ~96 MiB of mutated repeats for xz -T2 -1: each of its two workers must use well over
 * BIG_THREAD_NS. At 32 MiB they used 0.11-0.13 s each (22-28 samples at 100 Hz over the
 * three), and one fell under 0.1 s in a ThreadSanitizer make check of .ci/run. */
static int make_input(const char *path)
{
	enum { BLOCK = 64 * 1024, TOTAL = 96 * 1024 * 1024 };
	static unsigned char blk[BLOCK], cur[BLOCK];
	uint64_t x = 88172645463325252ull;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < BLOCK; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		blk[i] = (unsigned char)x;
	}
	for (size_t done = 0; done < TOTAL; done += BLOCK) {
		memcpy(cur, blk, BLOCK);
		for (int k = 0; k < 64; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			cur[x % BLOCK] = (unsigned char)(x >> 32);
		}
		if (fwrite(cur, 1, BLOCK, f) != BLOCK) {
			fclose(f);
			return -1;
		}
	}
	return fclose(f);
}

/* A real Debian program: xz -T2 runs a main thread and two workers that liblzma starts
 * with every signal blocked (the agent keeps the sampler's signal open). Its compressed
 * output on stdout must be intact. */
static void test_xz(void **state)
{
	(void)state;
	char in[700], h5[700], err[16384];
	if (access("/usr/bin/xz", X_OK) != 0) {
		print_message("skipped: /usr/bin/xz not installed (xz-utils)\n");
		skip();
	}
	snprintf(in, sizeof(in), "%s/input.bin", tmpdir);
	snprintf(h5, sizeof(h5), "%s/xz.h5", tmpdir);
	assert_int_equal(make_input(in), 0);
	static char out[1 << 16]; /* the start of the program's stdout is enough */
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("exec", "--sampler", "mach,ctimer,perf", "-o", h5, "--", "xz", "-T2",
			  "-1", "-c", in));
	/* stdout holds the program's .xz streams, passed through untouched: the magic */
	assert_memory_equal(out, "\xfd" "7zXZ\0", 6);
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	check_runs(runs, n, 3, 2); /* at least the two workers are busy */
	free_runs(runs, n);
	unlink(in);
}

static void expect_usage(const char *want, const char *const *args)
{
	char err[4096];
	int rc = run(NULL, 0, err, sizeof(err), args);
	assert_int_equal(rc, 2);
	if (!strstr(err, want))
		fprintf(stderr, "got: %s", err);
	assert_non_null(strstr(err, want));
	assert_non_null(strchr(err, '\n'));
	assert_null(strchr(strchr(err, '\n') + 1, '\n')); /* one line */
}

/* Threads living 1 ms, two at a time: /proc polling reads a fraction of their CPU. The
 * truth must say so against wait4's total: a run is ok only when its threads cover 90 %
 * of it; otherwise "incomplete", no per-thread metric, and a CPU sampler scored against
 * the process total (itimer, which counts process CPU, close to 1). perf's system-wide
 * per-CPU counters sample short threads as CPU time (close to 1 too); its fallback,
 * per-thread inherited counters, cannot, and a run without samples is failed, never ok.
 * Shown to fail when the coverage check is removed (every run ok with 10-25 % covered),
 * and, for perf, with the task-clock inherit counters (0 samples). Through the agent
 * (itimer) each thread writes its own clocks: covered >= 95 % (0.97-0.98 measured), ok. */
static void test_short_threads_truth(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/short.h5", tmpdir);
	int rc = run(out, sizeof(out), err, sizeof(err),
		     ARGS("exec", "--sampler", "itimer,perf", "-o", h5, "--", shortthreads, "1"));
	assert_true(rc == 0 || rc == 1);
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		double cover = run_stat(r, "truth_cpu_cover");
		fprintf(stderr, "  %-8s %-10s cover %.2f rate %.3f: %s\n", r->sampler,
			run_status_name(r->status), cover, r->metrics.rate_accuracy, r->reason);
		assert_false(isnan(cover));
		if (r->status == SB_RUN_OK) {
			assert_true(cover >= 0.9);
			assert_true(r->nsamples > 0);
		} else if (r->status == SB_RUN_INCOMPLETE) {
			assert_true(cover < 0.9);
			assert_non_null(strstr(r->reason, "truth incomplete"));
			assert_true(isnan(r->metrics.thread_tvd));
		} else {
			assert_int_equal(r->status, SB_RUN_FAILED);
			assert_int_equal(r->nsamples, 0);
			assert_non_null(strstr(r->reason, "no sample"));
		}
	}
	/* itimer counts the whole process: against wait4's total it is right */
	assert_string_equal(runs[0].sampler, "itimer");
	assert_int_equal(runs[0].status, SB_RUN_OK);
	assert_true(run_stat(&runs[0], "truth_cpu_cover") >= 0.95);
	assert_true(run_stat(&runs[0], "truth_exact_threads") >= 100);
	for (size_t i = 0; i < n; i++)
		if (runs[i].status == SB_RUN_INCOMPLETE)
			assert_true(runs[i].metrics.rate_accuracy > 0.65 &&
				    runs[i].metrics.rate_accuracy < 1.35);
	assert_string_equal(runs[1].sampler, "perf");
	if (run_stat(&runs[1], "perf_system_wide") == 1)
		assert_true(runs[1].nsamples > 0);
	free_runs(runs, n);
}

/* A wrapper that execs the program (sh -c 'exec PROG', env, nice, a version manager's
 * shim): itimer's timer survives execve and would kill the new image with SIGPROF; the
 * agent disarms it first and hands the sink to the new image, which is sampled as if run
 * directly. Shown to fail without the execve wrappers (itimer: program killed by signal
 * PROF; mach: 0 samples). */
static void test_exec_through_wrapper(void **state)
{
	(void)state;
	char err[16384], cmd[700];
	struct sb_run *runs;
	size_t n;
	snprintf(cmd, sizeof(cmd), "exec %s 2 0.3", spin);
	exec_read(ARGS("exec", "--sampler", "itimer,mach", "-o", out_h5("wrap"), "--", "sh", "-c",
		       cmd),
		  "spin: 2 threads done\nspin: 2 threads done\n", err, sizeof(err), &runs, &n);
	check_runs(runs, n, 2, 2);
	free_runs(runs, n);
}

/* The CPU a sampler that parks threads (a wall sampler: mach's rendezvous spins up to
 * 150 µs a stop, docs/mach.md) may add to slot `index`'s clock: 150 µs per sample of the
 * slot; 0 for a CPU sampler, whose handler runs for microseconds. */
/* How far above its own work one thread's clock may go (see test_many_threads_truth). */
#if defined(__SANITIZE_THREAD__)
#define ONE_OFF_FACTOR 8
#else
#define ONE_OFF_FACTOR 4
#endif

static double parked_ns(const struct sb_run *r, int32_t index)
{
	double n = 0;
	if (r->clock != SB_CLOCK_WALL)
		return 0;
	for (size_t j = 0; j < r->nsamples; j++)
		n += r->samples[j].thread_index == index;
	return n * 150e3;
}

/* 300 threads, 8 at a time, each burning 2 ms of its own CPU and ending by return,
 * pthread_exit or cancellation in turn: every one has an exact row. The main thread is
 * slot 0, the first 62 workers slots 1..62, the other 238 are pooled in slot 63. Shown to
 * fail with the agent's rows ignored (exec_truth_row a no-op): cover below 0.95; and with
 * the pool named after its last thread (exec_run.c): its name is not "". */
static void test_many_threads_truth(void **state)
{
	(void)state;
	char err[16384];
	struct sb_run *runs;
	size_t n;
	exec_read(ARGS("exec", "--sampler", "itimer,mach", "-o", out_h5("many"), "--", manythreads,
		       "300", "8", "2"),
		  "manythreads: 300 threads\nmanythreads: 300 threads\n", err, sizeof(err), &runs,
		  &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		fprintf(stderr, "  %-8s %-10s cover %.3f rate %.3f magn %.3f tvd %.3f: %s\n",
			r->sampler, run_status_name(r->status), run_stat(r, "truth_cpu_cover"),
			r->metrics.rate_accuracy, r->metrics.magnitude_error, r->metrics.thread_tvd,
			r->reason);
		assert_int_equal(r->status, SB_RUN_OK);
		assert_true(run_stat(r, "truth_cpu_cover") >= 0.95); /* 0.995 measured */
		assert_true(run_stat(r, "agent_thread_rows_ended") == 300);
		assert_true(run_stat(r, "truth_exact_threads") == 300);
		assert_true(run_stat(r, "truth_threads") == 301);
		assert_int_equal(r->nthread_rows, 64);
		const struct sb_thread_row *pool = &r->thread_rows[63];
		assert_int_equal(pool->os_threads, 238);
		/* each worker's name says how it ended, at its end (cancelled ones too); the
		 * pool's threads have three names, so the pool has none */
		for (size_t k = 1; k < 63; k++)
			assert_true(!strcmp(r->thread_rows[k].name, "many-ret") ||
				    !strcmp(r->thread_rows[k].name, "many-exit") ||
				    !strcmp(r->thread_rows[k].name, "many-cancel"));
		assert_string_equal(pool->name, "");
		double burn = 2e6, total = 0;
		int heavy = 0;
		for (size_t k = 1; k < 63; k++) {
			/* the thread's own clock: its 2 ms and the agent's and libc's few µs;
			 * one-offs on top for a thread or two (the first cancellation loads
			 * libgcc_s to unwind; a thread that grows the agent's table maps it):
			 * 1 thread over 3 ms once in 5 loaded make checks. A sampler that parks
			 * the thread (mach) adds up to its spin budget a stop (at most 150 µs,
			 * docs/mach.md), and a thread waiting for a CPU among 300 lives long
			 * enough for dozens of stops on a loaded host (a TSan make check: over
			 * 8 ms once in 6 before this allowance). ThreadSanitizer multiplies the
			 * one-offs: 10.55 ms against a cap of 2.15 ms in one CI run, so its
			 * allowance is twice the plain one. */
			double cap = burn + parked_ns(r, r->thread_rows[k].index);
			if (!(r->thread_rows[k].cpu_ns >= burn &&
			      r->thread_rows[k].cpu_ns < cap * ONE_OFF_FACTOR))
				fail_msg("%s: slot %zu burned %.2f ms, want >= %.2f and < %.2f", r->sampler,
					 k, r->thread_rows[k].cpu_ns / 1e6, burn / 1e6,
					 cap * ONE_OFF_FACTOR / 1e6);
			heavy += r->thread_rows[k].cpu_ns >= cap * 1.5;
			total += (double)r->thread_rows[k].cpu_ns;
		}
		assert_true(heavy <= 3);
		double pool_cap = 238 * burn * 1.5 + parked_ns(r, pool->index);
		if (!(pool->cpu_ns >= 237 * burn && pool->cpu_ns < pool_cap))
			fail_msg("%s: the pool burned %.1f ms, want >= %.1f and < %.1f", r->sampler,
				 pool->cpu_ns / 1e6, 237 * burn / 1e6, pool_cap / 1e6);
		total += (double)pool->cpu_ns;
		assert_true(total >= 300 * burn);
		/* every thread's samples land in its slot or the pool: none unattributed */
		for (size_t k = 0; k < r->nsamples; k++)
			assert_true(r->samples[k].thread_index >= 0);
		/* measured on a 2-vCPU VM at load 6-27: itimer rate 0.79-0.92, mach 0.54-0.89
		 * (wall: a thread's life includes its waits for a CPU), thread_tvd itimer
		 * 0.13-0.20 (~60 samples over 63 slots: 0.17 expected from counting noise
		 * alone), mach 0.04-0.11; every sample in slot 0 would give ~0.99. These bounds
		 * say the samples land; mach's rate itself is held by test_mach's
		 * test_rate_holds (tests/support/rate_bound.h). */
		double lo = r->clock == SB_CLOCK_WALL ? 0.3 : 0.6;
		assert_true(r->metrics.rate_accuracy > lo && r->metrics.rate_accuracy < 1.4);
		assert_true(r->metrics.thread_tvd < 0.35);
	}
	free_runs(runs, n);
}

/* Forked children burn 2 x 100 ms, waited for (wait4's total includes them), the
 * program's two threads 2 x 240 ms: the children are excluded from the truth by
 * construction (no samples are taken in them), so their CPU is taken out of wait4's total
 * and named in the reason; the run is ok, scored on the program's own threads. Shown to
 * fail without the children's share subtracted (incomplete, cover ~0.4). */
static void test_forked_children_excluded(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/fork.h5", tmpdir);
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("exec", "--sampler", "itimer,perf", "--hz", "250", "-o", h5, "--", forkburn,
			  "2", "100", "240"));
	assert_non_null(strstr(err, "children excluded")); /* on the run's line */
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		double children = run_stat(r, "truth_children_cpu_ns");
		fprintf(stderr, "  %-8s %-10s children %.3f s cover %.3f rate %.3f: %s\n",
			r->sampler, run_status_name(r->status), children / 1e9,
			run_stat(r, "truth_cpu_cover"), r->metrics.rate_accuracy, r->reason);
		assert_int_equal(r->status, SB_RUN_OK);
		assert_non_null(strstr(r->reason, "children excluded"));
		/* 2 x 100 ms; /proc's cutime (perf) in ticks */
		assert_true(children >= 0.18e9 && children < 0.3e9);
		assert_true(run_stat(r, "truth_cpu_cover") >= 0.9);
		double cpu = 0;
		for (size_t k = 0; k < r->nthread_rows; k++)
			cpu += (double)r->thread_rows[k].cpu_ns;
		fprintf(stderr, "  threads %.3f s\n", cpu / 1e9);
		/* 2 x 240 ms; /proc polls (perf) miss up to a poll and a tick per thread, and
		 * /proc's cutime counts the children in ticks. At 2 x 60 ms the ThreadSanitizer
		 * make check of a fresh clone saw perf's threads cover 0.785 of the program's
		 * own CPU once (polls late in its loaded parallel lane): incomplete */
		assert_true(cpu >= 0.432e9 && cpu < 0.68e9);
		/* 120 samples expected at 250 Hz (30 at 2 x 60 ms, where this was measured); measured on a 2-vCPU VM: itimer 0.81-1.05 at
		 * load 6-15, down to 0.42 at load 22 (signals lost); perf 0.67-1.26 (its per-CPU
		 * events sample what runs: a count with an sd of ~0.18 here). The children's
		 * CPU left in the truth would give ~0.38 and an incomplete status. */
		assert_true(r->metrics.rate_accuracy > 0.3 && r->metrics.rate_accuracy < 1.7);
	}
	/* the agent's getrusage at exit is exact; perf's share comes from /proc polls */
	assert_true(run_stat(&runs[0], "truth_children_exact") == 1);
	free_runs(runs, n);
}

/* Threads that block every signal with pthread_sigmask: the agent keeps SIGPROF open in
 * them, so ctimer samples them as usual (ok, within the usual bounds). Shown to fail
 * without filter_mask (rate 0.12, failed: the signal blocked in 2 threads). */
static void test_blocked_signals_libc(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/block.h5", tmpdir);
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("exec", "--sampler", "ctimer", "-o", h5, "--", blockprog, "libc", "2",
			  "200"));
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 1);
	const struct sb_run *r = &runs[0];
	fprintf(stderr, "  %-8s %-10s magn %.3f tvd %.3f: %s\n", r->sampler,
		run_status_name(r->status), r->metrics.magnitude_error, r->metrics.thread_tvd,
		r->reason);
	assert_int_equal(r->status, SB_RUN_OK);
	assert_true(run_stat(r, "agent_signal_unblocks") >= 2);
	assert_true(run_stat(r, "agent_sigblocked_threads") == 0);
	assert_int_equal(r->nthread_rows, 3);
	for (size_t k = 1; k < 3; k++)
		assert_true(r->thread_rows[k].cpu_ns >= 200000000ull && r->thread_rows[k].samples > 0);
	/* measured 0.06 at load 27 */
	assert_true(r->metrics.magnitude_error < 0.15);
	assert_true(r->metrics.thread_tvd < 0.15);
	free_runs(runs, n);
}

/* Threads that block every signal with the raw system call, which no preload sees:
 * ctimer cannot sample them and its run is failed, naming the signal; perf, which needs
 * no signal, is ok with correct metrics. Shown to fail without the mask check at a
 * thread's end (ctimer ok with rate 0.1). */
static void test_blocked_signals_raw(void **state)
{
	(void)state;
	char out[4096], err[16384], h5[700];
	snprintf(h5, sizeof(h5), "%s/blockraw.h5", tmpdir);
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("exec", "--sampler", "ctimer,perf", "--hz", "250", "-o", h5, "--", blockprog,
			  "raw", "2", "200"));
	struct sb_run *runs;
	size_t n;
	read_runs(h5, &runs, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  %-8s %-10s rate %.3f magn %.3f: %s\n", runs[i].sampler,
			run_status_name(runs[i].status), runs[i].metrics.rate_accuracy,
			runs[i].metrics.magnitude_error, runs[i].reason);
	assert_int_equal(runs[0].status, SB_RUN_FAILED);
	assert_non_null(strstr(runs[0].reason, "blocked the sampler's signal (SIGPROF)"));
	assert_true(run_stat(&runs[0], "agent_sigblocked_threads") == 2);
	assert_int_equal(runs[1].status, SB_RUN_OK);
	/* ~110 samples expected at 250 Hz, a count with an sd of ~0.1 on a loaded host;
	 * measured 0.006-0.11 at 100 Hz, load 6-27 */
	assert_true(runs[1].metrics.magnitude_error < 0.3);
	free_runs(runs, n);
}

/* The row of r whose thread is named name, or NULL. */
static const struct sb_thread_row *row_named(const struct sb_run *r, const char *name)
{
	for (size_t k = 0; k < r->nthread_rows; k++)
		if (!strcmp(r->thread_rows[k].name, name))
			return &r->thread_rows[k];
	return NULL;
}

/* Thread names under exec: each thread's row carries the name it had at its end, through
 * the agent (ctimer: the thread reads it itself as it ends; the sleeper, alive at exit,
 * from /proc at exit()) and from outside (perf: /proc/PID/task/TID/comm at the last poll
 * that saw it). worker-0 renamed itself late-0 half-way: only the later name is its own
 * at its end. "blink" lives a few µs, between two polls: only the agent's row has it. The
 * sleeper is renamed "sleeper-end" just before exit: the agent reads it at exit() (a poll
 * may too, while the agent stops the sampler); perf has the last poll's name, either. */
static void test_thread_names(void **state)
{
	(void)state;
	char err[16384];
	struct sb_run *runs;
	size_t n;
	exec_read(ARGS("exec", "--sampler", "ctimer,perf", "-o", out_h5("named"), "--",
		       namedthreads, "2", "0.3"),
		  "namedthreads: 2 threads done\nnamedthreads: 2 threads done\n", err,
		  sizeof(err), &runs, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		const char *want[] = { "named-main", "late-0", "worker-1" };
		fprintf(stderr, "  %-8s", r->sampler);
		for (size_t k = 0; k < r->nthread_rows; k++)
			fprintf(stderr, " %d:%s", r->thread_rows[k].index, r->thread_rows[k].name);
		fputc('\n', stderr);
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (!row_named(r, want[k]))
				fail_msg("%s: no thread row named %s", r->sampler, want[k]);
		assert_null(row_named(r, "worker-0")); /* the name it started with */
		/* the main thread is row 0, and the names sit on the right threads */
		assert_string_equal(r->thread_rows[0].name, "named-main");
		assert_true(row_named(r, "late-0")->cpu_ns > 200000000ull);

		if (strcmp(r->sampler, "perf")) { /* through the agent */
			assert_non_null(row_named(r, "blink"));
			assert_non_null(row_named(r, "sleeper-end"));
		} else {
			assert_true(row_named(r, "sleeper") || row_named(r, "sleeper-end"));
		}
	}
	/* exec's own per-thread table names them */
	assert_non_null(strstr(err, "threads under ctimer"));
	assert_non_null(strstr(err, " late-0 "));
	/* top --threads: the name beside slot and tid, and the slot's samples as stored */
	const struct sb_thread_row *late = row_named(&runs[0], "late-0");
	uint64_t nlate = 0;
	for (size_t k = 0; k < runs[0].nsamples; k++)
		nlate += runs[0].samples[k].thread_index == late->index;
	char out[16384], id[32], want[128];
	snprintf(id, sizeof(id), "%lld", (long long)runs[0].run_id);
	exec_ok(out, sizeof(out), err, sizeof(err),
		ARGS("top", "--threads", "--run", id, out_h5("named")));
	snprintf(want, sizeof(want), "\n%4d | %-15s | %8d | %8llu | ", (int)late->index, "late-0",
		 (int)late->tid, (unsigned long long)nlate);
	if (!strstr(out, want))
		fail_msg("want '%s' in:\n%s", want, out);
	assert_non_null(strstr(out, "| named-main "));
	free_runs(runs, n);
}

static void test_bad_input(void **state)
{
	(void)state;
	expect_usage("unknown sampler 'nosuch'", ARGS("exec", "--sampler", "nosuch", "--", "true"));
	expect_usage("missing the command", ARGS("exec", "--sampler", "mach"));
	expect_usage("command not found", ARGS("exec", "--sampler", "mach", "--", "/nonexistent/x"));
	expect_usage("missing --sampler", ARGS("exec", "--", "true"));
	expect_usage("cannot load sampler plugin", ARGS("exec", "--sampler", "./nope.so", "--", "true"));
}

int main(void)
{
	const char *b = getenv("BUILD");
	snprintf(build, sizeof(build), "%s", b && *b ? b : "build");
	snprintf(bin, sizeof(bin), "%s/sampbench", build);
	snprintf(spin, sizeof(spin), "%s/tests/progs/spin", build);
	snprintf(sigprof, sizeof(sigprof), "%s/tests/progs/sigprof", build);
	snprintf(shortthreads, sizeof(shortthreads), "%s/tests/progs/shortthreads", build);
	snprintf(plugin, sizeof(plugin), "%s/examples/ctimer_plugin.so", build);
	snprintf(manythreads, sizeof(manythreads), "%s/tests/progs/manythreads", build);
	snprintf(forkburn, sizeof(forkburn), "%s/tests/progs/forkburn", build);
	snprintf(blockprog, sizeof(blockprog), "%s/tests/progs/sigblock", build);
	snprintf(namedthreads, sizeof(namedthreads), "%s/tests/progs/namedthreads", build);
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_spin_mach_ctimer_perf),
		cmocka_unit_test(test_every_in_process_sampler), cmocka_unit_test(test_spin_gperftools),
		cmocka_unit_test(test_exit_code_passes_through),
		cmocka_unit_test(test_program_signal_handler_wins),
		cmocka_unit_test(test_plugin_under_exec),
		cmocka_unit_test(test_sampler_changed_mask),
		cmocka_unit_test(test_xz),
		cmocka_unit_test(test_short_threads_truth),
		cmocka_unit_test(test_exec_through_wrapper),
		cmocka_unit_test(test_many_threads_truth),
		cmocka_unit_test(test_forked_children_excluded),
		cmocka_unit_test(test_blocked_signals_libc),
		cmocka_unit_test(test_blocked_signals_raw),
		cmocka_unit_test(test_thread_names),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
