/* test_h5.c - results/h5io_*.c: write/read round trip, file layout, and every refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/run.h"
#include "results/h5io.h"
#include "sampler/sampler.h"
#include "tests/support/runcmp.h"

struct fixture {
	char dir[64];
	char path[128];
	char err[512];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/sb_test_h5_XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/out.h5", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", fx->dir, fx->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove '%s'\n", fx->dir);
	free(fx);
	return 0;
}

static struct sb_host test_host(void)
{
	struct sb_host h;

	memset(&h, 0, sizeof(h));
	snprintf(h.host, sizeof(h.host), "testhost");
	snprintf(h.kernel, sizeof(h.kernel), "6.1.0-test #1 SMP");
	h.nproc = 2;
	h.tick_hz = 250;
	snprintf(h.tick_source, sizeof(h.tick_source), "config");
	snprintf(h.compiler, sizeof(h.compiler), "gcc 12.2.0");
	snprintf(h.version, sizeof(h.version), "0.1.0");
	snprintf(h.git_rev, sizeof(h.git_rev), "0123456789ab-dirty");
	snprintf(h.fingerprint, sizeof(h.fingerprint), "x86_64/GenuineIntel-6-85/2cpu/kvm");
	assert_int_equal(host_fact_set(&h, "rendezvous_p99_ns", 41234.5), 0);
	assert_int_equal(host_fact_set(&h, "syscall_p50_ns", 61.25), 0);
	assert_int_equal(host_fact_set(&h, "ptrace_interrupt_max_ns", NAN), 0);
	h.ncalib = 3;
	snprintf(h.calib[0].name, sizeof(h.calib[0].name), "rendezvous");
	snprintf(h.calib[0].phase, sizeof(h.calib[0].phase), "start");
	h.calib[0].n = 2000;
	h.calib[0].p50_ns = 12000.5;
	h.calib[0].p99_ns = 41234.5;
	h.calib[0].max_ns = 90001;
	snprintf(h.calib[1].name, sizeof(h.calib[1].name), "rendezvous");
	snprintf(h.calib[1].phase, sizeof(h.calib[1].phase), "end");
	h.calib[1].n = 1999;
	h.calib[1].p50_ns = 11000;
	h.calib[1].p99_ns = 40000;
	h.calib[1].max_ns = 88000.25;
	snprintf(h.calib[2].name, sizeof(h.calib[2].name), "ptrace_interrupt");
	snprintf(h.calib[2].phase, sizeof(h.calib[2].phase), "start");
	h.calib[2].p50_ns = h.calib[2].p99_ns = h.calib[2].max_ns = NAN;
	snprintf(h.calib[2].reason, sizeof(h.calib[2].reason), "ptrace not permitted");
	return h;
}

static void set_metric(struct sb_metrics *m, const char *name, double v)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		if (strcmp(sb_metric_infos[i].name, name) == 0)
			*(double *)((char *)m + sb_metric_infos[i].offset) = v;
}

static void all_nan(struct sb_metrics *m)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		*(double *)((char *)m + sb_metric_infos[i].offset) = NAN;
}

/* An ok run with samples, frames, thread rows and stats; some metrics stay NaN. */
static struct sb_run run_ok(void)
{
	struct sb_run r;

	memset(&r, 0, sizeof(r));
	r.run_id = 1;
	snprintf(r.sampler, sizeof(r.sampler), "itimer");
	snprintf(r.workload, sizeof(r.workload), "balanced");
	r.threads = 2;
	r.hz = 997.5;
	r.duration_s = 0.25;
	r.repetition = 3;
	r.status = SB_RUN_OK;
	snprintf(r.start_time, sizeof(r.start_time), "2024-05-01T12:00:00Z");
	r.clock = SB_CLOCK_CPU;
	r.wall_s = 0.2625;
	snprintf(r.variant, sizeof(r.variant), "B");
	all_nan(&r.metrics);
	set_metric(&r.metrics, "nsamples", 4);
	set_metric(&r.metrics, "rate_accuracy", 0.987654321);
	set_metric(&r.metrics, "thread_tvd", 0.0125);
	set_metric(&r.metrics, "stop_latency_p50_ns", 1234.5);

	r.nsamples = 4;
	r.samples = calloc(r.nsamples, sizeof(*r.samples));
	r.nframes = 7;
	r.frames = calloc(r.nframes, sizeof(*r.frames));
	for (size_t i = 0; i < r.nframes; i++)
		r.frames[i] = 0x400000u + 16 * i + ((uint64_t)1 << 63);
	for (size_t i = 0; i < r.nsamples; i++) {
		struct sb_sample *s = &r.samples[i];

		s->time_ns = 1000000000ull * 5000 + i * 1000003;
		s->tid = 4242 + (int32_t)(i % 2);
		s->thread_index = i == 3 ? -1 : (int32_t)(i % 2);
		s->weight_ns = 1e6 + (double)i;
		s->stop_latency_ns = i == 2 ? NAN : 500.25 * (double)i;
		s->suspend_window_ns = NAN;
		s->depth = i == 3 ? 0 : 2 + (i == 2);
		s->flags = SB_SAMPLE_RAN | (i == 2 ? SB_SAMPLE_TRUNCATED : 0);
		s->frame_offset = i == 3 ? 7 : 2 * i;
		s->ticks = i == 1 ? 250 : 0; /* a reused stack for 250 ticks */
	}
	r.nthread_rows = 2;
	r.thread_rows = calloc(r.nthread_rows, sizeof(*r.thread_rows));
	for (size_t i = 0; i < r.nthread_rows; i++) {
		struct sb_thread_row *t = &r.thread_rows[i];

		t->index = (int32_t)i;
		t->tid = 4242 + (int32_t)i;
		t->os_threads = 1 + (uint32_t)i;
		t->cpu_ns = 250000000ull + i;
		t->alive_ns = 260000000ull + i;
		t->offcpu_ns = 10 * i;
		t->ops = 123456789ull * (i + 1);
		t->checksum_errors = i;
		t->eintr = 3 * i;
		t->short_io = 5 * i;
		t->samples = 2;
		t->weight_ns = i ? NAN : 2e6;
	}
	/* slot 0 named itself, slot 1's name is unknown: `thread_names` holds one row */
	snprintf(r.thread_rows[0].name, sizeof(r.thread_rows[0].name), "balanced-0");
	/* the progress clock's tables: slot 1 saw two pauses, slot 0 none */
	r.nprogress = 2;
	r.progress = calloc(r.nprogress, sizeof(*r.progress));
	r.progress[0] = (struct sb_progress_row){ 0, 240000000ull, 60000, 3900, 0, 0, 0 };
	r.progress[1] = (struct sb_progress_row){ 1, 241000000ull, 60100, 3950, 2, 1540000, 2 };
	r.npause_hist = 2;
	r.pause_hist = calloc(r.npause_hist, sizeof(*r.pause_hist));
	r.pause_hist[0] = (struct sb_pause_bucket){ 1, 39936, 40960, 1 };
	r.pause_hist[1] = (struct sb_pause_bucket){ 1, 1490944, 1503232, 1 };
	r.ngaps = 2;
	r.gaps = calloc(r.ngaps, sizeof(*r.gaps));
	r.gaps[0] = (struct sb_gap_row){ 1, 5000000100000ull, 44000, 40100 };
	r.gaps[1] = (struct sb_gap_row){ 1, 5000000200000ull, 1503900, 1499950 };
	r.nstats = 3;
	r.stats = calloc(r.nstats, sizeof(*r.stats));
	snprintf(r.stats[0].name, sizeof(r.stats[0].name), "signals_delivered");
	r.stats[0].value = 4;
	snprintf(r.stats[1].name, sizeof(r.stats[1].name), "dropped_samples");
	r.stats[1].value = 0;
	snprintf(r.stats[2].name, sizeof(r.stats[2].name), "child_max_rss_kb");
	r.stats[2].value = NAN;
	return r;
}

