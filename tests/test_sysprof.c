/* test_sysprof.c - the sysprof capture importer (analysis/import_sysprof.c): a real capture
 * reads to the stacks an independent reader finds in it, only its spawned command's
 * process kept; a capture without a spawned command keeps every process, names an address
 * it has no name for by the address and marks kernel frames; hostile captures (every
 * prefix, bit flips, each bad field) are refused with one line, through the API and
 * `sampbench import` (exit 2).
 * tests/data/sysprof-hotspot.syscap is `sysprof-cli -- sampbench target hotspot -t 2 -d 1`
 * (sysprof 3.46, the whole system recorded) cut to 9.7 KB: its header, the profiler's
 * metadata (without the environment), the PROCESS frames of the target, of a decoy (another
 * `sampbench target` that ran beside it) and of sysprof-cli (whose command line holds the
 * target's after "--"), 26 samples of the target (its 2 workers and its main thread, 2 of
 * them with kernel frames), 24 of the decoy, and the __symbols__ entries of the two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export.h"
#include "analysis/import.h"
#include "analysis/symbolize.h"
#include "tests/support/sbrun.h"

#define FIXTURE "tests/data/sysprof-hotspot.syscap"

static unsigned char *fixture(size_t *len)
{
	char err[256];
	unsigned char *buf = import_read_file(FIXTURE, 1 << 20, len, err, sizeof(err));

	if (!buf)
		fail_msg("%s", err);
	return buf;
}

/* buf read as a sysprof capture, as folded stacks with thread roots (malloc'd). */
static char *folded(const unsigned char *buf, size_t len, size_t *nsamples)
{
	struct sb_run r;
	char err[256], *text = NULL;
	size_t tlen = 0;

	if (import_buffer(import_format_find("sysprof"), buf, len, &r, err, sizeof(err)) != 0)
		fail_msg("import failed: %s", err);
	FILE *f = open_memstream(&text, &tlen);
	assert_non_null(f);
	assert_int_equal(export_folded(f, &r, 1, EXPORT_THREAD), (int64_t)r.nsamples);
	fclose(f);
	*nsamples = r.nsamples;
	run_free(&r);
	return text;
}

/* The expected stacks are what tests/data's capture holds by an independent reader (a
 * Python walk of the frames and the symbol table, written from sysprof-capture-types.h and
 * sysprof-symbol-map.c), not this importer's output. */
static void test_real_capture(void **state)
{
	size_t len, n;
	unsigned char *buf = fixture(&len);
	(void)state;

	assert_ptr_equal(import_detect(buf, len), import_format_find("sysprof"));
	char *got = folded(buf, len, &n);
	/* the slot entry function of each thread (0x562eb312feae, ...febe) is outside .text:
	 * sysprof named it "In file /work/main/build/sampbench", its name for no symbol, so it
	 * stays an address */
	const char *p6 = "start_thread;trampoline;wl_trampoline;0x562eb312feae;hotspot_thread;";
	const char *p7 = "start_thread;trampoline;wl_trampoline;0x562eb312febe;hotspot_thread;";
	char want[2048];
	snprintf(want, sizeof(want),
		 "thread-0/25103;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];"
		 "x64_sys_call_[k];__x64_sys_exit_group_[k];do_group_exit_[k];do_exit_[k];"
		 "__mmput_[k];exit_mmap_[k];unmap_vmas_[k];unmap_page_range_[k] 1\n"
		 "thread-0/25106;%shotspot_30 5\n"
		 "thread-0/25106;%shotspot_60 7\n"
		 "thread-0/25107;%shotspot_30 5\n"
		 "thread-0/25107;%shotspot_60 7\n"
		 "thread-0/25107;%shotspot_60;asm_sysvec_apic_timer_interrupt_[k];"
		 "irqentry_exit_to_user_mode_[k] 1\n", p6, p6, p7, p7, p7);
	assert_string_equal(got, want);
	assert_int_equal(n, 26); /* the decoy's 24 samples are not the spawned command's */
	free(got);
	free(buf);
}

/* A capture builder: frames appended to a buffer after a 256-byte header. */
struct cap {
	unsigned char b[4096];
	size_t n;
};

