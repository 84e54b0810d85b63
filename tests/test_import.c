/* test_import.c - the importers (analysis/import.h): every export read back gives the same
 * samples (folded stacks with a thread root frame: counts per stack and per thread); perf
 * script and folded texts and a profile Go's runtime/pprof wrote read to known stacks;
 * hostile files (truncations, bit flips, limits, garbage) rejected with one line, through
 * the API and `sampbench import` (exit 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/export.h"
#include "analysis/import.h"
#include "tests/support/sbrun.h"

static char bin[512];
static char dir[] = "/tmp/sbimport.XXXXXX";
static struct sb_run *runs;
static size_t nruns;

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("BUILD");
	char h5[600];

	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(dir))
		return -1;
	snprintf(h5, sizeof(h5), "%s/i.h5", dir);
	/* a signal sampler with tids and gperftools without, 3 threads, 4 functions */
	return sbrun_runs(bin, ARGS("run", "-q", "-s", "ctimer,gperftools", "-w", "hotspot", "-t", "3",
				    "-z", "250", "-d", "0.3", "-o", h5),
			  h5, &runs, &nruns);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[700];

	sbrun_free_runs(runs, nruns);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* folded stacks of r with thread root frames, malloc'd */
static char *folded(const struct sb_run *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(export_folded(f, r, 1, EXPORT_THREAD), (int64_t)r->nsamples);
	fclose(f);
	return buf;
}

typedef int64_t (*export_fn)(FILE *out, const struct sb_run *r);

static int64_t folded_threads(FILE *out, const struct sb_run *r)
{
	return export_folded(out, r, 1, EXPORT_THREAD);
}

static const struct {
	const char *format;
	export_fn write;
} trips[] = {
	{ "pprof", export_pprof },
	{ "speedscope", export_speedscope },
	{ "firefox", export_firefox },
	{ "folded", folded_threads },
};

static unsigned char *exported(export_fn write, const struct sb_run *r, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(write(f, r), (int64_t)r->nsamples);
	fclose(f);
	return (unsigned char *)buf;
}

/* Counts of samples per tid in r, compared between two runs. */
static void same_threads(const struct sb_run *a, const struct sb_run *b)
{
	for (size_t i = 0; i < a->nsamples; i++) {
		size_t na = 0, nb = 0;
		for (size_t j = 0; j < a->nsamples; j++)
			na += a->samples[j].tid == a->samples[i].tid;
		for (size_t j = 0; j < b->nsamples; j++)
			nb += b->samples[j].tid == a->samples[i].tid;
		assert_int_equal(na, nb);
	}
}

/* Export then import: the same stacks with the same counts, on the same threads. */
static void test_round_trip(void **state)
{
	(void)state;
	char err[256];

	assert_int_equal(nruns, 2);
	for (size_t i = 0; i < nruns; i++) {
		char *want = folded(&runs[i]);
		for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); t++) {
			size_t len;
			unsigned char *buf = exported(trips[t].write, &runs[i], &len);
			const struct import_format *fmt = import_format_find(trips[t].format);
			struct sb_run back;
			assert_non_null(fmt);
			assert_ptr_equal(import_detect(buf, len), fmt);
			if (import_buffer(fmt, buf, len, &back, err, sizeof(err)) < 0)
				fail_msg("%s: %s", trips[t].format, err);
			assert_int_equal(back.nsamples, runs[i].nsamples);
			char *got = folded(&back);
			if (strcmp(got, want) != 0)
				fail_msg("%s of run %zu reads back different stacks:\n%s\nwant\n%s",
					 trips[t].format, i, got, want);
			same_threads(&runs[i], &back);
			if (strcmp(trips[t].format, "pprof") == 0) /* times survive too */
				for (size_t k = 0; k < back.nsamples; k++)
					assert_true(back.samples[k].time_ns == runs[i].samples[k].time_ns ||
						    !export_time_known(&runs[i].samples[k]));
			free(got);
			run_free(&back);
			free(buf);
		}
		free(want);
	}
}

static char *import_text(const char *format, const char *text, int flags_threads)
{
	struct sb_run r;
	char err[256], *buf = NULL;
	size_t len = 0;

	if (import_buffer(import_format_find(format), (const unsigned char *)text, strlen(text), &r,
			  err, sizeof(err)) < 0)
		fail_msg("%s: %s", format, err);
	FILE *f = open_memstream(&buf, &len);
	export_folded(f, &r, 1, flags_threads ? EXPORT_THREAD : 0);
	fclose(f);
	run_free(&r);
	return buf;
}

/* A callchain of at least 64 frames that does not end at a thread's start was cut by
 * perf's frame limit: flagged truncated; one that ends there, or a shallow one, is not. */
