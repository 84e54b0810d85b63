/* test_bench_driver.c - the bench driver end to end on a tiny matrix: shards merged give
 * the unsharded bench's runs with the shards' contents; merge refuses files of another
 * bench. On the files made: baseline promotion, and show and top printing the files'
 * values; history and sampler pairs. A killed and resumed bench is test_bench_resume.c
 * (run alone: it kills on a clock). */
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

#include "analysis/symbolize.h"
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


/* Merged file m of shards s1 and s2: every run of each shard is in m under its run id with
 * the values the shard holds (a `none` run that both shards ran: one of the two copies),
 * and m has no other run. */
static void assert_merged_holds_the_shards(const char *m, const char *s1, const char *s2)
{
	struct rf_file merged, shard[2];
	char why[2][300];
	size_t ids = 0;

	rf_load_all(m, &merged);
	rf_load_all(s1, &shard[0]);
	rf_load_all(s2, &shard[1]);
	rf_assert_distinct(&merged);
	assert_true(shard[0].n > 0 && shard[1].n > 0);
	for (int k = 0; k < 2; k++) {
		const struct rf_file *s = &shard[k], *other = &shard[1 - k];
		for (size_t i = 0; i < s->n; i++) {
			const struct sb_run *x = &s->runs[i], *y = rf_by_id(&merged, x->run_id);
			const struct sb_run *twin = rf_by_id(other, x->run_id);
			if (!y)
				fail_msg("run %lld of shard %d is not in the merged file",
					 (long long)x->run_id, k + 1);
			if (twin && strcmp(x->sampler, "none"))
				fail_msg("run %lld (%s) is in both shards", (long long)x->run_id,
					 x->sampler);
			if (rf_same_run(s, x, &merged, y, 0, why[0], sizeof(why[0])) == 0)
				continue;
			if (!twin)
				fail_msg("run %lld (%s rep %d) of shard %d differs in the merged file: "
					 "%s", (long long)x->run_id, x->sampler, x->repetition, k + 1,
					 why[0]);
			if (rf_same_run(other, twin, &merged, y, 0, why[1], sizeof(why[1])) != 0)
				fail_msg("run %lld (%s rep %d) of both shards differs in the merged "
					 "file: %s (shard %d), %s (shard %d)", (long long)x->run_id,
					 x->sampler, x->repetition, why[0], k + 1, why[1], 2 - k);
		}
		for (size_t i = 0; i < s->n; i++)
			ids += k == 0 || !rf_by_id(&shard[0], s->runs[i].run_id);
	}
	/* every merged run came from a shard: as many as the shards' distinct ids */
	assert_int_equal(merged.n, ids);
	rf_unload(&merged);
	rf_unload(&shard[0]);
	rf_unload(&shard[1]);
}

