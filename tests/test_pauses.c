/* test_pauses.c - the progress clock and the observed-pause metrics: the histogram's
 * buckets, a workload thread that is really held (a signal handler sleeping in it) seen by
 * its own clock at the right time and length, each reported window checked against what
 * its thread saw, and the excess over `none`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "analysis/metrics.h"
#include "analysis/pauses.h"
#include "core/pausehist.h"
#include "core/run.h"
#include "sampler/threads.h"
#include "workloads/workload.h"

/* Every value lands in a bucket that holds it, buckets are contiguous and, above the
 * linear range, no wider than 1/128 of their start (two significant digits). */
static void test_hist_buckets(void **state)
{
	(void)state;
	for (unsigned b = 0; b + 1 < SB_PAUSE_BUCKETS; b++) {
		uint64_t lo = sb_pause_bucket_lo(b), hi = sb_pause_bucket_lo(b + 1);
		assert_true(hi > lo);
		assert_int_equal(sb_pause_bucket(lo), b);
		assert_int_equal(sb_pause_bucket(hi - 1), b);
		if (b >= 2 * SB_PAUSE_SUB)
			assert_true((double)(hi - lo) <= (double)lo / SB_PAUSE_SUB + 1e-9);
	}
	assert_int_equal(sb_pause_bucket(0), 0);
	assert_int_equal(sb_pause_bucket(40000000), sb_pause_bucket(40000000 + 100));
	assert_true(sb_pause_bucket_lo(sb_pause_bucket(40000000)) <= 40000000);
	assert_int_equal(sb_pause_bucket(UINT64_MAX), SB_PAUSE_BUCKETS - 1);
}

/* --- a real thread held by a handler that sleeps in it --- */

#define HOLD_NS 3000000ull
#define HOLDS 5
static volatile uint64_t hold_at[HOLDS];
static volatile int holds;

static void hold_handler(int sig)
{
	(void)sig;
	struct timespec ts = { 0, (long)HOLD_NS };
	if (holds < HOLDS)
		hold_at[holds++] = sb_now_ns();
	nanosleep(&ts, NULL);
}

struct holder {
	struct wl_ctx *ctx;
	pthread_t target;
};

static void *holder_main(void *p)
{
	struct holder *h = p;
	struct timespec ts = { 0, 40000000 };
	for (int i = 0; i < HOLDS; i++) {
		nanosleep(&ts, NULL);
		pthread_kill(h->target, SIGUSR2);
	}
	return NULL;
}

static struct wl_ctx *held_ctx;
static _Atomic pthread_t held_thread;

static void held_main(struct wl_ctx *ctx, int index)
{
	held_thread = pthread_self();
	while (sb_now_ns() < ctx->deadline_ns)
		wl_unit(ctx, index);
}

static void *held_spawn(void *p)
{
	(void)p;
	wl_run_threads(held_ctx, 1, held_main);
	return NULL;
}

/* The thread's own clock logs each 3 ms hold, at its time, within a step of its length;
 * the rest of its time is nearly pause-free. */
