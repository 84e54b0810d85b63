/* test_metrics.c - metric math on hand-made runs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/chisq.h"
#include "analysis/metrics.h"
#include "analysis/symbolize.h"
#include "core/run.h"
#include "sampler/sampler.h"
#include "workloads/integrity.h"
#include "workloads/workload.h"

static void test_quantile_type7(void **state)
{
	(void)state;
	double v[] = { 4, 1, 3, 2 };
	assert_float_equal(quantile(v, 4, 0.5), 2.5, 1e-12);
	double w[] = { 4, 1, 3, 2 };
	assert_float_equal(quantile(w, 4, 0.99), 3.97, 1e-12);
	double x[] = { 7 };
	assert_float_equal(quantile(x, 1, 0.99), 7, 1e-12);
	double y[] = { NAN, 5, NAN, 1 };
	assert_float_equal(quantile(y, 4, 1.0), 5, 1e-12);
	assert_float_equal(quantile(y, 2, 0.0), 1, 1e-12);
	double z[] = { NAN, NAN };
	assert_true(isnan(quantile(z, 2, 0.5)));
	assert_true(isnan(quantile(z, 0, 0.5)));
}

static void test_tvd(void **state)
{
	(void)state;
	double a[] = { 1, 1, 2 }, b[] = { 2, 2, 4 };
	assert_float_equal(tvd(a, b, 3), 0, 1e-12);
	double c[] = { 1, 0 }, d[] = { 0, 1 };
	assert_float_equal(tvd(c, d, 2), 1, 1e-12);
	double e[] = { 3, 1 }, f[] = { 1, 1 };
	assert_float_equal(tvd(e, f, 2), 0.25, 1e-12);
	double zero[] = { 0, 0 };
	assert_true(isnan(tvd(zero, f, 2)));
}

/* A CPU-clock run: two threads with 1 s and 3 s of CPU, sampled at 100 Hz. */
struct fake {
	struct sb_run r;
	size_t cap;
};

static void fake_init(struct fake *f, int clock, double hz)
{
	memset(f, 0, sizeof(*f));
	f->cap = 4096;
	f->r.clock = clock;
	f->r.hz = hz;
	f->r.samples = calloc(f->cap, sizeof(struct sb_sample));
	f->r.frames = calloc(f->cap, sizeof(uint64_t));
	f->r.thread_rows = calloc(2, sizeof(struct sb_thread_row));
	f->r.nthread_rows = 2;
	f->r.thread_rows[0] = (struct sb_thread_row){ .index = 0, .cpu_ns = 1000000000ull,
						       .alive_ns = 4000000000ull };
	f->r.thread_rows[1] = (struct sb_thread_row){ .index = 1, .cpu_ns = 3000000000ull,
						       .alive_ns = 4000000000ull };
}

/* Adds a sample on thread idx at time t whose leaf lies in slot leaf_slot's function. */
static void fake_add(struct fake *f, int idx, uint64_t t, int leaf_slot, double weight,
		     double lat, double win)
{
	struct sb_sample *s = &f->r.samples[f->r.nsamples++];
	*s = sample_unknown();
	s->time_ns = t;
	s->thread_index = idx;
	s->weight_ns = weight;
	s->stop_latency_ns = lat;
	s->suspend_window_ns = win;
	uint64_t lo, hi;
	wl_slot_range(leaf_slot, &lo, &hi);
	s->frame_offset = f->r.nframes;
	s->depth = 1;
	f->r.frames[f->r.nframes++] = lo + (hi - lo) / 2;
}

