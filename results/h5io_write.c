/* h5io_write.c - writing a results file: create it, append runs, set attributes, close it
 * (written to a temporary file, renamed into place on close). */
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

#include "core/iso_time.h"


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

int attr_i32(hid_t loc, const char *name, int32_t v)
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
int host_same(const struct sb_host *a, const struct sb_host *b)
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

void close_all(struct sb_h5 *f)
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
	close_id(&f->progress_type);
	close_id(&f->pause_bucket_type);
	close_id(&f->gap_type);
	close_id(&f->thread_name_type);
	close_id(&f->inline_type);
}

/* A count from a caller's struct, within 0..max. */
static size_t clamp_count(int32_t n, int32_t max)
{
	return n < 0 ? 0 : (size_t)(n > max ? max : n);
}

void h5_free(struct sb_h5 *f)
{
	free(f->path);
	free(f->tmp);
	free(f);
}

/* The memory types of every table f writes (h5_create, h5_reopen). Returns 0 or -1. */
int make_types(struct sb_h5 *f)
{
	f->runs_type = runs_type(1, 1);
	f->fact_type = compound_type(sizeof(struct sb_host_fact), fact_fields, n_fact_fields);
	f->calib_type = compound_type(sizeof(struct sb_calib_row), calib_fields,
				      n_calib_fields);
	f->sample_type = compound_type(sizeof(struct sb_sample), sample_fields,
				       n_sample_fields);
	f->thread_type = compound_type(sizeof(struct sb_thread_row), thread_fields,
				       n_thread_fields);
	f->stat_type = compound_type(sizeof(struct sb_stat_row), stat_fields, n_stat_fields);
	f->symbol_type = compound_type(sizeof(struct sb_symbol), symbol_fields, n_symbol_fields);
	f->metric_type = compound_type(sizeof(struct metric_row), metric_fields,
				       n_metric_fields);
	f->progress_type = compound_type(sizeof(struct sb_progress_row), progress_fields,
					 n_progress_fields);
	f->pause_bucket_type = compound_type(sizeof(struct sb_pause_bucket), pause_bucket_fields,
					     n_pause_bucket_fields);
	f->gap_type = compound_type(sizeof(struct sb_gap_row), gap_fields, n_gap_fields);
	f->thread_name_type = compound_type(sizeof(struct sb_thread_name_row),
					    thread_name_fields, n_thread_name_fields);
	f->inline_type = compound_type(sizeof(struct sb_inline_frame), inline_fields,
				       n_inline_fields);
	return f->inline_type < 0 || f->progress_type < 0 || f->pause_bucket_type < 0 || f->gap_type < 0 ||
			       f->runs_type < 0 || f->sample_type < 0 || f->thread_type < 0 || f->stat_type < 0 ||
			       f->symbol_type < 0 || f->metric_type < 0 || f->fact_type < 0 ||
			       f->calib_type < 0 || f->thread_name_type < 0
		       ? -1
		       : 0;
}

/* Opens path. A file whose writer was killed (a bench's FILE.h5.tmp) still carries the
 * newest format's "open for write" superblock flag, which makes every later open fail.
 * When we may write the file, the flag is cleared as `h5clear -s` does, and the open
 * retried: resume and the readers of a killed bench's file both work. Returns the file
 * id or -1. */
hid_t open_h5(const char *path, unsigned flags, hid_t fapl)
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
	f->progress_type = f->pause_bucket_type = f->gap_type = f->thread_name_type = -1;
	f->inline_type = -1;
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

/* Writes r's `thread_names`: one row per thread row whose name is known, none when no
 * name is (an empty table). Returns 0/-1. */
static int write_thread_names(struct sb_h5 *f, hid_t g, const struct sb_run *r)
{
	struct sb_thread_name_row *rows = calloc(r->nthread_rows ? r->nthread_rows : 1,
						 sizeof(*rows));
	size_t n = 0;
	int ret;

	if (!rows)
		return -1;
	for (size_t i = 0; i < r->nthread_rows; i++) {
		const struct sb_thread_row *t = &r->thread_rows[i];
		if (!t->name[0])
			continue;
		rows[n].index = t->index;
		memcpy(rows[n].name, t->name, sizeof(rows[n].name));
		n++;
	}
	ret = write_table(g, "thread_names", f->thread_name_type, rows, n, "");
	free(rows);
	return ret;
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
	    write_table(g, "symbols", f->symbol_type, r->symbols, r->nsymbols, "") < 0 ||
	    write_table(g, "progress", f->progress_type, r->progress, r->nprogress, "") < 0 ||
	    write_table(g, "pause_hist", f->pause_bucket_type, r->pause_hist, r->npause_hist,
			"") < 0 ||
	    write_table(g, "pause_gaps", f->gap_type, r->gaps, r->ngaps, "") < 0 ||
	    write_thread_names(f, g, r) < 0 ||
	    write_table(g, "symbol_inlines", f->inline_type, r->inlines, r->ninlines, "") < 0)
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

/* ---- host calibration at the end of an invocation (harness/session.c) ---- */

/* Replaces the root `calibration` table of f with host's rows (the start rows and, once
 * measured, the end rows) and flushes. The host facts stay those of the start. Returns
 * 0, or -1 with one line in h5_strerror(f). */
int h5_set_calibration(struct sb_h5 *f, const struct sb_host *host)
{
	char why[128];

	/* the end phase adds facts too (rendezvous_busy_worst_p99_ns): both tables again */
	if ((H5Lexists(f->file, "calibration", H5P_DEFAULT) > 0 &&
	     H5Ldelete(f->file, "calibration", H5P_DEFAULT) < 0) ||
	    (H5Lexists(f->file, "host_facts", H5P_DEFAULT) > 0 &&
	     H5Ldelete(f->file, "host_facts", H5P_DEFAULT) < 0))
		goto fail;
	if (write_table(f->file, "calibration", f->calib_type, host->calib,
			clamp_count(host->ncalib, SB_CALIB_MAX), "") < 0 ||
	    write_table(f->file, "host_facts", f->fact_type, host->facts,
			clamp_count(host->nfacts, SB_HOST_MAX_FACTS), "") < 0 ||
	    H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0)
		goto fail;
	f->host.ncalib = host->ncalib;
	memcpy(f->host.calib, host->calib, sizeof(host->calib));
	f->host.nfacts = host->nfacts;
	memcpy(f->host.facts, host->facts, sizeof(host->facts));
	return 0;
fail:
	seterr(f->err, sizeof(f->err), "cannot write '%s': %s", f->path, h5_why(why));
	return -1;
}