/* A failed run: long reason, nothing recorded, every metric NaN. */
static struct sb_run run_failed(void)
{
	struct sb_run r;

	memset(&r, 0, sizeof(r));
	r.run_id = 2;
	snprintf(r.sampler, sizeof(r.sampler), "fault_crash_with_a_name_of_47_characters_xxxxxx");
	snprintf(r.workload, sizeof(r.workload), "skewed");
	r.threads = 8;
	r.hz = 100;
	r.duration_s = 1;
	r.repetition = 0;
	r.status = SB_RUN_FAILED;
	memset(r.reason, 'r', sizeof(r.reason) - 1);
	memcpy(r.reason, "child killed by SIGSEGV: ", 25);
	snprintf(r.start_time, sizeof(r.start_time), "2024-05-01T12:00:01Z");
	r.clock = SB_CLOCK_CPU;
	r.wall_s = NAN;
	all_nan(&r.metrics);
	return r;
}

/* A skipped wall-clock run with thread rows but no samples. */
static struct sb_run run_skipped(void)
{
	struct sb_run r;

	memset(&r, 0, sizeof(r));
	r.run_id = 1000000;
	snprintf(r.sampler, sizeof(r.sampler), "suspend");
	snprintf(r.workload, sizeof(r.workload), "io");
	r.threads = 1;
	r.hz = 19;
	r.duration_s = 2.5;
	r.repetition = 1;
	r.status = SB_RUN_SKIPPED;
	snprintf(r.reason, sizeof(r.reason), "perf_event_open: Permission denied");
	snprintf(r.start_time, sizeof(r.start_time), "2024-05-01T12:00:02Z");
	r.clock = SB_CLOCK_WALL;
	r.wall_s = 0;
	all_nan(&r.metrics);
	set_metric(&r.metrics, "checksum_errors", 0);
	r.nthread_rows = 1;
	r.thread_rows = calloc(1, sizeof(*r.thread_rows));
	r.thread_rows[0].index = 0;
	r.thread_rows[0].tid = -1;
	r.thread_rows[0].weight_ns = NAN;
	return r;
}

/* Equal, or both NaN. */
static void assert_same_double(double a, double b)
{
	if (isnan(a) || isnan(b)) {
		assert_true(isnan(a) && isnan(b));
		return;
	}
	assert_true(a == b);
}

static void assert_same_host(const struct sb_host *a, const struct sb_host *b)
{
	assert_string_equal(a->host, b->host);
	assert_string_equal(a->kernel, b->kernel);
	assert_int_equal(a->nproc, b->nproc);
	assert_int_equal(a->tick_hz, b->tick_hz);
	assert_string_equal(a->tick_source, b->tick_source);
	assert_string_equal(a->compiler, b->compiler);
	assert_string_equal(a->version, b->version);
	assert_string_equal(a->git_rev, b->git_rev);
	assert_string_equal(a->build, b->build);
	assert_string_equal(a->fingerprint, b->fingerprint);
	assert_int_equal(a->nfacts, b->nfacts);
	for (int i = 0; i < a->nfacts; i++) {
		assert_string_equal(a->facts[i].name, b->facts[i].name);
		assert_same_double(a->facts[i].value, b->facts[i].value);
	}
	assert_same_double(host_fact(b, "rendezvous_p99_ns"), host_fact(a, "rendezvous_p99_ns"));
	assert_int_equal(a->ncalib, b->ncalib);
	for (int i = 0; i < a->ncalib; i++) {
		const struct sb_calib_row *x = &a->calib[i], *y = &b->calib[i];

		assert_string_equal(x->name, y->name);
		assert_string_equal(x->phase, y->phase);
		assert_int_equal(x->n, y->n);
		assert_same_double(x->p50_ns, y->p50_ns);
		assert_same_double(x->p99_ns, y->p99_ns);
		assert_same_double(x->max_ns, y->max_ns);
		assert_string_equal(x->reason, y->reason);
	}
}