static void test_cpu_view_exact(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f, SB_CLOCK_CPU, 100);
	for (int i = 0; i < 100; i++)
		fake_add(&f, 0, (uint64_t)i * 10000000ull, 0, 1e7, 1000, 2000 + i);
	for (int i = 0; i < 300; i++)
		fake_add(&f, 1, (uint64_t)i * 10000000ull, 1, 1e7, 3000, 5000);
	metrics_compute(&f.r, NULL);
	struct sb_metrics *m = &f.r.metrics;
	assert_float_equal(m->nsamples, 400, 1e-9);
	assert_float_equal(m->expected_samples, 400, 1e-9);
	assert_float_equal(m->rate_accuracy, 1.0, 1e-9);
	assert_float_equal(m->magnitude_error, 0.0, 1e-9);
	assert_float_equal(m->thread_tvd, 0.0, 1e-9);
	assert_float_equal(m->misattributed_fraction, 0.0, 1e-9);
	assert_float_equal(m->interval_mean_ns, 1e7, 1e-3);
	assert_float_equal(m->interval_jitter_ns, 0.0, 1e-3);
	assert_float_equal(m->stop_latency_p50_ns, 3000, 1e-9);
	assert_float_equal(m->stop_latency_max_ns, 3000, 1e-9);
	assert_float_equal(m->suspend_window_max_ns, 5000, 1e-9);
	assert_true(isnan(m->wall_rate_accuracy));
	assert_int_equal(f.r.thread_rows[0].samples, 100);
	assert_int_equal(f.r.thread_rows[1].samples, 300);
	run_free(&f.r);
}

static void test_cpu_view_errors(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f, SB_CLOCK_CPU, 100);
	/* half the samples, all charged to thread 0, 10 of them with thread 1's leaf */
	for (int i = 0; i < 200; i++)
		fake_add(&f, 0, (uint64_t)i * 10000000ull, i < 10 ? 1 : 0, 1e7, NAN, NAN);
	metrics_compute(&f.r, NULL);
	struct sb_metrics *m = &f.r.metrics;
	assert_float_equal(m->rate_accuracy, 0.5, 1e-9);
	/* weights 2 s vs truth 4 s */
	assert_float_equal(m->magnitude_error, 0.5, 1e-9);
	/* shares (1, 0) vs (0.25, 0.75) */
	assert_float_equal(m->thread_tvd, 0.75, 1e-9);
	assert_float_equal(m->misattributed_fraction, 10.0 / 200, 1e-9);
	assert_true(isnan(m->stop_latency_p50_ns));
	run_free(&f.r);
}

/* Samples that name no workload thread count against thread_tvd (true share 0). */
static void test_unknown_thread_penalised(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f, SB_CLOCK_CPU, 100);
	for (int i = 0; i < 100; i++)
		fake_add(&f, 0, (uint64_t)i, 0, 1e7, NAN, NAN);
	for (int i = 0; i < 300; i++)
		fake_add(&f, -1, (uint64_t)i, 1, 1e7, NAN, NAN);
	metrics_compute(&f.r, NULL);
	assert_float_equal(f.r.metrics.thread_tvd, 0.75, 1e-9);
	run_free(&f.r);
}

/* Wall view: every thread every tick; the CPU view comes from the weights. */
static void test_wall_view(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f, SB_CLOCK_WALL, 100);
	for (int i = 0; i < 400; i++) {
		fake_add(&f, 0, (uint64_t)i * 10000000ull, 0, 2.5e6, 50000, 60000);
		fake_add(&f, 1, (uint64_t)i * 10000000ull, 1, 7.5e6, 50000, 60000);
	}
	/* a sample of a non-workload thread is left out of the wall view */
	fake_add(&f, -1, 0, 0, 0, 1, 1);
	metrics_compute(&f.r, NULL);
	struct sb_metrics *m = &f.r.metrics;
	assert_float_equal(m->nsamples, 800, 1e-9);
	assert_float_equal(m->expected_samples, 800, 1e-9);
	assert_float_equal(m->rate_accuracy, 1.0, 1e-9);
	assert_float_equal(m->wall_rate_accuracy, 1.0, 1e-9);
	assert_float_equal(m->wall_thread_tvd, 0.0, 1e-9);
	assert_float_equal(m->thread_tvd, 0.0, 1e-9);
	assert_float_equal(m->magnitude_error, 0.0, 1e-9);
	run_free(&f.r);
}

