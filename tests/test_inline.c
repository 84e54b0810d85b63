/* test_inline.c - inline chains: a PC inside an always_inline function names it and the
 * function it was inlined into (the symbolizer, from this binary's DWARF), the chain
 * survives the HDF5 `symbol_inlines` round trip (and a file without it reads with none),
 * `go tool pprof` reads a pprof export's Location as the inlined function above its caller,
 * the folded, speedscope and Firefox exports give inlined frames frames of their own, and
 * `sampbench top` names the inlined function with its caller.
 *
 * The PC is taken inside the inlined body by the body itself (an instruction that reads
 * its own address), and the call's line by __LINE__, so the truth does not come from the
 * DWARF the symbolizer reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/export.h"
#include "analysis/import.h"
#include "analysis/symbolize.h"
#include "core/run.h"
#include "results/h5io.h"
#include "tests/support/go_pprof.h"
#include "tests/support/sbrun.h"

static volatile uint64_t inner_pc;   /* an address inside hot_inner's inlined body */
static volatile uint64_t outer_ret;  /* where hot_outer returns to: a PC in its caller */
static volatile uint64_t sink;
static int hot_call_line;            /* the line of hot_outer's call of hot_inner */

/* Sets pc to the address of an instruction at this point of the code (inside whatever
 * was inlined here). */
#if defined(__x86_64__)
#define HERE(pc) __asm__ volatile("1: leaq 1b(%%rip), %0" : "=r"(pc))
#elif defined(__aarch64__)
#define HERE(pc) __asm__ volatile("adr %0, ." : "=r"(pc))
#else
#define HERE(pc) ((pc) = 0)
#endif

static volatile uint64_t leaf_pc; /* an address inside hot_leaf, inlined into hot_inner */
static int leaf_call_line;        /* the line of hot_inner's call of hot_leaf */

static inline __attribute__((always_inline)) uint64_t hot_leaf(uint64_t x)
{
	uint64_t pc;
	HERE(pc);
	leaf_pc = pc;
	return x ^ (x >> 29);
}

static volatile uint64_t call_ret; /* where callee returns to: right after its call, the
				     * last instruction of hot_inner's inlined body */

static __attribute__((noinline)) uint64_t callee(uint64_t x)
{
	call_ret = (uint64_t)__builtin_return_address(0);
	return x * 3;
}

static inline __attribute__((always_inline)) uint64_t hot_inner(uint64_t x, int n)
{
	uint64_t pc;
	HERE(pc);
	inner_pc = pc;
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	leaf_call_line = __LINE__ + 1;
	return callee(hot_leaf(x));
}

static __attribute__((noinline)) uint64_t hot_outer(uint64_t x)
{
	outer_ret = (uint64_t)__builtin_return_address(0);
	hot_call_line = __LINE__ + 1;
	x += hot_inner(x ^ sink, 1000);
	sink = x;
	return x;
}

static char bin[512];
static char dir[] = "/tmp/sbinline.XXXXXX";

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("BUILD");

	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	hot_outer(1);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* 1 when s ends with suffix. */