static void assert_same_run(const struct sb_run *a, const struct sb_run *b, int samples)
{
	assert_int_equal(a->run_id, b->run_id);
	assert_string_equal(a->sampler, b->sampler);
	assert_string_equal(a->workload, b->workload);
	assert_int_equal(a->threads, b->threads);
	assert_same_double(a->hz, b->hz);
	assert_same_double(a->duration_s, b->duration_s);
	assert_int_equal(a->repetition, b->repetition);
	assert_int_equal(a->status, b->status);
	assert_string_equal(a->reason, b->reason);
	assert_string_equal(a->start_time, b->start_time);
	assert_int_equal(a->clock, b->clock);
	assert_same_double(a->wall_s, b->wall_s);
	assert_string_equal(a->variant, b->variant);
	for (size_t i = 0; i < sb_metric_count; i++) {
		size_t off = sb_metric_infos[i].offset;

		assert_same_double(*(const double *)((const char *)&a->metrics + off),
				   *(const double *)((const char *)&b->metrics + off));
	}
	assert_int_equal(a->nthread_rows, b->nthread_rows);
	for (size_t i = 0; i < a->nthread_rows; i++) {
		const struct sb_thread_row *x = &a->thread_rows[i], *y = &b->thread_rows[i];

		assert_int_equal(x->index, y->index);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->os_threads, y->os_threads);
		assert_int_equal(x->cpu_ns, y->cpu_ns);
		assert_int_equal(x->alive_ns, y->alive_ns);
		assert_int_equal(x->offcpu_ns, y->offcpu_ns);
		assert_int_equal(x->ops, y->ops);
		assert_int_equal(x->checksum_errors, y->checksum_errors);
		assert_int_equal(x->eintr, y->eintr);
		assert_int_equal(x->short_io, y->short_io);
		assert_int_equal(x->samples, y->samples);
		assert_same_double(x->weight_ns, y->weight_ns);
		assert_string_equal(x->name, y->name);
	}
	assert_int_equal(a->nstats, b->nstats);
	for (size_t i = 0; i < a->nstats; i++) {
		assert_string_equal(a->stats[i].name, b->stats[i].name);
		assert_same_double(a->stats[i].value, b->stats[i].value);
	}
	assert_int_equal(a->nprogress, b->nprogress);
	for (size_t i = 0; i < a->nprogress; i++) {
		const struct sb_progress_row *x = &a->progress[i], *y = &b->progress[i];
		assert_int_equal(x->index, y->index);
		assert_int_equal(x->active_ns, y->active_ns);
		assert_int_equal(x->steps, y->steps);
		assert_int_equal(x->step_ns, y->step_ns);
		assert_int_equal(x->pauses, y->pauses);
		assert_int_equal(x->pause_ns, y->pause_ns);
		assert_int_equal(x->logged, y->logged);
	}
	assert_int_equal(a->npause_hist, b->npause_hist);
	for (size_t i = 0; i < a->npause_hist; i++) {
		const struct sb_pause_bucket *x = &a->pause_hist[i], *y = &b->pause_hist[i];
		assert_int_equal(x->index, y->index);
		assert_int_equal(x->lo_ns, y->lo_ns);
		assert_int_equal(x->hi_ns, y->hi_ns);
		assert_int_equal(x->count, y->count);
	}
	/* the pause log comes with the samples */
	assert_int_equal(samples ? a->ngaps : 0, b->ngaps);
	for (size_t i = 0; i < b->ngaps; i++) {
		const struct sb_gap_row *x = &a->gaps[i], *y = &b->gaps[i];
		assert_int_equal(x->index, y->index);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->gap_ns, y->gap_ns);
		assert_int_equal(x->pause_ns, y->pause_ns);
	}
	if (!samples) {
		assert_null(b->samples);
		assert_int_equal(b->nsamples, 0);
		assert_null(b->frames);
		assert_int_equal(b->nframes, 0);
		return;
	}
	assert_int_equal(a->nsamples, b->nsamples);
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct sb_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_int_equal(x->time_ns, y->time_ns);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->thread_index, y->thread_index);
		assert_same_double(x->weight_ns, y->weight_ns);
		assert_same_double(x->stop_latency_ns, y->stop_latency_ns);
		assert_same_double(x->suspend_window_ns, y->suspend_window_ns);
		assert_int_equal(x->depth, y->depth);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->frame_offset, y->frame_offset);
		assert_int_equal(x->ticks, y->ticks);
	}
	assert_int_equal(a->nframes, b->nframes);
	if (a->nframes)
		assert_memory_equal(a->frames, b->frames, a->nframes * sizeof(*a->frames));
}

static void free_runs(struct sb_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void write_file(const char *path, const struct sb_run *runs, size_t n)
{
	struct sb_host host = test_host();
	char err[256] = "", tmp[256];
	struct sb_h5 *f;

	f = h5_create(path, &host, 0, err, sizeof(err));
	assert_non_null(f);
	assert_string_equal(err, "");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(h5_append_run(f, &runs[i]), 0);
	h5_set_complete(f, 1);
	assert_string_equal(h5_strerror(f), "");
	assert_true(exists(tmp));
	assert_false(exists(path));
	assert_int_equal(h5_close(f), 0);
	assert_false(exists(tmp));
	assert_true(exists(path));
}

/* H5Aiterate2 callback: 1 (stop, failure) at a variable-length string attribute. */
static herr_t no_vlen_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
	hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = H5Aget_type(a);
	int vlen = H5Tis_variable_str(t) > 0;

	(void)info;
	(void)data;
	if (vlen)
		fprintf(stderr, "attribute %s is a variable-length string\n", name);
	H5Tclose(t);
	H5Aclose(a);
	return vlen ? 1 : 0;
}

/* Root attribute `complete`, and chunked + deflated layout of /runs and an empty dataset. */
static void check_raw_layout(const char *path)
{
	const char *dsets[] = { "runs", "run_000002/samples", "run_000001/samples",
				"run_000001/frames", "run_000001/metrics", "run_000001/thread_names",
				"run_000002/thread_names" };
	hid_t file, a, g;
	H5F_info2_t info;
	int complete = -1;

	file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	assert_true(file >= 0);
	a = H5Aopen(file, "complete", H5P_DEFAULT);
	assert_true(a >= 0);
	assert_true(H5Aread(a, H5T_NATIVE_INT, &complete) >= 0);
	H5Aclose(a);
	assert_int_equal(complete, 1);
	/* the newest format: superblock 2 or later, checksummed */
	assert_true(H5Fget_info2(file, &info) >= 0);
	assert_true(info.super.version >= 2);
	assert_int_equal(H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, no_vlen_attr,
				     NULL), 0);
	g = H5Gopen2(file, "run_000001", H5P_DEFAULT);
	assert_true(g >= 0);
	assert_int_equal(H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, no_vlen_attr, NULL),
			 0);
	H5Gclose(g);
	for (size_t i = 0; i < sizeof(dsets) / sizeof(dsets[0]); i++) {
		hid_t d = H5Dopen2(file, dsets[i], H5P_DEFAULT), dcpl;
		unsigned flags = 0, cd[4];
		size_t ncd = 4;
		int has_deflate = 0, has_fletcher = 0, nf;

		assert_true(d >= 0);
		assert_true(H5Aexists(d, "units") > 0);
		dcpl = H5Dget_create_plist(d);
		assert_int_equal(H5Pget_layout(dcpl), H5D_CHUNKED);
		nf = H5Pget_nfilters(dcpl);
		for (int j = 0; j < nf; j++) {
			ncd = 4;
			if (H5Pget_filter2(dcpl, (unsigned)j, &flags, &ncd, cd, 0, NULL, NULL) ==
			    H5Z_FILTER_DEFLATE)
				has_deflate = 1;
			ncd = 4;
			if (H5Pget_filter2(dcpl, (unsigned)j, &flags, &ncd, cd, 0, NULL, NULL) ==
			    H5Z_FILTER_FLETCHER32)
				has_fletcher = 1;
		}
		assert_true(has_deflate);
		assert_true(has_fletcher);
		assert_int_equal(H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, no_vlen_attr,
					     NULL), 0);
		H5Pclose(dcpl);
		H5Dclose(d);
	}
	H5Fclose(file);
}

