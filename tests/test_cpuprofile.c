/* test_cpuprofile.c - the gperftools cpu profile parser and writer: hand-made good and bad
 * files, write -> parse round trips, and agreement with google-pprof on real profiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/cpuprofile.h"

#define MAXW 8192

/* A profile under construction, in words. */
struct pbuf {
	uint64_t w[MAXW];
	size_t n;
};

static void put(struct pbuf *b, uint64_t v)
{
	assert_true(b->n < MAXW);
	b->w[b->n++] = v;
}

static void header(struct pbuf *b, uint64_t period)
{
	b->n = 0;
	put(b, 0);
	put(b, 3);
	put(b, 0);
	put(b, period);
	put(b, 0);
}

static void record(struct pbuf *b, uint64_t count, uint64_t depth, uint64_t first_pc)
{
	put(b, count);
	put(b, depth);
	for (uint64_t i = 0; i < depth; i++)
		put(b, first_pc + i * 0x10);
}

static void trailer(struct pbuf *b)
{
	put(b, 0);
	put(b, 1);
	put(b, 0);
}

/* Parses b and expects failure with an error containing want. */
static void expect_error(const void *buf, size_t len, const char *want)
{
	struct cpuprofile p;
	char err[256] = "";
	assert_int_equal(cpuprofile_parse(buf, len, &p, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_null(strchr(err, '\n'));
}

struct collected {
	size_t n;
	uint64_t counts[256];
	uint32_t depths[256];
	uint64_t pcs[256][2]; /* first and last */
};

static int collect(const struct cpuprofile_record *rec, void *arg)
{
	struct collected *c = arg;
	if (c->n < 256) {
		c->counts[c->n] = rec->count;
		c->depths[c->n] = rec->depth;
		c->pcs[c->n][0] = rec->pcs[0];
		c->pcs[c->n][1] = rec->pcs[rec->depth - 1];
	}
	c->n++;
	return 0;
}

static void test_one_record(void **state)
{
	(void)state;
	static struct pbuf b;
	struct cpuprofile p;
	struct collected c = { 0 };
	char err[256];

	header(&b, 10000);
	record(&b, 3, 2, 0x401000);
	trailer(&b);
	assert_int_equal(cpuprofile_parse(b.w, b.n * 8, &p, err, sizeof(err)), 0);
	assert_int_equal(p.period_us, 10000);
	assert_int_equal(p.records, 1);
	assert_int_equal(p.total_count, 3);
	assert_int_equal(p.max_depth, 2);
	assert_int_equal(p.maps_len, 0);
	assert_int_equal(cpuprofile_foreach(&p, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.counts[0], 3);
	assert_int_equal(c.depths[0], 2);
	assert_int_equal(c.pcs[0][0], 0x401000);
	assert_int_equal(c.pcs[0][1], 0x401010);
}

static void test_many_records_and_maps(void **state)
{
	(void)state;
	static struct pbuf b;
	static const char maps[] =
		"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/dbus-daemon\n"
		"7f0a1c000000-7f0a1c021000 rw-p 00000000 00:00 0\n";
	static unsigned char file[MAXW * 8 + sizeof(maps)];
	struct cpuprofile p;
	struct collected c = { 0 };
	char err[256];
	uint64_t total = 0;

	header(&b, 250);
	for (uint64_t i = 0; i < 100; i++) {
		record(&b, i + 1, 1 + i % 64, 0x400000 + i * 0x1000);
		total += i + 1;
	}
	trailer(&b);
	memcpy(file, b.w, b.n * 8);
	memcpy(file + b.n * 8, maps, sizeof(maps) - 1);
	size_t len = b.n * 8 + sizeof(maps) - 1;

	assert_int_equal(cpuprofile_parse(file, len, &p, err, sizeof(err)), 0);
	assert_int_equal(p.records, 100);
	assert_int_equal(p.total_count, total);
	assert_int_equal(p.max_depth, 64);
	assert_int_equal(p.maps_len, sizeof(maps) - 1);
	assert_memory_equal(p.maps, maps, p.maps_len);
	assert_int_equal(cpuprofile_foreach(&p, collect, &c), 0);
	assert_int_equal(c.n, 100);
	for (size_t i = 0; i < 100; i++) {
		assert_int_equal(c.counts[i], i + 1);
		assert_int_equal(c.depths[i], 1 + i % 64);
		assert_int_equal(c.pcs[i][0], 0x400000 + i * 0x1000);
	}
}

/* The parser must not assume word alignment: fuzzers and mappings hand it any address. */
static void test_unaligned(void **state)
{
	(void)state;
	static struct pbuf b;
	static unsigned char raw[MAXW * 8 + 8];
	struct cpuprofile p;
	struct collected c = { 0 };
	char err[256];

	header(&b, 1000);
	record(&b, 7, 3, 0x7f0000001000);
	trailer(&b);
	memcpy(raw + 3, b.w, b.n * 8);
	assert_int_equal(cpuprofile_parse(raw + 3, b.n * 8, &p, err, sizeof(err)), 0);
	assert_int_equal(cpuprofile_foreach(&p, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.pcs[0][1], 0x7f0000001020);
}

static void test_zero_records(void **state)
{
	(void)state;
	static struct pbuf b;
	struct cpuprofile p;
	char err[256];

	header(&b, 10000);
	trailer(&b);
	assert_int_equal(cpuprofile_parse(b.w, b.n * 8, &p, err, sizeof(err)), 0);
	assert_int_equal(p.records, 0);
	assert_int_equal(p.total_count, 0);
	assert_int_equal(p.max_depth, 0);
}

static void test_bad_header(void **state)
{
	(void)state;
	static struct pbuf b;

	expect_error(NULL, 0, "truncated header");
	header(&b, 100);
	expect_error(b.w, 39, "truncated header");
	b.w[0] = 1;
	expect_error(b.w, 40, "bad header: words 0-2 are 1 3 0");
	header(&b, 100);
	b.w[1] = 4;
	expect_error(b.w, 40, "bad header");
	header(&b, 100);
	b.w[2] = 1; /* version */
	expect_error(b.w, 40, "bad header");
	header(&b, 0);
	expect_error(b.w, 40, "sampling period 0 us out of range");
	header(&b, 1ull << 33);
	expect_error(b.w, 40, "out of range");
	header(&b, 100);
	b.w[4] = 9;
	expect_error(b.w, 40, "padding word is 9");
	/* byte-swapped and 32-bit headers get their own message */
	header(&b, 100);
	b.w[1] = __builtin_bswap64(3);
	b.w[3] = __builtin_bswap64(100);
	expect_error(b.w, 40, "byte-swapped");
	uint32_t h32[10] = { 0, 3, 0, 10000, 0, 1, 1, 0x1000, 0, 0 };
	expect_error(h32, sizeof(h32), "32-bit");
	/* the text "heap profile" is not a cpu profile */
	static const char text[] = "heap profile:    1:   100 [   1:   100] @ heapprofile\n";
	expect_error(text, sizeof(text) - 1, "bad header");
}

static void test_truncated_record(void **state)
{
	(void)state;
	static struct pbuf b;

	header(&b, 100);
	record(&b, 1, 5, 0x1000);
	trailer(&b);
	/* cut inside the pcs, inside the trailer, and between count and depth */
	expect_error(b.w, (5 + 2 + 3) * 8, "truncated record at byte 40: depth 5 needs 56 bytes");
	expect_error(b.w, (5 + 7 + 2) * 8, "truncated record at byte 96");
	expect_error(b.w, (5 + 1) * 8, "truncated record at byte 40: 8 bytes left");
	/* a length that is not a whole number of words */
	expect_error(b.w, (5 + 7) * 8 + 20, "truncated record at byte 96");
}

static void test_bad_depth(void **state)
{
	(void)state;
	static struct pbuf b;

	header(&b, 100);
	record(&b, 1, 0, 0);
	trailer(&b);
	expect_error(b.w, b.n * 8, "record at byte 40 has depth 0");

	header(&b, 100);
	put(&b, 1);
	put(&b, CPUPROFILE_MAX_DEPTH + 1);
	for (int i = 0; i < CPUPROFILE_MAX_DEPTH + 1; i++)
		put(&b, 0x1000);
	trailer(&b);
	expect_error(b.w, b.n * 8, "has depth 1025, limit 1024");

	/* a depth whose byte size would overflow size_t must not wrap the bounds check */
	header(&b, 100);
	put(&b, 1);
	put(&b, UINT64_MAX / 8 + 3);
	put(&b, 0x1000);
	trailer(&b);
	expect_error(b.w, b.n * 8, "limit 1024");

	/* exactly the limit is fine */
	struct cpuprofile p;
	char err[256];
	header(&b, 100);
	record(&b, 2, CPUPROFILE_MAX_DEPTH, 0x1000);
	trailer(&b);
	assert_int_equal(cpuprofile_parse(b.w, b.n * 8, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_depth, CPUPROFILE_MAX_DEPTH);
}

static void test_bad_count(void **state)
{
	(void)state;
	static struct pbuf b;

	header(&b, 100);
	record(&b, 0, 2, 0x1000);
	trailer(&b);
	expect_error(b.w, b.n * 8, "has count 0 and is not the 0 1 0 trailer");

	header(&b, 100);
	record(&b, UINT64_MAX, 1, 0x1000);
	record(&b, 1, 1, 0x2000);
	trailer(&b);
	expect_error(b.w, b.n * 8, "count overflow at byte 64");

	header(&b, 100);
	record(&b, 5, 2, 0);
	trailer(&b);
	expect_error(b.w, b.n * 8, "zero leaf pc");
}

static void test_missing_trailer(void **state)
{
	(void)state;
	static struct pbuf b;

	header(&b, 100);
	expect_error(b.w, b.n * 8, "missing trailer after 0 records");
	record(&b, 4, 3, 0x1000);
	record(&b, 4, 3, 0x2000);
	expect_error(b.w, b.n * 8, "missing trailer after 2 records at byte 120");
}

static int stop_at_second(const struct cpuprofile_record *rec, void *arg)
{
	(void)rec;
	int *n = arg;
	return ++*n == 2 ? 42 : 0;
}

static void test_foreach_stops(void **state)
{
	(void)state;
	static struct pbuf b;
	struct cpuprofile p;
	char err[256];
	int n = 0;

	header(&b, 100);
	for (int i = 0; i < 5; i++)
		record(&b, 1, 1, 0x1000);
	trailer(&b);
	assert_int_equal(cpuprofile_parse(b.w, b.n * 8, &p, err, sizeof(err)), 0);
	assert_int_equal(cpuprofile_foreach(&p, stop_at_second, &n), 42);
	assert_int_equal(n, 2);
}

static void test_round_trip(void **state)
{
	(void)state;
	static uint64_t pcs[64][CPUPROFILE_MAX_DEPTH];
	struct cpuprofile_record recs[64];
	static const char maps[] = "55d0c0000000-55d0c0001000 r-xp 00000000 fe:01 42 /x\n";
	char *mem = NULL;
	size_t len = 0;
	struct cpuprofile p;
	struct collected c = { 0 };
	char err[256];
	uint64_t total = 0;

	for (int i = 0; i < 64; i++) {
		uint32_t depth = i == 63 ? CPUPROFILE_MAX_DEPTH : (uint32_t)(1 + i * 7 % 200);
		for (uint32_t k = 0; k < depth; k++)
			pcs[i][k] = 0x55d0c0000000ull + (uint64_t)i * 0x100 + k;
		recs[i] = (struct cpuprofile_record){ (uint64_t)i * 1000 + 1, depth, pcs[i] };
		total += recs[i].count;
	}
	FILE *f = open_memstream(&mem, &len);
	assert_non_null(f);
	assert_int_equal(cpuprofile_write(f, 4000, recs, 64, maps, sizeof(maps) - 1), 0);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(cpuprofile_parse(mem, len, &p, err, sizeof(err)), 0);
	assert_int_equal(p.period_us, 4000);
	assert_int_equal(p.records, 64);
	assert_int_equal(p.total_count, total);
	assert_int_equal(p.max_depth, CPUPROFILE_MAX_DEPTH);
	assert_int_equal(p.maps_len, sizeof(maps) - 1);
	assert_memory_equal(p.maps, maps, p.maps_len);
	assert_int_equal(cpuprofile_foreach(&p, collect, &c), 0);
	assert_int_equal(c.n, 64);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(c.counts[i], recs[i].count);
		assert_int_equal(c.depths[i], recs[i].depth);
		assert_int_equal(c.pcs[i][0], pcs[i][0]);
		assert_int_equal(c.pcs[i][1], pcs[i][recs[i].depth - 1]);
	}
	free(mem);
}

/* The writer refuses what the parser would reject, so it cannot produce a bad file. */
static void test_writer_refuses(void **state)
{
	(void)state;
	uint64_t pcs[2] = { 0x1000, 0x2000 }, zero[1] = { 0 };
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	assert_non_null(f);

	errno = 0;
	assert_int_equal(cpuprofile_write_header(f, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cpuprofile_write_record(f, 0, pcs, 2), -1);
	assert_int_equal(cpuprofile_write_record(f, 1, pcs, 0), -1);
	assert_int_equal(cpuprofile_write_record(f, 1, pcs, CPUPROFILE_MAX_DEPTH + 1), -1);
	assert_int_equal(cpuprofile_write_record(f, 1, zero, 1), -1);
	assert_int_equal(cpuprofile_write_record(f, 1, NULL, 1), -1);
	struct cpuprofile_record big[2] = { { UINT64_MAX, 1, pcs }, { 1, 1, pcs } };
	errno = 0;
	assert_int_equal(cpuprofile_write(f, 100, big, 2, NULL, 0), -1);
	assert_int_equal(errno, EOVERFLOW);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(len, 0); /* nothing was written */
	free(mem);
}

/* --- agreement with google-pprof --- */

static int have_pprof(void)
{
	return system("command -v google-pprof >/dev/null 2>&1") == 0;
}

/* Runs google-pprof --text on file against binary and returns its "Total: N samples", or -1. */
static long long pprof_total(const char *binary, const char *file)
{
	char cmd[1024];
	char line[512];
	long long total = -1;

	snprintf(cmd, sizeof(cmd), "google-pprof --text '%s' '%s' 2>/dev/null", binary, file);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "Total: %lld samples", &total) == 1)
			break;
	while (fgets(line, sizeof(line), p))
		;
	pclose(p);
	return total;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		rewind(f);
		buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
		if (buf)
			*len = fread(buf, 1, (size_t)n, f);
	}
	fclose(f);
	return buf;
}

static void check_against_pprof(const char *path)
{
	char err[256];
	struct cpuprofile p;
	size_t len = 0;
	unsigned char *buf = slurp(path, &len);
	assert_non_null(buf);
	if (cpuprofile_parse(buf, len, &p, err, sizeof(err)) != 0)
		fail_msg("cannot parse %s: %s", path, err);
	long long want = pprof_total("/proc/self/exe", path);
	if (want < 0)
		fail_msg("google-pprof printed no Total line for %s", path);
	print_message("profile %s: %llu records, %llu samples, pprof says %lld\n", path,
		      (unsigned long long)p.records, (unsigned long long)p.total_count, want);
	assert_int_equal(p.total_count, (unsigned long long)want);
	free(buf);
}

static __attribute__((noinline)) uint64_t spin(uint64_t n)
{
	volatile uint64_t x = 0;
	for (uint64_t i = 0; i < n; i++)
		x += i * i;
	return x;
}

/* A real profile: a child loads libprofiler (the way the sampler does) and spins on CPU. */
static void test_real_profile_matches_pprof(void **state)
{
	(void)state;
	char path[] = "/tmp/sampbench-test-cpuprofile-XXXXXX";
	int status;

	if (!have_pprof()) {
		print_message("skipped: google-pprof not installed\n");
		skip();
	}
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsetenv("CPUPROFILE");
		setenv("CPUPROFILE_FREQUENCY", "1000", 1);
		void *h = dlopen("libprofiler.so.0", RTLD_NOW);
		if (!h)
			_exit(77);
		int (*start)(const char *, const void *);
		void (*stop)(void);
		*(void **)&start = dlsym(h, "ProfilerStartWithOptions");
		*(void **)&stop = dlsym(h, "ProfilerStop");
		if (!start || !stop || !start(path, NULL))
			_exit(3);
		/* enough CPU work for tens of ticks; the count is not what is tested */
		struct timespec t0, t1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		do {
			spin(1000000);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) <
			 300000000L);
		if (!freopen("/dev/null", "w", stderr)) /* the PROFILE: line */
			_exit(4);
		stop();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		unlink(path);
		print_message("skipped: libprofiler.so.0 not loadable\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	check_against_pprof(path);
	unlink(path);
}

/* A written profile with PCs of this binary and its real maps reads the same in pprof. */
static void test_written_profile_matches_pprof(void **state)
{
	(void)state;
	char path[] = "/tmp/sampbench-test-cpuprofile-XXXXXX";
	uint64_t a = (uint64_t)(uintptr_t)spin + 4, b = (uint64_t)(uintptr_t)check_against_pprof + 8;
	uint64_t pcs0[2] = { a, b }, pcs1[1] = { b };
	struct cpuprofile_record recs[2] = { { 17, 2, pcs0 }, { 5, 1, pcs1 } };
	size_t mlen = 0;

	if (!have_pprof()) {
		print_message("skipped: google-pprof not installed\n");
		skip();
	}
	char *maps = (char *)slurp("/proc/self/maps", &mlen);
	assert_non_null(maps);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(cpuprofile_write(f, 10000, recs, 2, maps, mlen), 0);
	assert_int_equal(fclose(f), 0);
	check_against_pprof(path);
	unlink(path);
	free(maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_record),
		cmocka_unit_test(test_many_records_and_maps),
		cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_zero_records),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_truncated_record),
		cmocka_unit_test(test_bad_depth),
		cmocka_unit_test(test_bad_count),
		cmocka_unit_test(test_missing_trailer),
		cmocka_unit_test(test_foreach_stops),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_writer_refuses),
		cmocka_unit_test(test_real_profile_matches_pprof),
		cmocka_unit_test(test_written_profile_matches_pprof),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