static void test_shards_merge_to_the_unsharded_bench(void **state)
{
	(void)state;
	struct rf_file whole, merged;

	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole.h5"))), 0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--shard", "1/2", "-o",
				  path("s1.h5"))), 0);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--shard", "2/2", "-o",
				  path("s2.h5"))), 0);
	assert_int_equal(run(ARGS("merge", path("m.h5"), path("s2.h5"), path("s1.h5"))), 0);
	rf_load(path("whole.h5"), &whole);
	rf_load(path("m.h5"), &merged);
	assert_int_equal(whole.n, 6);
	rf_assert_same_runs(&whole, &merged);
	rf_unload(&whole);
	rf_unload(&merged);
	assert_merged_holds_the_shards(path("m.h5"), path("s1.h5"), path("s2.h5"));

	/* refused: a shard twice, a shard with a whole bench, an existing output */
	assert_int_equal(run(ARGS("merge", path("m2.h5"), path("s1.h5"), path("s1.h5"))), 2);
	assert_int_equal(run(ARGS("merge", path("m2.h5"), path("s1.h5"), path("whole.h5"))), 2);
	assert_int_equal(run(ARGS("merge", path("m.h5"), path("s1.h5"), path("s2.h5"))), 2);
	assert_int_not_equal(access(path("m2.h5"), F_OK), 0);
	/* two whole benches: runs renumbered, repetitions continued */
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "-o", path("whole2.h5"))), 0);
	assert_int_equal(run(ARGS("merge", path("w.h5"), path("whole.h5"), path("whole2.h5"))), 0);
	rf_load_all(path("w.h5"), &merged);
	assert_int_equal(merged.n, 12);
	int max_rep = 0;
	for (size_t i = 0; i < merged.n; i++) {
		assert_int_equal(merged.runs[i].run_id, (int64_t)i);
		if (merged.runs[i].repetition > max_rep)
			max_rep = merged.runs[i].repetition;
	}
	assert_int_equal(max_rep, 3);
	/* the first file's runs, then the second's, each as its file holds it */
	struct rf_file w1, w2;
	rf_load_all(path("whole.h5"), &w1);
	rf_load_all(path("whole2.h5"), &w2);
	assert_int_equal(w1.n + w2.n, merged.n);
	for (size_t i = 0; i < merged.n; i++) {
		const struct rf_file *in = i < w1.n ? &w1 : &w2;
		const struct sb_run *x = &in->runs[i < w1.n ? i : i - w1.n];
		assert_int_equal(merged.runs[i].repetition, x->repetition + (i < w1.n ? 0 : 2));
		rf_assert_same_run(in, x, &merged, &merged.runs[i], RUNCMP_NO_ID);
	}
	rf_unload(&w1);
	rf_unload(&w2);
	rf_unload(&merged);
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
	struct rf_file w;
	char out[8192], want[64];
	double v[8];
	size_t k = 0;

	rf_load(path("whole2.h5"), &w);
	for (size_t i = 0; i < w.n; i++)
		if (!strcmp(w.runs[i].sampler, "ctimer"))
			v[k++] = w.runs[i].metrics.rate_accuracy;
	rf_unload(&w);
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
	struct rf_file x, y;
	rf_load_all(a, &x);
	rf_load_all(b, &y);
	assert_int_equal(x.n, y.n);
	for (size_t i = 0; i < x.n; i++)
		rf_assert_same_run(&x, &x.runs[i], &y, &y.runs[i], 0);
	rf_unload(&x);
	rf_unload(&y);
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

/* Splits line (modified) at blanks into tok[0..max). Returns the count. */
static int split(char *line, char **tok, int max)
{
	int n = 0;
	for (char *t = strtok(line, " \t"); t && n < max; t = strtok(NULL, " \t"))
		tok[n++] = t;
	return n;
}

/* A printed metric cell against the file's value v (scaled): "-" when v is NaN, else v
 * to the digits printed (half a unit of the last one). */
static void assert_cell(const char *cell, double v, const char *what, int64_t id)
{
	if (isnan(v)) {
		if (strcmp(cell, "-"))
			fail_msg("run %lld %s: '%s', the file has NaN", (long long)id, what, cell);
		return;
	}
	char *end;
	double got = strtod(cell, &end);
	const char *dot = strchr(cell, '.');
	int digits = dot ? (int)(end - dot - 1) : 0;
	double tol = 0.5 * pow(10, -digits) * (1 + 1e-9) + 1e-12 * fabs(v);
	if (*end || end == cell || fabs(got - v) > tol)
		fail_msg("run %lld %s: '%s', the file has %.17g", (long long)id, what, cell, v);
}

/* The run rows of `show` (lines after the header starting "id"): each run of file p once,
 * its id, cell, repetition, status, samples and each metric column's value as the file
 * has it. cols[i] (header, metric, scale) name the metric columns after `samples`. */
struct col {
	const char *header, *metric;
	double scale;
};