/* A reused stack stands for its ticks: thread 1 idle all along, recorded as one sample of
 * 400 ticks (mach-idle's cold threads), counts as 400 samples; thread 0 busy, sampled every
 * tick. busy_rate_accuracy looks at thread 0 alone. */
static void test_ticks_and_busy_rate(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f, SB_CLOCK_WALL, 100);
	f.r.thread_rows[0].cpu_ns = 4000000000ull; /* busy: all its life */
	f.r.thread_rows[0].ops = 1000;             /* ... at work */
	f.r.thread_rows[1].cpu_ns = 1000000;       /* idle: no work done */
	for (int i = 0; i < 380; i++) /* 95 % of its ticks */
		fake_add(&f, 0, (uint64_t)i * 10000000ull, 0, 1e7, 50000, 60000);
	fake_add(&f, 1, 0, 1, 0, NAN, NAN);
	f.r.samples[f.r.nsamples - 1].flags = SB_SAMPLE_REUSED;
	f.r.samples[f.r.nsamples - 1].ticks = 400;
	metrics_compute(&f.r, NULL);
	struct sb_metrics *m = &f.r.metrics;
	assert_float_equal(m->nsamples, 780, 1e-9);
	assert_float_equal(m->wall_rate_accuracy, 780.0 / 800, 1e-9);
	assert_float_equal(m->busy_rate_accuracy, 0.95, 1e-9);
	assert_int_equal(f.r.thread_rows[1].samples, 400);
	/* its interval is the period, not the run */
	assert_float_equal(m->interval_mean_ns, 1e7, 1e-3);
	run_free(&f.r);
}

/* A fake workload's chain, leaf side first: chain_leaf called from chain_root. */
static __attribute__((noinline, used)) int chain_leaf(int x) { return x * 3 + 1; }
static __attribute__((noinline, used)) int chain_root(int x) { return chain_leaf(x) + 2; }
static __attribute__((noinline, used)) int chain_other(int x) { return x - 7; }

#define FAKE_LIBC_PC 0x7f0000001000ull
#define FAKE_UNKNOWN_PC 0x5000ull

/* Adds a sample on thread 0 with the given frames (leaf first). */
static void fake_stack(struct fake *f, const uint64_t *pcs, uint32_t n, uint32_t flags)
{
	struct sb_sample *s = &f->r.samples[f->r.nsamples++];
	*s = sample_unknown();
	s->thread_index = 0;
	s->flags = flags;
	s->frame_offset = f->r.nframes;
	s->depth = n;
	for (uint32_t i = 0; i < n; i++)
		f->r.frames[f->r.nframes++] = pcs[i];
}

/* The run's symbol table: the three test functions named by this process's symbolizer
 * (so their module is this binary), one PC in a module without frame pointers, one PC in
 * no module. */
static void fake_symbols(struct fake *f, const uint64_t *own, int nown)
{
	struct sb_symbolizer *sym = symbolizer_new();
	assert_non_null(sym);
	f->r.symbols = calloc((size_t)nown + 2, sizeof(struct sb_symbol));
	for (int i = 0; i < nown; i++)
		assert_true(symbolize(sym, own[i], &f->r.symbols[i]));
	symbolizer_free(sym);
	struct sb_symbol *libc = &f->r.symbols[nown], *unknown = &f->r.symbols[nown + 1];
	libc->pc = FAKE_LIBC_PC;
	snprintf(libc->module, sizeof(libc->module), "libc.so.6");
	snprintf(libc->function, sizeof(libc->function), "_int_malloc");
	unknown->pc = FAKE_UNKNOWN_PC;
	symbol_set_unknown(unknown, FAKE_UNKNOWN_PC);
	f->r.nsymbols = (size_t)nown + 2;
	for (size_t i = 1; i < f->r.nsymbols; i++) /* sorted by pc (insertion sort) */
		for (size_t j = i; j > 0 && f->r.symbols[j - 1].pc > f->r.symbols[j].pc; j--) {
			struct sb_symbol t = f->r.symbols[j];
			f->r.symbols[j] = f->r.symbols[j - 1];
			f->r.symbols[j - 1] = t;
		}
}