static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* (a) The symbolizer: the PC inside the inlined body is in hot_outer (its symbol) with the
 * chain [hot_inner], called at hot_call_line of this file; a PC in hot_leaf, inlined into
 * hot_inner, has [hot_leaf, hot_inner]; hot_outer's first instruction and a PC in its
 * caller have no chain. Mutations: a chain without the abstract origin's
 * name ("?", fails), the call site's line taken from DW_AT_decl_line (fails), every scope
 * kept instead of the inlined subroutines only (fails: a chain longer than one), the chain
 * read from dwarf_getscopes alone (fails: hot_leaf's chain is [hot_leaf]). */
static void test_symbolize_chain(void **state)
{
	(void)state;
	struct sb_inline_frame c[SB_INLINE_MAX_DEPTH];
	struct sb_symbol sym;
	struct sb_symbolizer *s = symbolizer_new();

#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
	skip(); /* chains come from libdw; the PC from an x86_64 or arm64 instruction */
#endif
	assert_non_null(s);
	assert_int_equal(symbolize(s, inner_pc, &sym), 1);
	assert_string_equal(sym.function, "hot_outer");
	assert_int_equal(symbolize_inlines(s, inner_pc, c, SB_INLINE_MAX_DEPTH), 1);
	assert_int_equal(c[0].pc, inner_pc);
	assert_int_equal(c[0].depth, 0);
	assert_string_equal(c[0].function, "hot_inner");
	assert_int_equal(c[0].call_line, hot_call_line);
	if (!ends_with(c[0].call_file, "test_inline.c"))
		fail_msg("call file '%s' is not test_inline.c", c[0].call_file);
	/* nested: hot_leaf inlined into hot_inner inlined into hot_outer */
	assert_int_equal(symbolize(s, leaf_pc, &sym), 1);
	assert_string_equal(sym.function, "hot_outer");
	assert_int_equal(symbolize_inlines(s, leaf_pc, c, SB_INLINE_MAX_DEPTH), 2);
	assert_string_equal(c[0].function, "hot_leaf");
	assert_int_equal(c[0].call_line, leaf_call_line);
	assert_string_equal(c[1].function, "hot_inner");
	assert_int_equal(c[1].depth, 1);
	assert_int_equal(c[1].call_line, hot_call_line);
	assert_int_equal(symbolize_inlines(s, leaf_pc, c, 1), 1); /* max is kept */
	assert_int_equal(symbolize_inlines(s, (uint64_t)(uintptr_t)hot_outer, c,
					   SB_INLINE_MAX_DEPTH), 0);
	assert_int_equal(symbolize_inlines(s, outer_ret, c, SB_INLINE_MAX_DEPTH), 0);
	symbolizer_free(s);
}

/* A run of 4 samples: 2 with the leaf in hot_inner's inlined body, 1 in hot_leaf's (inlined
 * into hot_inner), 1 at hot_outer's entry, each called from hot_outer's caller (setup);
 * symbolized by this process. */
static struct sb_run inline_run(struct sb_sample samples[4], uint64_t frames[8])
{
	struct sb_run r = { .run_id = 0, .sampler = "ctimer", .workload = "inline",
			    .threads = 1, .hz = 100, .samples = samples, .nsamples = 4,
			    .frames = frames, .nframes = 8 };
	struct sb_symbolizer *s = symbolizer_new();

	for (int i = 0; i < 4; i++) {
		samples[i] = (struct sb_sample){ .tid = 100, .thread_index = -1, .depth = 2,
						 .time_ns = 1000000 * (uint64_t)(i + 1),
						 .weight_ns = 1e7, .frame_offset = 2 * (uint64_t)i };
		frames[2 * i] = i < 2 ? inner_pc : i == 2 ? leaf_pc : (uint64_t)(uintptr_t)hot_outer;
		frames[2 * i + 1] = outer_ret;
	}
	assert_non_null(s);
	assert_int_equal(symbolize_frames(s, frames, 8, &r.symbols, &r.nsymbols), 0);
	assert_int_equal(symbolize_run_inlines(s, &r), 0);
	symbolizer_free(s);
	return r;
}

/* A return address is looked up at the call before it: a sample in callee, called as the
 * last thing hot_inner's inlined body does, has hot_inner between hot_outer and callee.
 * The premise is checked first: call_ret itself is past the inlined body (this compiler
 * and -O2), the call before it inside. Mutation: every PC looked up as it is (fails:
 * call_ret has no chain). */
static void test_caller_frame(void **state)
{
	(void)state;
	struct sb_inline_frame c[SB_INLINE_MAX_DEPTH];
	struct sb_sample sample = { .tid = 100, .thread_index = -1, .depth = 3, .weight_ns = 1e7 };
	uint64_t frames[3] = { (uint64_t)(uintptr_t)callee, call_ret, outer_ret };
	struct sb_run r = { .sampler = "ctimer", .workload = "inline", .threads = 1, .hz = 100,
			    .samples = &sample, .nsamples = 1, .frames = frames, .nframes = 3 };
	struct sb_symbolizer *s = symbolizer_new();
	size_t k, len;
	char *folded = NULL;

#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
	skip();
#endif
	assert_non_null(s);
	assert_int_equal(symbolize_inlines(s, call_ret, c, SB_INLINE_MAX_DEPTH), 0);
	assert_int_equal(symbolize_inlines(s, call_ret - 1, c, SB_INLINE_MAX_DEPTH), 1);
	assert_int_equal(symbolize_frames(s, frames, 3, &r.symbols, &r.nsymbols), 0);
	assert_int_equal(symbolize_run_inlines(s, &r), 0);
	const struct sb_inline_frame *f = inline_find(r.inlines, r.ninlines, call_ret, &k);
	assert_int_equal(k, 1);
	assert_int_equal(f->pc, call_ret);
	assert_string_equal(f->function, "hot_inner");
	assert_null(inline_find(r.inlines, r.ninlines, (uint64_t)(uintptr_t)callee, &k));
	FILE *out = open_memstream(&folded, &len);
	assert_non_null(out);
	assert_int_equal(export_folded(out, &r, 1, 0), 1);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(folded, "setup;hot_outer;hot_inner;callee 1\n");
	free(folded);
	free(r.symbols);
	free(r.inlines);
	symbolizer_free(s);
}

/* Writes r to path (overwriting). */
static void write_h5(const char *path, const struct sb_run *r)
{
	struct sb_host host;
	char err[512] = "";

	memset(&host, 0, sizeof(host));
	snprintf(host.host, sizeof(host.host), "testhost");
	struct sb_h5 *f = h5_create(path, &host, 1, err, sizeof(err));
	if (!f)
		fail_msg("%s", err);
	assert_int_equal(h5_append_run(f, r), 0);
	assert_int_equal(h5_close(f), 0);
}

/* (b) HDF5: the chain reads back as written; without `symbol_inlines` (an older file) the
 * run reads with no inline frames; rows out of depth order are refused in one line.
 * Mutations: the writer leaving out `symbol_inlines` (fails: 0 rows read), the reader's
 * order check removed (fails: the damaged file reads). */
static void test_h5_round_trip(void **state)
{
	(void)state;
	struct sb_sample samples[4];
	uint64_t frames[8];
	struct sb_run r = inline_run(samples, frames), *out = NULL;
	char path[600], err[512];
	size_t n = 0;

#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
	skip();
#endif
	assert_int_equal(r.ninlines, 3); /* inner_pc: 1 frame, leaf_pc: 2 */
	snprintf(path, sizeof(path), "%s/inline.h5", dir);
	write_h5(path, &r);
	assert_int_equal(h5_read(path, NULL, &out, &n, 1, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].ninlines, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct sb_inline_frame *a = &r.inlines[i], *b = &out[0].inlines[i];
		assert_int_equal(b->pc, a->pc);
		assert_int_equal(b->depth, a->depth);
		assert_int_equal(b->call_line, a->call_line);
		assert_string_equal(b->function, a->function);
		assert_string_equal(b->call_file, a->call_file);
	}
	size_t k;
	const struct sb_inline_frame *c = inline_find(out[0].inlines, 3, leaf_pc, &k);
	assert_int_equal(k, 2);
	assert_string_equal(c[0].function, "hot_leaf");
	assert_string_equal(c[1].function, "hot_inner");
	c = inline_find(out[0].inlines, 3, inner_pc, &k);
	assert_int_equal(k, 1);
	assert_string_equal(c[0].function, "hot_inner");
	assert_null(inline_find(out[0].inlines, 3, outer_ret, &k));
	assert_int_equal(k, 0);
	run_free(&out[0]);
	free(out);

	/* an older file: no `symbol_inlines` */
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	assert_true(file >= 0);
	assert_true(H5Ldelete(file, "run_000000/symbol_inlines", H5P_DEFAULT) >= 0);
	H5Fclose(file);
	assert_int_equal(h5_read(path, NULL, &out, &n, 1, err, sizeof(err)), 0);
	assert_int_equal(out[0].ninlines, 0);
	assert_int_equal(out[0].nsymbols, r.nsymbols);
	run_free(&out[0]);
	free(out);

	/* a chain that does not start at depth 0 */
	r.inlines[0].depth = 1;
	write_h5(path, &r);
	assert_int_equal(h5_read(path, NULL, &out, &n, 1, err, sizeof(err)), -1);
	if (!strstr(err, "symbol_inlines out of order") || strchr(err, '\n'))
		fail_msg("want one line on symbol_inlines out of order, got: %s", err);
	free(r.symbols);
	free(r.inlines);
}

/* The traces of `go tool pprof -traces` output whose frames, leaf first and joined by ';',
 * are exactly want. A trace's first frame follows its value (10 columns and 3 spaces),
 * the others 13 spaces; a line of dashes ends it. */
static int count_traces(const char *text, const char *want)
{
	char trace[4096] = "";
	size_t len = 0;
	int n = 0;

	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		int value = ll > 13 && l[9] >= '0' && l[9] <= '9' && strncmp(l + 10, "   ", 3) == 0;
		int more = ll > 13 && strspn(l, " ") == 13;
		if (strncmp(l, "-----", 5) == 0) {
			n += len && strcmp(trace, want) == 0;
			len = 0;
			trace[0] = 0;
		} else if ((value || (more && len)) && len + ll < sizeof(trace)) {
			len += (size_t)snprintf(trace + len, sizeof(trace) - len, "%s%.*s",
						len ? ";" : "", (int)(ll - 13), l + 13);
		}
		l += ll + (nl != NULL);
	}
	return n;
}

