/* test_expect.c - expectation files (analysis/expect.h, docs/expect.md) on runs built here:
 * each measure on known samples (share with and without weights, within, thread slot,
 * thread name, several patterns, leaf, absent, rates), which runs are judged, the verdict, margins from
 * repetitions, and bad files refused with one line naming the entry. End to end with real
 * samplers and programs: tests/expect.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/expect.h"

/* Frames of the synthetic run: PCs 0x10.. named below, each stack leaf first. */
static const char *const names[] = { "main", "worker", "parse", "reply", "spin", "handler" };
enum { F_MAIN, F_WORKER, F_PARSE, F_REPLY, F_SPIN, F_HANDLER, F_N };

#define PC(f) (0x10u + (uint64_t)(f))

/* Adds one sample with the stack of frames leaf..root (F_* values, -1 ends) to r. */
static void add_sample(struct sb_run *r, int slot, double weight, const int *stack)
{
	struct sb_sample *s = &r->samples[r->nsamples++];
	memset(s, 0, sizeof(*s));
	s->thread_index = slot;
	s->tid = 100 + slot;
	s->weight_ns = weight;
	s->frame_offset = r->nframes;
	for (const int *f = stack; *f >= 0; f++) {
		r->frames[r->nframes++] = PC(*f);
		s->depth++;
	}
}

/* A run of sampler name: slot 0 (thread "encoder") spends 3 samples in parse, 1 in reply
 * (under worker); slot 1 (a thread without a name) one sample in main; weights w (NaN:
 * unweighted). 2 s of wall time. */
static void make_run(struct sb_run *r, const char *name, double w)
{
	static const int parse[] = { F_SPIN, F_PARSE, F_WORKER, -1 };
	static const int reply[] = { F_SPIN, F_REPLY, F_WORKER, -1 };
	static const int idle[] = { F_MAIN, -1 };

	memset(r, 0, sizeof(*r));
	snprintf(r->sampler, sizeof(r->sampler), "%s", name);
	r->status = SB_RUN_OK;
	r->hz = 100;
	r->wall_s = 2;
	r->samples = calloc(8, sizeof(*r->samples));
	r->frames = calloc(32, sizeof(*r->frames));
	r->symbols = calloc(F_N, sizeof(*r->symbols));
	r->thread_rows = calloc(2, sizeof(*r->thread_rows));
	assert_non_null(r->thread_rows);
	assert_non_null(r->samples);
	assert_non_null(r->frames);
	assert_non_null(r->symbols);
	for (int f = 0; f < F_N; f++) {
		r->symbols[f].pc = PC(f);
		snprintf(r->symbols[f].module, sizeof(r->symbols[f].module), "prog");
		snprintf(r->symbols[f].function, sizeof(r->symbols[f].function), "%s", names[f]);
	}
	r->nsymbols = F_N;
	for (int k = 0; k < 2; k++)
		r->thread_rows[k] = (struct sb_thread_row){ .index = k, .tid = 100 + k };
	snprintf(r->thread_rows[0].name, sizeof(r->thread_rows[0].name), "encoder");
	r->nthread_rows = 2;
	for (int i = 0; i < 3; i++)
		add_sample(r, 0, w, parse);
	add_sample(r, 0, w, reply);
	add_sample(r, 1, isnan(w) ? w : 4 * w, idle);
}

/* Writes text to a temporary file; returns its path (static buffer). */
static const char *write_file(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/sbexpect.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Loads text as an expectation file (must succeed). */
static void load(const char *text, struct expect_set *set)
{
	char err[512];
	const char *path = write_file(text);
	int rc = expect_load(path, set, err, sizeof(err));
	unlink(path);
	if (rc != 0)
		fail_msg("load failed: %s", err);
}

/* The measure of the only entry of text on r. */
static double measure(const char *entry, const struct sb_run *r)
{
	char text[1024];
	struct expect_set set;
	struct expect_result res;

	snprintf(text, sizeof(text), "{\"expectations\": [%s]}", entry);
	load(text, &set);
	assert_int_equal(set.n, 1);
	assert_int_equal(expect_judge(&set.entries[0], r, &res), 0);
	expect_free(&set);
	return res.measured;
}

/* Shares by weight, by count without weights, within a subset, per slot, of several
 * patterns and of the leaf. Mutations: `within` ignored (0.6 for 0.75), the slot filter
 * ignored, the weights ignored (0.6 vs 3/9 of the weighted run), the leaf matched on the
 * whole stack (spin matches everything). */
static void test_shares(void **state)
{
	struct sb_run w, u;
	(void)state;

	make_run(&w, "ctimer", 1e6);
	make_run(&u, "itimer", NAN);
	/* weighted: parse 3, reply 1, main 4 (of 8) */
	assert_float_equal(measure("{\"name\": \"p\", \"stack\": \";parse(;|$)\", \"share\": 0.5, "
				   "\"margin\": 0.1}", &w), 3.0 / 8, 1e-12);
	/* unweighted: by count, 3 of 5 */
	assert_float_equal(measure("{\"name\": \"p\", \"stack\": \";parse(;|$)\", \"share\": 0.5, "
				   "\"margin\": 0.1}", &u), 3.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"p\", \"stack\": \";parse(;|$)\", \"within\": "
				   "\"^worker\", \"share\": 0.75, \"margin\": 0.1}", &u), 0.75, 1e-12);
	assert_float_equal(measure("{\"name\": \"t1\", \"stack\": \".\", \"thread_index\": 1, "
				   "\"share\": 0.5, \"margin\": 0.1}", &u), 1.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"both\", \"stack\": [\";parse$\", \";reply;\", "
				   "\";parse;\"], \"share\": 1, \"margin\": 0.1}", &u), 4.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"leaf\", \"leaf\": \"^spin$\", \"share\": 1, "
				   "\"margin\": 0.1}", &u), 4.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"leaf\", \"leaf\": \"worker\", \"share\": 1, "
				   "\"margin\": 0.1}", &u), 0, 1e-12);
	assert_float_equal(measure("{\"name\": \"a\", \"stack\": \"handler\", \"absent\": true}",
				   &u), 0, 1e-12);
	run_free(&w);
	run_free(&u);
}

