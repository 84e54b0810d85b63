/* test_bench_resume.c - a bench killed with SIGKILL midway and resumed gives the
 * uninterrupted one's runs; resume refuses another profile. Midway is found on a clock
 * (half of what an uninterrupted bench took here), so this program runs alone in
 * `make check` (CHECK_SERIAL): a CPU shared with another test stretches the bench unevenly
 * between the timed run and the killed one. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

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
};

static void load(const char *p, struct file *f)
{
	char err[512];
	if (h5_read(p, NULL, &f->runs, &f->n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static void unload(struct file *f)
{
	for (size_t i = 0; i < f->n; i++)
		run_free(&f->runs[i]);
	free(f->runs);
}

/* Same run ids, each with the same sampler, workload, repetition and status ok. */
static void assert_same_runs(const struct file *a, const struct file *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct sb_run *x = &a->runs[i];
		const struct sb_run *y = NULL;
		for (size_t j = 0; j < b->n && !y; j++)
			if (b->runs[j].run_id == x->run_id)
				y = &b->runs[j];
		assert_non_null(y);
		assert_string_equal(x->sampler, y->sampler);
		assert_string_equal(x->workload, y->workload);
		assert_int_equal(x->repetition, y->repetition);
		assert_int_equal(y->status, SB_RUN_OK);
	}
}

static void test_killed_bench_resumes(void **state)
{
	(void)state;
	struct file whole, resumed;
	char *tmp = path("k.h5.tmp");

	/* Kill it about half way. A live writer holds the file's lock and marks it open for
	 * write, so nothing can count its runs from outside: kill on a clock instead, longer
	 * when it had nothing yet, shorter when it had already finished. Measured in 5 runs
	 * at load average 6-9: a whole bench 1.94-2.35 s, killed midway at the first attempt
	 * (4 runs) or the second (1 run: nothing written yet at 0.98 s); 8 attempts allowed. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole3.h5"))), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* half of what a whole bench takes on this build and machine (sanitizers: slower) */
	double delay = ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / 2;
	int killed = 0, attempt;
	for (attempt = 0; attempt < 8; attempt++) {
		unlink(tmp);
		unlink(path("k.h5"));
		pid_t pid = start(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("k.h5")));
		nanosleep(&(struct timespec){ (time_t)delay, (long)((delay - (int)delay) * 1e9) },
			  NULL);
		kill(pid, SIGKILL);
		if (finish(pid) != 128 + SIGKILL) {
			delay *= 0.7; /* it had finished */
			continue;
		}
		/* Readable by a fresh reader (`show`, as a user would: a killed writer's file is
		 * read through sampbench, not through this process's own HDF5 state) and not
		 * finished: a bench cut off midway. */
		if (access(path("k.h5"), F_OK) != 0 && run(ARGS("show", tmp)) == 0) {
			killed = 1;
			break;
		}
		delay *= 1.3;
	}
	print_message("whole bench %.2f s; killed midway after %.2f s, attempt %d\n",
		      (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, delay,
		      attempt + 1);
	assert_true(killed);
	/* another profile is refused; the right one completes the file */
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "u", "--resume", tmp)), 2);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "--resume", tmp)), 0);
	assert_int_not_equal(access(tmp, F_OK), 0);
	load(path("whole3.h5"), &whole);
	load(path("k.h5"), &resumed);
	assert_same_runs(&whole, &resumed);
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