/* (c) pprof read by `go tool pprof -traces`: the 2 samples in hot_inner's body show
 * "hot_inner (inline)" directly above hot_outer, the one in hot_leaf's shows hot_leaf,
 * then hot_inner, then hot_outer, the one at hot_outer's entry shows hot_outer as its
 * leaf; -raw lists hot_outer's Line at the call's line. Mutations: no inline Lines in the
 * Location (fails: no hot_inner), the containing function's Line written first (fails:
 * hot_outer above hot_inner), the chain written outermost first (fails: hot_inner above
 * hot_leaf). */
static void test_pprof_go(void **state)
{
	(void)state;
	struct sb_sample samples[4];
	uint64_t frames[8];
	struct sb_run r = inline_run(samples, frames);
	static char out[1 << 16];
	char path[600], want[64];

#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
	skip();
#endif
	if (!go_pprof_available("test_pprof_go"))
		skip();
	snprintf(path, sizeof(path), "%s/inline.pb.gz", dir);
	go_pprof(&r, 4, path, ARGS("-traces", "-sample_index=samples"), out, sizeof(out));
	assert_int_equal(count_traces(out, "hot_inner (inline);hot_outer;setup"), 2);
	assert_int_equal(count_traces(out, "hot_leaf (inline);hot_inner (inline);hot_outer;setup"),
			 1);
	assert_int_equal(count_traces(out, "hot_outer;setup"), 1);
	go_pprof_read(path, ARGS("-raw"), out, sizeof(out));
	snprintf(want, sizeof(want), "hot_outer :%d ", hot_call_line);
	if (!strstr(out, want))
		fail_msg("no '%s' in go tool pprof -raw:\n%s", want, out);
	free(r.symbols);
	free(r.inlines);
}

