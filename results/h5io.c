/* h5io.c - sampbench's HDF5 files: one group per run plus the /runs index table.
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
#include "results/h5io.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
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

#include "core/iso_time.h"
#include "core/util.h"
#include "sampler/sampler.h"

#define DEFLATE_LEVEL 5
#define CHUNK_BYTES (256 * 1024) /* target chunk size of run datasets */
#define RUNS_CHUNK_ROWS 64       /* /runs grows one row at a time */
#define GROUP_LEN 32
#define UNIT_LEN 16
#define ATTR_STR_MAX 4096        /* longest string attribute a reader accepts */
/* Deflate cannot compress better than about 1032:1, so a dataset whose rows need more
 * than this many times the bytes it stores is damaged (its extent was corrupted). */
#define MAX_INFLATION 1100
#define MAX_READ_BYTES ((uint64_t)4 << 30) /* no table of ours comes near 4 GiB */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_SLOWDOWN 3
#else
#define SANITIZER_SLOWDOWN 1
#endif

/* One row of /runs. The metric columns come from sb_metric_infos. */
struct runs_row {
	int64_t run_id;
	char group[GROUP_LEN];
	char sampler[SB_NAME_LEN];
	char workload[SB_NAME_LEN];
	int32_t threads;
	double hz;
	double duration_s;
	int32_t repetition;
	char status[16];
	char reason[SB_REASON_LEN];
	char start_time[32];
	char clock[8];
	double wall_s;
	uint64_t nsamples;
	char variant[SB_NAME_LEN];  /* schema 2 */
	struct sb_metrics metrics;
};

/* One row of a run's `metrics` dataset. */
struct metric_row {
	char name[SB_NAME_LEN];
	double value;
	char unit[UNIT_LEN];
};

enum kind { K_I32, K_U32, K_I64, K_U64, K_F64, K_STR };

struct field {
	const char *name;
	size_t offset;
	enum kind kind;
	size_t size;
};

