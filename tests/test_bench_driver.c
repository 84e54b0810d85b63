/* test_bench_driver.c - the bench driver end to end on a tiny matrix: shards merged give
 * the unsharded bench's runs; a bench killed with SIGKILL and resumed gives the
 * uninterrupted one's; merge and resume refuse files of another bench. */
#include <fcntl.h>
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

/* same_run()'s flag beside runcmp's: the hosts' identity only, not their facts and
 * calibration tables. */
#define SAME_HOST_NO_FACTS (1u << 16)

/* Run x of file a and run y of file b (both from load_all) hold the same values: samples,
 * frames, metrics, thread rows, stats, pause tables and the host facts they ran with.
 * Returns 0, or -1 with the first difference in why. */
static int same_run(const struct file *a, const struct sb_run *x, const struct file *b,
		    const struct sb_run *y, unsigned flags, char *why, size_t len)
{
	if (runcmp(x, y, flags, why, len) != 0)
		return -1;
	char hw[200];
	struct sb_host ha = *host_of(a, x), hb = *host_of(b, y);
	if (flags & SAME_HOST_NO_FACTS)
		ha.nfacts = hb.nfacts = ha.ncalib = hb.ncalib = 0;
	if (hostcmp(&ha, &hb, hw, sizeof(hw)) != 0) {
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

/* Merged file m of shards s1 and s2: every run of each shard is in m under its run id with
 * the values the shard holds (a `none` run that both shards ran: one of the two copies),
 * and m has no other run. */
static void assert_merged_holds_the_shards(const char *m, const char *s1, const char *s2)
{
	struct file merged, shard[2];
	char why[2][300];
	size_t ids = 0;

	load_all(m, &merged);
	load_all(s1, &shard[0]);
	load_all(s2, &shard[1]);
	assert_distinct(&merged);
	assert_true(shard[0].n > 0 && shard[1].n > 0);
	for (int k = 0; k < 2; k++) {
		const struct file *s = &shard[k], *other = &shard[1 - k];
		for (size_t i = 0; i < s->n; i++) {
			const struct sb_run *x = &s->runs[i], *y = by_id(&merged, x->run_id);
			const struct sb_run *twin = by_id(other, x->run_id);
			if (!y)
				fail_msg("run %lld of shard %d is not in the merged file",
					 (long long)x->run_id, k + 1);
			if (twin && strcmp(x->sampler, "none"))
				fail_msg("run %lld (%s) is in both shards", (long long)x->run_id,
					 x->sampler);
			if (same_run(s, x, &merged, y, 0, why[0], sizeof(why[0])) == 0)
				continue;
			if (!twin)
				fail_msg("run %lld (%s rep %d) of shard %d differs in the merged file: "
					 "%s", (long long)x->run_id, x->sampler, x->repetition, k + 1,
					 why[0]);
			if (same_run(other, twin, &merged, y, 0, why[1], sizeof(why[1])) != 0)
				fail_msg("run %lld (%s rep %d) of both shards differs in the merged "
					 "file: %s (shard %d), %s (shard %d)", (long long)x->run_id,
					 x->sampler, x->repetition, why[0], k + 1, why[1], 2 - k);
		}
		for (size_t i = 0; i < s->n; i++)
			ids += k == 0 || !by_id(&shard[0], s->runs[i].run_id);
	}
	/* every merged run came from a shard: as many as the shards' distinct ids */
	assert_int_equal(merged.n, ids);
	unload(&merged);
	unload(&shard[0]);
	unload(&shard[1]);
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
	assert_merged_holds_the_shards(path("m.h5"), path("s1.h5"), path("s2.h5"));

	/* refused: a shard twice, a shard with a whole bench, an existing output */
	assert_int_equal(run(ARGS("merge", path("m2.h5"), path("s1.h5"), path("s1.h5"))), 2);
	assert_int_equal(run(ARGS("merge", path("m2.h5"), path("s1.h5"), path("whole.h5"))), 2);
	assert_int_equal(run(ARGS("merge", path("m.h5"), path("s1.h5"), path("s2.h5"))), 2);
	assert_int_not_equal(access(path("m2.h5"), F_OK), 0);
	/* two whole benches: runs renumbered, repetitions continued */
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole2.h5"))), 0);
	assert_int_equal(run(ARGS("merge", path("w.h5"), path("whole.h5"), path("whole2.h5"))), 0);
	load_all(path("w.h5"), &merged);
	assert_int_equal(merged.n, 12);
	int max_rep = 0;
	for (size_t i = 0; i < merged.n; i++) {
		assert_int_equal(merged.runs[i].run_id, (int64_t)i);
		if (merged.runs[i].repetition > max_rep)
			max_rep = merged.runs[i].repetition;
	}
	assert_int_equal(max_rep, 3);
	/* the first file's runs, then the second's, each as its file holds it */
	struct file w1, w2;
	load_all(path("whole.h5"), &w1);
	load_all(path("whole2.h5"), &w2);
	assert_int_equal(w1.n + w2.n, merged.n);
	for (size_t i = 0; i < merged.n; i++) {
		const struct file *in = i < w1.n ? &w1 : &w2;
		const struct sb_run *x = &in->runs[i < w1.n ? i : i - w1.n];
		assert_int_equal(merged.runs[i].repetition, x->repetition + (i < w1.n ? 0 : 2));
		assert_same_run(in, x, &merged, &merged.runs[i], RUNCMP_NO_ID);
	}
	unload(&w1);
	unload(&w2);
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

/* The bytes of file p (malloc'd, *len set), or NULL when it cannot be read. */
static unsigned char *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	unsigned char *buf = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

/* Files a and b hold the same runs with the same contents and hosts. */
static void assert_same_file(const char *a, const char *b)
{
	struct file x, y;
	load_all(a, &x);
	load_all(b, &y);
	assert_int_equal(x.n, y.n);
	for (size_t i = 0; i < x.n; i++)
		assert_same_run(&x, &x.runs[i], &y, &y.runs[i], 0);
	unload(&x);
	unload(&y);
}

/* `baseline --to B FILE` refused: exit 2, one line on stderr, B and B's .prev.h5 left
 * byte for byte as they were. */
static void expect_baseline_refused(const char *want, const char *to, const char *prev,
				    const char *file)
{
	char err[2048];
	size_t n1, n2, p1, p2;
	unsigned char *b1 = slurp(to, &n1), *q1 = slurp(prev, &p1);
	assert_non_null(b1);
	assert_non_null(q1);
	int rc = sbrun(bin, ARGS("baseline", "--to", to, file), NULL, 0, err, sizeof(err));
	char *nl = strchr(err, '\n');
	if (rc != 2 || !nl || nl[1] || strncmp(err, "sampbench: ", 11) || !strstr(err, want))
		fail_msg("baseline of '%s': want exit 2 and one line with '%s', got exit %d: %s",
			 file, want, rc, err);
	unsigned char *b2 = slurp(to, &n2), *q2 = slurp(prev, &p2);
	assert_non_null(b2);
	assert_non_null(q2);
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	assert_int_equal(p1, p2);
	assert_memory_equal(q1, q2, p1);
	free(b1);
	free(b2);
	free(q1);
	free(q2);
}

/* baseline --to: the file copied with its contents, the previous baseline kept as
 * .prev.h5; a file that is not a results file, a missing one, one without runs and one
 * with failed runs are refused and leave both as they were. */
static void test_baseline_promotion(void **state)
{
	(void)state;
	char to[700], prev[700], out[4096];

	snprintf(to, sizeof(to), "%s", path("base/b.h5")); /* path() reuses its buffers */
	snprintf(prev, sizeof(prev), "%s", path("base/b.prev.h5"));

	assert_int_equal(mkdir(path("base"), 0755), 0);
	assert_int_equal(run_out(out, sizeof(out), ARGS("baseline", "--to", to, path("whole.h5"))),
			 0);
	assert_non_null(strstr(out, "(6 runs,"));
	assert_same_file(path("whole.h5"), to);
	assert_int_not_equal(access(prev, F_OK), 0);
	/* the second promotion keeps the first as .prev.h5 */
	assert_int_equal(run(ARGS("baseline", "--to", to, path("whole2.h5"))), 0);
	assert_same_file(path("whole2.h5"), to);
	assert_same_file(path("whole.h5"), prev);

	FILE *f = fopen(path("notes.h5"), "w");
	assert_non_null(f);
	fputs("sampler,rate_accuracy\nctimer,0.99\n", f);
	fclose(f);
	expect_baseline_refused("is not an HDF5 file", to, prev, path("notes.h5"));
	expect_baseline_refused("cannot open", to, prev, path("missing.h5"));
	/* a results file without runs */
	struct sb_host h;
	char err[256];
	memset(&h, 0, sizeof(h));
	snprintf(h.host, sizeof(h.host), "testhost");
	struct sb_h5 *e = h5_create(path("empty.h5"), &h, 0, err, sizeof(err));
	if (!e)
		fail_msg("%s", err);
	h5_set_complete(e, 1);
	assert_int_equal(h5_close(e), 0);
	expect_baseline_refused("has no runs", to, prev, path("empty.h5"));
	/* a run that failed: refused without --force */
	struct sb_run r;
	memset(&r, 0, sizeof(r));
	snprintf(r.sampler, sizeof(r.sampler), "ctimer");
	snprintf(r.workload, sizeof(r.workload), "balanced");
	r.threads = 1;
	r.hz = 100;
	r.status = SB_RUN_FAILED;
	snprintf(r.reason, sizeof(r.reason), "child killed by SIGSEGV");
	metrics_clear(&r.metrics);
	e = h5_create(path("failed.h5"), &h, 0, err, sizeof(err));
	if (!e)
		fail_msg("%s", err);
	assert_int_equal(h5_append_run(e, &r), 0);
	assert_int_equal(h5_close(e), 0);
	expect_baseline_refused("failed runs", to, prev, path("failed.h5"));
	assert_same_file(path("whole2.h5"), to);
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
	char *tmp = path("k.h5.tmp");
	char *kept = path("k.before.h5");

	/* Kill it about half way. A live writer holds the file's lock and marks it open for
	 * write, so nothing can count its runs from outside: kill on a clock instead, longer
	 * when it had nothing yet, shorter when it had already finished (12 attempts: a
	 * loaded host moves the runs' times). */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole3.h5"))), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* half of what a whole bench takes on this build and machine (sanitizers: slower) */
	double delay = ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / 2;
	int killed = 0;
	for (int attempt = 0; attempt < 12; attempt++) {
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
			/* what the killed bench kept, read from a copy so that this process never
			 * opens the file the resumed bench writes; at least one run with samples,
			 * or there is nothing to compare */
			copy(tmp, kept);
			load_all(kept, &before);
			size_t sampled = 0;
			for (size_t i = 0; i < before.n; i++)
				sampled += before.runs[i].nsamples > 0;
			if (sampled > 0 && before.n < 6) {
				killed = 1;
				break;
			}
			print_message("attempt %d after %.2f s: %zu runs, %zu with samples\n",
				      attempt, delay, before.n, sampled);
			delay *= before.n < 6 ? 1.3 : 0.7;
			unload(&before);
			continue;
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
	assert_true(before.n < whole.n);
	assert_same_runs(&whole, &resumed);
	/* the runs finished before the kill kept as they were, not run again: samples, metrics,
	 * thread rows and the host they ran on equal. Not their host facts: the resumed
	 * bench replaces the file's calibration with its own, and the runs made before the
	 * kill read it as theirs. */
	for (size_t i = 0; i < before.n; i++) {
		const struct sb_run *x = &before.runs[i], *y = by_id(&resumed, x->run_id);
		assert_non_null(y);
		assert_same_run(&before, x, &resumed, y, SAME_HOST_NO_FACTS);
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
		cmocka_unit_test(test_shards_merge_to_the_unsharded_bench),
		cmocka_unit_test(test_history_table_and_plot),
		cmocka_unit_test(test_baseline_promotion),
		cmocka_unit_test(test_sampler_pair),
		cmocka_unit_test(test_killed_bench_resumes),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