/* What write (an export) writes for r, in a malloc'd buffer of *len bytes. */
static char *exported(int64_t (*write)(FILE *, const struct sb_run *), const struct sb_run *r,
		      size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(write(f, r), (int64_t)r->nsamples);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static int64_t folded_one(FILE *out, const struct sb_run *r)
{
	return export_folded(out, r, 1, 0);
}

/* The frame exports: folded stacks name the inlined frames as frames of their own, below
 * the function holding them, innermost nearest the leaf; speedscope, Firefox and pprof
 * files read back (sampbench's importers, which keep a pprof Location's Lines as frames)
 * to the same stacks. Mutations: folded without the inlined frames (fails), speedscope
 * and Firefox writing only each PC's function (fail: their stacks lack hot_inner). */
static void test_export_frames(void **state)
{
	(void)state;
	struct sb_sample samples[4];
	uint64_t frames[8];
	struct sb_run r = inline_run(samples, frames);
	static const struct {
		const char *format;
		int64_t (*write)(FILE *, const struct sb_run *);
	} trips[] = { { "pprof", export_pprof }, { "speedscope", export_speedscope },
		      { "firefox", export_firefox } };
	const char *want = "setup;hot_outer 1\nsetup;hot_outer;hot_inner 2\n"
			   "setup;hot_outer;hot_inner;hot_leaf 1\n";
	char err[256];
	size_t len;

#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
	skip();
#endif
	char *folded = exported(folded_one, &r, &len);
	assert_string_equal(folded, want);
	free(folded);
	for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); t++) {
		const struct import_format *fmt = import_format_find(trips[t].format);
		struct sb_run back;
		char *buf = exported(trips[t].write, &r, &len);
		assert_non_null(fmt);
		if (import_buffer(fmt, (unsigned char *)buf, len, &back, err, sizeof(err)) < 0)
			fail_msg("%s: %s", trips[t].format, err);
		folded = exported(folded_one, &back, &len);
		if (strcmp(folded, want) != 0)
			fail_msg("%s reads back other stacks:\n%swant\n%s", trips[t].format, folded,
				 want);
		free(folded);
		free(buf);
		run_free(&back);
	}
	free(r.symbols);
	free(r.inlines);
}