static void test_round_trip(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in[3] = { run_ok(), run_failed(), run_skipped() };
	struct sb_host want = test_host(), host;
	struct sb_run *out = NULL;
	char cmd[256];
	size_t n = 0;

	write_file(fx->path, in, 3);
	check_raw_layout(fx->path);

	assert_int_equal(h5_read(fx->path, &host, &out, &n, 1, fx->err, sizeof(fx->err)), 0);
	assert_same_host(&want, &host);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_same_run(&in[i], &out[i], 1);
	free_runs(out, n);

	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_same_run(&in[i], &out[i], 0);
	free_runs(out, n);

	snprintf(cmd, sizeof(cmd), "h5dump -H '%s' >/dev/null", fx->path);
	assert_int_equal(system(cmd), 0);
	for (size_t i = 0; i < 3; i++)
		run_free(&in[i]);
}

static void test_empty_file(void **state)
{
	struct fixture *fx = *state;
	struct sb_run *out = NULL;
	size_t n = 1;

	write_file(fx->path, NULL, 0);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 1, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(n, 0);
	free(out);
}

static void test_duplicate_run(void **state)
{
	struct fixture *fx = *state;
	struct sb_host host = test_host();
	struct sb_run r = run_failed();
	struct sb_run *out = NULL;
	struct sb_h5 *f;
	char want[256];
	size_t n = 0;

	f = h5_create(fx->path, &host, 0, fx->err, sizeof(fx->err));
	assert_non_null(f);
	assert_int_equal(h5_append_run(f, &r), 0);
	assert_int_equal(h5_append_run(f, &r), -1);
	snprintf(want, sizeof(want), "run 2 is already in '%s'", fx->path);
	assert_string_equal(h5_strerror(f), want);
	assert_int_equal(h5_close(f), 0);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 1, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(n, 1);
	free_runs(out, n);
}

static void test_exists_and_force(void **state)
{
	struct fixture *fx = *state;
	struct sb_host host = test_host();
	struct sb_run r = run_skipped();
	struct sb_run *out = NULL;
	char want[256];
	struct sb_h5 *f;
	size_t n = 0;
	FILE *fp;

	fp = fopen(fx->path, "w");
	assert_non_null(fp);
	fputs("old results\n", fp);
	fclose(fp);
	f = h5_create(fx->path, &host, 0, fx->err, sizeof(fx->err));
	assert_null(f);
	snprintf(want, sizeof(want), "'%s' exists (use --force to overwrite)", fx->path);
	assert_string_equal(fx->err, want);

	f = h5_create(fx->path, &host, 1, fx->err, sizeof(fx->err));
	assert_non_null(f);
	assert_int_equal(h5_append_run(f, &r), 0);
	assert_int_equal(h5_close(f), 0);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 1, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(n, 1);
	assert_same_run(&r, &out[0], 1);
	free_runs(out, n);
	run_free(&r);
}

static void test_abort(void **state)
{
	struct fixture *fx = *state;
	struct sb_host host = test_host();
	struct sb_run r = run_failed();
	struct sb_h5 *f;
	char tmp[256];

	f = h5_create(fx->path, &host, 0, fx->err, sizeof(fx->err));
	assert_non_null(f);
	assert_int_equal(h5_append_run(f, &r), 0);
	h5_abort(f);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->path);
	assert_false(exists(tmp));
	assert_false(exists(fx->path));
}

/* Run as an unprivileged user when root: root may write anywhere. */
static void test_unwritable_dir(void **state)
{
	struct fixture *fx = *state;
	struct sb_host host = test_host();
	char ro[128], path[192], want[256];
	int status = -1;
	pid_t pid;

	snprintf(ro, sizeof(ro), "%s/ro", fx->dir);
	snprintf(path, sizeof(path), "%s/x.h5", ro);
	snprintf(want, sizeof(want), "cannot create '%s': %s", path, strerror(EACCES));
	assert_int_equal(chmod(fx->dir, 0755), 0);
	assert_int_equal(mkdir(ro, 0555), 0);
	assert_int_equal(chmod(ro, 0555), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256] = "";
		struct sb_h5 *f;

		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(3);
		f = h5_create(path, &host, 0, err, sizeof(err));
		if (f) {
			h5_abort(f);
			_exit(1);
		}
		if (strcmp(err, want) != 0) {
			fprintf(stderr, "got \"%s\"\nwant \"%s\"\n", err, want);
			_exit(2);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(exists(path));
}

static void write_raw_schema(const char *path, int version)
{
	hid_t file, space, a;

	file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(file >= 0);
	space = H5Screate(H5S_SCALAR);
	a = H5Acreate2(file, "schema_version", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(a >= 0);
	assert_true(H5Awrite(a, H5T_NATIVE_INT, &version) >= 0);
	H5Aclose(a);
	H5Sclose(space);
	H5Fclose(file);
}

static void test_wrong_schema(void **state)
{
	struct fixture *fx = *state;
	struct sb_run *out = NULL;
	char want[256];
	size_t n = 0;

	write_raw_schema(fx->path, 99);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "'%s' has schema version 99, this sampbench reads 1 and %d",
		 fx->path, SB_SCHEMA_VERSION);
	assert_string_equal(fx->err, want);
	assert_null(out);
	assert_int_equal(n, 0);
}

static void test_missing_parts(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in = run_ok();
	struct sb_run *out = NULL;
	char want[256];
	hid_t file;
	size_t n = 0;

	/* Right version, nothing else. */
	write_raw_schema(fx->path, SB_SCHEMA_VERSION);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "'%s' has no readable attribute host", fx->path);
	assert_string_equal(fx->err, want);
	unlink(fx->path);

	/* A run group without its threads dataset. */
	write_file(fx->path, &in, 1);
	file = H5Fopen(fx->path, H5F_ACC_RDWR, H5P_DEFAULT);
	assert_true(file >= 0);
	assert_true(H5Ldelete(file, "run_000001/threads", H5P_DEFAULT) >= 0);
	H5Fclose(file);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "'%s' has no dataset /run_000001/threads", fx->path);
	assert_string_equal(fx->err, want);
	assert_null(out);

	/* A /runs row pointing at a group that is gone. */
	file = H5Fopen(fx->path, H5F_ACC_RDWR, H5P_DEFAULT);
	assert_true(file >= 0);
	assert_true(H5Ldelete(file, "run_000001", H5P_DEFAULT) >= 0);
	H5Fclose(file);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "'%s' has no group /run_000001", fx->path);
	assert_string_equal(fx->err, want);
	run_free(&in);
}

