/* runcmp.c - runs and hosts compared value by value (runcmp.h). */
#include "tests/support/runcmp.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Writes the difference into why and returns -1. */
static int differ(char *why, size_t len, const char *fmt, ...)
{
	if (why && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* The comparisons below stop at the first difference: each names the field and the row. */
#define CMP_STR(what, x, y)                                                                \
	do {                                                                               \
		if (strcmp((x), (y)))                                                      \
			return differ(why, len, "%s: '%s' != '%s'", what, (x), (y));       \
	} while (0)
#define CMP_INT(what, x, y)                                                                \
	do {                                                                               \
		if ((int64_t)(x) != (int64_t)(y))                                          \
			return differ(why, len, "%s: %" PRId64 " != %" PRId64, what,      \
				      (int64_t)(x), (int64_t)(y));                         \
	} while (0)
#define CMP_DBL(what, x, y)                                                                \
	do {                                                                               \
		if (!same_double((x), (y)))                                                \
			return differ(why, len, "%s: %.17g != %.17g", what, (double)(x),   \
				      (double)(y));                                        \
	} while (0)
#define CMP_ROW_INT(table, i, field) \
	CMP_INT(name_row(nm, sizeof(nm), table, i, #field), x->field, y->field)
#define CMP_ROW_DBL(table, i, field) \
	CMP_DBL(name_row(nm, sizeof(nm), table, i, #field), x->field, y->field)
#define CMP_ROW_STR(table, i, field) \
	CMP_STR(name_row(nm, sizeof(nm), table, i, #field), x->field, y->field)

static const char *name_row(char *buf, size_t n, const char *table, size_t i, const char *field)
{
	snprintf(buf, n, "%s[%zu].%s", table, i, field);
	return buf;
}

/* Compares a and b (runcmp.h). */
int runcmp(const struct sb_run *a, const struct sb_run *b, unsigned flags, char *why,
	   size_t len)
{
	char nm[96];

	if (!(flags & RUNCMP_NO_ID)) {
		CMP_INT("run_id", a->run_id, b->run_id);
		CMP_INT("repetition", a->repetition, b->repetition);
	}
	CMP_STR("sampler", a->sampler, b->sampler);
	CMP_STR("workload", a->workload, b->workload);
	CMP_INT("threads", a->threads, b->threads);
	CMP_DBL("hz", a->hz, b->hz);
	CMP_DBL("duration_s", a->duration_s, b->duration_s);
	CMP_INT("status", a->status, b->status);
	CMP_STR("reason", a->reason, b->reason);
	CMP_STR("start_time", a->start_time, b->start_time);
	CMP_INT("clock", a->clock, b->clock);
	CMP_DBL("wall_s", a->wall_s, b->wall_s);
	CMP_STR("variant", a->variant, b->variant);
	for (size_t i = 0; i < sb_metric_count; i++) {
		size_t off = sb_metric_infos[i].offset;
		CMP_DBL(sb_metric_infos[i].name, *(const double *)((const char *)&a->metrics + off),
			*(const double *)((const char *)&b->metrics + off));
	}
	CMP_INT("thread rows", a->nthread_rows, b->nthread_rows);
	for (size_t i = 0; i < a->nthread_rows; i++) {
		const struct sb_thread_row *x = &a->thread_rows[i], *y = &b->thread_rows[i];
		CMP_ROW_INT("threads", i, index);
		CMP_ROW_INT("threads", i, tid);
		CMP_ROW_INT("threads", i, os_threads);
		CMP_ROW_INT("threads", i, cpu_ns);
		CMP_ROW_INT("threads", i, alive_ns);
		CMP_ROW_INT("threads", i, offcpu_ns);
		CMP_ROW_INT("threads", i, ops);
		CMP_ROW_INT("threads", i, checksum_errors);
		CMP_ROW_INT("threads", i, eintr);
		CMP_ROW_INT("threads", i, short_io);
		CMP_ROW_INT("threads", i, samples);
		CMP_ROW_DBL("threads", i, weight_ns);
		CMP_ROW_STR("threads", i, name);
	}
	CMP_INT("stats rows", a->nstats, b->nstats);
	for (size_t i = 0; i < a->nstats; i++) {
		const struct sb_stat_row *x = &a->stats[i], *y = &b->stats[i];
		CMP_ROW_STR("stats", i, name);
		CMP_ROW_DBL("stats", i, value);
	}
	CMP_INT("progress rows", a->nprogress, b->nprogress);
	for (size_t i = 0; i < a->nprogress; i++) {
		const struct sb_progress_row *x = &a->progress[i], *y = &b->progress[i];
		CMP_ROW_INT("progress", i, index);
		CMP_ROW_INT("progress", i, active_ns);
		CMP_ROW_INT("progress", i, steps);
		CMP_ROW_INT("progress", i, step_ns);
		CMP_ROW_INT("progress", i, pauses);
		CMP_ROW_INT("progress", i, pause_ns);
		CMP_ROW_INT("progress", i, logged);
	}
	CMP_INT("pause_hist rows", a->npause_hist, b->npause_hist);
	for (size_t i = 0; i < a->npause_hist; i++) {
		const struct sb_pause_bucket *x = &a->pause_hist[i], *y = &b->pause_hist[i];
		CMP_ROW_INT("pause_hist", i, index);
		CMP_ROW_INT("pause_hist", i, lo_ns);
		CMP_ROW_INT("pause_hist", i, hi_ns);
		CMP_ROW_INT("pause_hist", i, count);
	}
	if (flags & RUNCMP_NO_SAMPLES)
		return 0;
	CMP_INT("samples", a->nsamples, b->nsamples);
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct sb_sample *x = &a->samples[i], *y = &b->samples[i];
		CMP_ROW_INT("samples", i, time_ns);
		CMP_ROW_INT("samples", i, tid);
		CMP_ROW_INT("samples", i, thread_index);
		CMP_ROW_DBL("samples", i, weight_ns);
		CMP_ROW_DBL("samples", i, stop_latency_ns);
		CMP_ROW_DBL("samples", i, suspend_window_ns);
		CMP_ROW_INT("samples", i, depth);
		CMP_ROW_INT("samples", i, flags);
		CMP_ROW_INT("samples", i, frame_offset);
	}
	CMP_INT("frames", a->nframes, b->nframes);
	for (size_t i = 0; i < a->nframes; i++)
		CMP_INT(name_row(nm, sizeof(nm), "frames", i, "pc"), a->frames[i], b->frames[i]);
	CMP_INT("symbols", a->nsymbols, b->nsymbols);
	for (size_t i = 0; i < a->nsymbols; i++) {
		const struct sb_symbol *x = &a->symbols[i], *y = &b->symbols[i];
		CMP_ROW_INT("symbols", i, pc);
		CMP_ROW_STR("symbols", i, module);
		CMP_ROW_STR("symbols", i, function);
		CMP_ROW_INT("symbols", i, offset);
	}
	CMP_INT("symbol_inlines", a->ninlines, b->ninlines);
	for (size_t i = 0; i < a->ninlines; i++) {
		const struct sb_inline_frame *x = &a->inlines[i], *y = &b->inlines[i];
		CMP_ROW_INT("symbol_inlines", i, pc);
		CMP_ROW_INT("symbol_inlines", i, depth);
		CMP_ROW_STR("symbol_inlines", i, function);
		CMP_ROW_STR("symbol_inlines", i, call_file);
		CMP_ROW_INT("symbol_inlines", i, call_line);
	}
	CMP_INT("gaps", a->ngaps, b->ngaps);
	for (size_t i = 0; i < a->ngaps; i++) {
		const struct sb_gap_row *x = &a->gaps[i], *y = &b->gaps[i];
		CMP_ROW_INT("gaps", i, index);
		CMP_ROW_INT("gaps", i, start_ns);
		CMP_ROW_INT("gaps", i, gap_ns);
		CMP_ROW_INT("gaps", i, pause_ns);
	}
	return 0;
}

/* Compares two hosts (runcmp.h). */
int hostcmp(const struct sb_host *a, const struct sb_host *b, char *why, size_t len)
{
	char nm[96];

	CMP_STR("host", a->host, b->host);
	CMP_STR("kernel", a->kernel, b->kernel);
	CMP_INT("nproc", a->nproc, b->nproc);
	CMP_INT("tick_hz", a->tick_hz, b->tick_hz);
	CMP_STR("tick_source", a->tick_source, b->tick_source);
	CMP_STR("compiler", a->compiler, b->compiler);
	CMP_STR("version", a->version, b->version);
	CMP_STR("git_rev", a->git_rev, b->git_rev);
	CMP_STR("build", a->build, b->build);
	CMP_STR("fingerprint", a->fingerprint, b->fingerprint);
	CMP_INT("host facts", a->nfacts, b->nfacts);
	for (int i = 0; i < a->nfacts; i++) {
		const struct sb_host_fact *x = &a->facts[i], *y = &b->facts[i];
		CMP_ROW_STR("facts", (size_t)i, name);
		CMP_ROW_DBL("facts", (size_t)i, value);
	}
	CMP_INT("calibration rows", a->ncalib, b->ncalib);
	for (int i = 0; i < a->ncalib; i++) {
		const struct sb_calib_row *x = &a->calib[i], *y = &b->calib[i];
		CMP_ROW_STR("calibration", (size_t)i, name);
		CMP_ROW_STR("calibration", (size_t)i, phase);
		CMP_ROW_INT("calibration", (size_t)i, n);
		CMP_ROW_DBL("calibration", (size_t)i, p50_ns);
		CMP_ROW_DBL("calibration", (size_t)i, p99_ns);
		CMP_ROW_DBL("calibration", (size_t)i, max_ns);
		CMP_ROW_STR("calibration", (size_t)i, reason);
	}
	return 0;
}

/* The first run of runs[0..n) of a's cell and repetition (runcmp.h). */
const struct sb_run *runcmp_find(const struct sb_run *a, const struct sb_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		if (!strcmp(r->sampler, a->sampler) && !strcmp(r->workload, a->workload) &&
		    r->threads == a->threads && same_double(r->hz, a->hz) &&
		    r->repetition == a->repetition && !strcmp(r->variant, a->variant))
			return r;
	}
	return NULL;
}