/* Thread names: a pattern over the name the sample's thread gave itself, alone or with a
 * stack pattern or within; a thread without a name never matches, not even ".*".
 * Mutations: unnamed threads matched as "" (".*" gives 1, not 0.8: fails); the name
 * pattern ignored ("^dec" gives 0.8, not 0: fails). */
static void test_thread_name(void **state)
{
	struct sb_run u;
	(void)state;

	make_run(&u, "itimer", NAN);
	assert_float_equal(measure("{\"name\": \"enc\", \"thread_name\": \"^encoder$\", "
				   "\"share\": 0.8, \"margin\": 0.1}", &u), 4.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"dec\", \"thread_name\": \"^dec\", "
				   "\"share\": 0, \"margin\": 0.1}", &u), 0, 1e-12);
	assert_float_equal(measure("{\"name\": \"any\", \"thread_name\": \".*\", "
				   "\"share\": 1, \"margin\": 0.1}", &u), 4.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"p\", \"stack\": \";parse(;|$)\", "
				   "\"thread_name\": \"enc\", \"share\": 0.6, \"margin\": 0.1}", &u),
			   3.0 / 5, 1e-12);
	assert_float_equal(measure("{\"name\": \"w\", \"thread_name\": \"enc\", \"within\": "
				   "\"^main\", \"absent\": true}", &u), 0, 1e-12);
	/* once slot 1 has a name, ".*" takes it too */
	snprintf(u.thread_rows[1].name, sizeof(u.thread_rows[1].name), "main");
	assert_float_equal(measure("{\"name\": \"any\", \"thread_name\": \".*\", "
				   "\"share\": 1, \"margin\": 0.1}", &u), 1, 1e-12);
	run_free(&u);
}

/* Rates: matched samples per wall second; CPU per second from weights, else one period a
 * sample. Mutation: wall_s ignored (duration_s 0: NaN). */
static void test_rates(void **state)
{
	struct sb_run w, u;
	(void)state;

	make_run(&w, "ctimer", 1e7);
	make_run(&u, "itimer", NAN);
	assert_float_equal(measure("{\"name\": \"r\", \"stack\": \"worker\", \"samples_per_s\": 2, "
				   "\"margin\": 1}", &u), 4.0 / 2, 1e-12);
	assert_float_equal(measure("{\"name\": \"c\", \"stack\": \"worker\", \"cpu_per_s\": 1, "
				   "\"margin\": 1}", &w), 4 * 1e7 / 1e9 / 2, 1e-12);
	assert_float_equal(measure("{\"name\": \"c\", \"stack\": \"worker\", \"cpu_per_s\": 1, "
				   "\"margin\": 1}", &u), 4.0 / 100 / 2, 1e-12);
	run_free(&w);
	run_free(&u);
}

/* The report: a failed check fails, a failed run of a selected sampler fails, none's and
 * skipped runs and other samplers' are not judged, and nothing to judge is an error.
 * Mutation: failed runs skipped like skipped ones (2 failed checks become 1). */