static void assert_show_table(const char *out, const struct rf_file *f, const struct col *cols,
			      int ncols)
{
	static const char *fixed[] = { "id", "sampler", "workload", "threads", "hz", "rep",
				       "status", "samples" };
	char *copy = strdup(out), *save = NULL, *tok[32];
	int header = 0;
	size_t rows = 0;

	assert_non_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (header && !strncmp(line, "footprint", 9))
			break; /* the per-sampler footprint table follows the runs */
		int n = split(line, tok, 32);
		if (!header) {
			if (n < 1 || strcmp(tok[0], "id"))
				continue;
			assert_int_equal(n, 8 + ncols);
			for (int i = 0; i < 8; i++)
				assert_string_equal(tok[i], fixed[i]);
			for (int i = 0; i < ncols; i++)
				assert_string_equal(tok[8 + i], cols[i].header);
			header = 1;
			continue;
		}
		assert_int_equal(n, 8 + ncols);
		const struct sb_run *r = rf_by_id(f, strtoll(tok[0], NULL, 10));
		if (!r)
			fail_msg("show prints run %s, not in the file", tok[0]);
		assert_string_equal(tok[1], r->sampler);
		assert_string_equal(tok[2], r->workload);
		assert_int_equal(strtol(tok[3], NULL, 10), r->threads);
		assert_true(strtod(tok[4], NULL) == r->hz);
		assert_int_equal(strtol(tok[5], NULL, 10), r->repetition);
		assert_string_equal(tok[6], run_status_name(r->status));
		assert_cell(tok[7], r->metrics.nsamples, "samples", r->run_id);
		for (int i = 0; i < ncols; i++) {
			double v = NAN;
			for (size_t m = 0; m < sb_metric_count; m++)
				if (!strcmp(sb_metric_infos[m].name, cols[i].metric))
					v = *(const double *)((const char *)&r->metrics +
							      sb_metric_infos[m].offset);
			assert_cell(tok[8 + i], v * cols[i].scale, cols[i].header, r->run_id);
		}
		rows++;
	}
	free(copy);
	assert_true(header);
	assert_int_equal(rows, f->n); /* ids checked distinct: each run once */
}

/* show: the host line and one row per run with the file's values, in the default columns
 * and in --metrics ones. */