#define FLD(type, member, k) \
	{ #member, offsetof(struct type, member), k, sizeof(((struct type *)0)->member) }

static const struct field sample_fields[] = {
	FLD(sb_sample, time_ns, K_U64),
	FLD(sb_sample, tid, K_I32),
	FLD(sb_sample, thread_index, K_I32),
	FLD(sb_sample, weight_ns, K_F64),
	FLD(sb_sample, stop_latency_ns, K_F64),
	FLD(sb_sample, suspend_window_ns, K_F64),
	FLD(sb_sample, depth, K_U32),
	FLD(sb_sample, flags, K_U32),
	FLD(sb_sample, frame_offset, K_U64),
};

static const struct field thread_fields[] = {
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

static const struct field stat_fields[] = {
	FLD(sb_stat_row, name, K_STR),
	FLD(sb_stat_row, value, K_F64),
};

static const struct field symbol_fields[] = {
	FLD(sb_symbol, pc, K_U64),
	FLD(sb_symbol, module, K_STR),
	FLD(sb_symbol, function, K_STR),
	FLD(sb_symbol, offset, K_U64),
};

static const struct field fact_fields[] = {
	FLD(sb_host_fact, name, K_STR),
	FLD(sb_host_fact, value, K_F64),
};

static const struct field calib_fields[] = {
	FLD(sb_calib_row, name, K_STR),
	FLD(sb_calib_row, phase, K_STR),
	FLD(sb_calib_row, n, K_I32),
	FLD(sb_calib_row, p50_ns, K_F64),
	FLD(sb_calib_row, p99_ns, K_F64),
	FLD(sb_calib_row, max_ns, K_F64),
	FLD(sb_calib_row, reason, K_STR),
};

static const struct field metric_fields[] = {
	FLD(metric_row, name, K_STR),
	FLD(metric_row, value, K_F64),
	FLD(metric_row, unit, K_STR),
};

static const struct field runs_fields[] = {
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


struct sb_h5 {
	hid_t file;
	hid_t runs;        /* the /runs dataset */
	hid_t runs_type;   /* memory type of struct runs_row, metric columns included */
	hid_t sample_type;
	hid_t thread_type;
	hid_t stat_type;
	hid_t symbol_type;
	hid_t metric_type;
	hid_t fact_type;
	hid_t calib_type;
	hsize_t nruns;
	struct sb_host host; /* repeated on every run group */
	struct sb_host root; /* the root's host, while h5_append_run_host() writes another */
	int run_host_tables; /* the run group's host is not the root's: write its own tables */
	int force;
	char *path;
	char *tmp;
	char err[320];
};

static void seterr(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t len, const char *fmt, ...)
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
static const char *h5_why(char buf[128])
{
	snprintf(buf, 128, "HDF5 error");
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, buf);
	return buf;
}

static void close_id(hid_t *id)
{
	if (*id >= 0)
		H5Idec_ref(*id);
	*id = -1;
}

/* A fixed-length NUL-terminated string type of size bytes. */
static hid_t str_type(size_t size)
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

static hid_t vlen_str_type(void)
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
static hid_t compound_type(size_t size, const struct field *f, size_t n)
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
static hid_t runs_type(int with_variant, int with_metrics)
{
	hid_t t = compound_type(sizeof(struct runs_row), runs_fields, ARRAY_SIZE(runs_fields));
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

static const char *column_unit(const char *name)
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

/* Writes attribute name (scalar, created or overwritten) of memory type type. */
static int attr_write(hid_t loc, const char *name, hid_t type, const void *buf)
{
	hid_t space = -1, a = -1;
	int ret = -1;

	space = H5Screate(H5S_SCALAR);
	if (space < 0)
		goto cleanup;
	if (H5Aexists(loc, name) > 0)
		a = H5Aopen(loc, name, H5P_DEFAULT);
	else
		a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0 || H5Awrite(a, type, buf) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	close_id(&a);
	close_id(&space);
	return ret;
}

/* A fixed-length string attribute just long enough for val and its NUL (no global heap:
 * a damaged heap address in a variable-length string crashes libhdf5's reader). */
static int attr_str(hid_t loc, const char *name, const char *val)
{
	hid_t t = str_type(strlen(val) + 1);
	int ret;

	if (t < 0)
		return -1;
	if (H5Aexists(loc, name) > 0 && H5Adelete(loc, name) < 0) {
		H5Tclose(t);
		return -1;
	}
	ret = attr_write(loc, name, t, val);
	H5Tclose(t);
	return ret;
}

static int attr_i32(hid_t loc, const char *name, int32_t v)
{
	return attr_write(loc, name, H5T_NATIVE_INT32, &v);
}

static int attr_i64(hid_t loc, const char *name, int64_t v)
{
	return attr_write(loc, name, H5T_NATIVE_INT64, &v);
}

static int attr_f64(hid_t loc, const char *name, double v)
{
	return attr_write(loc, name, H5T_NATIVE_DOUBLE, &v);
}

/* 1 when a and b are the same host record: identity, facts and calibration (compared
 * field by field: struct padding may differ). */
static int host_same(const struct sb_host *a, const struct sb_host *b)
{
	if (strcmp(a->host, b->host) || strcmp(a->kernel, b->kernel) || a->nproc != b->nproc ||
	    a->tick_hz != b->tick_hz || strcmp(a->tick_source, b->tick_source) ||
	    strcmp(a->compiler, b->compiler) || strcmp(a->version, b->version) ||
	    strcmp(a->git_rev, b->git_rev) || strcmp(a->build, b->build) ||
	    strcmp(a->fingerprint, b->fingerprint) || a->nfacts != b->nfacts ||
	    a->ncalib != b->ncalib)
		return 0;
	for (int i = 0; i < a->nfacts && i < SB_HOST_MAX_FACTS; i++)
		if (strcmp(a->facts[i].name, b->facts[i].name) ||
		    memcmp(&a->facts[i].value, &b->facts[i].value, sizeof(double)))
			return 0;
	for (int i = 0; i < a->ncalib && i < SB_CALIB_MAX; i++) {
		const struct sb_calib_row *x = &a->calib[i], *y = &b->calib[i];
		if (strcmp(x->name, y->name) || strcmp(x->phase, y->phase) || x->n != y->n ||
		    memcmp(&x->p50_ns, &y->p50_ns, sizeof(double)) ||
		    memcmp(&x->p99_ns, &y->p99_ns, sizeof(double)) ||
		    memcmp(&x->max_ns, &y->max_ns, sizeof(double)) || strcmp(x->reason, y->reason))
			return 0;
	}
	return 1;
}

static int write_host(hid_t loc, const struct sb_host *h)
{
	if (attr_str(loc, "host", h->host) < 0 || attr_str(loc, "kernel", h->kernel) < 0 ||
	    attr_i32(loc, "nproc", h->nproc) < 0 || attr_i32(loc, "tick_hz", h->tick_hz) < 0 ||
	    attr_str(loc, "tick_source", h->tick_source) < 0 ||
	    attr_str(loc, "compiler", h->compiler) < 0 ||
	    attr_str(loc, "version", h->version) < 0 ||
	    attr_str(loc, "git_rev", h->git_rev) < 0 || attr_str(loc, "build", h->build) < 0 ||
	    attr_str(loc, "fingerprint", h->fingerprint) < 0)
		return -1;
	return 0;
}

/* Attribute `units` of dataset d: one string per column of type (compound) or one. */
static int write_units(hid_t d, hid_t type, const char *single)
{
	hid_t st = -1, space = -1, a = -1;
	char (*units)[UNIT_LEN] = NULL;
	char **names = NULL;
	hsize_t n = 1;
	int ret = -1;

	if (H5Tget_class(type) == H5T_COMPOUND) {
		int nm = H5Tget_nmembers(type);

		if (nm <= 0)
			return -1;
		n = (hsize_t)nm;
	}
	units = calloc(n, sizeof(*units));
	names = calloc(n, sizeof(*names));
	if (!units || !names)
		goto cleanup;
	for (hsize_t i = 0; i < n; i++) {
		if (H5Tget_class(type) != H5T_COMPOUND) {
			snprintf(units[i], UNIT_LEN, "%s", single);
			continue;
		}
		names[i] = H5Tget_member_name(type, (unsigned)i);
		if (!names[i])
			goto cleanup;
		snprintf(units[i], UNIT_LEN, "%s", column_unit(names[i]));
	}
	st = str_type(UNIT_LEN);
	space = H5Screate_simple(1, &n, NULL);
	if (st < 0 || space < 0)
		goto cleanup;
	a = H5Acreate2(d, "units", st, space, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0 || H5Awrite(a, st, units) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	if (names)
		for (hsize_t i = 0; i < n; i++)
			H5free_memory(names[i]);
	free(names);
	free(units);
	close_id(&a);
	close_id(&space);
	close_id(&st);
	return ret;
}

/* Creates dataset name in loc with n rows of memtype from buf: 1-D, unlimited, chunked
 * (chunk_rows, or about CHUNK_BYTES when 0), shuffled and deflated. Returns its id or -1. */
static hid_t write_dataset(hid_t loc, const char *name, hid_t memtype, const void *buf,
			   size_t n, hsize_t chunk_rows, const char *unit)
{
	hsize_t dims = n, maxdims = H5S_UNLIMITED, chunk = chunk_rows;
	hid_t ftype = -1, space = -1, dcpl = -1, d = -1;
	size_t esize = H5Tget_size(memtype);
	int ok = 0;

	if (!esize)
		return -1;
	if (!chunk) {
		chunk = CHUNK_BYTES / esize;
		if (chunk > n)
			chunk = n;
		if (chunk < 1)
			chunk = 1;
	}
	ftype = H5Tcopy(memtype);
	if (ftype < 0)
		goto cleanup;
	if (H5Tget_class(ftype) == H5T_COMPOUND && H5Tpack(ftype) < 0)
		goto cleanup;
	space = H5Screate_simple(1, &dims, &maxdims);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (space < 0 || dcpl < 0)
		goto cleanup;
	/* Fletcher32 last: it checks the stored (compressed) bytes before they are inflated. */
	if (H5Pset_chunk(dcpl, 1, &chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
	    H5Pset_deflate(dcpl, DEFLATE_LEVEL) < 0 || H5Pset_fletcher32(dcpl) < 0)
		goto cleanup;
	d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (d < 0)
		goto cleanup;
	if (n && H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
		goto cleanup;
	if (write_units(d, ftype, unit) < 0)
		goto cleanup;
	ok = 1;
cleanup:
	if (!ok)
		close_id(&d);
	close_id(&dcpl);
	close_id(&space);
	close_id(&ftype);
	return d;
}

static int write_table(hid_t loc, const char *name, hid_t memtype, const void *buf, size_t n,
		       const char *unit)
{
	hid_t d = write_dataset(loc, name, memtype, buf, n, 0, unit);

	if (d < 0)
		return -1;
	H5Dclose(d);
	return 0;
}

static void close_all(struct sb_h5 *f)
{
	close_id(&f->runs);
	close_id(&f->runs_type);
	close_id(&f->sample_type);
	close_id(&f->thread_type);
	close_id(&f->stat_type);
	close_id(&f->symbol_type);
	close_id(&f->metric_type);
	close_id(&f->fact_type);
	close_id(&f->calib_type);
}

/* A count from a caller's struct, within 0..max. */
static size_t clamp_count(int32_t n, int32_t max)
{
	return n < 0 ? 0 : (size_t)(n > max ? max : n);
}

static void h5_free(struct sb_h5 *f)
{
	free(f->path);
	free(f->tmp);
	free(f);
}

/* The memory types of every table f writes (h5_create, h5_reopen). Returns 0 or -1. */
static int make_types(struct sb_h5 *f)
{
	f->runs_type = runs_type(1, 1);
	f->fact_type = compound_type(sizeof(struct sb_host_fact), fact_fields, ARRAY_SIZE(fact_fields));
	f->calib_type = compound_type(sizeof(struct sb_calib_row), calib_fields,
				      ARRAY_SIZE(calib_fields));
	f->sample_type = compound_type(sizeof(struct sb_sample), sample_fields,
				       ARRAY_SIZE(sample_fields));
	f->thread_type = compound_type(sizeof(struct sb_thread_row), thread_fields,
				       ARRAY_SIZE(thread_fields));
	f->stat_type = compound_type(sizeof(struct sb_stat_row), stat_fields, ARRAY_SIZE(stat_fields));
	f->symbol_type = compound_type(sizeof(struct sb_symbol), symbol_fields, ARRAY_SIZE(symbol_fields));
	f->metric_type = compound_type(sizeof(struct metric_row), metric_fields,
				       ARRAY_SIZE(metric_fields));
	return f->runs_type < 0 || f->sample_type < 0 || f->thread_type < 0 || f->stat_type < 0 ||
			       f->symbol_type < 0 || f->metric_type < 0 || f->fact_type < 0 ||
			       f->calib_type < 0
		       ? -1
		       : 0;
}

/* Opens path. A file whose writer was killed (a bench's FILE.h5.tmp) still carries the
 * newest format's "open for write" superblock flag, which makes every later open fail.
 * When we may write the file, the flag is cleared as `h5clear -s` does, and the open
 * retried: resume and the readers of a killed bench's file both work. Returns the file
 * id or -1. */
static hid_t open_h5(const char *path, unsigned flags, hid_t fapl)
{
	hid_t f = H5Fopen(path, flags, fapl);

	if (f >= 0 || access(path, W_OK) != 0)
		return f;
	/* A live writer holds the file's lock, so this open fails and nothing changes under
	 * it; a dead one's flag is cleared (h5clear -s does the same). */
	hid_t p = H5Pcreate(H5P_FILE_ACCESS);
	hbool_t clear = 1;
	if (p >= 0 && H5Pexist(p, "clear_status_flags") > 0 &&
	    H5Pset(p, "clear_status_flags", &clear) >= 0)
		f = H5Fopen(path, H5F_ACC_RDWR, p);
	if (p >= 0)
		H5Pclose(p);
	if (f < 0 || (flags & H5F_ACC_RDWR))
		return f;
	H5Fclose(f);
	return H5Fopen(path, flags, fapl);
}

/* Creates path.tmp and writes the root attributes and an empty /runs. Owns nothing the
 * caller passed. Returns the open file, or NULL with one line in err. */
struct sb_h5 *h5_create(const char *path, const struct sb_host *host, int force,
			char *err, size_t errlen)
{
	struct sb_h5 *f = NULL;
	char created[ISO_TIME_LEN], why[128];
	hid_t fapl = -1;
	struct stat st;
	int ok = 0, fd;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			seterr(err, errlen, "cannot create '%s': %s", path, strerror(EISDIR));
			return NULL;
		}
		if (!force) {
			seterr(err, errlen, "'%s' exists (use --force to overwrite)", path);
			return NULL;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		seterr(err, errlen, "cannot create '%s': %s", path, strerror(ENOMEM));
		return NULL;
	}
	f->file = f->runs = f->runs_type = f->sample_type = -1;
	f->thread_type = f->stat_type = f->metric_type = f->symbol_type = -1;
	f->fact_type = f->calib_type = -1;
	f->force = force;
	f->host = *host;
	f->path = strdup(path);
	f->tmp = malloc(strlen(path) + sizeof(".tmp"));
	if (!f->path || !f->tmp) {
		free(f->tmp);
		f->tmp = NULL;
		seterr(err, errlen, "cannot create '%s': %s", path, strerror(ENOMEM));
		goto cleanup;
	}
	sprintf(f->tmp, "%s.tmp", path);
	fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		seterr(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		free(f->tmp);
		f->tmp = NULL; /* nothing of ours to unlink */
		goto cleanup;
	}
	close(fd);
	/* The newest format: superblock, object headers, B-trees and heaps carry checksums,
	 * so damage is reported as an error instead of being followed. */
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl >= 0 && H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0)
		f->file = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	close_id(&fapl);
	if (f->file < 0) {
		seterr(err, errlen, "cannot create '%s': %s", path, h5_why(why));
		goto cleanup;
	}
	if (make_types(f) != 0) {
		seterr(err, errlen, "cannot create '%s': cannot build HDF5 types", path);
		goto cleanup;
	}
	iso_now(created, sizeof(created));
	if (attr_i32(f->file, "schema_version", SB_SCHEMA_VERSION) < 0 ||
	    write_host(f->file, host) < 0 || attr_str(f->file, "created", created) < 0 ||
	    attr_i32(f->file, "complete", 0) < 0 ||
	    write_table(f->file, "host_facts", f->fact_type, host->facts,
			clamp_count(host->nfacts, SB_HOST_MAX_FACTS), "") < 0 ||
	    write_table(f->file, "calibration", f->calib_type, host->calib,
			clamp_count(host->ncalib, SB_CALIB_MAX), "") < 0) {
		seterr(err, errlen, "cannot write '%s': %s", path, h5_why(why));
		goto cleanup;
	}
	f->runs = write_dataset(f->file, "runs", f->runs_type, NULL, 0, RUNS_CHUNK_ROWS, "");
	if (f->runs < 0 || H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0) {
		seterr(err, errlen, "cannot write '%s': %s", path, h5_why(why));
		goto cleanup;
	}
	ok = 1;
cleanup:
	if (!ok) {
		close_all(f);
		close_id(&f->file);
		if (f->tmp)
			unlink(f->tmp);
		h5_free(f);
		f = NULL;
	}
	return f;
}

/* Last error of f as one line ("" when none). */
const char *h5_strerror(const struct sb_h5 *f)
{
	return f ? f->err : "";
}

static int write_run_group(struct sb_h5 *f, hid_t g, const struct sb_run *r)
{
	struct metric_row *m = NULL;
	int ret = -1;

	if (attr_i64(g, "run_id", r->run_id) < 0 || attr_str(g, "sampler", r->sampler) < 0 ||
	    attr_str(g, "workload", r->workload) < 0 || attr_i32(g, "threads", r->threads) < 0 ||
	    attr_f64(g, "hz", r->hz) < 0 || attr_f64(g, "duration_s", r->duration_s) < 0 ||
	    attr_i32(g, "repetition", r->repetition) < 0 ||
	    attr_str(g, "status", run_status_name(r->status)) < 0 ||
	    attr_str(g, "reason", r->reason) < 0 || attr_str(g, "start_time", r->start_time) < 0 ||
	    attr_str(g, "clock", r->clock == SB_CLOCK_WALL ? "wall" : "cpu") < 0 ||
	    attr_f64(g, "wall_s", r->wall_s) < 0 || attr_str(g, "variant", r->variant) < 0 ||
	    write_host(g, &f->host) < 0)
		goto cleanup;
	/* a merged run of another host keeps that host's facts and calibration beside it */
	if (f->run_host_tables &&
	    (write_table(g, "host_facts", f->fact_type, f->host.facts,
			 clamp_count(f->host.nfacts, SB_HOST_MAX_FACTS), "") < 0 ||
	     write_table(g, "calibration", f->calib_type, f->host.calib,
			 clamp_count(f->host.ncalib, SB_CALIB_MAX), "") < 0))
		goto cleanup;
	m = calloc(sb_metric_count ? sb_metric_count : 1, sizeof(*m));
	if (!m)
		goto cleanup;
	for (size_t i = 0; i < sb_metric_count; i++) {
		const struct sb_metric_info *mi = &sb_metric_infos[i];

		snprintf(m[i].name, sizeof(m[i].name), "%s", mi->name);
		snprintf(m[i].unit, sizeof(m[i].unit), "%s", mi->unit);
		memcpy(&m[i].value, (const char *)&r->metrics + mi->offset, sizeof(double));
	}
	if (write_table(g, "samples", f->sample_type, r->samples, r->nsamples, "") < 0 ||
	    write_table(g, "frames", H5T_NATIVE_UINT64, r->frames, r->nframes, "pc") < 0 ||
	    write_table(g, "threads", f->thread_type, r->thread_rows, r->nthread_rows, "") < 0 ||
	    write_table(g, "metrics", f->metric_type, m, sb_metric_count, "") < 0 ||
	    write_table(g, "stats", f->stat_type, r->stats, r->nstats, "") < 0 ||
	    write_table(g, "symbols", f->symbol_type, r->symbols, r->nsymbols, "") < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(m);
	return ret;
}

static int append_runs_row(struct sb_h5 *f, const struct sb_run *r, const char *group)
{
	hsize_t start = f->nruns, count = 1, size = f->nruns + 1;
	hid_t fs = -1, ms = -1;
	struct runs_row row;
	int ret = -1;

	memset(&row, 0, sizeof(row));
	row.run_id = r->run_id;
	snprintf(row.group, sizeof(row.group), "%s", group);
	snprintf(row.sampler, sizeof(row.sampler), "%s", r->sampler);
	snprintf(row.workload, sizeof(row.workload), "%s", r->workload);
	row.threads = r->threads;
	row.hz = r->hz;
	row.duration_s = r->duration_s;
	row.repetition = r->repetition;
	snprintf(row.status, sizeof(row.status), "%s", run_status_name(r->status));
	snprintf(row.reason, sizeof(row.reason), "%s", r->reason);
	snprintf(row.start_time, sizeof(row.start_time), "%s", r->start_time);
	snprintf(row.clock, sizeof(row.clock), "%s", r->clock == SB_CLOCK_WALL ? "wall" : "cpu");
	row.wall_s = r->wall_s;
	row.nsamples = r->nsamples;
	snprintf(row.variant, sizeof(row.variant), "%s", r->variant);
	row.metrics = r->metrics;

	if (H5Dset_extent(f->runs, &size) < 0)
		goto cleanup;
	fs = H5Dget_space(f->runs);
	ms = H5Screate_simple(1, &count, NULL);
	if (fs < 0 || ms < 0)
		goto cleanup;
	if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
	    H5Dwrite(f->runs, f->runs_type, ms, fs, H5P_DEFAULT, &row) < 0)
		goto cleanup;
	f->nruns++;
	ret = 0;
cleanup:
	close_id(&ms);
	close_id(&fs);
	return ret;
}

/* Appends run r as group /run_<id> plus one /runs row, then flushes. r stays the
 * caller's. Returns 0, or -1 with one line in h5_strerror(f). */
int h5_append_run(struct sb_h5 *f, const struct sb_run *r)
{
	char name[32], why[128];
	hid_t g = -1;
	int ret = -1;

	snprintf(name, sizeof(name), "run_%06lld", (long long)r->run_id);
	if (H5Lexists(f->file, name, H5P_DEFAULT) > 0) {
		seterr(f->err, sizeof(f->err), "run %lld is already in '%s'",
		       (long long)r->run_id, f->path);
		return -1;
	}
	g = H5Gcreate2(f->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		goto cleanup;
	if (write_run_group(f, g, r) < 0) {
		close_id(&g);
		H5Ldelete(f->file, name, H5P_DEFAULT);
		goto cleanup;
	}
	if (append_runs_row(f, r, name) < 0 || H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	if (ret < 0)
		seterr(f->err, sizeof(f->err), "cannot write run %lld to '%s': %s",
		       (long long)r->run_id, f->path, h5_why(why));
	close_id(&g);
	return ret;
}

/* Sets the root attribute `complete` and flushes. Errors go to h5_strerror(f). */
void h5_set_complete(struct sb_h5 *f, int complete)
{
	char why[128];

	if (attr_i32(f->file, "complete", complete ? 1 : 0) < 0 ||
	    H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0)
		seterr(f->err, sizeof(f->err), "cannot write '%s': %s", f->path, h5_why(why));
}

/* Closes f and renames path.tmp to path (without replacing a file that appeared meanwhile
 * unless force). Frees f. Returns 0, or -1 after printing one line to stderr. */
int h5_close(struct sb_h5 *f)
{
	char why[128];
	int ret = -1;

	if (!f)
		return -1;
	close_all(f);
	if (H5Fclose(f->file) < 0) {
		fprintf(stderr, "sampbench: cannot write '%s': %s\n", f->tmp, h5_why(why));
		goto cleanup;
	}
	if (!f->force && link(f->tmp, f->path) == 0) {
		unlink(f->tmp);
	} else if (!f->force && errno == EEXIST) {
		fprintf(stderr, "sampbench: '%s' exists (results kept in '%s')\n", f->path, f->tmp);
		goto cleanup;
	} else if (rename(f->tmp, f->path) < 0) {
		fprintf(stderr, "sampbench: cannot rename '%s' to '%s': %s\n", f->tmp, f->path,
			strerror(errno));
		goto cleanup;
	}
	ret = 0;
cleanup:
	h5_free(f);
	return ret;
}

/* Closes f, deletes path.tmp and frees f. */
void h5_abort(struct sb_h5 *f)
{
	if (!f)
		return;
	close_all(f);
	close_id(&f->file);
	unlink(f->tmp);
	h5_free(f);
}

/* Reading. Every failure names the file and the missing or malformed object. Nothing read
 * from the file is used before it is checked: counts against the file's size and our
 * limits, strings terminated, indexes range-checked. */
struct rd {
	const char *path;
	hid_t file;
	int version;         /* schema version of the file: 1 or 2 */
	uint64_t file_size;  /* bytes, bounds every dataset's extent */
	char *err;
	size_t errlen;
	struct h5_run_hosts *hosts; /* NULL: the runs' own hosts are not wanted */
};

/* Reads scalar string attribute name into buf (truncated to len). Variable-length strings
 * (schema 1 only: they live in the global heap, which libhdf5 follows unchecked) are
 * refused when allow_vlen is 0. Returns 0/-1. */
static int attr_read_str(hid_t loc, const char *name, char *buf, size_t len, int allow_vlen)
{
	hid_t a = -1, ft = -1, mt = -1, space = -1;
	char *s = NULL, *fixed = NULL;
	int ret = -1;

	if (H5Aexists(loc, name) <= 0)
		return -1;
	a = H5Aopen(loc, name, H5P_DEFAULT);
	ft = a < 0 ? -1 : H5Aget_type(a);
	space = a < 0 ? -1 : H5Aget_space(a);
	if (ft < 0 || space < 0 || H5Tget_class(ft) != H5T_STRING ||
	    H5Sget_simple_extent_type(space) != H5S_SCALAR)
		goto cleanup;
	if (H5Tis_variable_str(ft) > 0) {
		if (!allow_vlen)
			goto cleanup;
		mt = vlen_str_type();
		if (mt < 0 || H5Tset_cset(mt, H5Tget_cset(ft)) < 0 || H5Aread(a, mt, &s) < 0)
			goto cleanup;
		snprintf(buf, len, "%s", s ? s : "");
		H5free_memory(s);
	} else {
		size_t sz = H5Tget_size(ft);

		if (sz == 0 || sz > ATTR_STR_MAX)
			goto cleanup;
		fixed = calloc(1, sz + 1);
		if (!fixed || H5Aread(a, ft, fixed) < 0)
			goto cleanup;
		snprintf(buf, len, "%s", fixed);
	}
	ret = 0;
cleanup:
	free(fixed);
	close_id(&mt);
	close_id(&space);
	close_id(&ft);
	close_id(&a);
	return ret;
}

/* Reads numeric scalar attribute name converted to memtype. Returns 0/-1. */
static int attr_read_num(hid_t loc, const char *name, hid_t memtype, void *out)
{
	hid_t a = -1, ft = -1, space = -1;
	H5T_class_t c;
	int ret = -1;

	if (H5Aexists(loc, name) <= 0)
		return -1;
	a = H5Aopen(loc, name, H5P_DEFAULT);
	ft = a < 0 ? -1 : H5Aget_type(a);
	space = a < 0 ? -1 : H5Aget_space(a);
	if (ft < 0 || space < 0 || H5Sget_simple_extent_type(space) != H5S_SCALAR)
		goto cleanup;
	c = H5Tget_class(ft);
	if ((c != H5T_INTEGER && c != H5T_FLOAT) || H5Tget_size(ft) > 16 ||
	    H5Aread(a, memtype, out) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	close_id(&space);
	close_id(&ft);
	close_id(&a);
	return ret;
}

/* Reads the whole 1-D dataset grp/name as memtype rows of esize bytes into *out (malloc'd,
 * NULL when empty). Every member of a compound memtype must exist in the file. The extent
 * is checked against the bytes the dataset really stores before anything is allocated. */
static int read_rows(struct rd *rd, hid_t loc, const char *grp, const char *name,
		     hid_t memtype, void **out, size_t *n)
{
	hid_t d = -1, ft = -1, space = -1;
	size_t esize = H5Tget_size(memtype), fsize = 0;
	hsize_t dims = 0, maxdims = 0, stored = 0;
	void *buf = NULL;
	int ret = -1;

	*out = NULL;
	*n = 0;
	if (H5Lexists(loc, name, H5P_DEFAULT) <= 0 ||
	    H5Oexists_by_name(loc, name, H5P_DEFAULT) <= 0) {
		seterr(rd->err, rd->errlen, "'%s' has no dataset %s/%s", rd->path, grp, name);
		return -1;
	}
	d = H5Dopen2(loc, name, H5P_DEFAULT);
	ft = d < 0 ? -1 : H5Dget_type(d);
	space = d < 0 ? -1 : H5Dget_space(d);
	if (ft >= 0)
		fsize = H5Tget_size(ft);
	if (ft < 0 || space < 0 || H5Sget_simple_extent_ndims(space) != 1 ||
	    H5Sget_simple_extent_dims(space, &dims, &maxdims) < 0 ||
	    H5Tget_class(ft) != H5Tget_class(memtype) || !esize || !fsize) {
		seterr(rd->err, rd->errlen, "'%s' has a malformed dataset %s/%s", rd->path, grp,
		       name);
		goto cleanup;
	}
	if (H5Tget_class(memtype) == H5T_COMPOUND) {
		int nm = H5Tget_nmembers(memtype);

		for (int i = 0; i < nm; i++) {
			char *mname = H5Tget_member_name(memtype, (unsigned)i);
			int found = mname && H5Tget_member_index(ft, mname) >= 0;

			if (!found)
				seterr(rd->err, rd->errlen, "'%s' has no column %s/%s.%s", rd->path,
				       grp, name, mname ? mname : "?");
			H5free_memory(mname);
			if (!found)
				goto cleanup;
		}
	}
	/* A damaged extent must not make us allocate (or HDF5 fill) gigabytes: the rows must
	 * fit the bytes stored for the dataset at the best compression deflate reaches. */
	if (dims) {
		stored = H5Dget_storage_size(d);
		if (dims > MAX_READ_BYTES / fsize || dims > MAX_READ_BYTES / esize ||
		    stored == 0 || stored > rd->file_size ||
		    dims * fsize > (stored + 4096) * MAX_INFLATION) {
			seterr(rd->err, rd->errlen,
			       "'%s' has a malformed dataset %s/%s (%llu rows in %llu bytes)",
			       rd->path, grp, name, (unsigned long long)dims,
			       (unsigned long long)stored);
			goto cleanup;
		}
		buf = calloc(dims, esize);
		if (!buf) {
			seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path,
			       strerror(ENOMEM));
			goto cleanup;
		}
		if (H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
			seterr(rd->err, rd->errlen, "'%s' has an unreadable dataset %s/%s",
			       rd->path, grp, name);
			goto cleanup;
		}
	}
	*out = buf;
	*n = dims;
	buf = NULL;
	ret = 0;
cleanup:
	free(buf);
	close_id(&space);
	close_id(&ft);
	close_id(&d);
	return ret;
}

static void terminate(char *s, size_t size)
{
	s[size - 1] = '\0';
}

/* Schema 2: the numeric host facts and the calibration table, from /host_facts and
 * /calibration. Returns 0/-1. */
static int read_host_tables(struct rd *rd, hid_t loc, const char *grp, struct sb_host *h)
{
	hid_t ft = -1, ct = -1;
	struct sb_host_fact *facts = NULL;
	struct sb_calib_row *calib = NULL;
	size_t nf = 0, nc = 0;
	void *buf;
	int ret = -1;

	ft = compound_type(sizeof(struct sb_host_fact), fact_fields, ARRAY_SIZE(fact_fields));
	ct = compound_type(sizeof(struct sb_calib_row), calib_fields, ARRAY_SIZE(calib_fields));
	if (ft < 0 || ct < 0) {
		seterr(rd->err, rd->errlen, "cannot read '%s': cannot build HDF5 types", rd->path);
		goto cleanup;
	}
	if (read_rows(rd, loc, grp, "host_facts", ft, &buf, &nf) < 0)
		goto cleanup;
	facts = buf;
	if (read_rows(rd, loc, grp, "calibration", ct, &buf, &nc) < 0)
		goto cleanup;
	calib = buf;
	if (nf > SB_HOST_MAX_FACTS || nc > SB_CALIB_MAX) {
		seterr(rd->err, rd->errlen, "'%s' has %zu host facts and %zu calibration rows%s%s, "
		       "at most %d and %d", rd->path, nf, nc, grp[0] ? " in " : "", grp,
		       SB_HOST_MAX_FACTS, SB_CALIB_MAX);
		goto cleanup;
	}
	for (size_t i = 0; i < nf; i++) {
		terminate(facts[i].name, sizeof(facts[i].name));
		h->facts[i] = facts[i];
	}
	for (size_t i = 0; i < nc; i++) {
		terminate(calib[i].name, sizeof(calib[i].name));
		terminate(calib[i].phase, sizeof(calib[i].phase));
		terminate(calib[i].reason, sizeof(calib[i].reason));
		h->calib[i] = calib[i];
	}
	h->nfacts = (int32_t)nf;
	h->ncalib = (int32_t)nc;
	ret = 0;
cleanup:
	free(facts);
	free(calib);
	close_id(&ft);
	close_id(&ct);
	return ret;
}

static int read_host(struct rd *rd, struct sb_host *h)
{
	static const struct {
		const char *name;
		size_t off, len;
		int since; /* first schema version that has it */
	} strs[] = {
		{ "host", offsetof(struct sb_host, host), sizeof(h->host), 1 },
		{ "kernel", offsetof(struct sb_host, kernel), sizeof(h->kernel), 1 },
		{ "tick_source", offsetof(struct sb_host, tick_source), sizeof(h->tick_source), 1 },
		{ "compiler", offsetof(struct sb_host, compiler), sizeof(h->compiler), 1 },
		{ "version", offsetof(struct sb_host, version), sizeof(h->version), 1 },
		{ "git_rev", offsetof(struct sb_host, git_rev), sizeof(h->git_rev), 1 },
		{ "build", offsetof(struct sb_host, build), sizeof(h->build), 1 },
		{ "fingerprint", offsetof(struct sb_host, fingerprint), sizeof(h->fingerprint), 2 },
	};
	const char *missing = NULL;
	int vlen_ok = rd->version < 2;

	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < ARRAY_SIZE(strs) && !missing; i++)
		if (rd->version >= strs[i].since &&
		    attr_read_str(rd->file, strs[i].name, (char *)h + strs[i].off, strs[i].len,
				  vlen_ok) < 0)
			missing = strs[i].name;
	if (!missing && attr_read_num(rd->file, "nproc", H5T_NATIVE_INT32, &h->nproc) < 0)
		missing = "nproc";
	if (!missing && attr_read_num(rd->file, "tick_hz", H5T_NATIVE_INT32, &h->tick_hz) < 0)
		missing = "tick_hz";
	if (missing) {
		seterr(rd->err, rd->errlen, "'%s' has no readable attribute %s", rd->path, missing);
		return -1;
	}
	if (rd->version >= 2)
		return read_host_tables(rd, rd->file, "", h);
	return 0;
}

/* The host run group name records: its own attributes over a copy of the root's host
 * (a schema 1 group may lack some), its own host_facts and calibration when it has them,
 * else the root's when it names the root's host and fingerprint, else none (a merged run
 * of another machine written before runs kept their tables). Returns 0/-1. */
static int read_run_host(struct rd *rd, const char *name, const struct sb_host *root,
			 struct sb_host *h)
{
	static const struct {
		const char *name;
		size_t off, len;
	} strs[] = {
		{ "host", offsetof(struct sb_host, host), sizeof(h->host) },
		{ "kernel", offsetof(struct sb_host, kernel), sizeof(h->kernel) },
		{ "tick_source", offsetof(struct sb_host, tick_source), sizeof(h->tick_source) },
		{ "compiler", offsetof(struct sb_host, compiler), sizeof(h->compiler) },
		{ "version", offsetof(struct sb_host, version), sizeof(h->version) },
		{ "git_rev", offsetof(struct sb_host, git_rev), sizeof(h->git_rev) },
		{ "build", offsetof(struct sb_host, build), sizeof(h->build) },
		{ "fingerprint", offsetof(struct sb_host, fingerprint), sizeof(h->fingerprint) },
	};
	char grp[GROUP_LEN + 1];
	int ret = 0;

	*h = *root;
	hid_t g = H5Gopen2(rd->file, name, H5P_DEFAULT);
	if (g < 0) {
		seterr(rd->err, rd->errlen, "'%s' has no group /%s", rd->path, name);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(strs); i++)
		if (H5Aexists(g, strs[i].name) > 0 &&
		    attr_read_str(g, strs[i].name, (char *)h + strs[i].off, strs[i].len,
				  rd->version < 2) < 0) {
			seterr(rd->err, rd->errlen, "'%s' has no readable attribute %s in /%s",
			       rd->path, strs[i].name, name);
			ret = -1;
			goto cleanup;
		}
	if (H5Aexists(g, "nproc") > 0)
		attr_read_num(g, "nproc", H5T_NATIVE_INT32, &h->nproc);
	if (H5Aexists(g, "tick_hz") > 0)
		attr_read_num(g, "tick_hz", H5T_NATIVE_INT32, &h->tick_hz);
	snprintf(grp, sizeof(grp), "/%s", name);
	if (rd->version >= 2 && H5Lexists(g, "host_facts", H5P_DEFAULT) > 0) {
		h->nfacts = h->ncalib = 0;
		ret = read_host_tables(rd, g, grp, h);
	} else if (strcmp(h->host, root->host) || strcmp(h->fingerprint, root->fingerprint)) {
		h->nfacts = h->ncalib = 0;
	}
cleanup:
	close_id(&g);
	return ret;
}

/* Fills rd->hosts: each run's host, the distinct ones once. Returns 0/-1. */
static int read_run_hosts(struct rd *rd, const struct runs_row *rows, size_t n,
			  const struct sb_host *root)
{
	struct h5_run_hosts *hs = rd->hosts;
	struct sb_host *h = malloc(sizeof(*h));
	int ret = -1;

	memset(hs, 0, sizeof(*hs));
	hs->of_run = calloc(n ? n : 1, sizeof(*hs->of_run));
	if (!h || !hs->of_run) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(ENOMEM));
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		if (read_run_host(rd, rows[i].group, root, h) < 0)
			goto cleanup;
		size_t k = 0;
		while (k < hs->n && !host_same(&hs->v[k], h))
			k++;
		if (k == hs->n) {
			struct sb_host *v = realloc(hs->v, (hs->n + 1) * sizeof(*v));
			if (!v) {
				seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path,
				       strerror(ENOMEM));
				goto cleanup;
			}
			hs->v = v;
			hs->v[hs->n++] = *h;
		}
		hs->of_run[i] = k;
	}
	ret = 0;
cleanup:
	if (ret < 0)
		h5_run_hosts_free(hs);
	free(h);
	return ret;
}

/* Fills r's identity from one /runs row. Returns 0/-1. */
static int run_from_row(struct rd *rd, struct runs_row *row, size_t i, struct sb_run *r)
{
	int status = -1;

	terminate(row->group, sizeof(row->group));
	terminate(row->sampler, sizeof(row->sampler));
	terminate(row->workload, sizeof(row->workload));
	terminate(row->status, sizeof(row->status));
	terminate(row->reason, sizeof(row->reason));
	terminate(row->start_time, sizeof(row->start_time));
	terminate(row->clock, sizeof(row->clock));
	terminate(row->variant, sizeof(row->variant));
	for (int s = SB_RUN_OK; s <= SB_RUN_SKIPPED; s++)
		if (strcmp(row->status, run_status_name(s)) == 0)
			status = s;
	if (status < 0) {
		seterr(rd->err, rd->errlen, "'%s' has unknown status '%s' in /runs row %zu",
		       rd->path, row->status, i);
		return -1;
	}
	if (strcmp(row->clock, "cpu") != 0 && strcmp(row->clock, "wall") != 0) {
		seterr(rd->err, rd->errlen, "'%s' has unknown clock '%s' in /runs row %zu",
		       rd->path, row->clock, i);
		return -1;
	}
	if (row->threads < 0 || row->threads > SB_MAX_THREADS) {
		seterr(rd->err, rd->errlen, "'%s' has %d threads in /runs row %zu, at most %d",
		       rd->path, (int)row->threads, i, SB_MAX_THREADS);
		return -1;
	}
	r->run_id = row->run_id;
	memcpy(r->sampler, row->sampler, sizeof(r->sampler));
	memcpy(r->workload, row->workload, sizeof(r->workload));
	r->threads = row->threads;
	r->hz = row->hz;
	r->duration_s = row->duration_s;
	r->repetition = row->repetition;
	r->status = status;
	memcpy(r->reason, row->reason, sizeof(r->reason));
	memcpy(r->start_time, row->start_time, sizeof(r->start_time));
	r->clock = strcmp(row->clock, "wall") == 0 ? SB_CLOCK_WALL : SB_CLOCK_CPU;
	r->wall_s = row->wall_s;
	memcpy(r->variant, row->variant, sizeof(r->variant));
	return 0;
}

struct rd_types {
	hid_t sample, thread, stat, metric, symbol;
};

/* Checks what indexes into other tables or arrays: thread slots and frame ranges. */
static int check_run(struct rd *rd, const char *grp, const struct sb_run *r)
{
	for (size_t i = 0; i < r->nthread_rows; i++)
		if (r->thread_rows[i].index < 0 || r->thread_rows[i].index >= SB_MAX_THREADS) {
			seterr(rd->err, rd->errlen, "'%s' has thread slot %d in %s/threads",
			       rd->path, (int)r->thread_rows[i].index, grp);
			return -1;
		}
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];

		if (s->frame_offset > r->nframes || s->depth > r->nframes - s->frame_offset) {
			seterr(rd->err, rd->errlen,
			       "'%s' has sample %zu of %s pointing past its frames", rd->path, i,
			       grp);
			return -1;
		}
		if (s->thread_index < -1 || s->thread_index >= SB_MAX_THREADS) {
			seterr(rd->err, rd->errlen, "'%s' has sample %zu of %s in thread slot %d",
			       rd->path, i, grp, (int)s->thread_index);
			return -1;
		}
	}
	return 0;
}