static void put(struct cap *c, const void *p, size_t n)
{
	assert_true(c->n + n <= sizeof(c->b));
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void put64(struct cap *c, uint64_t v)
{
	put(c, &v, 8); /* the tests run on little-endian hosts, as the format is here */
}

static void frame_header(struct cap *c, size_t body, int32_t pid, unsigned type)
{
	uint16_t len = (uint16_t)(24 + body);
	int16_t cpu = 0;
	int64_t time = 1000;
	uint32_t t = type, pad = 0;
	put(c, &len, 2);
	put(c, &cpu, 2);
	put(c, &pid, 4);
	put(c, &time, 8);
	put(c, &t, 4);
	put(c, &pad, 4);
}

static void header(struct cap *c)
{
	memset(c, 0, sizeof(*c));
	uint32_t magic = 0xFDCA975Eu;
	memcpy(c->b, &magic, 4);
	c->b[4] = 1;    /* version */
	c->b[5] = 1;    /* little-endian */
	c->n = 256;
}

static void sample(struct cap *c, int32_t pid, int32_t tid, const uint64_t *a, uint16_t n)
{
	uint32_t na = n;
	frame_header(c, 8 + 8u * n, pid, 2);
	put(c, &na, 4);
	put(c, &tid, 4);
	for (uint16_t i = 0; i < n; i++)
		put64(c, a[i]);
}

/* No spawned command: every process's samples; no symbols: addresses stay addresses;
 * perf's context markers split kernel from user frames and are no frames themselves. */
static void test_whole_system(void **state)
{
	struct cap c;
	const uint64_t kern = (uint64_t)-128, user = (uint64_t)-512;
	const uint64_t a[] = { kern, 0xffffffff81000130ull, user, 0x401000, 0x400500 };
	size_t n;
	(void)state;

	header(&c);
	sample(&c, 10, 11, a, 5);
	sample(&c, 20, 21, a + 2, 3);
	char *got = folded(c.b, c.n, &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(got, "thread-0/21;0x400500;0x401000 1\n"));
	free(got);
	/* the kernel frame: a kernel symbol (its name the address), the user ones addresses */
	struct sb_run r;
	char err[256];
	assert_int_equal(import_buffer(import_format_find("sysprof"), c.b, c.n, &r, err,
				       sizeof(err)), 0);
	assert_int_equal(r.samples[0].depth, 3);
	const uint64_t *f = &r.frames[r.samples[0].frame_offset];
	const struct sb_symbol *k = symbol_find(r.symbols, r.nsymbols, f[0]);
	assert_non_null(k);
	assert_true(symbol_is_kernel(k));
	assert_string_equal(k->function, "0xffffffff81000130");
	assert_true(f[1] == 0x401000 && f[2] == 0x400500);
	run_free(&r);
}

/* Every bad capture: -1 and one line saying what. */
static void expect_reject(const void *buf, size_t len, const char *want)
{
	struct sb_run r;
	char err[256] = "";

	if (import_buffer(import_format_find("sysprof"), buf, len, &r, err, sizeof(err)) == 0)
		fail_msg("a bad capture accepted (want '%s')", want);
	if (!err[0] || strchr(err, '\n') || !strstr(err, want))
		fail_msg("error '%s', want one line with '%s'", err, want);
	assert_null(r.samples);
}

static void test_hostile(void **state)
{
	struct cap c;
	const uint64_t a[] = { 0x401000 };
	size_t len;
	char err[256];
	(void)state;

	header(&c);
	expect_reject(c.b, 100, "truncated header");
	c.b[0] ^= 1;
	expect_reject(c.b, c.n, "no sysprof capture magic");
	header(&c);
	c.b[4] = 2;
	expect_reject(c.b, c.n, "capture version 2");
	header(&c);
	c.b[5] = 0;
	expect_reject(c.b, c.n, "big-endian");
	header(&c);
	sample(&c, 1, 1, a, 1);
	expect_reject(c.b, c.n - 1, "frame of 40 bytes");
	expect_reject(c.b, c.n + 10 > sizeof(c.b) ? c.n : c.n + 10, "truncated frame header");
	c.b[256] = 10; /* a frame shorter than its header */
	expect_reject(c.b, c.n, "frame of 10 bytes");
	header(&c);
	sample(&c, 1, 1, a, 1);
	c.b[256 + 24] = 9; /* 9 addresses in room for 1 */
	expect_reject(c.b, c.n, "sample of 9 addresses");

	/* the real capture with its target's PROCESS frame renamed (the command line starts
	 * its frame's body, after the header's zero padding; sysprof-cli's holds it after
	 * "--"): no process to keep */
	unsigned char *buf = fixture(&len);
	unsigned char *p = memmem(buf, len, "\0\0\0\0/work/main/build/sampbench target hotspot",
				  45);
	assert_non_null(p);
	p[5] = 'W';
	expect_reject(buf, len, "no process of the spawned command '/work/main/build/sampbench "
		      "target hotspot -t 2 -d 1'");
	p[5] = 'w';

	/* every prefix and a bit flip at every byte: accepted or one line, never a read
	 * outside the buffer (the sanitizer builds check that) */
	for (size_t cut = 0; cut < len; cut++) {
		struct sb_run r;
		unsigned char *copy = malloc(cut + 1), *flip = malloc(len);
		memcpy(copy, buf, cut);
		memcpy(flip, buf, len);
		flip[cut] ^= 0x5a;
		if (import_buffer(import_format_find("sysprof"), copy, cut, &r, err, sizeof(err)) == 0)
			run_free(&r);
		else
			assert_true(err[0] && !strchr(err, '\n'));
		if (import_buffer(import_format_find("sysprof"), flip, len, &r, err, sizeof(err)) == 0)
			run_free(&r);
		else
			assert_true(err[0] && !strchr(err, '\n'));
		free(copy);
		free(flip);
	}
	free(buf);
}

/* `sampbench import` tells the format by the magic and reads the capture; a cut one is
 * one line and exit 2. */
static void test_cli(void **state)
{
	char out[8192], err[512], cut[600];
	size_t len;
	(void)state;

	assert_int_equal(sbrun(sbrun_binary, ARGS("import", "-s", FIXTURE), out, sizeof(out), err,
			       sizeof(err)), 0);
	assert_non_null(strstr(out, "samples 26 threads 3"));
	unsigned char *buf = fixture(&len);
	snprintf(cut, sizeof(cut), "%s/cut.syscap", sbrun_dir);
	FILE *f = fopen(cut, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, 300, f), 300);
	fclose(f);
	free(buf);
	assert_int_equal(sbrun(sbrun_binary, ARGS("import", cut), out, sizeof(out), err,
			       sizeof(err)), 2);
	assert_non_null(strstr(err, "as sysprof"));
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_capture),
		cmocka_unit_test(test_whole_system),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, sbrun_group_setup, sbrun_group_teardown);
}