/* Adds to f's symbols a kernel frame of an imported profile at pseudo PC pc, named name: it
 * must be above every other symbol's PC, so the table stays sorted. */
static void fake_kernel_symbol(struct fake *f, uint64_t pc, const char *name)
{
	f->r.symbols = realloc(f->r.symbols, (f->r.nsymbols + 1) * sizeof(*f->r.symbols));
	assert_non_null(f->r.symbols);
	assert_true(f->r.nsymbols == 0 || f->r.symbols[f->r.nsymbols - 1].pc < pc);
	struct sb_symbol *k = &f->r.symbols[f->r.nsymbols++];
	memset(k, 0, sizeof(*k));
	k->pc = pc;
	snprintf(k->module, sizeof(k->module), "%s", SB_SYM_MODULE_KERNEL);
	snprintf(k->function, sizeof(k->function), "%s", name);
}

/* stack_correct_fraction judges the walkable samples; a leaf in a known module other
 * than the workload's is unwalkable (stack_unwalkable_fraction), a leaf in no module is
 * judged; a stack cut at a frame limit (flagged, >= 64 frames) is judged on the chain's
 * leaf side. */
static void test_stack_chain(void **state)
{
	(void)state;
	const uint64_t A = (uint64_t)(uintptr_t)chain_leaf + 1, B = (uint64_t)(uintptr_t)chain_root + 1;
	const uint64_t G = (uint64_t)(uintptr_t)chain_other + 1, L = FAKE_LIBC_PC;
	const uint64_t U = FAKE_UNKNOWN_PC, own[] = { A, B, G };
	struct workload w = { .name = "fake", .chain = { (const void *)chain_leaf,
							 (const void *)chain_root, NULL } };
	uint64_t cut[70];
	struct fake f;

	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own, 3);
	for (int i = 0; i < 4; i++)
		fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0); /* right */
	for (int i = 0; i < 2; i++)
		fake_stack(&f, (const uint64_t[]){ A, G }, 2, 0); /* wrong: no root */
	for (int i = 0; i < 3; i++)
		fake_stack(&f, (const uint64_t[]){ L }, 1, 0); /* unwalkable */
	fake_stack(&f, (const uint64_t[]){ L, A, B }, 3, 0); /* unwalkable, chain or not */
	fake_stack(&f, (const uint64_t[]){ L, G }, 2, 0);    /* unwalkable */
	fake_stack(&f, (const uint64_t[]){ U, B }, 2, 0);    /* wrong: a leaf in no module */
	cut[0] = A;
	for (int i = 1; i < 70; i++)
		cut[i] = G;
	fake_stack(&f, cut, 70, SB_SAMPLE_TRUNCATED); /* right: cut, leaf side held */
	fake_stack(&f, cut, 10, SB_SAMPLE_TRUNCATED); /* wrong: too short for a cut */
	fake_stack(&f, cut + 1, 69, SB_SAMPLE_TRUNCATED); /* wrong: cut, no chain at all */
	metrics_compute(&f.r, &w);
	assert_float_equal(f.r.metrics.stack_unwalkable_fraction, 5.0 / 15, 1e-9);
	assert_float_equal(f.r.metrics.stack_correct_fraction, 5.0 / 10, 1e-9);
	run_free(&f.r);

	/* Nothing walkable: no judgement (NaN), all unwalkable. */
	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own, 3);
	fake_stack(&f, (const uint64_t[]){ L }, 1, 0);
	metrics_compute(&f.r, &w);
	assert_float_equal(f.r.metrics.stack_unwalkable_fraction, 1.0, 1e-9);
	assert_true(isnan(f.r.metrics.stack_correct_fraction));
	run_free(&f.r);

	/* A leaf in the harness's own checks at a thread's start or end (its stack painting,
	 * its own signal's handler): no chain to judge, right or wrong. */
	const uint64_t H = (uint64_t)(uintptr_t)wl_integrity_funcs[0] + 1;
	const uint64_t own2[] = { A, B, G, H };
	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own2, 4);
	fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0); /* right */
	fake_stack(&f, (const uint64_t[]){ A, G }, 2, 0); /* wrong */
	for (int i = 0; i < 4; i++)
		fake_stack(&f, (const uint64_t[]){ H, G }, 2, 0); /* the harness's: unjudged */
	metrics_compute(&f.r, &w);
	assert_float_equal(f.r.metrics.stack_correct_fraction, 0.5, 1e-9);
	assert_float_equal(f.r.metrics.stack_unwalkable_fraction, 0.0, 1e-9);
	run_free(&f.r);
}