/* Reads group /name into r: metrics, threads, stats, and samples/frames if load_samples. */
static int read_run_group(struct rd *rd, const struct rd_types *t, const char *name,
			  struct sb_run *r, int load_samples)
{
	struct metric_row *m = NULL;
	char grp[GROUP_LEN + 1];
	void *buf;
	size_t n;
	hid_t g = -1;
	int ret = -1;

	snprintf(grp, sizeof(grp), "/%s", name);
	for (size_t i = 0; i < sb_metric_count; i++)
		*(double *)((char *)&r->metrics + sb_metric_infos[i].offset) = NAN;
	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    H5Lexists(rd->file, name, H5P_DEFAULT) <= 0 ||
	    H5Oexists_by_name(rd->file, name, H5P_DEFAULT) <= 0) {
		seterr(rd->err, rd->errlen, "'%s' has no group %s", rd->path, grp);
		return -1;
	}
	g = H5Gopen2(rd->file, name, H5P_DEFAULT);
	if (g < 0) {
		seterr(rd->err, rd->errlen, "'%s' has no group %s", rd->path, grp);
		return -1;
	}
	if (read_rows(rd, g, grp, "metrics", t->metric, &buf, &n) < 0)
		goto cleanup;
	m = buf;
	for (size_t i = 0; i < n; i++) {
		terminate(m[i].name, sizeof(m[i].name));
		for (size_t j = 0; j < sb_metric_count; j++)
			if (strcmp(m[i].name, sb_metric_infos[j].name) == 0)
				memcpy((char *)&r->metrics + sb_metric_infos[j].offset, &m[i].value,
				       sizeof(double));
	}
	if (read_rows(rd, g, grp, "threads", t->thread, &buf, &r->nthread_rows) < 0)
		goto cleanup;
	r->thread_rows = buf;
	if (read_rows(rd, g, grp, "stats", t->stat, &buf, &r->nstats) < 0)
		goto cleanup;
	r->stats = buf;
	for (size_t i = 0; i < r->nstats; i++)
		terminate(r->stats[i].name, sizeof(r->stats[i].name));
	if (load_samples) {
		if (read_rows(rd, g, grp, "samples", t->sample, &buf, &r->nsamples) < 0)
			goto cleanup;
		r->samples = buf;
		if (read_rows(rd, g, grp, "frames", H5T_NATIVE_UINT64, &buf, &r->nframes) < 0)
			goto cleanup;
		r->frames = buf;
		if (read_rows(rd, g, grp, "symbols", t->symbol, &buf, &r->nsymbols) < 0)
			goto cleanup;
		r->symbols = buf;
		for (size_t i = 0; i < r->nsymbols; i++) {
			terminate(r->symbols[i].module, sizeof(r->symbols[i].module));
			terminate(r->symbols[i].function, sizeof(r->symbols[i].function));
		}
	}
	if (check_run(rd, grp, r) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(m);
	close_id(&g);
	return ret;
}