static void test_show_columns(void **state)
{
	(void)state;
	static const struct col def[] = {
		{ "rate_accuracy", "rate_accuracy", 1 },
		{ "magnitude_error", "magnitude_error", 1 },
		{ "thread_tvd", "thread_tvd", 1 },
		{ "window_p99_µs", "suspend_window_p99_ns", 1e-3 },
		{ "stop_p50_µs", "stop_latency_p50_ns", 1e-3 },
		{ "integrity", "integrity_violations", 1 },
	};
	static const struct col picked[] = {
		{ "overhead", "overhead", 1 },
		{ "pause_p99_µs", "pause_p99_ns", 1e-3 },
		{ "expected_samples", "expected_samples", 1 },
	};
	static char out[65536];
	struct rf_file f;
	struct sb_host host;
	char err[512], want[512];

	memset(&f, 0, sizeof(f));
	if (h5_read(path("whole.h5"), &host, &f.runs, &f.n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	rf_assert_distinct(&f);
	assert_int_equal(run_out(out, sizeof(out), ARGS("show", path("whole.h5"))), 0);
	snprintf(want, sizeof(want), "host %s, kernel %s, %d cpus, ", host.host, host.kernel,
		 host.nproc);
	if (strncmp(out, want, strlen(want)))
		fail_msg("want '%s' first in:\n%s", want, out);
	snprintf(want, sizeof(want), "\nmachine %s\n", host.fingerprint);
	assert_non_null(strstr(out, want));
	assert_show_table(out, &f, def, 6);
	assert_int_equal(run_out(out, sizeof(out), ARGS("show", "--metrics",
							"overhead,pause_p99_ns,expected_samples",
							path("whole.h5"))), 0);
	assert_show_table(out, &f, picked, 3);
	rf_unload(&f);
}

/* top: for each run with samples, every leaf counted once under its symbol from the run's
 * own table, shares of the samples with a user leaf, most calls first. */
static void test_top_rows(void **state)
{
	(void)state;
	static char out[65536];
	struct rf_file f;
	size_t checked = 0;

	rf_load_all(path("whole.h5"), &f);
	for (size_t i = 0; i < f.n; i++) {
		const struct sb_run *r = &f.runs[i];
		char id[24], want[256];
		if (!r->nsamples)
			continue;
		/* the leaves as the file has them: first user frame, named by the symbols table */
		struct leaf {
			char name[SB_SYM_MODULE_LEN + 3 * SB_SYM_FUNC_LEN + 64];
			uint64_t calls;
			int seen;
		} *leaves = calloc(r->nsamples, sizeof(*leaves));
		size_t nleaves = 0, user = 0;
		assert_non_null(leaves);
		for (size_t k = 0; k < r->nsamples; k++) {
			const struct sb_sample *sm = &r->samples[k];
			const struct sb_symbol *sym = NULL;
			uint64_t pc = 0;
			int found = 0;
			for (uint32_t d = 0; d < sm->depth && !found; d++) {
				pc = r->frames[sm->frame_offset + d];
				found = pc < SB_KERNEL_ADDR_MIN;
			}
			if (!found)
				continue;
			user++;
			for (size_t y = 0; y < r->nsymbols && !sym; y++)
				if (r->symbols[y].pc == pc)
					sym = &r->symbols[y];
			char name[sizeof(leaves->name)], inl[2 * SB_SYM_FUNC_LEN] = "";
			/* a leaf in inlined code (libc's, with its debug symbols installed): the
			 * inlined functions first, as top names them (harness/cmd_top.c) */
			size_t ninl = 0, len = 0;
			const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, pc, &ninl);
			for (size_t d = 0; d < ninl && len < sizeof(inl); d++)
				len += (size_t)snprintf(inl + len, sizeof(inl) - len,
							d == 0 ? "%s (inlined into " : "%s, into ",
							c[d].function);
			if (sym && strncmp(sym->function, "0x", 2))
				snprintf(name, sizeof(name), "%s|%s%s+0x%" PRIx64 "%s", sym->module,
					 inl, sym->function, sym->offset, ninl ? ")" : "");
			else
				snprintf(name, sizeof(name), "%s|0x%" PRIx64,
					 sym ? sym->module : SB_SYM_MODULE_UNKNOWN, pc);
			size_t l = 0;
			while (l < nleaves && strcmp(leaves[l].name, name))
				l++;
			if (l == nleaves)
				snprintf(leaves[nleaves++].name, sizeof(name), "%s", name);
			leaves[l].calls++;
		}
		snprintf(id, sizeof(id), "%lld", (long long)r->run_id);
		assert_int_equal(run_out(out, sizeof(out),
					 ARGS("top", "--run", id, "--limit", "0", path("whole.h5"))),
				 0);
		snprintf(want, sizeof(want),
			 "run %lld: %s on %s, %d threads, %g Hz: %zu samples, %zu with a user leaf\n",
			 (long long)r->run_id, r->sampler, r->workload, r->threads, r->hz,
			 r->nsamples, user);
		if (strncmp(out, want, strlen(want)))
			fail_msg("want '%s' first in:\n%s", want, out);
		/* the rows after the dashes: module | method | calls | share % */
		char *p = strstr(out, "-+-");
		assert_non_null(p);
		p = strchr(p, '\n') + 1;
		uint64_t prev = UINT64_MAX, sum = 0;
		size_t nrows = 0;
		for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n")) {
			/* fields padded to the column and split by " | " (a module may hold
			 * blanks: "[vdso: 123]") */
			char row[512], *fld[4], key[512];
			int nf = 0;
			snprintf(row, sizeof(row), "%s", line);
			for (char *q = row; q && nf < 4; nf++) {
				fld[nf] = q;
				q = strstr(q, " | ");
				if (q) {
					*q = 0;
					q += 3;
				}
				for (char *e = fld[nf] + strlen(fld[nf]); e > fld[nf] && e[-1] == ' ';)
					*--e = 0;
				while (*fld[nf] == ' ')
					fld[nf]++;
			}
			char *end1, *end2;
			unsigned long long calls = nf == 4 ? strtoull(fld[2], &end1, 10) : 0;
			double share = nf == 4 ? strtod(fld[3], &end2) : 0;
			if (nf != 4 || *end1 || strcmp(end2, " %"))
				fail_msg("run %s: top row '%s'", id, line);
			snprintf(key, sizeof(key), "%s|%s", fld[0], fld[1]);
			size_t l = 0;
			while (l < nleaves && strcmp(leaves[l].name, key))
				l++;
			if (l == nleaves || leaves[l].seen || leaves[l].calls != calls)
				fail_msg("run %s: top row '%s', not a leaf of the file with that count",
					 id, line);
			leaves[l].seen = 1;
			assert_true(calls <= prev);
			assert_true(fabs(share - 100.0 * (double)calls / (double)user) <= 0.00005);
			prev = calls;
			sum += calls;
			nrows++;
		}
		assert_int_equal(nrows, nleaves);
		assert_int_equal(sum, user);
		free(leaves);
		checked++;
	}
	assert_true(checked >= 2);
	rf_unload(&f);
}