/* function_tvd against the split the threads measured (func_work stats) where the workload
 * measures it, else the declared one; a sample's leaf is its first frame outside the kernel,
 * an imported profile's kernel frames (named so by their symbols, at pseudo PCs below the
 * kernel's addresses) included. */
static void test_function_split(void **state)
{
	(void)state;
	const uint64_t A = (uint64_t)(uintptr_t)chain_leaf + 1, B = (uint64_t)(uintptr_t)chain_root + 1;
	const uint64_t G = (uint64_t)(uintptr_t)chain_other + 1, own[] = { A, B, G };
	const uint64_t K = 0xfffe000000000010ull; /* analysis/import.h's IMPORT_PC_BASE + 16 */
	struct workload w = { .name = "fake", .chain = { (const void *)chain_root, NULL },
			      .funcs = { (const void *)chain_leaf, (const void *)chain_other, NULL },
			      .func_share = { 0.5, 0.5 }, .func_share_measured = true };
	struct fake f;

	for (int measured = 1; measured >= 0; measured--) {
		w.func_share_measured = measured;
		fake_init(&f, SB_CLOCK_CPU, 100);
		fake_symbols(&f, own, 3);
		fake_kernel_symbol(&f, K, "copy_user_generic");
		assert_int_equal(run_alloc_stats(&f.r), 0);
		run_add_stat(&f.r, "func_work_0", 1000);
		run_add_stat(&f.r, "func_work_1", 3000);
		fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0);
		for (int i = 0; i < 3; i++)
			fake_stack(&f, (const uint64_t[]){ K, G, B }, 3, 0);
		metrics_compute(&f.r, &w);
		assert_float_equal(f.r.metrics.function_tvd, measured ? 0 : 0.25, 1e-9);
		assert_float_equal(f.r.metrics.stack_correct_fraction, 1, 1e-9);
		run_free(&f.r);
	}

	/* Measured, but the run has no func_work (an older file): no truth, no metric. */
	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own, 3);
	w.func_share_measured = true;
	fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0);
	metrics_compute(&f.r, &w);
	assert_true(isnan(f.r.metrics.function_tvd));
	run_free(&f.r);
}

/* A frame's inlined functions count as frames, innermost first (the inline builds,
 * docs/workloads.md "Variants"): a leaf in a declared function inlined into its caller is
 * that function's, one in a helper inlined into a declared function is the declared
 * function's, and the chain finds a callee and the caller it was inlined into in one
 * frame. Without the inline chains every sample here would be charged to the wrong
 * function or judged a wrong stack. */