/* Checks that rd->file (open) is one of our schemas and notes its version and size.
 * Returns 0, or -1 with one line in rd->err. */
static int check_schema(struct rd *rd)
{
	long long version = -1;
	hsize_t size = 0;

	if (attr_read_num(rd->file, "schema_version", H5T_NATIVE_LLONG, &version) < 0) {
		seterr(rd->err, rd->errlen, "'%s' is not a sampbench results file "
		       "(no attribute schema_version)", rd->path);
		return -1;
	}
	if (version != 1 && version != SB_SCHEMA_VERSION) {
		seterr(rd->err, rd->errlen, "'%s' has schema version %lld, this sampbench reads "
		       "1 and %d", rd->path, version, SB_SCHEMA_VERSION);
		return -1;
	}
	if (H5Fget_filesize(rd->file, &size) < 0 || size == 0) {
		seterr(rd->err, rd->errlen, "'%s' is not a readable HDF5 file", rd->path);
		return -1;
	}
	rd->version = (int)version;
	rd->file_size = size;
	return 0;
}

/* File access for reading: close everything with the file, and caches sized for our small
 * files (the 2 MB metadata cache and 1 MB chunk cache HDF5 starts with cost more to clear
 * than our files take to read). Returns the property list or -1. */
static hid_t reader_fapl(void)
{
	H5AC_cache_config_t mdc = { .version = H5AC__CURR_CACHE_CONFIG_VERSION };
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl < 0)
		return -1;
	if (H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
	    H5Pset_cache(fapl, 0, 101, 256 * 1024, 0.75) < 0 ||
	    H5Pget_mdc_config(fapl, &mdc) < 0) {
		H5Pclose(fapl);
		return -1;
	}
	mdc.set_initial_size = 1;
	mdc.initial_size = 256 * 1024;
	if (mdc.min_size > mdc.initial_size)
		mdc.min_size = mdc.initial_size;
	if (H5Pset_mdc_config(fapl, &mdc) < 0) {
		H5Pclose(fapl);
		return -1;
	}
	return fapl;
}