static void test_not_hdf5(void **state)
{
	struct fixture *fx = *state;
	struct sb_run *out = NULL;
	char want[256];
	size_t n = 0;
	FILE *fp;

	fp = fopen(fx->path, "w");
	assert_non_null(fp);
	fputs("time_ns,tid\n1,2\n", fp);
	fclose(fp);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "'%s' is not an HDF5 file", fx->path);
	assert_string_equal(fx->err, want);

	unlink(fx->path);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "cannot open '%s': %s", fx->path, strerror(ENOENT));
	assert_string_equal(fx->err, want);
}

/* Longest a damaged schema 1 read may take: h5_read's child limit (5 s on a small file,
 * 3 times that in a sanitizer build) plus the real read. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define READ_ALARM_S 40
#else
#define READ_ALARM_S 15
#endif

/* In a forked reader: a crash must kill it, not run cmocka's handler (which would longjmp
 * back into the test runner and go on with the tests in the child). */
static void default_crash_signals(void)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS };

	for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
		signal(crash[i], SIG_DFL);
}

#if defined(__linux__)
/* Opens of a results file by the reader, counted in the process opens_pid only (the
 * trial reads' children are not counted): the link wraps open_h5 (Makefile). */
static pid_t opens_pid;
static int opens;
hid_t __real_open_h5(const char *path, unsigned flags, hid_t fapl);
hid_t __wrap_open_h5(const char *path, unsigned flags, hid_t fapl);
hid_t __wrap_open_h5(const char *path, unsigned flags, hid_t fapl)
{
	if (getpid() == opens_pid)
		opens++;
	return __real_open_h5(path, flags, fapl);
}
#define CALLER_OPENS() opens
#else
static pid_t opens_pid;
#define CALLER_OPENS() 0 /* ld64 has no --wrap: not counted */
#endif

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	FILE *fp = fopen(path, "rb");

	assert_non_null(fp);
	assert_int_equal(fstat(fileno(fp), &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, fp), (size_t)st.st_size);
	fclose(fp);
	*len = (size_t)st.st_size;
	return buf;
}

/* The same file read from memory gives the same runs; a cut image is refused in a line. */
static void test_image(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in[2] = { run_ok(), run_skipped() };
	struct sb_host want = test_host(), host;
	struct sb_run *out = NULL;
	unsigned char *img;
	size_t len, n = 0;

	write_file(fx->path, in, 2);
	img = slurp(fx->path, &len);
	assert_int_equal(h5_read_image(img, len, "mem.h5", &host, &out, &n, 1, fx->err,
				       sizeof(fx->err)), 0);
	assert_same_host(&want, &host);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < 2; i++)
		assert_same_run(&in[i], &out[i], 1);
	free_runs(out, n);
	out = NULL;
	assert_int_equal(h5_read_image(img, len / 2, "mem.h5", &host, &out, &n, 1, fx->err,
				       sizeof(fx->err)), -1);
	assert_null(out);
	assert_non_null(strstr(fx->err, "'mem.h5'"));
	assert_null(strchr(fx->err, '\n'));
	free(img);
	for (size_t i = 0; i < 2; i++)
		run_free(&in[i]);
}

/* Rows of dataset loc/name read straight through libhdf5 into memtype's layout (its
 * fields taken from the file's by name). Returns the malloc'd rows, *n their count. */
static void *raw_rows(hid_t loc, const char *name, hid_t memtype, size_t *n)
{
	hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
	hsize_t dims = 0;

	if (d < 0)
		fail_msg("no dataset %s", name);
	hid_t space = H5Dget_space(d);
	assert_int_equal(H5Sget_simple_extent_dims(space, &dims, NULL), 1);
	H5Sclose(space);
	void *buf = calloc(dims ? dims : 1, H5Tget_size(memtype));
	assert_non_null(buf);
	if (dims)
		assert_true(H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
	H5Dclose(d);
	*n = (size_t)dims;
	return buf;
}

static hid_t str_t(size_t len)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, len);
	H5Tset_strpad(t, H5T_STR_NULLTERM);
	H5Tset_cset(t, H5T_CSET_UTF8); /* as written: libhdf5 converts no character set */
	return t;
}

/* A /runs row of a schema 1 file, the columns compared here. */
struct raw_run {
	int64_t run_id;
	char group[32], sampler[48], workload[48];
	int32_t threads;
	double hz, duration_s;
	int32_t repetition;
	char status[16], reason[192], start_time[32];
	double wall_s;
	uint64_t nsamples;
};

struct raw_named {
	char name[48];
	double value;
};

#define INSERT(t, type, field, ht) H5Tinsert(t, #field, offsetof(type, field), ht)

/* Compares every run h5_read gave (out[0..n), samples loaded) with the file's own tables
 * read straight through libhdf5: the /runs row, and each run group's metrics, threads,
 * stats, samples and frames. */