static void test_inline_frames(void **state)
{
	(void)state;
	const uint64_t A = (uint64_t)(uintptr_t)chain_leaf + 1, B = (uint64_t)(uintptr_t)chain_root + 1;
	const uint64_t G = (uint64_t)(uintptr_t)chain_other + 1, own[] = { A, B, G };
	struct workload w = { .name = "fake",
			      .chain = { (const void *)chain_other, (const void *)chain_root, NULL },
			      .funcs = { (const void *)chain_leaf, (const void *)chain_other, NULL },
			      .func_share = { 0.5, 0.5 } };
	struct sb_inline_frame rows[2] = { { .pc = A }, { .pc = B } };
	struct fake f;

	/* at A a helper inlined into chain_leaf; at B chain_other inlined into chain_root */
	snprintf(rows[0].function, sizeof(rows[0].function), "wl_progress_tick");
	snprintf(rows[1].function, sizeof(rows[1].function), "chain_other");
	if (A > B) { /* sorted by pc */
		struct sb_inline_frame t = rows[0];
		rows[0] = rows[1];
		rows[1] = t;
	}
	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own, 3);
	f.r.inlines = malloc(sizeof(rows));
	assert_non_null(f.r.inlines);
	memcpy(f.r.inlines, rows, sizeof(rows));
	f.r.ninlines = 2;
	fake_stack(&f, (const uint64_t[]){ B }, 1, 0);
	fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0);
	fake_stack(&f, (const uint64_t[]){ A, G }, 2, 0); /* chain_root missing: wrong */
	metrics_compute(&f.r, &w);
	assert_float_equal(f.r.metrics.function_tvd, 1.0 / 6, 1e-9); /* counts 2 : 1 */
	assert_float_equal(f.r.metrics.stack_correct_fraction, 2.0 / 3, 1e-9);
	run_free(&f.r);
}

/* kernel_sample_fraction: samples whose leaf frame is the kernel's, a kernel address or an
 * imported frame named as the kernel's; NaN when none is. kernel_true_fraction from the
 * threads' user and system time. */
static void test_kernel_fraction(void **state)
{
	(void)state;
	const uint64_t A = (uint64_t)(uintptr_t)chain_leaf + 1, B = (uint64_t)(uintptr_t)chain_root + 1;
	const uint64_t G = (uint64_t)(uintptr_t)chain_other + 1, own[] = { A, B, G };
	const uint64_t K = 0xfffe000000000010ull, N = 0xffffffff81000000ull;
	struct workload w = { .name = "fake", .chain = { (const void *)chain_root, NULL } };
	struct fake f;

	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own, 3);
	fake_kernel_symbol(&f, K, "copy_user_generic");
	assert_int_equal(run_alloc_stats(&f.r), 0);
	run_add_stat(&f.r, "truth_user_ns", 3e9);
	run_add_stat(&f.r, "truth_sys_ns", 1e9);
	fake_stack(&f, (const uint64_t[]){ K, G, B }, 3, 0);
	fake_stack(&f, (const uint64_t[]){ N, A, B }, 3, 0);
	for (int i = 0; i < 6; i++)
		fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0);
	fake_stack(&f, (const uint64_t[]){ A, N }, 2, 0); /* a kernel frame, not the leaf */
	metrics_compute(&f.r, &w);
	assert_float_equal(f.r.metrics.kernel_sample_fraction, 2.0 / 9, 1e-9);
	assert_float_equal(f.r.metrics.kernel_true_fraction, 0.25, 1e-9);
	run_free(&f.r);

	fake_init(&f, SB_CLOCK_CPU, 100);
	fake_symbols(&f, own, 3);
	fake_stack(&f, (const uint64_t[]){ A, B }, 2, 0);
	metrics_compute(&f.r, &w);
	assert_true(isnan(f.r.metrics.kernel_sample_fraction));
	assert_true(isnan(f.r.metrics.kernel_true_fraction));
	run_free(&f.r);
}