static void test_report(void **state)
{
	struct sb_run runs[4];
	struct expect_set set;
	char err[256];
	FILE *out = fopen("/dev/null", "w");
	(void)state;

	make_run(&runs[0], "ctimer", 1e6);
	make_run(&runs[1], "none", 1e6);
	make_run(&runs[2], "ctimer", 1e6);
	runs[2].status = SB_RUN_FAILED;
	make_run(&runs[3], "perf", 1e6);
	runs[3].status = SB_RUN_SKIPPED;
	load("{\"expectations\": [{\"name\": \"p\", \"stack\": \";parse\", \"within\": \"worker\", "
	     "\"share\": 0.75, \"margin\": 0.01}]}", &set);
	assert_int_equal(expect_report(out, &set, runs, 4, err, sizeof(err)), 1); /* the failed run */
	assert_int_equal(expect_report(out, &set, runs, 2, err, sizeof(err)), 0);
	expect_free(&set);
	load("{\"expectations\": [{\"name\": \"p\", \"stack\": \";parse\", \"within\": \"worker\", "
	     "\"share\": 0.5, \"margin\": 0.2}]}", &set);
	assert_int_equal(expect_report(out, &set, runs, 4, err, sizeof(err)), 2);
	expect_free(&set);
	load("{\"expectations\": [{\"name\": \"p\", \"stack\": \"x\", \"sampler\": \"^gperf\", "
	     "\"share\": 0.5, \"margin\": 0.2}]}", &set);
	assert_int_equal(expect_report(out, &set, runs, 4, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no run to judge"));
	expect_free(&set);
	for (int i = 0; i < 4; i++)
		run_free(&runs[i]);
	fclose(out);
}

/* Margins: over runs whose share is 0.6, 0.7 and 0.8 (100 samples each, so one run's
 * counting noise, 4 x 0.046, is below the spread) the suggested margin is 4 sd = 0.4 plus
 * |mean - expected| = 0.1. Mutation: the sd over n instead of n - 1 (0.082). */
static void test_margins(void **state)
{
	struct sb_run runs[3];
	struct expect_set set;
	char buf[2048] = { 0 };
	FILE *out = fmemopen(buf, sizeof(buf) - 1, "w");
	(void)state;

	for (int i = 0; i < 3; i++) {
		static const int parse[] = { F_SPIN, F_PARSE, F_WORKER, -1 };
		static const int reply[] = { F_SPIN, F_REPLY, F_WORKER, -1 };
		make_run(&runs[i], "ctimer", 1e6);
		runs[i].nsamples = 0;
		runs[i].nframes = 0;
		runs[i].samples = realloc(runs[i].samples, 100 * sizeof(*runs[i].samples));
		runs[i].frames = realloc(runs[i].frames, 300 * sizeof(*runs[i].frames));
		assert_non_null(runs[i].samples);
		assert_non_null(runs[i].frames);
		for (int k = 0; k < 100; k++) /* 60, 70, 80 of 100 in parse */
			add_sample(&runs[i], 0, 1e6, k < 60 + 10 * i ? parse : reply);
	}
	load("{\"expectations\": [{\"name\": \"p\", \"stack\": \";parse\", \"share\": 0.8, "
	     "\"margin\": 0.01}]}", &set);
	assert_int_equal(expect_margins(out, &set, runs, 3), 0);
	fclose(out);
	double mean, sd, expected, margin;
	const char *row = strstr(buf, "\n  ctimer");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " ctimer p share 3 %lf %lf %lf %lf", &mean, &sd, &expected,
				&margin), 4);
	assert_float_equal(mean, 0.7, 1e-9);
	assert_float_equal(sd, 0.1, 1e-9);
	assert_float_equal(margin, 0.5, 1e-9);
	expect_free(&set);
	for (int i = 0; i < 3; i++)
		run_free(&runs[i]);
}

/* Bad files: one line naming the file, the line of a JSON error or the entry and what is
 * wrong with it. */
static void test_bad_files(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "{\n\"expectations\": [\n{\"name\": \"a\",, }]}", ":3: not valid JSON" },
		{ "{\"expectations\": []}", "non-empty array 'expectations'" },
		{ "{\"expectations\": [{}], \"extra\": 1}", "unknown key 'extra'" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"x\", \"shares\": 1}]}",
		  "expectation 1 ('a'): unknown key 'shares'" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"(\", \"share\": 1, \"margin\": 0}]}",
		  "bad pattern '('" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"x\", \"share\": 0.5}]}",
		  "needs a margin" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"x\", \"leaf\": \"y\", \"share\": 1, "
		  "\"margin\": 0}]}", "one of 'stack' or 'leaf'" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"x\", \"share\": 1.5, \"margin\": 0}]}",
		  "'share' must be a number in [0, 1]" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"x\", \"share\": 1, \"absent\": true, "
		  "\"margin\": 0}]}", "exactly one of" },
		{ "{\"expectations\": [{\"name\": \"a\", \"stack\": \"x\", \"within\": \"y\", "
		  "\"samples_per_s\": 1, \"margin\": 0}]}", "'within' applies to share and absent only" },
		{ "{\"expectations\": [{\"name\": \"a\", \"thread_name\": \"(\", \"share\": 1, "
		  "\"margin\": 0}]}", "expectation 1 ('a'): bad 'thread_name' pattern '('" },
		{ "{\"expectations\": [{\"name\": \"a\", \"thread_name\": 1, \"share\": 1, "
		  "\"margin\": 0}]}", "expectation 1 ('a'): 'thread_name' must be a string" },
		{ "{\"expectations\": [{\"name\": \"a\", \"share\": 1, \"margin\": 0}]}",
		  "needs 'stack', 'leaf', 'thread_name' or 'thread_index'" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct expect_set set;
		char err[512];
		const char *path = write_file(cases[i].text);
		int rc = expect_load(path, &set, err, sizeof(err));
		unlink(path);
		if (rc != -1 || !strstr(err, cases[i].want) || strchr(err, '\n'))
			fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, err, cases[i].want);
		assert_int_equal(set.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_thread_name),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_margins),
		cmocka_unit_test(test_bad_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