/* Opens path read-only. Returns the file or -1 with one line in rd->err. */
static hid_t open_path(struct rd *rd)
{
	hid_t fapl = -1, file = -1;
	int fd;

	fd = open(rd->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		seterr(rd->err, rd->errlen, "cannot open '%s': %s", rd->path, strerror(errno));
		return -1;
	}
	close(fd);
	if (H5Fis_hdf5(rd->path) <= 0) {
		seterr(rd->err, rd->errlen, "'%s' is not an HDF5 file", rd->path);
		return -1;
	}
	fapl = reader_fapl();
	if (fapl < 0) {
		seterr(rd->err, rd->errlen, "cannot open '%s': cannot set up HDF5", rd->path);
		return -1;
	}
	file = open_h5(rd->path, H5F_ACC_RDONLY, fapl);
	close_id(&fapl);
	if (file < 0)
		seterr(rd->err, rd->errlen, "'%s' is not a readable HDF5 file", rd->path);
	return file;
}

/* Reads every run of the open rd->file (see h5io.h). Closes rd->file. */
static int read_file(struct rd *rd, struct sb_host *host, struct sb_run **runs,
		     size_t *nruns, int load_samples)
{
	struct rd_types t = { -1, -1, -1, -1, -1 };
	struct runs_row *rows = NULL;
	struct sb_run *out = NULL;
	struct sb_host *h = NULL;
	hid_t rtype = -1;
	size_t n = 0, done = 0;
	void *buf;
	int ret = -1;

	if (check_schema(rd) < 0)
		goto cleanup;
	h = malloc(sizeof(*h)); /* ~10 KB: not on the stack */
	if (!h) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(ENOMEM));
		goto cleanup;
	}
	if (read_host(rd, h) < 0)
		goto cleanup;
	rtype = runs_type(rd->version >= 2, 0);
	t.sample = compound_type(sizeof(struct sb_sample), sample_fields, ARRAY_SIZE(sample_fields));
	t.thread = compound_type(sizeof(struct sb_thread_row), thread_fields,
				 ARRAY_SIZE(thread_fields));
	t.stat = compound_type(sizeof(struct sb_stat_row), stat_fields, ARRAY_SIZE(stat_fields));
	t.symbol = compound_type(sizeof(struct sb_symbol), symbol_fields, ARRAY_SIZE(symbol_fields));
	t.metric = compound_type(sizeof(struct metric_row), metric_fields, ARRAY_SIZE(metric_fields));
	if (rtype < 0 || t.sample < 0 || t.thread < 0 || t.stat < 0 || t.metric < 0 || t.symbol < 0) {
		seterr(rd->err, rd->errlen, "cannot read '%s': cannot build HDF5 types", rd->path);
		goto cleanup;
	}
	if (read_rows(rd, rd->file, "", "runs", rtype, &buf, &n) < 0)
		goto cleanup;
	rows = buf;
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(ENOMEM));
		goto cleanup;
	}
	for (done = 0; done < n; done++) {
		if (run_from_row(rd, &rows[done], done, &out[done]) < 0 ||
		    read_run_group(rd, &t, rows[done].group, &out[done], load_samples) < 0) {
			done++; /* free what the failed run got */
			goto cleanup;
		}
	}
	if (rd->hosts && read_run_hosts(rd, rows, n, h) < 0)
		goto cleanup;
	if (host)
		*host = *h;
	*runs = out;
	*nruns = n;
	out = NULL;
	ret = 0;