static void test_metric_table(void **state)
{
	(void)state;
	struct sb_metrics m;
	metrics_clear(&m);
	assert_true(sb_metric_count > 10);
	for (size_t i = 0; i < sb_metric_count; i++) {
		assert_true(isnan(*(double *)((char *)&m + sb_metric_infos[i].offset)));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(sb_metric_infos[i].name, sb_metric_infos[j].name);
	}
}

/* Every slot's leaf and entry map back to the slot; leaves only through wl_slot_of_pc. */
static int entry_slot_seen;
static void record_entry_slot(struct wl_ctx *ctx, int index)
{
	(void)ctx;
	(void)index;
	uint64_t ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	entry_slot_seen = wl_slot_frame_of_pc(ret - 1) * 1000 + wl_slot_of_pc(ret - 1);
}

static void test_slot_ranges(void **state)
{
	(void)state;
	for (int slot = 0; slot < WL_SLOT_FNS; slot++) {
		uint64_t lo, hi;
		wl_slot_range(slot, &lo, &hi);
		assert_true(lo < hi);
		assert_int_equal(wl_slot_of_pc(lo), slot);
		assert_int_equal(wl_slot_of_pc(hi - 1), slot);
		assert_int_equal(wl_slot_frame_of_pc(lo), slot);
		/* the entry function: a return address inside it names the slot */
		wl_slot_enter(slot, record_entry_slot, NULL, slot);
		assert_int_equal(entry_slot_seen, slot * 1000 - 1);
	}
	assert_int_equal(wl_slot_of_pc((uint64_t)(uintptr_t)&test_slot_ranges), -1);
	assert_int_equal(wl_slot_frame_of_pc((uint64_t)(uintptr_t)&test_slot_ranges), -1);
	assert_int_equal(wl_slot_frame_of_pc(0), -1);
}

/* chisq_sf against scipy.stats.chi2.sf (scipy 1.10 on a developer machine; values in
 * the comments are its output): both branches (series below a + 1, continued fraction
 * above), df 1 to 10, and a far tail. */
static void test_chisq_sf(void **state)
{
	(void)state;
	static const struct { double x; int df; double p; } v[] = {
		{ 5.991464547107979, 2, 0.05000000000000007 },
		{ 7.814727903251178, 3, 0.05 },
		{ 13.276704135987622, 4, 0.010000000000000012 },
		{ 1.0, 1, 0.31731050786291115 },
		{ 20, 10, 0.029252688076961124 },
		{ 100, 3, 1.5541594313896026e-21 },
		{ 0.5, 5, 0.9921232932326296 },
		{ 3.0, 7, 0.8850022316431506 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		double p = chisq_sf(v[i].x, v[i].df);
		if (!(fabs(p - v[i].p) <= 1e-9 * v[i].p))
			fail_msg("chisq_sf(%g, %d) = %.17g, want %.17g", v[i].x, v[i].df, p, v[i].p);
	}
	assert_true(chisq_sf(0, 3) == 1);
	assert_true(isnan(chisq_sf(1, 0)));
	assert_true(isnan(chisq_sf(NAN, 2)));
}

/* What the sampler costs the process: the child's CPU less truth and the harness's own,
 * against the claim; memory from the harness's stats. */
static void test_cost_from_process(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f, SB_CLOCK_CPU, 100); /* truth: 4 s of CPU */
	f.r.wall_s = 2;
	run_alloc_stats(&f.r);
	run_add_stat(&f.r, "child_utime_ns", 4.5e9);
	run_add_stat(&f.r, "child_stime_ns", 0.3e9);
	run_add_stat(&f.r, "child_harness_cpu_ns", 0.1e9);
	run_add_stat(&f.r, "rss_private_start_bytes", 1e6);
	run_add_stat(&f.r, "rss_private_peak_bytes", 3e6);
	run_add_stat(&f.r, "rss_private_growth_bytes_per_s", 5e6);
	metrics_compute(&f.r, NULL);
	struct sb_metrics *m = &f.r.metrics;
	assert_float_equal(m->sampler_cpu_measured_ns, 0.7e9, 1);
	assert_float_equal(m->sampler_cpu_measured_fraction, 0.35, 1e-9);
	assert_true(isnan(m->sampler_cpu_unreported_fraction)); /* it claims nothing */
	assert_float_equal(m->rss_peak_bytes, 2e6, 1e-6);
	assert_float_equal(m->rss_growth_bytes_per_s, 5e6, 1e-6);
	run_add_stat(&f.r, "sampler_cpu_ns", 0.05e9);
	metrics_compute(&f.r, NULL);
	assert_float_equal(m->sampler_cpu_unreported_fraction, 0.325, 1e-9);
	run_free(&f.r);
	/* a run without the harness's accounting (exec, older files) measures nothing */
	fake_init(&f, SB_CLOCK_CPU, 100);
	f.r.wall_s = 2;
	run_alloc_stats(&f.r);
	run_add_stat(&f.r, "child_utime_ns", 4.5e9);
	run_add_stat(&f.r, "child_stime_ns", 0.3e9);
	run_add_stat(&f.r, "sampler_cpu_ns", 0.05e9);
	metrics_compute(&f.r, NULL);
	assert_true(isnan(f.r.metrics.sampler_cpu_measured_fraction));
	assert_true(isnan(f.r.metrics.sampler_cpu_unreported_fraction));
	assert_true(isnan(f.r.metrics.rss_peak_bytes));
	run_free(&f.r);
}

