/* test_bench_driver.c - the bench driver end to end on a tiny matrix: shards merged give
 * the unsharded bench's runs, merge refuses files of another bench, history and sampler
 * pairs. A killed and resumed bench is test_bench_resume.c (run alone: it kills on a
 * clock). */
#include <fcntl.h>
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

static void test_shards_merge_to_the_unsharded_bench(void **state)
{
	(void)state;
	struct file whole, merged;

	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole.h5"))), 0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--shard", "1/2", "-o",
				  path("s1.h5"))), 0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--shard", "2/2", "-o",
				  path("s2.h5"))), 0);
	assert_int_equal(run(ARGS("merge", path("m.h5"), path("s2.h5"), path("s1.h5"))), 0);
	load(path("whole.h5"), &whole);
	load(path("m.h5"), &merged);
	assert_int_equal(whole.n, 6);
	assert_same_runs(&whole, &merged);
	unload(&whole);
	unload(&merged);

	/* refused: a shard twice, a shard with a whole bench, an existing output */
	assert_int_equal(run(ARGS("merge", path("m2.h5"), path("s1.h5"), path("s1.h5"))), 2);
	assert_int_equal(run(ARGS("merge", path("m2.h5"), path("s1.h5"), path("whole.h5"))), 2);
	assert_int_equal(run(ARGS("merge", path("m.h5"), path("s1.h5"), path("s2.h5"))), 2);
	assert_int_not_equal(access(path("m2.h5"), F_OK), 0);
	/* two whole benches: runs renumbered, repetitions continued */
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole2.h5"))), 0);
	assert_int_equal(run(ARGS("merge", path("w.h5"), path("whole.h5"), path("whole2.h5"))), 0);
	load(path("w.h5"), &merged);
	assert_int_equal(merged.n, 12);
	int max_rep = 0;
	for (size_t i = 0; i < merged.n; i++) {
		assert_int_equal(merged.runs[i].run_id, (int64_t)i);
		if (merged.runs[i].repetition > max_rep)
			max_rep = merged.runs[i].repetition;
	}
	assert_int_equal(max_rep, 3);
	unload(&merged);
}

/* Runs bin with args, stdout into out. Returns the exit status. */
static int run_out(char *out, size_t len, const char *const *args)
{
	return sbrun(bin, args, out, len, NULL, 0);
}

/* history: the median per cell and file, the gate's failures marked, an SVG drawn. */
static void test_history_table_and_plot(void **state)
{
	(void)state;
	struct file w;
	char out[8192], want[64];
	double v[8];
	size_t k = 0;

	load(path("whole2.h5"), &w);
	for (size_t i = 0; i < w.n; i++)
		if (!strcmp(w.runs[i].sampler, "ctimer"))
			v[k++] = w.runs[i].metrics.rate_accuracy;
	unload(&w);
	assert_int_equal(k, 2);
	snprintf(want, sizeof(want), " %.4g!", (v[0] + v[1]) / 2);
	FILE *g = fopen(path("whole2.gate.json"), "w");
	assert_non_null(g);
	fputs("{\n  \"verdict\": \"fail\",\n  \"results\": [\n    {\"kind\": \"budget\", "
	      "\"state\": \"fail\", \"sampler\": \"ctimer\", \"workload\": \"balanced\", "
	      "\"threads\": 1, \"hz\": 100, \"metric\": \"rate_accuracy\"}\n  ]\n}\n", g);
	fclose(g);
	assert_int_equal(run_out(out, sizeof(out),
				 ARGS("history", "-m", "rate_accuracy", "-s", "ctimer", "--plot",
				      path("h.svg"), path("whole.h5"), path("whole2.h5"))), 0);
	assert_non_null(strstr(out, "ctimer/balanced/1t/100Hz"));
	assert_null(strstr(out, "itimer/"));
	assert_non_null(strstr(out, "FAIL"));
	if (!strstr(out, want))
		fail_msg("want '%s' in:\n%s", want, out);
	FILE *svg = fopen(path("h.svg"), "r");
	assert_non_null(svg);
	char buf[4096] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, svg);
	fclose(svg);
	buf[n] = 0;
	assert_int_equal(strncmp(buf, "<svg", 4), 0);
	assert_non_null(strstr(buf, "stroke=\"red\"")); /* the failed value */
	assert_int_equal(run(ARGS("history", "-m", "nope", path("whole.h5"))), 2);
}

/* --sampler A,B: per repetition none, A, B, numbered in that order. */
static void test_sampler_pair(void **state)
{
	(void)state;
	struct file f;
	static const char *want[] = { "none", "ctimer", "itimer" };

	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--sampler", "ctimer,itimer",
				  "-o", path("pair.h5"))), 0);
	load(path("pair.h5"), &f);
	assert_int_equal(f.n, 6);
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(f.runs[i].run_id, (int64_t)i);
		assert_string_equal(f.runs[i].sampler, want[i % 3]);
		assert_int_equal(f.runs[i].repetition, (int)(i / 3));
	}
	unload(&f);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--sampler", "ctimer", "-o",
				  path("pair2.h5"))), 2);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--sampler", "ctimer,itimer",
				  "--ab", "HEAD", "-o", path("pair2.h5"))), 2);
	assert_int_not_equal(access(path("pair2.h5"), F_OK), 0);
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
		cmocka_unit_test(test_shards_merge_to_the_unsharded_bench),
		cmocka_unit_test(test_history_table_and_plot),
		cmocka_unit_test(test_sampler_pair),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