cleanup:
	if (out) {
		for (size_t i = 0; i < done; i++)
			run_free(&out[i]);
		free(out);
	}
	free(rows);
	free(h);
	close_id(&t.metric);
	close_id(&t.stat);
	close_id(&t.symbol);
	close_id(&t.thread);
	close_id(&t.sample);
	close_id(&rtype);
	close_id(&rd->file);
	return ret;
}

/* Schema 1 files have no metadata checksums and keep their string attributes in the
 * global heap, whose damaged addresses libhdf5 1.10 follows unchecked: a damaged one may
 * crash or hang it. So such a file is read once in a child first (the caller is a
 * single-threaded command; the child opens its own descriptor, and the parent has the
 * file closed meanwhile). Returns 0 when the child finished (its own refusal is repeated
 * by the real read), -1 with one line in rd->err when it was killed or ran too long. */
#define TRIAL_REFUSED 3 /* exit status of a child that refused the file cleanly */

static int trial_read(struct rd *rd, int load_samples)
{
	/* 5 s, plus 1 s per MB (results/baseline.h5, 12 MB, reads in 1 s); sanitizer builds
	 * run several times slower */
	uint64_t limit_ms = (5000 + rd->file_size / 1000) * SANITIZER_SLOWDOWN;
	uint64_t waited_ms = 0;
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		struct rd child = *rd;
		struct h5_run_hosts hosts;
		struct sb_run *runs = NULL;
		char err[8];
		size_t n = 0;

		/* a crash must kill the child, whatever handler the caller set (cmocka's
		 * longjmps back into the test runner); glibc's own heap-corruption message
		 * must not become a second line */
		static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS };
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		for (size_t i = 0; i < ARRAY_SIZE(crash); i++)
			signal(crash[i], SIG_DFL);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		child.err = err;
		child.errlen = sizeof(err);
		child.hosts = rd->hosts ? &hosts : NULL; /* the run groups' attributes too */
		child.file = open_path(&child);
		if (child.file < 0 || read_file(&child, NULL, &runs, &n, load_samples) < 0)
			_exit(TRIAL_REFUSED);
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited_ms >= limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			seterr(rd->err, rd->errlen, "'%s' is damaged: reading it did not finish in "
			       "%llu s", rd->path, (unsigned long long)(limit_ms / 1000));
			return -1;
		}
		struct timespec ts = { 0, 5 * 1000000 };
		nanosleep(&ts, NULL);
		waited_ms += 5;
	}
	if (WIFSIGNALED(status)) {
		seterr(rd->err, rd->errlen, "'%s' is damaged: reading it crashed libhdf5 (SIG%s)",
		       rd->path, sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
								: "?");
		return -1;
	}
	/* any other status is a crash a sanitizer caught and exited on */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 &&
				   WEXITSTATUS(status) != TRIAL_REFUSED)) {
		seterr(rd->err, rd->errlen, "'%s' is damaged: reading it crashed libhdf5 "
		       "(exit status %d)", rd->path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

/* Reads every run of path (see h5io.h). The caller owns *runs. */
int h5_read(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
	    int load_samples, char *err, size_t errlen)
{
	return h5_read_hosts(path, host, runs, nruns, load_samples, NULL, err, errlen);
}

/* h5_read() and each run's host into *hosts when not NULL (see h5io.h). */
int h5_read_hosts(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
		  int load_samples, struct h5_run_hosts *hosts, char *err, size_t errlen)
{
	struct rd rd = { .path = path, .file = -1, .err = err, .errlen = errlen, .hosts = hosts };

	*runs = NULL;
	*nruns = 0;
	if (hosts)
		memset(hosts, 0, sizeof(*hosts));
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	rd.file = open_path(&rd);
	if (rd.file < 0)
		return -1;
	if (check_schema(&rd) < 0) {
		close_id(&rd.file);
		return -1;
	}
	if (rd.version < 2) {
		close_id(&rd.file);
		if (trial_read(&rd, load_samples) < 0)
			return -1;
		rd.file = open_path(&rd);
		if (rd.file < 0)
			return -1;
	}
	return read_file(&rd, host, runs, nruns, load_samples);
}

/* Reads every run of the file image buf[0..len) (see h5io.h); name is what errors call it. */
int h5_read_image(const void *buf, size_t len, const char *name, struct sb_host *host,
		  struct sb_run **runs, size_t *nruns, int load_samples, char *err,
		  size_t errlen)
{
	struct rd rd = { .path = name, .file = -1, .err = err, .errlen = errlen };
	hid_t fapl = -1;

	*runs = NULL;
	*nruns = 0;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	/* the signature check of H5Fis_hdf5(), on the image: 8 bytes at offset 0 */
	if (len < 8 || memcmp(buf, "\211HDF\r\n\032\n", 8) != 0) {
		seterr(err, errlen, "'%s' is not an HDF5 file", name);
		return -1;
	}
	/* HDF5's core driver on a copy of the image, read-only, never written back */
	fapl = reader_fapl();
	if (fapl >= 0 && H5Pset_fapl_core(fapl, 64 * 1024, 0) >= 0 &&
	    H5Pset_file_image(fapl, (void *)buf, len) >= 0)
		rd.file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
	close_id(&fapl);
	if (rd.file < 0) {
		seterr(err, errlen, "'%s' is not a readable HDF5 file", name);
		return -1;
	}
	return read_file(&rd, host, runs, nruns, load_samples);
}

/* ---- bench driver: matrix identity, resume, merge (harness/cmd_bench.c, cmd_merge.c) ----
 * Kept apart from the rest so the schema work above merges cleanly. */

/* Sets root string attribute name of f (e.g. the bench's matrix identity) and flushes.
 * Returns 0, or -1 with one line in h5_strerror(f). */
int h5_set_attr(struct sb_h5 *f, const char *name, const char *value)
{
	char why[128];

	if (attr_str(f->file, name, value) < 0 || H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0) {
		seterr(f->err, sizeof(f->err), "cannot write '%s': %s", f->path, h5_why(why));
		return -1;
	}
	return 0;
}

/* Reads root string attribute name of path into buf. Returns 0, 1 when the file has no
 * such attribute (buf ""), or -1 with one line in err when the file cannot be opened. */
int h5_read_attr(const char *path, const char *name, char *buf, size_t len, char *err,
		 size_t errlen)
{
	char why[128];
	hid_t file;
	int ret;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	buf[0] = 0;
	if (access(path, R_OK) != 0) {
		seterr(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	file = open_h5(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (file < 0) {
		seterr(err, errlen, "cannot open '%s': %s", path, h5_why(why));
		return -1;
	}
	ret = attr_read_str(file, name, buf, len, 0) == 0 ? 0 : 1;
	if (ret)
		buf[0] = 0;
	H5Fclose(file);
	return ret;
}

struct orphan_scan {
	char (*listed)[GROUP_LEN];
	size_t nlisted;
	char (*orphans)[GROUP_LEN];
	size_t norphans, cap;
};

static herr_t orphan_cb(hid_t loc, const char *name, const H5L_info_t *info, void *data)
{
	struct orphan_scan *s = data;

	(void)loc;
	(void)info;
	if (strncmp(name, "run_", 4) != 0 || strlen(name) >= GROUP_LEN)
		return 0;
	for (size_t i = 0; i < s->nlisted; i++)
		if (!strcmp(s->listed[i], name))
			return 0;
	if (s->norphans == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		void *p = realloc(s->orphans, cap * sizeof(*s->orphans));
		if (!p)
			return -1;
		s->orphans = p;
		s->cap = cap;
	}
	snprintf(s->orphans[s->norphans++], GROUP_LEN, "%s", name);
	return 0;
}

/* Deletes run groups that /runs does not list: a run whose write was cut short. */
static int delete_orphan_groups(struct sb_h5 *f)
{
	struct orphan_scan s = { 0 };
	hid_t gt = -1;
	int ret = -1;

	if (f->nruns) {
		s.listed = calloc(f->nruns, GROUP_LEN);
		gt = H5Tcreate(H5T_COMPOUND, GROUP_LEN);
		hid_t st = str_type(GROUP_LEN);
		if (!s.listed || gt < 0 || st < 0 || H5Tinsert(gt, "group", 0, st) < 0 ||
		    H5Dread(f->runs, gt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.listed) < 0) {
			close_id(&st);
			goto cleanup;
		}
		close_id(&st);
		s.nlisted = f->nruns;
	}
	if (H5Literate(f->file, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, orphan_cb, &s) < 0)
		goto cleanup;
	for (size_t i = 0; i < s.norphans; i++)
		if (H5Ldelete(f->file, s.orphans[i], H5P_DEFAULT) < 0)
			goto cleanup;
	ret = 0;
cleanup:
	close_id(&gt);
	free(s.listed);
	free(s.orphans);
	return ret;
}

/* Opens tmp_path, the `.tmp` file of an interrupted invocation, to append more runs;
 * h5_close() renames it to final_path. host is what the new runs' groups record (the
 * file's own, from h5_read). Run groups the /runs table does not list (a write cut short)
 * are deleted. Returns the open file, or NULL with one line in err. */
struct sb_h5 *h5_reopen(const char *tmp_path, const char *final_path,
			const struct sb_host *host, char *err, size_t errlen)
{
	struct sb_h5 *f = NULL;
	char why[128];
	hsize_t dims = 0;
	int ok = 0;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (access(tmp_path, R_OK | W_OK) != 0) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, strerror(errno));
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, strerror(ENOMEM));
		return NULL;
	}
	f->file = f->runs = f->runs_type = f->sample_type = -1;
	f->thread_type = f->stat_type = f->metric_type = f->symbol_type = -1;
	f->fact_type = f->calib_type = -1;
	f->host = *host;
	f->path = strdup(final_path);
	f->tmp = strdup(tmp_path);
	if (!f->path || !f->tmp) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, strerror(ENOMEM));
		goto cleanup;
	}
	f->file = open_h5(tmp_path, H5F_ACC_RDWR, H5P_DEFAULT);
	if (f->file < 0) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, h5_why(why));
		goto cleanup;
	}
	f->runs = H5Dopen2(f->file, "runs", H5P_DEFAULT);
	hid_t space = f->runs < 0 ? -1 : H5Dget_space(f->runs);
	if (space < 0 || H5Sget_simple_extent_dims(space, &dims, NULL) != 1) {
		close_id(&space);
		seterr(err, errlen, "'%s' has no readable /runs table", tmp_path);
		goto cleanup;
	}
	close_id(&space);
	f->nruns = dims;
	if (make_types(f) != 0) {
		seterr(err, errlen, "cannot open '%s': cannot build HDF5 types", tmp_path);
		goto cleanup;
	}
	if (delete_orphan_groups(f) < 0 || attr_i32(f->file, "complete", 0) < 0 ||
	    H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0) {
		seterr(err, errlen, "cannot write '%s': %s", tmp_path, h5_why(why));
		goto cleanup;
	}
	f->force = 0;
	ok = 1;