static void assert_runs_as_stored(const char *path, const struct sb_run *out, size_t n)
{
	hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t s32 = str_t(32), s48 = str_t(48), s16 = str_t(16), s192 = str_t(192);
	hid_t rt = H5Tcreate(H5T_COMPOUND, sizeof(struct raw_run));
	hid_t nt = H5Tcreate(H5T_COMPOUND, sizeof(struct raw_named));
	hid_t tt = H5Tcreate(H5T_COMPOUND, sizeof(struct sb_thread_row));
	hid_t st = H5Tcreate(H5T_COMPOUND, sizeof(struct sb_sample));
	size_t nrows, total_samples = 0;

	assert_true(file >= 0);
	INSERT(rt, struct raw_run, run_id, H5T_NATIVE_INT64);
	INSERT(rt, struct raw_run, group, s32);
	INSERT(rt, struct raw_run, sampler, s48);
	INSERT(rt, struct raw_run, workload, s48);
	INSERT(rt, struct raw_run, threads, H5T_NATIVE_INT32);
	INSERT(rt, struct raw_run, hz, H5T_NATIVE_DOUBLE);
	INSERT(rt, struct raw_run, duration_s, H5T_NATIVE_DOUBLE);
	INSERT(rt, struct raw_run, repetition, H5T_NATIVE_INT32);
	INSERT(rt, struct raw_run, status, s16);
	INSERT(rt, struct raw_run, reason, s192);
	INSERT(rt, struct raw_run, start_time, s32);
	INSERT(rt, struct raw_run, wall_s, H5T_NATIVE_DOUBLE);
	INSERT(rt, struct raw_run, nsamples, H5T_NATIVE_UINT64);
	INSERT(nt, struct raw_named, name, s48);
	INSERT(nt, struct raw_named, value, H5T_NATIVE_DOUBLE);
	INSERT(tt, struct sb_thread_row, index, H5T_NATIVE_INT32);
	INSERT(tt, struct sb_thread_row, tid, H5T_NATIVE_INT32);
	INSERT(tt, struct sb_thread_row, os_threads, H5T_NATIVE_UINT32);
	INSERT(tt, struct sb_thread_row, cpu_ns, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, alive_ns, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, offcpu_ns, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, ops, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, checksum_errors, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, eintr, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, short_io, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, samples, H5T_NATIVE_UINT64);
	INSERT(tt, struct sb_thread_row, weight_ns, H5T_NATIVE_DOUBLE);
	INSERT(st, struct sb_sample, time_ns, H5T_NATIVE_UINT64);
	INSERT(st, struct sb_sample, tid, H5T_NATIVE_INT32);
	INSERT(st, struct sb_sample, thread_index, H5T_NATIVE_INT32);
	INSERT(st, struct sb_sample, weight_ns, H5T_NATIVE_DOUBLE);
	INSERT(st, struct sb_sample, stop_latency_ns, H5T_NATIVE_DOUBLE);
	INSERT(st, struct sb_sample, suspend_window_ns, H5T_NATIVE_DOUBLE);
	INSERT(st, struct sb_sample, depth, H5T_NATIVE_UINT32);
	INSERT(st, struct sb_sample, flags, H5T_NATIVE_UINT32);
	INSERT(st, struct sb_sample, frame_offset, H5T_NATIVE_UINT64);

	struct raw_run *rows = raw_rows(file, "runs", rt, &nrows);
	assert_int_equal(nrows, n);
	for (size_t i = 0; i < n; i++) {
		const struct raw_run *w = &rows[i];
		const struct sb_run *r = &out[i];
		size_t k, nm, nth, nst, nsa, nfr, found = 0;

		assert_int_equal(r->run_id, w->run_id);
		assert_string_equal(r->sampler, w->sampler);
		assert_string_equal(r->workload, w->workload);
		assert_int_equal(r->threads, w->threads);
		assert_same_double(r->hz, w->hz);
		assert_same_double(r->duration_s, w->duration_s);
		assert_int_equal(r->repetition, w->repetition);
		assert_string_equal(run_status_name(r->status), w->status);
		assert_string_equal(r->reason, w->reason);
		assert_string_equal(r->start_time, w->start_time);
		assert_same_double(r->wall_s, w->wall_s);
		assert_int_equal(r->nsamples, w->nsamples);
		hid_t g = H5Gopen2(file, w->group, H5P_DEFAULT);
		assert_true(g >= 0);
		struct raw_named *m = raw_rows(g, "metrics", nt, &nm);
		for (k = 0; k < nm; k++)
			for (size_t j = 0; j < sb_metric_count; j++)
				if (!strcmp(m[k].name, sb_metric_infos[j].name)) {
					assert_same_double(*(const double *)((const char *)&r->metrics +
									sb_metric_infos[j].offset),
							   m[k].value);
					found++;
				}
		assert_true(found > 0);
		struct sb_thread_row *th = raw_rows(g, "threads", tt, &nth);
		assert_int_equal(r->nthread_rows, nth);
		struct raw_named *sts = raw_rows(g, "stats", nt, &nst);
		assert_int_equal(r->nstats, nst);
		for (k = 0; k < nst; k++) {
			assert_string_equal(r->stats[k].name, sts[k].name);
			assert_same_double(r->stats[k].value, sts[k].value);
		}
		struct sb_sample *sa = raw_rows(g, "samples", st, &nsa);
		assert_int_equal(r->nsamples, nsa);
		uint64_t *fr = raw_rows(g, "frames", H5T_NATIVE_UINT64, &nfr);
		assert_int_equal(r->nframes, nfr);
		/* r with the tables read here: equal field by field (not byte by byte: a thread
		 * row has padding) */
		struct sb_run stored = *r;
		char why[300];
		stored.thread_rows = th;
		stored.samples = sa;
		stored.frames = fr;
		if (runcmp(r, &stored, 0, why, sizeof(why)) != 0)
			fail_msg("run %lld: the reader's %s", (long long)r->run_id, why);
		total_samples += nsa;
		free(m);
		free(th);
		free(sts);
		free(sa);
		free(fr);
		H5Gclose(g);
	}
	/* a file with samples in it, or the comparison above compared little */
	assert_true(total_samples > 0);
	free(rows);
	H5Tclose(rt);
	H5Tclose(nt);
	H5Tclose(tt);
	H5Tclose(st);
	H5Tclose(s16);
	H5Tclose(s32);
	H5Tclose(s48);
	H5Tclose(s192);
	H5Fclose(file);
}

/* The committed baseline is schema 1: it still reads, with the schema 2 fields empty, and
 * every run as the file stores it. */
static void test_schema1(void **state)
{
	struct fixture *fx = *state;
	const char *legacy = "results/baselines/legacy-vm-879d8c6.h5";
	struct sb_run *out = NULL;
	struct sb_host host;
	size_t n = 0;

	if (h5_read(legacy, &host, &out, &n, 1, fx->err, sizeof(fx->err)) != 0)
		fail_msg("%s", fx->err);
	assert_true(n > 0);
	assert_runs_as_stored(legacy, out, n);
	assert_true(host.nproc > 0);
	assert_string_equal(host.fingerprint, "");
	assert_int_equal(host.nfacts, 0);
	assert_int_equal(host.ncalib, 0);
	assert_true(isnan(host_fact(&host, "rendezvous_p99_ns")));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out[i].variant, "");
		/* written before the progress clock: no pause tables, pause metrics NaN */
		assert_int_equal(out[i].nprogress, 0);
		assert_int_equal(out[i].npause_hist, 0);
		assert_true(isnan(out[i].metrics.pause_fraction));
		/* and before thread names: no `thread_names`, every name "" */
		for (size_t k = 0; k < out[i].nthread_rows; k++)
			assert_string_equal(out[i].thread_rows[k].name, "");
	}
	free_runs(out, n);
}

