/* h5io_schema.c - the layout of sampbench's HDF5 files (one group per run plus the /runs
 * index table): the field tables and the HDF5 types built from them.
 *
 * Every table is a 1-D compound dataset with an unlimited maximum extent, chunked,
 * shuffled, deflate-compressed and Fletcher32-checksummed, so zero rows work and
 * h5py/pandas read it in one call. Schema 2 files use the newest HDF5 file format
 * (checksummed metadata) and only fixed-length NUL-terminated strings: no global heap, so
 * a damaged file is reported instead of crashing the reader. Each dataset has a `units`
 * attribute: one string per column.
 *
 * Reading trusts nothing in the file: every count is checked against the file's size and
 * our limits before anything is allocated, every string is terminated, every index
 * (frame offsets, thread slots) is range-checked. Schema 1 files (variable-length string
 * attributes, no checksums) are still read. */
#include "results/h5io_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLD(type, member, k) \
	{ #member, offsetof(struct type, member), k, sizeof(((struct type *)0)->member) }

const struct field sample_fields[] = {
	FLD(sb_sample, time_ns, K_U64),
	FLD(sb_sample, tid, K_I32),
	FLD(sb_sample, thread_index, K_I32),
	FLD(sb_sample, weight_ns, K_F64),
	FLD(sb_sample, stop_latency_ns, K_F64),
	FLD(sb_sample, suspend_window_ns, K_F64),
	FLD(sb_sample, depth, K_U32),
	FLD(sb_sample, flags, K_U32),
	FLD(sb_sample, frame_offset, K_U64),
	FLD(sb_sample, ticks, K_U32), /* absent in older files: read as 0, one tick */
};

const struct field thread_fields[] = {
	FLD(sb_thread_row, index, K_I32),
	FLD(sb_thread_row, tid, K_I32),
	FLD(sb_thread_row, os_threads, K_U32),
	FLD(sb_thread_row, cpu_ns, K_U64),
	FLD(sb_thread_row, alive_ns, K_U64),
	FLD(sb_thread_row, offcpu_ns, K_U64),
	FLD(sb_thread_row, ops, K_U64),
	FLD(sb_thread_row, checksum_errors, K_U64),
	FLD(sb_thread_row, eintr, K_U64),
	FLD(sb_thread_row, short_io, K_U64),
	FLD(sb_thread_row, samples, K_U64),
	FLD(sb_thread_row, weight_ns, K_F64),
};

const struct field stat_fields[] = {
	FLD(sb_stat_row, name, K_STR),
	FLD(sb_stat_row, value, K_F64),
};

const struct field symbol_fields[] = {
	FLD(sb_symbol, pc, K_U64),
	FLD(sb_symbol, module, K_STR),
	FLD(sb_symbol, function, K_STR),
	FLD(sb_symbol, offset, K_U64),
};

const struct field fact_fields[] = {
	FLD(sb_host_fact, name, K_STR),
	FLD(sb_host_fact, value, K_F64),
};

const struct field calib_fields[] = {
	FLD(sb_calib_row, name, K_STR),
	FLD(sb_calib_row, phase, K_STR),
	FLD(sb_calib_row, n, K_I32),
	FLD(sb_calib_row, p50_ns, K_F64),
	FLD(sb_calib_row, p99_ns, K_F64),
	FLD(sb_calib_row, max_ns, K_F64),
	FLD(sb_calib_row, reason, K_STR),
};

const struct field metric_fields[] = {
	FLD(metric_row, name, K_STR),
	FLD(metric_row, value, K_F64),
	FLD(metric_row, unit, K_STR),
};

const struct field runs_fields[] = {
	FLD(runs_row, run_id, K_I64),
	FLD(runs_row, group, K_STR),
	FLD(runs_row, sampler, K_STR),
	FLD(runs_row, workload, K_STR),
	FLD(runs_row, threads, K_I32),
	FLD(runs_row, hz, K_F64),
	FLD(runs_row, duration_s, K_F64),
	FLD(runs_row, repetition, K_I32),
	FLD(runs_row, status, K_STR),
	FLD(runs_row, reason, K_STR),
	FLD(runs_row, start_time, K_STR),
	FLD(runs_row, clock, K_STR),
	FLD(runs_row, wall_s, K_F64),
	FLD(runs_row, nsamples, K_U64),
};

/* The progress clock's tables (docs/hdf5.md "Observed pauses"): optional, a file without
 * them reads as runs without a progress clock. */
const struct field progress_fields[] = {
	FLD(sb_progress_row, index, K_I32),
	FLD(sb_progress_row, active_ns, K_U64),
	FLD(sb_progress_row, steps, K_U64),
	FLD(sb_progress_row, step_ns, K_U64),
	FLD(sb_progress_row, pauses, K_U64),
	FLD(sb_progress_row, pause_ns, K_U64),
	FLD(sb_progress_row, logged, K_U64),
};

const struct field pause_bucket_fields[] = {
	FLD(sb_pause_bucket, index, K_I32),
	FLD(sb_pause_bucket, lo_ns, K_U64),
	FLD(sb_pause_bucket, hi_ns, K_U64),
	FLD(sb_pause_bucket, count, K_U64),
};

const struct field gap_fields[] = {
	FLD(sb_gap_row, index, K_I32),
	FLD(sb_gap_row, start_ns, K_U64),
	FLD(sb_gap_row, gap_ns, K_U64),
	FLD(sb_gap_row, pause_ns, K_U64),
};

/* The names threads gave themselves (docs/hdf5.md "thread_names"): optional, a file
 * without it reads with every name "". */
const struct field thread_name_fields[] = {
	FLD(sb_thread_name_row, index, K_I32),
	FLD(sb_thread_name_row, name, K_STR),
};

/* The inline chains of the symbols' PCs (docs/hdf5.md "symbol_inlines"): optional, a file
 * without it reads with no inline frames. */
const struct field inline_fields[] = {
	FLD(sb_inline_frame, pc, K_U64),
	FLD(sb_inline_frame, depth, K_I32),
	FLD(sb_inline_frame, function, K_STR),
	FLD(sb_inline_frame, call_file, K_STR),
	FLD(sb_inline_frame, call_line, K_I32),
};

const size_t n_inline_fields = ARRAY_SIZE(inline_fields);
const size_t n_thread_name_fields = ARRAY_SIZE(thread_name_fields);
const size_t n_progress_fields = ARRAY_SIZE(progress_fields);
const size_t n_pause_bucket_fields = ARRAY_SIZE(pause_bucket_fields);
const size_t n_gap_fields = ARRAY_SIZE(gap_fields);
const size_t n_sample_fields = ARRAY_SIZE(sample_fields);
const size_t n_thread_fields = ARRAY_SIZE(thread_fields);
const size_t n_stat_fields = ARRAY_SIZE(stat_fields);
const size_t n_symbol_fields = ARRAY_SIZE(symbol_fields);
const size_t n_fact_fields = ARRAY_SIZE(fact_fields);
const size_t n_calib_fields = ARRAY_SIZE(calib_fields);
const size_t n_metric_fields = ARRAY_SIZE(metric_fields);
const size_t n_runs_fields = ARRAY_SIZE(runs_fields);

void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
	char *buf = data;

	if (n == 0 && e->desc && e->desc[0])
		snprintf(buf, 128, "%s", e->desc);
	return 0;
}

