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
#include "tests/support/runfile.h"
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
	struct rf_file whole, resumed, before;
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
			rf_load_all(kept, &before);
			size_t sampled = 0;
			for (size_t i = 0; i < before.n; i++)
				sampled += before.runs[i].nsamples > 0;
			if (sampled > 0) {
				killed = 1;
				break;
			}
			print_message("attempt %d after %.2f s: %zu runs, none with samples\n",
				      attempt, delay, before.n);
			rf_unload(&before);
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
	rf_load(path("whole3.h5"), &whole);
	rf_load_all(path("k.h5"), &resumed);
	rf_assert_same_runs(&whole, &resumed);
	/* the runs finished before the kill kept as they were, not run again: samples, metrics,
	 * thread rows and the host facts they were measured against equal */
	for (size_t i = 0; i < before.n; i++) {
		const struct sb_run *x = &before.runs[i], *y = rf_by_id(&resumed, x->run_id);
		assert_non_null(y);
		rf_assert_same_run(&before, x, &resumed, y, 0);
	}
	print_message("%zu of %zu runs kept from the killed bench\n", before.n, resumed.n);
	rf_unload(&before);
	rf_unload(&whole);
	rf_unload(&resumed);
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