/* A damaged extent (a billion samples in a few bytes) is refused before any allocation. */
static void test_huge_extent(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in = run_ok();
	struct sb_run *out = NULL;
	hsize_t big = 1000000000ull;
	hid_t file, d;
	size_t n = 0;

	write_file(fx->path, &in, 1);
	file = H5Fopen(fx->path, H5F_ACC_RDWR, H5P_DEFAULT);
	assert_true(file >= 0);
	d = H5Dopen2(file, "run_000001/samples", H5P_DEFAULT);
	assert_true(d >= 0);
	assert_true(H5Dset_extent(d, &big) >= 0);
	H5Dclose(d);
	H5Fclose(file);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 1, fx->err, sizeof(fx->err)), -1);
	assert_non_null(strstr(fx->err, "has a malformed dataset /run_000001/samples"));
	assert_null(out);
	run_free(&in);
}

/* A schema 2 file never has variable-length strings: one is refused, not followed. */
static void test_vlen_refused(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in = run_ok();
	struct sb_run *out = NULL;
	const char *val = "vlen-host";
	hid_t file, t, space, a;
	char want[256];
	size_t n = 0;

	write_file(fx->path, &in, 1);
	file = H5Fopen(fx->path, H5F_ACC_RDWR, H5P_DEFAULT);
	assert_true(file >= 0);
	assert_true(H5Adelete(file, "host") >= 0);
	t = H5Tcopy(H5T_C_S1);
	assert_true(H5Tset_size(t, H5T_VARIABLE) >= 0);
	space = H5Screate(H5S_SCALAR);
	a = H5Acreate2(file, "host", t, space, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(a >= 0);
	assert_true(H5Awrite(a, t, &val) >= 0);
	H5Aclose(a);
	H5Sclose(space);
	H5Tclose(t);
	H5Fclose(file);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "'%s' has no readable attribute host", fx->path);
	assert_string_equal(fx->err, want);
	run_free(&in);
}

/* Damage: 400 copies of a 3-run file image, each with 1 to 8 random bytes changed, read in
 * a child each. No child may die of a signal or run 10 s; each read fails with one line
 * naming the file, or gives the runs and host written, value for value; and the checksums
 * must catch most of the damage. */
static void test_corruption(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in[3] = { run_ok(), run_failed(), run_skipped() };
	struct sb_host want = test_host(), host;
	unsigned char *img, *bad;
	unsigned seed = 12345;
	size_t len, refused = 0, total = 400;

	write_file(fx->path, in, 3);
	img = slurp(fx->path, &len);
	bad = malloc(len);
	assert_non_null(bad);
	for (size_t k = 0; k < total; k++) {
		int status = 0, nbytes = 1 + (int)(rand_r(&seed) % 8);
		pid_t pid;

		memcpy(bad, img, len);
		for (int b = 0; b < nbytes; b++)
			bad[rand_r(&seed) % len] ^= (unsigned char)(1 + rand_r(&seed) % 255);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct sb_run *out = NULL;
			char err[512] = "";
			size_t n = 0;
			int rc;

			default_crash_signals();
			alarm(10);
			rc = h5_read_image(bad, len, "bad.h5", &host, &out, &n, 1, err, sizeof(err));
			if (rc == 0) {
				/* read: then exactly what was written */
				char why[300] = "";
				int same = n == 3 && hostcmp(&want, &host, why, sizeof(why)) == 0;
				for (size_t i = 0; same && i < n; i++)
					same = runcmp(&in[i], &out[i], 0, why, sizeof(why)) == 0;
				if (!same)
					fprintf(stderr, "corruption %zu: read %zu runs, not the file "
						"written: %s\n", k, n, why);
				for (size_t i = 0; i < n; i++)
					run_free(&out[i]);
				free(out);
				_exit(same ? 0 : 4);
			}
			if (!err[0] || strchr(err, '\n') || !strstr(err, "'bad.h5'")) {
				fprintf(stderr, "corruption %zu: bad error \"%s\"\n", k, err);
				_exit(3);
			}
			_exit(1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFSIGNALED(status))
			fail_msg("corruption %zu: reader killed by signal %d", k, WTERMSIG(status));
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == 3)
			fail_msg("corruption %zu: error is not one line naming the file", k);
		if (WEXITSTATUS(status) == 4)
			fail_msg("corruption %zu: read, and not equal to the file written", k);
		refused += WEXITSTATUS(status) == 1;
	}
	print_message("corruption: %zu of %zu damaged images refused, the rest read equal to "
		      "the original\n", refused, total);
	/* metadata checksums and Fletcher32 over the data catch almost all damage; what they
	 * miss is padding and free space */
	assert_true(refused >= total / 2);
	free(bad);
	free(img);
	for (size_t i = 0; i < 3; i++)
		run_free(&in[i]);
}

/* A schema 1 file (tests/data/schema1-2runs.h5, written by sampbench at 26189d1) has no
 * checksums and variable-length string attributes, which libhdf5 follows unchecked: damaged
 * copies may crash or hang libhdf5, and h5_read must still answer in one line (it reads such
 * a file in a child first, and opens it itself only when that child read it whole). 60
 * copies, each read in a child of the test too, so a crash that escapes the guard fails
 * the test instead of killing it. Each copy that is read is compared with the original,
 * value by value. */
