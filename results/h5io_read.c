/* h5io_read.c - reading a results file (schema 1 and 2) into runs and hosts. */
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


/* Reading. Every failure names the file and the missing or malformed object. Nothing read
 * from the file is used before it is checked: counts against the file's size and our
 * limits, strings terminated, indexes range-checked. */

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

/* Whether every chunk of the chunked 1-D dataset d (dims rows) is stored. A chunk the
 * file does not store reads as the fill value without an error, so in a file without
 * checksums (schema 1) a damaged chunk index turns rows into zeros; sampbench writes every
 * row it extends a dataset by, so a missing chunk is damage. Returns 1 when all are
 * stored (or d is not chunked), 0 when one is missing or the layout is unreadable. */
static int all_chunks_stored(hid_t d, hsize_t dims)
{
	hid_t dcpl = H5Dget_create_plist(d);
	hsize_t chunk = 0;
	int ok = 0;

	if (dcpl < 0)
		return 0;
	if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
		ok = 1;
		goto out;
	}
	if (H5Pget_chunk(dcpl, 1, &chunk) != 1 || chunk == 0)
		goto out;
	for (hsize_t off = 0; off < dims; off += chunk) {
		hsize_t size = 0;
		if (H5Dget_chunk_storage_size(d, &off, &size) < 0 || size == 0)
			goto out;
	}
	ok = 1;
out:
	close_id(&dcpl);
	return ok;
}

/* Columns newer files have and older ones lack: read as zero when absent. */
static int optional_column(const char *name)
{
	static const char *const optional[] = { "ticks", NULL }; /* samples, schema 2 */

	for (int i = 0; optional[i]; i++)
		if (strcmp(optional[i], name) == 0)
			return 1;
	return 0;
}

/* memtype with only the members file type ft has: the same size and offsets, so the
 * members left out stay zero in a zeroed buffer. Returns a new type or -1. */
static hid_t present_members(hid_t memtype, hid_t ft)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, H5Tget_size(memtype));
	int nm = H5Tget_nmembers(memtype);

	for (int i = 0; t >= 0 && i < nm; i++) {
		char *mname = H5Tget_member_name(memtype, (unsigned)i);
		hid_t mt = H5Tget_member_type(memtype, (unsigned)i);
		int ok = mname && mt >= 0;
		if (ok && H5Tget_member_index(ft, mname) >= 0)
			ok = H5Tinsert(t, mname, H5Tget_member_offset(memtype, (unsigned)i), mt) >= 0;
		if (mt >= 0)
			H5Tclose(mt);
		H5free_memory(mname);
		if (!ok) {
			H5Tclose(t);
			t = -1;
		}
	}
	return t;
}

/* Reads the whole 1-D dataset grp/name as memtype rows of esize bytes into *out (malloc'd,
 * NULL when empty). Every member of a compound memtype must exist in the file but the
 * optional columns (zero when absent). The extent is checked against the bytes the
 * dataset really stores before anything is allocated. */
static int read_rows(struct rd *rd, hid_t loc, const char *grp, const char *name,
		     hid_t memtype, void **out, size_t *n)
{
	hid_t d = -1, ft = -1, space = -1, partial = -1;
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
			int optional = !found && mname && optional_column(mname);

			if (!found && !optional)
				seterr(rd->err, rd->errlen, "'%s' has no column %s/%s.%s", rd->path,
				       grp, name, mname ? mname : "?");
			H5free_memory(mname);
			if (!found && !optional)
				goto cleanup;
			if (optional && partial < 0 && (partial = present_members(memtype, ft)) < 0) {
				seterr(rd->err, rd->errlen, "cannot read '%s': cannot build HDF5 types",
				       rd->path);
				goto cleanup;
			}
		}
		if (partial >= 0)
			memtype = partial;
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
		if (rd->version < 2 && !all_chunks_stored(d, dims)) {
			seterr(rd->err, rd->errlen, "'%s' has a damaged dataset %s/%s (rows "
			       "stored nowhere)", rd->path, grp, name);
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
	close_id(&partial);
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

	ft = compound_type(sizeof(struct sb_host_fact), fact_fields, n_fact_fields);
	ct = compound_type(sizeof(struct sb_calib_row), calib_fields, n_calib_fields);
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
	for (int s = SB_RUN_OK; s <= SB_RUN_LOSSY; s++)
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
	hid_t progress, pause_bucket, gap;
	hid_t thread_name;
	hid_t inline_frame;
};