/* The innermost message of HDF5's error stack (it is not printed: see H5Eset_auto2). */
const char *h5_why(char buf[128])
{
	snprintf(buf, 128, "HDF5 error");
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, buf);
	return buf;
}

void close_id(hid_t *id)
{
	if (*id >= 0)
		H5Idec_ref(*id);
	*id = -1;
}

/* A fixed-length NUL-terminated string type of size bytes. */
hid_t str_type(size_t size)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	if (t < 0)
		return -1;
	if (H5Tset_size(t, size) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ||
	    H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
		H5Tclose(t);
		return -1;
	}
	return t;
}

hid_t vlen_str_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	if (t < 0)
		return -1;
	if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
		H5Tclose(t);
		return -1;
	}
	return t;
}

static hid_t kind_type(const struct field *f)
{
	hid_t native;

	switch (f->kind) {
	case K_I32: native = H5T_NATIVE_INT32; break;
	case K_U32: native = H5T_NATIVE_UINT32; break;
	case K_I64: native = H5T_NATIVE_INT64; break;
	case K_U64: native = H5T_NATIVE_UINT64; break;
	case K_F64: native = H5T_NATIVE_DOUBLE; break;
	case K_STR: return str_type(f->size);
	default: return -1;
	}
	if (H5Tget_size(native) != f->size)
		return -1;
	return H5Tcopy(native);
}

/* Inserts fields (offsets shifted by base) into compound type t. Returns 0/-1. */
static int insert_fields(hid_t t, const struct field *f, size_t n, size_t base)
{
	for (size_t i = 0; i < n; i++) {
		hid_t m = kind_type(&f[i]);
		herr_t e;

		if (m < 0)
			return -1;
		e = H5Tinsert(t, f[i].name, base + f[i].offset, m);
		H5Tclose(m);
		if (e < 0)
			return -1;
	}
	return 0;
}

/* A compound memory type of size bytes made of fields. */
hid_t compound_type(size_t size, const struct field *f, size_t n)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, size);

	if (t < 0)
		return -1;
	if (insert_fields(t, f, n, 0) < 0) {
		H5Tclose(t);
		return -1;
	}
	return t;
}

/* The /runs memory type; with_variant adds the schema 2 column `variant`, with_metrics
 * one double per metric. A metric named like a fixed column (nsamples) becomes
 * metric_<name>. */
hid_t runs_type(int with_variant, int with_metrics)
{
	hid_t t = compound_type(sizeof(struct runs_row), runs_fields, n_runs_fields);
	hid_t st;

	if (t < 0)
		return t;
	if (with_variant) {
		st = str_type(SB_NAME_LEN);
		if (st < 0 || H5Tinsert(t, "variant", offsetof(struct runs_row, variant), st) < 0) {
			close_id(&st);
			H5Tclose(t);
			return -1;
		}
		close_id(&st);
	}
	if (!with_metrics)
		return t;
	for (size_t i = 0; i < sb_metric_count; i++) {
		const struct sb_metric_info *mi = &sb_metric_infos[i];
		size_t off = offsetof(struct runs_row, metrics) + mi->offset;
		char name[SB_NAME_LEN + 8];

		if (H5Tget_member_index(t, mi->name) >= 0)
			snprintf(name, sizeof(name), "metric_%s", mi->name);
		else
			snprintf(name, sizeof(name), "%s", mi->name);
		if (H5Tinsert(t, name, off, H5T_NATIVE_DOUBLE) < 0) {
			H5Tclose(t);
			return -1;
		}
	}
	return t;
}

const char *column_unit(const char *name)
{
	size_t len;

	if (strncmp(name, "metric_", 7) == 0)
		name += 7;
	len = strlen(name);
	if (len > 3 && strcmp(name + len - 3, "_ns") == 0)
		return "ns";
	if (len > 2 && strcmp(name + len - 2, "_s") == 0)
		return "s";
	if (strcmp(name, "hz") == 0)
		return "Hz";
	for (size_t i = 0; i < sb_metric_count; i++)
		if (strcmp(sb_metric_infos[i].name, name) == 0)
			return sb_metric_infos[i].unit;
	return "";
}