static void test_schema1_damage(void **state)
{
#if defined(__SANITIZE_THREAD__)
	/* A damaged vlen length sends libhdf5 into a memcpy of hundreds of GB (H5HG_read);
	 * a plain or ASan build faults at once and the copy is refused as a crash, but
	 * ThreadSanitizer's memcpy interceptor first maps shadow for the whole range, so 6
	 * of the 60 copies ran into the 15 s limit (110 s of the TSan make check). The
	 * reader is single-threaded: ThreadSanitizer has nothing to find here. */
	print_message("skipped under ThreadSanitizer: a damaged vlen length makes its memcpy "
		      "interceptor map shadow for hundreds of GB instead of faulting\n");
	skip();
#endif
	struct fixture *fx = *state;
	unsigned char *img, *bad;
	unsigned seed = 4242;
	size_t len, refused = 0, total = 60;
	char path[192];

	struct sb_run *orig = NULL;
	struct sb_host orig_host;
	size_t norig = 0, differ = 0;

	assert_int_equal(h5_read("tests/data/schema1-2runs.h5", &orig_host, &orig, &norig, 1,
				 fx->err, sizeof(fx->err)), 0);
	img = slurp("tests/data/schema1-2runs.h5", &len);
	bad = malloc(len);
	assert_non_null(bad);
	snprintf(path, sizeof(path), "%s/v1.h5", fx->dir);
	for (size_t k = 0; k < total; k++) {
		int status = 0, nbytes = 1 + (int)(rand_r(&seed) % 50);
		FILE *fp;
		pid_t pid;

		memcpy(bad, img, len);
		for (int b = 0; b < nbytes; b++)
			bad[rand_r(&seed) % len] = (unsigned char)rand_r(&seed);
		fp = fopen(path, "wb");
		assert_non_null(fp);
		assert_int_equal(fwrite(bad, 1, len, fp), len);
		fclose(fp);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct sb_run *out = NULL;
			struct sb_host host;
			char err[512] = "", why[256] = "";
			size_t n = 0;

			default_crash_signals();
			alarm(READ_ALARM_S);
			opens_pid = getpid();
			if (h5_read(path, &host, &out, &n, 1, err, sizeof(err)) == 0) {
				if (CALLER_OPENS() == 0)
					_exit(5);
				/* read: it must be the original, value by value */
				int same = n == norig && hostcmp(&host, &orig_host, why, sizeof(why)) == 0;
				for (size_t i = 0; same && i < n; i++)
					same = runcmp(&out[i], &orig[i], 0, why, sizeof(why)) == 0;
				if (!same)
					fprintf(stderr, "schema 1 corruption %zu read with other content: "
						"%s\n", k, n == norig ? why : "another run count");
				_exit(same ? 0 : 6);
			}
			if (CALLER_OPENS() > 0)
				_exit(4);
			_exit(!err[0] || strchr(err, '\n') || !strstr(err, path) ? 3 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFSIGNALED(status))
			fail_msg("schema 1 corruption %zu: reader killed by signal %d", k,
				 WTERMSIG(status));
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == 3)
			fail_msg("schema 1 corruption %zu: error is not one line naming the file", k);
		/* Only the child's trial read may open a damaged schema 1 file before that read
		 * proved it sound: a refused one is never opened by the reader itself. */
		if (WEXITSTATUS(status) == 4)
			fail_msg("schema 1 corruption %zu: refused, but opened by the reader", k);
		if (WEXITSTATUS(status) == 5)
			fail_msg("schema 1 corruption %zu: read, but not by the reader", k);
		refused += WEXITSTATUS(status) == 1;
		differ += WEXITSTATUS(status) == 6;
	}
	print_message("schema 1 corruption: %zu of %zu damaged copies refused, %zu read equal to "
		      "the original, %zu read with other content\n", refused, total,
		      total - refused - differ, differ);
	assert_true(refused >= total / 2);
	/* Refused or read equal: a damaged chunk index (rows that would read as zeros) is
	 * refused by the reader's check that every chunk is stored (before it, 2 of these 60
	 * read with other content). Schema 1 has no checksums, so a byte changed inside a
	 * string value would still read as that value; none of this seed's copies changes one
	 * without also damaging structure the reader refuses. */
	assert_int_equal(differ, 0);
	for (size_t i = 0; i < norig; i++)
		run_free(&orig[i]);
	free(orig);
	free(bad);
	free(img);
}

/* A `thread_names` row as a test writes it by hand. */
struct raw_name {
	int32_t index;
	char name[16];
};

/* Replaces run_000001/thread_names of path by rows[0..n) (n < 0: deletes it). */
static void put_names(const char *path, const struct raw_name *rows, int n)
{
	hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	const char *name = "run_000001/thread_names";

	assert_true(file >= 0);
	if (H5Lexists(file, name, H5P_DEFAULT) > 0)
		assert_true(H5Ldelete(file, name, H5P_DEFAULT) >= 0);
	if (n >= 0) {
		hid_t s16 = str_t(16), t = H5Tcreate(H5T_COMPOUND, sizeof(struct raw_name));
		hsize_t dims = (hsize_t)n;
		INSERT(t, struct raw_name, index, H5T_NATIVE_INT32);
		INSERT(t, struct raw_name, name, s16);
		hid_t space = H5Screate_simple(1, &dims, NULL);
		hid_t d = H5Dcreate2(file, name, t, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		assert_true(d >= 0);
		assert_true(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
		H5Dclose(d);
		H5Sclose(space);
		H5Tclose(t);
		H5Tclose(s16);
	}
	H5Fclose(file);
}

/* Thread names: only known ones are stored; a file without `thread_names` reads with ""
 * names; a name is cut to 15 bytes and terminated; a name for a slot the run has no
 * thread in (or out of range) is refused in one line. */
static void test_thread_names(void **state)
{
	struct fixture *fx = *state;
	struct sb_run in = run_ok();
	struct sb_run *out = NULL;
	char want[256];
	size_t n = 0;

	write_file(fx->path, &in, 1);
	hid_t file = H5Fopen(fx->path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t s16 = str_t(16), t = H5Tcreate(H5T_COMPOUND, sizeof(struct raw_name));
	INSERT(t, struct raw_name, index, H5T_NATIVE_INT32);
	INSERT(t, struct raw_name, name, s16);
	size_t nraw;
	struct raw_name *raw = raw_rows(file, "run_000001/thread_names", t, &nraw);
	assert_int_equal(nraw, 1); /* slot 1's name is unknown: no row */
	assert_int_equal(raw[0].index, 0);
	assert_string_equal(raw[0].name, "balanced-0");
	free(raw);
	H5Tclose(t);
	H5Tclose(s16);
	H5Fclose(file);

	put_names(fx->path, NULL, -1); /* a file from before thread names */
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].thread_rows[0].name, "");
	assert_string_equal(out[0].thread_rows[1].name, "");
	free_runs(out, n);

	struct raw_name full = { 1, { 0 } };
	memset(full.name, 'x', sizeof(full.name)); /* no NUL in the file */
	put_names(fx->path, &full, 1);
	assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)), 0);
	assert_string_equal(out[0].thread_rows[0].name, "");
	assert_string_equal(out[0].thread_rows[1].name, "xxxxxxxxxxxxxxx");
	free_runs(out, n);

	const int32_t bad[] = { 7, -3, 256 }; /* no thread in slot 7; out of range */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct raw_name row = { bad[i], "x" };
		put_names(fx->path, &row, 1);
		out = NULL;
		assert_int_equal(h5_read(fx->path, NULL, &out, &n, 0, fx->err, sizeof(fx->err)),
				 -1);
		snprintf(want, sizeof(want), "'%s' has a name for thread slot %d in "
			 "/run_000001/thread_names, which has no such thread", fx->path,
			 (int)bad[i]);
		assert_string_equal(fx->err, want);
		assert_null(out);
	}
	run_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exists_and_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_hdf5, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_extent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vlen_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corruption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema1_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_names, setup, teardown),
	};

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