static struct sb_run cost_run(const char *sampler, const char *workload, int status,
			      double peak)
{
	struct sb_run r;
	memset(&r, 0, sizeof(r));
	metrics_clear(&r.metrics);
	snprintf(r.sampler, sizeof(r.sampler), "%s", sampler);
	snprintf(r.workload, sizeof(r.workload), "%s", workload);
	r.threads = 2;
	r.duration_s = 1;
	r.status = status;
	r.metrics.rss_peak_bytes = peak;
	return r;
}

/* rss_peak_excess_bytes: against the mean of the scored `none` runs of the same cell. */
static void test_cost_excess(void **state)
{
	(void)state;
	struct sb_run done[] = {
		cost_run("none", "balanced", SB_RUN_OK, 1e6),
		cost_run("none", "balanced", SB_RUN_OK, 3e6),
		cost_run("none", "balanced", SB_RUN_FAILED, 100e6),
		cost_run("none", "mixed", SB_RUN_OK, 50e6),
		cost_run("itimer", "balanced", SB_RUN_OK, 70e6),
	};
	struct sb_run r = cost_run("itimer", "balanced", SB_RUN_OK, 5e6);
	metrics_cost_excess(&r, done, 5);
	assert_float_equal(r.metrics.rss_peak_excess_bytes, 3e6, 1e-6);
	metrics_cost_excess(&r, done, 0);
	assert_true(isnan(r.metrics.rss_peak_excess_bytes));
	struct sb_run n = cost_run("none", "balanced", SB_RUN_OK, 2e6);
	metrics_cost_excess(&n, done, 5);
	assert_float_equal(n.metrics.rss_peak_excess_bytes, 0, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile_type7),
		cmocka_unit_test(test_tvd),
		cmocka_unit_test(test_chisq_sf),
		cmocka_unit_test(test_cpu_view_exact),
		cmocka_unit_test(test_cpu_view_errors),
		cmocka_unit_test(test_unknown_thread_penalised),
		cmocka_unit_test(test_wall_view),
		cmocka_unit_test(test_ticks_and_busy_rate),
		cmocka_unit_test(test_metric_table),
		cmocka_unit_test(test_slot_ranges),
		cmocka_unit_test(test_cost_from_process),
		cmocka_unit_test(test_cost_excess),
		cmocka_unit_test(test_stack_chain),
		cmocka_unit_test(test_function_split),
		cmocka_unit_test(test_kernel_fraction),
		cmocka_unit_test(test_inline_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