static void test_clock_sees_holds(void **state)
{
	(void)state;
	struct wl_truth *truth = calloc(SB_MAX_THREADS, sizeof(*truth));
	struct wl_pauses *pauses = mmap(NULL, WL_PAUSE_SLOTS * sizeof(*pauses),
					PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct wl_ctx ctx = { .threads = 1, .duration_s = 0.4, .seed = 3, .truth = truth,
			      .pauses = pauses };
	assert_non_null(truth);
	assert_true(pauses != MAP_FAILED);
	signal(SIGUSR2, hold_handler);
	holds = 0;
	held_ctx = &ctx;
	held_thread = 0;
	ctx.deadline_ns = sb_now_ns() + 400000000ull;
	pthread_t spawner, holder;
	assert_int_equal(pthread_create(&spawner, NULL, held_spawn, NULL), 0);
	while (!held_thread)
		sched_yield();
	struct holder h = { &ctx, held_thread };
	assert_int_equal(pthread_create(&holder, NULL, holder_main, &h), 0);
	pthread_join(holder, NULL);
	pthread_join(spawner, NULL);

	const struct wl_pauses *p = &pauses[0];
	uint64_t logged = atomic_load(&p->logged);
	assert_int_equal(holds, HOLDS);
	assert_true(atomic_load(&p->steps) > 1000);
	assert_true(atomic_load(&p->step_ns) > 0 && atomic_load(&p->step_ns) < 1000000);
	for (int i = 0; i < HOLDS; i++) {
		int found = 0;
		for (uint64_t k = 0; k < logged && k < WL_PAUSE_LOG; k++) {
			const struct wl_gap *g = &p->log[k];
			if (g->start_ns <= hold_at[i] && hold_at[i] <= g->start_ns + g->gap_ns) {
				found = 1;
				assert_true(g->pause_ns >= HOLD_NS - 100000);
				assert_true(g->pause_ns <= 10 * HOLD_NS); /* a loaded VM may add ms */
			}
		}
		assert_true(found);
	}
	uint64_t in_hist = 0;
	for (unsigned b = 0; b < SB_PAUSE_BUCKETS; b++)
		in_hist += atomic_load(&p->hist[b]);
	assert_int_equal(in_hist, atomic_load(&p->pauses));
	assert_true(atomic_load(&p->pause_ns) >= HOLDS * (HOLD_NS - 100000));
	assert_true(atomic_load(&p->active_ns) > 300000000ull);
	signal(SIGUSR2, SIG_DFL);
	munmap(pauses, WL_PAUSE_SLOTS * sizeof(*pauses));
	free(truth);
}

/* --- metrics on a hand-made run --- */

struct fake {
	struct sb_run r;
	struct sb_sample s[8];
	struct sb_gap_row g[4];
	struct sb_pause_bucket h[4];
	struct sb_progress_row p[1];
};

/* One thread, 1 s of compute, pauses of 1.5 ms at 100, 200 and 300 ms; samples at those
 * times reporting `reported` ns windows, and one at 500 ms when nothing held it. */
static void fake_init(struct fake *f, double reported)
{
	memset(f, 0, sizeof(*f));
	f->r.clock = SB_CLOCK_WALL;
	f->r.status = SB_RUN_OK;
	f->r.samples = f->s;
	f->r.gaps = f->g;
	f->r.pause_hist = f->h;
	f->r.progress = f->p;
	f->p[0] = (struct sb_progress_row){ .index = 0, .active_ns = 1000000000ull, .steps = 250000,
					    .step_ns = 4000, .pauses = 3, .pause_ns = 4500000,
					    .logged = 3 };
	f->r.nprogress = 1;
	for (int i = 0; i < 3; i++) {
		uint64_t t = (uint64_t)(i + 1) * 100000000ull;
		f->g[i] = (struct sb_gap_row){ 0, t, 1504000, 1500000 };
		f->s[i] = sample_unknown();
		f->s[i].thread_index = 0;
		f->s[i].time_ns = t + 2000;
		f->s[i].suspend_window_ns = reported;
	}
	f->r.ngaps = 3;
	f->s[3] = sample_unknown();
	f->s[3].thread_index = 0;
	f->s[3].time_ns = 500000000ull;
	f->s[3].suspend_window_ns = reported;
	f->r.nsamples = 4;
	unsigned b = sb_pause_bucket(1500000);
	f->h[0] = (struct sb_pause_bucket){ 0, sb_pause_bucket_lo(b), sb_pause_bucket_lo(b + 1), 3 };
	f->r.npause_hist = 1;
}

static void test_window_checked(void **state)
{
	(void)state;
	struct fake f;

	fake_init(&f, 20000); /* says 20 µs, held 1.5 ms */
	metrics_pauses(&f.r);
	struct sb_metrics *m = &f.r.metrics;
	assert_float_equal(m->pause_fraction, 0.0045, 1e-12);
	assert_true(fabs(m->pause_p50_ns - 1500000) < 1500000.0 / 128);
	assert_float_equal(m->pause_max_ns, 1500000, 1e-9);
	/* three samples in a 1.5 ms pause, one in none: p50 is 1.5 ms */
	assert_float_equal(m->window_observed_p50_ns, 1500000, 1e-9);
	assert_float_equal(m->window_observed_max_ns, 1500000, 1e-9);
	assert_float_equal(m->window_report_ratio, 75, 1e-9);
	/* three samples 1.48 ms short, one 20 µs long (nothing held it) */
	assert_float_equal(m->window_unreported_p50_ns, 1480000, 1e-9);

	fake_init(&f, 1500000); /* honest */
	metrics_pauses(&f.r);
	assert_float_equal(f.r.metrics.window_report_ratio, 1, 1e-9);
	assert_float_equal(f.r.metrics.window_unreported_p50_ns, 0, 1e-9);

	/* a sample on a thread without a clock is not judged */
	fake_init(&f, 20000);
	for (size_t i = 0; i < f.r.nsamples; i++)
		f.s[i].thread_index = 5;
	metrics_clear(&f.r.metrics);
	metrics_pauses(&f.r);
	assert_true(isnan(f.r.metrics.window_report_ratio));
	assert_false(isnan(f.r.metrics.pause_fraction));

	/* no progress clock at all: every pause metric NaN */
	fake_init(&f, 20000);
	f.r.nprogress = 0;
	metrics_clear(&f.r.metrics);
	metrics_pauses(&f.r);
	assert_true(isnan(f.r.metrics.pause_fraction));
	assert_true(isnan(f.r.metrics.pause_p99_ns));
	assert_true(isnan(f.r.metrics.window_observed_p50_ns));
}

/* A full log knows nothing after its last pause: such samples are not judged. */
static void test_log_full(void **state)
{
	(void)state;
	struct fake f;
	const struct sb_gap_row *g;

	fake_init(&f, 20000);
	assert_int_equal(pause_covering(&f.r, 0, 100000000ull + 10, &g), 1);
	assert_int_equal(pause_covering(&f.r, 0, 500000000ull, &g), 0);
	f.p[0].logged = 10; /* 7 more were not logged */
	assert_int_equal(pause_covering(&f.r, 0, 500000000ull, &g), -1);
	assert_int_equal(pause_covering(&f.r, 0, 150000000ull, &g), 0);
	assert_int_equal(pause_covering(&f.r, 1, 150000000ull, &g), -1);
}

static void test_excess_over_none(void **state)
{
	(void)state;
	struct sb_run done[3], r;
	memset(done, 0, sizeof(done));
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 3; i++) {
		metrics_clear(&done[i].metrics);
		snprintf(done[i].sampler, sizeof(done[i].sampler), "%s", i < 2 ? "none" : "mach");
		snprintf(done[i].workload, sizeof(done[i].workload), "balanced");
		done[i].threads = 2;
		done[i].duration_s = 2;
		done[i].metrics.pause_fraction = 0.01 * (i + 1);
		done[i].metrics.pause_p99_ns = 100000.0 * (i + 1);
	}
	metrics_clear(&r.metrics);
	snprintf(r.sampler, sizeof(r.sampler), "mach");
	snprintf(r.workload, sizeof(r.workload), "balanced");
	r.threads = 2;
	r.duration_s = 2;
	r.metrics.pause_fraction = 0.165;
	r.metrics.pause_p99_ns = 1650000;
	metrics_pause_excess(&r, done, 3);
	assert_float_equal(r.metrics.pause_excess_fraction, 0.15, 1e-12);
	assert_float_equal(r.metrics.pause_excess_p99_ns, 1500000, 1e-6);
	r.threads = 8; /* no `none` of this cell */
	metrics_pause_excess(&r, done, 3);
	assert_true(isnan(r.metrics.pause_excess_fraction));
	assert_true(isnan(r.metrics.pause_excess_p99_ns));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_clock_sees_holds),
		cmocka_unit_test(test_window_checked),
		cmocka_unit_test(test_log_full),
		cmocka_unit_test(test_excess_over_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