/* 1 when the line of text holding key also holds calls and share after it. */
static int row_has(const char *text, const char *key, const char *calls, const char *share)
{
	const char *row = strstr(text, key);
	if (!row)
		return 0;
	const char *end = strchr(row, '\n');
	const char *c = strstr(row, calls), *sh = strstr(row, share);
	return end && c && sh && c < end && sh < end;
}

/* `sampbench top` names the inlined leaf with its caller: 2 of 4 samples on
 * "hot_inner (inlined into hot_outer+0x..)", 1 on "hot_leaf (inlined into hot_inner, into
 * hot_outer+0x..)", 1 on hot_outer itself. Mutation: top ignoring the chain (fails). */
static void test_top(void **state)
{
	(void)state;
	struct sb_sample samples[4];
	uint64_t frames[8];
	struct sb_run r = inline_run(samples, frames);
	static char out[1 << 16];
	char path[600], err[4096];

#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
	skip();
#endif
	snprintf(path, sizeof(path), "%s/top.h5", dir);
	write_h5(path, &r);
	int rc = sbrun(bin, ARGS("top", path), out, sizeof(out), err, sizeof(err));
	if (rc != 0)
		fail_msg("sampbench top failed (%d): %s", rc, err);
	if (!row_has(out, "| hot_inner (inlined into hot_outer+0x", " 2 | ", " 50.0000 %"))
		fail_msg("no row of 2 samples (50 %%) for hot_inner inlined into hot_outer:\n%s",
			 out);
	if (!row_has(out, "| hot_leaf (inlined into hot_inner, into hot_outer+0x", " 1 | ",
		     " 25.0000 %"))
		fail_msg("no row of 1 sample (25 %%) for hot_leaf inlined into hot_inner:\n%s",
			 out);
	if (!row_has(out, "| hot_outer+0x", " 1 | ", " 25.0000 %"))
		fail_msg("no row of 1 sample (25 %%) for hot_outer itself:\n%s", out);
	free(r.symbols);
	free(r.inlines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbolize_chain),
		cmocka_unit_test(test_caller_frame),
		cmocka_unit_test(test_h5_round_trip),
		cmocka_unit_test(test_pprof_go),
		cmocka_unit_test(test_export_frames),
		cmocka_unit_test(test_top),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