static void perf_script_cut(void)
{
	static const struct { int depth; const char *root; int cut; } v[] = {
		{ 70, NULL, 1 }, { 70, "clone3", 0 }, { 70, "start_thread", 0 }, { 10, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		fprintf(f, "prog 100/101 12.500000: 250000 cpu-clock: \n");
		for (int d = 0; d < v[i].depth; d++)
			fprintf(f, "\t    5555deadbe%02x deep_%d+0x1 (/usr/bin/prog)\n", d, d);
		if (v[i].root)
			fprintf(f, "\t    7f0000001234 %s+0x2c (/usr/lib/libc.so.6)\n", v[i].root);
		fclose(f);
		struct sb_run r;
		char err[256];
		assert_int_equal(import_buffer(import_format_find("perf-script"),
					       (const unsigned char *)text, len, &r, err,
					       sizeof(err)), 0);
		assert_int_equal(r.nsamples, 1);
		if (!!(r.samples[0].flags & SB_SAMPLE_TRUNCATED) != v[i].cut)
			fail_msg("%d frames, root %s: truncated %d, want %d", v[i].depth,
				 v[i].root ? v[i].root : "none", !v[i].cut, v[i].cut);
		run_free(&r);
		free(text);
	}
}

/* perf script text (default fields and -F with pid/tid and cpu, a comm with a space,
 * [unknown] frames, kernel frames, a sample without callchain) reads to known stacks. */
static void test_perf_script(void **state)
{
	(void)state;
	static const char text[] =
		"my prog 100/101 [001] 12.500000:     250000 cpu-clock:ppp: \n"
		"\t    5555deadbeef leaf+0x1f (/usr/bin/prog)\n"
		"\t    5555deadbe00 main+0x10 (/usr/bin/prog)\n"
		"\n"
		"my prog 100/102 [000] 12.504000:     250000 cpu-clock:ppp: \n"
		"\tffffffff81000130 entry_SYSCALL_64+0x76 ([kernel.kallsyms])\n"
		"\t    7f0000001234 [unknown] ([unknown])\n"
		"\t    5555deadbe00 main+0x10 (/usr/bin/prog)\n"
		"\n"
		"prog   101  12.508000: 250000 cpu-clock: \n"
		"\t    5555deadbeef leaf+0x1f (/usr/bin/prog)\n"
		"\t    5555deadbe00 main+0x10 (/usr/bin/prog)\n"
		"prog   101  12.512000: 250000 cpu-clock: \n";
	char *got = import_text("perf-script", text, 1);
	assert_string_equal(got, "thread-0/101;[unknown] 1\n"
				 "thread-0/101;main;leaf 2\n"
				 "thread-0/102;main;0x7f0000001234;entry_SYSCALL_64_[k] 1\n");
	free(got);
	struct sb_run r;
	char err[256];
	assert_int_equal(import_buffer(import_format_find("perf-script"),
				       (const unsigned char *)text, strlen(text), &r, err,
				       sizeof(err)), 0);
	assert_int_equal(r.samples[1].time_ns, 12504000000ull);
	assert_true(r.samples[1].weight_ns == 250000.0);
	assert_int_equal(r.threads, 2);
	run_free(&r);
	/* bpftrace's printf of ustack(perf): decimal offsets, a name with a '+' of its own */
	got = import_text("perf-script",
			  "prog 100/101 12.500000000: 1 profile:\n"
			  "\t557c9820100b leaf+27 (/usr/bin/prog)\n"
			  "\t557c98201100 operator+ (/usr/bin/prog)\n"
			  "\t557c98204ffe main+14 (/usr/bin/prog)\n\n", 1);
	assert_string_equal(got, "thread-0/101;main;operator+;leaf 1\n");
	free(got);
	/* perf script --inline: the functions inlined at a PC, innermost first, each a frame
	 * with no dso and the mark "(inlined)" */
	got = import_text("perf-script",
			  "prog 100/101 12.500000: 250000 cpu-clock: \n"
			  "\t    5555deadbeef hot_60 (inlined)\n"
			  "\t    5555deadbeef split_step (inlined)\n"
			  "\t    5555deadbeef slot_3+0x1f (/usr/bin/prog)\n"
			  "\t    5555deadbe00 main+0x10 (/usr/bin/prog)\n\n", 1);
	assert_string_equal(got, "thread-0/101;main;slot_3;split_step;hot_60 1\n");
	free(got);
	perf_script_cut();
}

/* Folded stacks: comm-pid/tid roots are threads, other roots frames, CRLF and blank lines. */
static void test_folded(void **state)
{
	(void)state;
	char *got = import_text("folded",
				"java-12/13;main;work 5\r\n\nmain;work 2\nsolo 1\nx-y/z;a 3\n", 1);
	assert_string_equal(got, "main;work 2\nsolo 1\nthread-0/13;main;work 5\nx-y/z;a 3\n");
	free(got);
}

/* A profile Go's runtime/pprof wrote (tests/data/go-runtime-pprof-cpu.go): gzip, Go's
 * sample types samples/count and cpu/nanoseconds, mappings and line numbers. `go tool
 * pprof -top -sample_index=samples` of the file reads 40 samples, 33 in main.spinA and 7
 * in main.spinB; the importer must read the same. */
static void test_go_writer(void **state)
{
	(void)state;
	FILE *f = fopen("tests/data/go-runtime-pprof-cpu.pb.gz", "rb");
	static unsigned char buf[1 << 16];
	struct sb_run r;
	char err[256], *text = NULL;
	size_t len, tlen = 0;

	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_ptr_equal(import_detect(buf, len), import_format_find("pprof"));
	if (import_buffer(import_format_find("pprof"), buf, len, &r, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	FILE *m = open_memstream(&text, &tlen);
	export_folded(m, &r, 1, 0);
	fclose(m);
	assert_string_equal(text, "runtime.main;main.main;main.spinA 33\n"
				  "runtime.main;main.main;main.spinB 7\n");
	assert_true(r.hz == 100.0); /* period 10 ms */
	double w = 0;
	for (size_t i = 0; i < r.nsamples; i++)
		w += r.samples[i].weight_ns;
	assert_true(fabs(w - 40 * 1e7) < 1e6); /* 10 ms of cpu per sample */
	free(text);
	run_free(&r);
}

/* Every bad input: -1 and one non-empty line, whatever the reader. */
static void expect_reject(const char *format, const void *buf, size_t len, const char *want)
{
	struct sb_run r;
	char err[256] = "";

	if (import_buffer(import_format_find(format), buf, len, &r, err, sizeof(err)) == 0)
		fail_msg("%s accepted a bad file (want '%s')", format, want);
	if (!err[0] || strchr(err, '\n') || (want && !strstr(err, want)))
		fail_msg("%s: error '%s', want one line with '%s'", format, err, want ? want : "");
	assert_null(r.samples);
	assert_int_equal(r.nsamples, 0);
}

static void test_hostile(void **state)
{
	(void)state;
	char err[256];

	expect_reject("pprof", "\x1f\x8b\x08\x00garbage", 12, "gzip");
	expect_reject("pprof", "\x0a\xff\xff\xff\xff\x0f", 6, "malformed protobuf");
	expect_reject("pprof", "\x32\x02\x08\x07\x32\x00", 6, "string table");
	expect_reject("folded", "a;b 12x\n", 8, "not a number");
	expect_reject("folded", "a;b\n", 4, "no sample count");
	expect_reject("folded", "a 99999999999\n", 14, "more than");
	expect_reject("perf-script", "\tdeadbeef x (y)\n", 16, "outside a sample");
	expect_reject("perf-script", "prog 1 nottime\n", 15, "time field");
	expect_reject("speedscope", "{\"shared\":{\"frames\":[]},\"profiles\":[{\"type\":"
		      "\"sampled\",\"unit\":\"none\",\"samples\":[[3]],\"weights\":[1]}]}", 100,
		      "out of range");
	expect_reject("speedscope", "{\"profiles\":", 12, "not JSON");
	expect_reject("firefox", "{\"meta\":{\"preprocessedProfileVersion\":48},\"threads\":[{}]}",
		      57, "missing");
	expect_reject("gperftools", "\0\0\0\0", 4, "truncated header");

	/* every prefix and a bit flip at every byte of each small export: accepted or one line,
	 * never a crash or an out-of-bounds read (the sanitizer builds check that) */
	for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); t++) {
		size_t len;
		unsigned char *buf = exported(trips[t].write, &runs[0], &len);
		const struct import_format *fmt = import_format_find(trips[t].format);
		size_t step = len / 400 + 1;
		for (size_t cut = 0; cut < len; cut += step) {
			unsigned char *copy = malloc(cut + 1);
			struct sb_run r;
			memcpy(copy, buf, cut);
			if (import_buffer(fmt, copy, cut, &r, err, sizeof(err)) == 0)
				run_free(&r);
			else
				assert_true(err[0] && !strchr(err, '\n'));
			if (cut < len) {
				unsigned char *flip = malloc(len);
				memcpy(flip, buf, len);
				flip[cut] ^= 0x5a;
				if (import_buffer(fmt, flip, len, &r, err, sizeof(err)) == 0)
					run_free(&r);
				else
					assert_true(err[0] && !strchr(err, '\n'));
				free(flip);
			}
			free(copy);
		}
		free(buf);
	}
}

/* `sampbench import`: a hostile file is one line on stderr and exit 2. */
static void test_cli(void **state)
{
	(void)state;
	char path[700], cmd[2048], line[512];

	snprintf(path, sizeof(path), "%s/junk.pb.gz", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("\x1f\x8b not really gzip", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s import %s 2>&1 >/dev/null; echo \"rc=$?\"", bin, path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int lines = 0, rc = -1;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "rc=%d", &rc) == 1)
			continue;
		lines++;
		assert_non_null(strstr(line, "cannot import"));
		assert_non_null(strstr(line, "as pprof"));
	}
	pclose(p);
	assert_int_equal(lines, 1);
	assert_int_equal(rc, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_go_writer),
		cmocka_unit_test(test_perf_script),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