/* read_rows for a table newer files have and older ones lack: absent reads as no rows. */
static int read_optional_rows(struct rd *rd, hid_t loc, const char *grp, const char *name,
			      hid_t memtype, void **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
		return 0;
	return read_rows(rd, loc, grp, name, memtype, out, n);
}

/* Checks what indexes into other tables or arrays: thread slots and frame ranges. */
static int check_run(struct rd *rd, const char *grp, const struct sb_run *r)
{
	for (size_t i = 0; i < r->nthread_rows; i++)
		if (r->thread_rows[i].index < 0 || r->thread_rows[i].index >= SB_MAX_THREADS) {
			seterr(rd->err, rd->errlen, "'%s' has thread slot %d in %s/threads",
			       rd->path, (int)r->thread_rows[i].index, grp);
			return -1;
		}
#define CHECK_SLOTS(arr, cnt, table)                                                      \
	for (size_t i = 0; i < (cnt); i++)                                                \
		if ((arr)[i].index < 0 || (arr)[i].index >= SB_MAX_THREADS) {             \
			seterr(rd->err, rd->errlen, "'%s' has thread slot %d in %s/" table,   \
			       rd->path, (int)(arr)[i].index, grp);                           \
			return -1;                                                        \
		}
	CHECK_SLOTS(r->progress, r->nprogress, "progress")
	CHECK_SLOTS(r->pause_hist, r->npause_hist, "pause_hist")
	CHECK_SLOTS(r->gaps, r->ngaps, "pause_gaps")
#undef CHECK_SLOTS
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

/* Reads the optional `thread_names` of group g into r's thread rows, whose slots
 * check_run has checked (without it every name is ""). Each row must name a slot r has a
 * thread row for; names are terminated. Returns 0, or -1 with one line in rd->err. */
static int read_thread_names(struct rd *rd, const struct rd_types *t, hid_t g,
			     const char *grp, struct sb_run *r)
{
	struct sb_thread_name_row *rows;
	int pos[SB_MAX_THREADS];
	void *buf;
	size_t n;

	if (read_optional_rows(rd, g, grp, "thread_names", t->thread_name, &buf, &n) < 0)
		return -1;
	rows = buf;
	for (int i = 0; i < SB_MAX_THREADS; i++)
		pos[i] = -1;
	/* `threads` has no name column: whatever HDF5 left in those bytes is cleared */
	for (size_t i = r->nthread_rows; i-- > 0;) {
		memset(r->thread_rows[i].name, 0, sizeof(r->thread_rows[i].name));
		pos[r->thread_rows[i].index] = (int)i; /* indexes checked by check_run */
	}
	for (size_t i = 0; i < n; i++) {
		int32_t slot = rows[i].index;
		if (slot < 0 || slot >= SB_MAX_THREADS || pos[slot] < 0) {
			seterr(rd->err, rd->errlen, "'%s' has a name for thread slot %d in "
			       "%s/thread_names, which has no such thread", rd->path, (int)slot,
			       grp);
			free(rows);
			return -1;
		}
		terminate(rows[i].name, sizeof(rows[i].name));
		memcpy(r->thread_rows[pos[slot]].name, rows[i].name, SB_THREAD_NAME_LEN);
	}
	free(rows);
	return 0;
}

/* Reads the optional `symbol_inlines` of group g into r (without it r has no inline
 * frames). The rows must be sorted by pc, each pc's depths 0, 1, .. in order and fewer
 * than SB_INLINE_MAX_DEPTH (inline_find and the exports rely on it); strings are
 * terminated. Returns 0, or -1 with one line in rd->err. */
static int read_inlines(struct rd *rd, const struct rd_types *t, hid_t g, const char *grp,
			struct sb_run *r)
{
	void *buf;
	size_t n;

	if (read_optional_rows(rd, g, grp, "symbol_inlines", t->inline_frame, &buf, &n) < 0)
		return -1;
	r->inlines = buf;
	r->ninlines = n;
	for (size_t i = 0; i < n; i++) {
		struct sb_inline_frame *f = &r->inlines[i];
		int32_t want = i > 0 && r->inlines[i - 1].pc == f->pc ? r->inlines[i - 1].depth + 1
								       : 0;
		if ((i > 0 && r->inlines[i - 1].pc > f->pc) || f->depth != want ||
		    f->depth >= SB_INLINE_MAX_DEPTH) {
			seterr(rd->err, rd->errlen, "'%s' has inline frame %zu of %s/symbol_inlines "
			       "out of order (pc 0x%llx depth %d)", rd->path, i, grp,
			       (unsigned long long)f->pc, (int)f->depth);
			return -1;
		}
		terminate(f->function, sizeof(f->function));
		terminate(f->call_file, sizeof(f->call_file));
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
	if (read_optional_rows(rd, g, grp, "progress", t->progress, &buf, &r->nprogress) < 0)
		goto cleanup;
	r->progress = buf;
	if (read_optional_rows(rd, g, grp, "pause_hist", t->pause_bucket, &buf,
			       &r->npause_hist) < 0)
		goto cleanup;
	r->pause_hist = buf;
	if (load_samples) {
		if (read_optional_rows(rd, g, grp, "pause_gaps", t->gap, &buf, &r->ngaps) < 0)
			goto cleanup;
		r->gaps = buf;
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
		if (read_inlines(rd, t, g, grp, r) < 0)
			goto cleanup;
	}
	if (check_run(rd, grp, r) < 0 || read_thread_names(rd, t, g, grp, r) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(m);
	close_id(&g);
	return ret;
}

int check_schema(struct rd *rd)
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
hid_t open_path(struct rd *rd)
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
int read_file(struct rd *rd, struct sb_host *host, struct sb_run **runs,
	      size_t *nruns, int load_samples)
{
	struct rd_types t = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
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
	t.sample = compound_type(sizeof(struct sb_sample), sample_fields, n_sample_fields);
	t.thread = compound_type(sizeof(struct sb_thread_row), thread_fields,
				 n_thread_fields);
	t.stat = compound_type(sizeof(struct sb_stat_row), stat_fields, n_stat_fields);
	t.symbol = compound_type(sizeof(struct sb_symbol), symbol_fields, n_symbol_fields);
	t.metric = compound_type(sizeof(struct metric_row), metric_fields, n_metric_fields);
	t.progress = compound_type(sizeof(struct sb_progress_row), progress_fields,
				   n_progress_fields);
	t.pause_bucket = compound_type(sizeof(struct sb_pause_bucket), pause_bucket_fields,
				       n_pause_bucket_fields);
	t.gap = compound_type(sizeof(struct sb_gap_row), gap_fields, n_gap_fields);
	t.thread_name = compound_type(sizeof(struct sb_thread_name_row), thread_name_fields,
				      n_thread_name_fields);
	t.inline_frame = compound_type(sizeof(struct sb_inline_frame), inline_fields,
				       n_inline_fields);
	if (t.inline_frame < 0 || rtype < 0 || t.sample < 0 || t.thread < 0 || t.stat < 0 || t.metric < 0 ||
	    t.symbol < 0 || t.progress < 0 || t.pause_bucket < 0 || t.gap < 0 ||
	    t.thread_name < 0) {
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
	close_id(&t.progress);
	close_id(&t.pause_bucket);
	close_id(&t.gap);
	close_id(&t.thread_name);
	close_id(&t.inline_frame);
	close_id(&t.thread);
	close_id(&t.sample);
	close_id(&rtype);
	close_id(&rd->file);
	return ret;
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

/* Opens path read-only for its root attributes. Returns the file, or -1 with one line in
 * err. */
static hid_t open_for_attr(const char *path, char *err, size_t errlen)
{
	char why[128];
	hid_t file;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (access(path, R_OK) != 0) {
		seterr(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	file = open_h5(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (file < 0)
		seterr(err, errlen, "cannot open '%s': %s", path, h5_why(why));
	return file < 0 ? -1 : file;
}

/* Reads root string attribute name of path into buf. Returns 0, 1 when the file has no
 * such attribute (buf ""), or -1 with one line in err when the file cannot be opened. */
int h5_read_attr(const char *path, const char *name, char *buf, size_t len, char *err,
		 size_t errlen)
{
	buf[0] = 0;
	hid_t file = open_for_attr(path, err, errlen);
	if (file < 0)
		return -1;
	int ret = attr_read_str(file, name, buf, len, 0) == 0 ? 0 : 1;
	if (ret)
		buf[0] = 0;
	H5Fclose(file);
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
	hid_t file = open_for_attr(path, err, errlen);
	if (file < 0)
		return -1;
	int ret = attr_read_num(file, name, H5T_NATIVE_DOUBLE, out) == 0 ? 0 : 1;
	H5Fclose(file);
	return ret;
}