/* --sampler A,B: per repetition none, A, B, numbered in that order. */
static void test_sampler_pair(void **state)
{
	(void)state;
	struct rf_file f;
	static const char *want[] = { "none", "ctimer", "itimer" };

	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--sampler", "ctimer,itimer",
				  "-o", path("pair.h5"))), 0);
	rf_load(path("pair.h5"), &f);
	assert_int_equal(f.n, 6);
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(f.runs[i].run_id, (int64_t)i);
		assert_string_equal(f.runs[i].sampler, want[i % 3]);
		assert_int_equal(f.runs[i].repetition, (int)(i / 3));
	}
	rf_unload(&f);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--sampler", "ctimer", "-o",
				  path("pair2.h5"))), 2);
	assert_int_equal(run(ARGS("bench", "-m", matrix, "-p", "t", "--sampler", "ctimer,itimer",
				  "--ab", "HEAD", "-o", path("pair2.h5"))), 2);
	assert_int_not_equal(access(path("pair2.h5"), F_OK), 0);
}

/* Adaptive repetitions (`reps = 1..2`): ctimer's median rule cannot be decided by 1 run of
 * 2 (the median of 2 is the mean of both), so it runs twice, with `none` first; itimer's
 * only rule (`worst`) is decided by its first run, so it ends at the minimum; the runs
 * carry the range and the gate shows each cell's repetitions. */
static void test_adaptive_reps(void **state)
{
	(void)state;
	struct rf_file f;
	char out[16384];
	int per[3] = { 0 };
	static const char *const who[3] = { "none", "ctimer", "itimer" };
	FILE *b = fopen(path("budgets"), "w");

	assert_non_null(b);
	fputs("budget ctimer rate_accuracy >= 0\nbudget itimer integrity_violations <= 0 worst\n", b);
	fclose(b);
	assert_int_equal(sbrun(bin, ARGS("bench", "-m", matrix, "-p", "a", "--budgets",
					 path("budgets"), "-o", path("adapt.h5")),
			       NULL, 0, out, sizeof(out)), 0);
	/* the log names what the repetition past MIN is for, and the group's repetitions */
	assert_non_null(strstr(out, "bench: balanced 2t 100Hz rep 1 for the undecided: ctimer "
				"rate_accuracy\n"));
	assert_non_null(strstr(out, "done: 5 runs (reps 2 of 1..2)"));
	rf_load(path("adapt.h5"), &f);
	assert_int_equal(f.n, 5);
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(f.runs[i].run_id, (int64_t)i); /* 0-4 run, 5 (itimer rep 1) not */
		for (int k = 0; k < 3; k++)
			per[k] += !strcmp(f.runs[i].sampler, who[k]);
		assert_float_equal(run_stat(&f.runs[i], "reps_min"), 1, 0);
		assert_float_equal(run_stat(&f.runs[i], "reps_max"), 2, 0);
	}
	assert_int_equal(per[0], 2);
	assert_int_equal(per[1], 2);
	assert_int_equal(per[2], 1);
	rf_unload(&f);
	assert_int_equal(sbrun(bin, ARGS("gate", "--budgets", path("budgets"), path("adapt.h5")),
			       out, sizeof(out), NULL, 0), 0);
	assert_non_null(strstr(out, "reps 1 of 1..2: decided"));
	assert_non_null(strstr(out, "reps 2 of 1..2: undecided until the maximum"));
	assert_non_null(strstr(out, "adaptive repetitions: 3 cells (1 of them `none`), 5 runs: 1 "
				"decided before their maximum, 1 undecided until it, 0 left open"));
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
	      "reps = 2\nduration = 0.3\n[u]\nsamplers = none\nworkloads = balanced\n"
	      "[a]\nsamplers = none ctimer itimer\nworkloads = balanced\nreps = 1..2\n"
	      "duration = 0.2\n", f);
	fclose(f);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shards_merge_to_the_unsharded_bench),
		cmocka_unit_test(test_history_table_and_plot),
		cmocka_unit_test(test_baseline_promotion),
		cmocka_unit_test(test_show_columns),
		cmocka_unit_test(test_top_rows),
		cmocka_unit_test(test_sampler_pair),
		cmocka_unit_test(test_adaptive_reps),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
