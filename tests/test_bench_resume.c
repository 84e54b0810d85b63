/* test_bench_resume.c - a bench killed with SIGKILL midway and resumed gives the
 * uninterrupted one's runs and keeps those made before the kill, value for value (host
 * facts included); resume refuses another profile. Midway is found on a clock (half of
 * what an uninterrupted bench took here), so this program runs alone in `make check`
 * (CHECK_SERIAL): a CPU shared with another test stretches the bench unevenly between the
 * timed run and the killed one. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/runcmp.h"
#include "tests/support/sbrun.h"

#include "results/h5io.h"

static char bin[512];
static char dir[] = "/tmp/sbdrv.XXXXXX";
static char matrix[600];


static pid_t start(const char *const *args)
{
	return sbrun_start(bin, args);
}

static int finish(pid_t pid)
{
	return sbrun_wait(pid);
}

static int run(const char *const *args)
{
	return finish(start(args));
}

static char *path(const char *name)
{
	static char buf[8][700];
	static int i;
	char *p = buf[i++ % 8];
	snprintf(p, 700, "%s/%s", dir, name);
	return p;
}

struct file {
	struct sb_run *runs;
	size_t n;
	struct h5_run_hosts hosts; /* load_all() only */
};

static void load(const char *p, struct file *f)
{
	char err[512];
	memset(f, 0, sizeof(*f));
	if (h5_read(p, NULL, &f->runs, &f->n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* load() with the samples and each run's host. */
static void load_all(const char *p, struct file *f)
{
	char err[512];
	memset(f, 0, sizeof(*f));
	if (h5_read_hosts(p, NULL, &f->runs, &f->n, 1, &f->hosts, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static void unload(struct file *f)
{
	for (size_t i = 0; i < f->n; i++)
		run_free(&f->runs[i]);
	free(f->runs);
	h5_run_hosts_free(&f->hosts);
	memset(f, 0, sizeof(*f));
}

/* The run of f with id, or NULL. */
static const struct sb_run *by_id(const struct file *f, int64_t id)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->runs[i].run_id == id)
			return &f->runs[i];
	return NULL;
}

static const struct sb_host *host_of(const struct file *f, const struct sb_run *r)
{
	return &f->hosts.v[f->hosts.of_run[r - f->runs]];
}

/* Run x of file a and run y of file b (both from load_all) hold the same values: samples,
 * frames, metrics, thread rows, stats, pause tables and the host facts they ran with.
 * Returns 0, or -1 with the first difference in why. */
static int same_run(const struct file *a, const struct sb_run *x, const struct file *b,
		    const struct sb_run *y, unsigned flags, char *why, size_t len)
{
	if (runcmp(x, y, flags, why, len) != 0)
		return -1;
	char hw[200];
	if (hostcmp(host_of(a, x), host_of(b, y), hw, sizeof(hw)) != 0) {
		snprintf(why, len, "host: %s", hw);
		return -1;
	}
	return 0;
}

static void assert_same_run(const struct file *a, const struct sb_run *x, const struct file *b,
			    const struct sb_run *y, unsigned flags)
{
	char why[300];
	if (same_run(a, x, b, y, flags, why, sizeof(why)) != 0)
		fail_msg("run %lld (%s rep %d) differs: %s", (long long)x->run_id, x->sampler,
			 x->repetition, why);
}

/* No two runs of f share a run id, nor a cell and repetition. */
static void assert_distinct(const struct file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		assert_ptr_equal(by_id(f, f->runs[i].run_id), &f->runs[i]);
		assert_ptr_equal(runcmp_find(&f->runs[i], f->runs, f->n), &f->runs[i]);
	}
}

/* The same set of runs: the same run ids, each with the same cell (sampler, workload,
 * threads, hz) and repetition, none twice, every one ok. */
static void assert_same_runs(const struct file *a, const struct file *b)
{
	assert_int_equal(a->n, b->n);
	assert_distinct(a);
	assert_distinct(b);
	for (size_t i = 0; i < a->n; i++) {
		const struct sb_run *x = &a->runs[i];
		const struct sb_run *y = by_id(b, x->run_id);
		if (!y || runcmp_find(x, b->runs, b->n) != y)
			fail_msg("run %lld (%s rep %d) is not in the other file", (long long)x->run_id,
				 x->sampler, x->repetition);
		assert_int_equal(x->status, SB_RUN_OK);
		assert_int_equal(y->status, SB_RUN_OK);
	}
}

/* Copies file src to dst. */
static void copy(const char *src, const char *dst)
{
	char buf[65536];
	size_t n;
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	assert_false(ferror(in));
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void test_killed_bench_resumes(void **state)
{
	(void)state;
	struct file whole, resumed, before;
	char tmp[700], kept[700];

	/* copies: path() reuses its 8 buffers, and the attempts below call it 3 times each */
	snprintf(tmp, sizeof(tmp), "%s", path("k.h5.tmp"));
	snprintf(kept, sizeof(kept), "%s", path("k.before.h5"));

	/* Kill it about half way. A live writer holds the file's lock and marks it open for
	 * write, so nothing can count its runs from outside: kill on a clock instead, longer
	 * when it had nothing yet, shorter when it had already finished. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole3.h5"))), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* half of what a whole bench takes on this build and machine (sanitizers: slower) */
	double delay = ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / 2;
	int killed = 0;
	for (int attempt = 0; attempt < 8; attempt++) {
		unlink(tmp);
		unlink(path("k.h5"));
		pid_t pid = start(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("k.h5")));
		nanosleep(&(struct timespec){ (time_t)delay, (long)((delay - (int)delay) * 1e9) },
			  NULL);
		kill(pid, SIGKILL);
		if (finish(pid) != 128 + SIGKILL) {
			print_message("attempt %d after %.2f s: finished\n", attempt, delay);
			delay *= 0.7;
			continue;
		}
		/* Readable by a fresh reader (`show`, as a user would: a killed writer's file is
		 * read through sampbench, not through this process's own HDF5 state) and not
		 * finished: a bench cut off midway. */
		char why[512] = "";
		int done = access(path("k.h5"), F_OK) == 0;
		if (!done && sbrun(bin, ARGS("show", tmp), NULL, 0, why, sizeof(why)) == 0) {
			/* what the killed bench kept, read from a copy so that this process never
			 * opens the file the resumed bench writes; at least one run with samples,
			 * or there is nothing to compare (all of them: killed in its last
			 * calibration, on a loaded host) */
			copy(tmp, kept);
			load_all(kept, &before);
			size_t sampled = 0;
			for (size_t i = 0; i < before.n; i++)
				sampled += before.runs[i].nsamples > 0;
			if (sampled > 0) {
				killed = 1;
				break;
			}
			print_message("attempt %d after %.2f s: %zu runs, none with samples\n",
				      attempt, delay, before.n);
			unload(&before);
		} else {
			print_message("attempt %d after %.2f s: %s", attempt, delay,
				      done ? "renamed into place\n" : why);
		}
		delay *= 1.3;
	}
	print_message("killed midway after %.2f s\n", delay);
	assert_true(killed);
	/* another profile is refused; the right one completes the file */
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "u", "--resume", tmp)), 2);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "--resume", tmp)), 0);
	assert_int_not_equal(access(tmp, F_OK), 0);
	/* the runs of an uninterrupted bench, each once */
	load(path("whole3.h5"), &whole);
	load_all(path("k.h5"), &resumed);
	assert_same_runs(&whole, &resumed);
	/* the runs finished before the kill kept as they were, not run again: samples, metrics,
	 * thread rows and the host facts they were measured against equal */
	for (size_t i = 0; i < before.n; i++) {
		const struct sb_run *x = &before.runs[i], *y = by_id(&resumed, x->run_id);
		assert_non_null(y);
		assert_same_run(&before, x, &resumed, y, 0);
	}
	print_message("%zu of %zu runs kept from the killed bench\n", before.n, resumed.n);
	unload(&before);
	unload(&whole);
	unload(&resumed);
}

int main(void)
{
	const char *b = getenv("BUILD");
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(dir))
		return 1;
	snprintf(matrix, sizeof(matrix), "%s/matrix", dir);
	FILE *f = fopen(matrix, "w");
	if (!f)
		return 1;
	fputs("[t]\nsamplers = none ctimer itimer\nworkloads = balanced\nthreads = 1\n"
	      "reps = 2\nduration = 0.3\n[u]\nsamplers = none\nworkloads = balanced\n", f);
	fclose(f);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_killed_bench_resumes),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