cleanup:
	if (!ok) {
		close_all(f);
		close_id(&f->file);
		h5_free(f);
		f = NULL;
	}
	return f;
}

/* Appends r like h5_append_run(), its group recording host instead of f's (merge keeps
 * every run's own host). Returns 0, or -1 with one line in h5_strerror(f). */
int h5_append_run_host(struct sb_h5 *f, const struct sb_run *r, const struct sb_host *host)
{
	f->root = f->host;
	f->run_host_tables = !host_same(host, &f->root);
	f->host = *host;
	int ret = h5_append_run(f, r);
	f->host = f->root;
	f->run_host_tables = 0;
	return ret;
}

void h5_run_hosts_free(struct h5_run_hosts *hosts)
{
	free(hosts->v);
	free(hosts->of_run);
	memset(hosts, 0, sizeof(*hosts));
}

/* Reads numeric root attribute name of path into *out. Returns 0, 1 when absent, or -1
 * with one line in err when path cannot be opened. */
int h5_read_attr_num(const char *path, const char *name, double *out, char *err,
		     size_t errlen)
{
	char why[128];
	hid_t file;
	int ret;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (access(path, R_OK) != 0) {
		seterr(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	file = open_h5(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (file < 0) {
		seterr(err, errlen, "cannot open '%s': %s", path, h5_why(why));
		return -1;
	}
	ret = attr_read_num(file, name, H5T_NATIVE_DOUBLE, out) == 0 ? 0 : 1;
	H5Fclose(file);
	return ret;
}

/* ---- host calibration at the end of an invocation (harness/session.c) ---- */

/* Replaces the root `calibration` table of f with host's rows (the start rows and, once
 * measured, the end rows) and flushes. The host facts stay those of the start. Returns
 * 0, or -1 with one line in h5_strerror(f). */
int h5_set_calibration(struct sb_h5 *f, const struct sb_host *host)
{
	char why[128];

	if (H5Lexists(f->file, "calibration", H5P_DEFAULT) > 0 &&
	    H5Ldelete(f->file, "calibration", H5P_DEFAULT) < 0)
		goto fail;
	if (write_table(f->file, "calibration", f->calib_type, host->calib,
			clamp_count(host->ncalib, SB_CALIB_MAX), "") < 0 ||
	    H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0)
		goto fail;
	f->host.ncalib = host->ncalib;
	memcpy(f->host.calib, host->calib, sizeof(host->calib));
	return 0;
fail:
	seterr(f->err, sizeof(f->err), "cannot write '%s': %s", f->path, h5_why(why));
	return -1;
}
