/* h5io.h - sampbench's HDF5 files (layout in docs/hdf5.md).
 *
 *   /                      attrs: schema_version, host facts, created
 *   /host_facts            compound (name, value): numeric host facts (schema 2)
 *   /calibration           compound: the host calibration table (schema 2)
 *   /runs                  compound table, one row per run (index for pandas/h5py)
 *   /run_000000/           attrs: sampler, workload, threads, hz, duration_s, repetition,
 *                                 host facts, start_time, status, reason
 *       samples            compound, one row per sample
 *       frames             uint64 PCs, flattened; samples.frame_offset/depth index it
 *       threads            compound, truth and samples per workload slot
 *       metrics            compound (name, value, unit)
 *       stats              compound (name, value): sampler and harness counters
 * Datasets are chunked, deflate-compressed and Fletcher32-checksummed; schema 2 files use
 * the newest HDF5 format (checksummed metadata) and fixed-length strings only. */
#ifndef SB_H5IO_H
#define SB_H5IO_H

#include "core/run.h"

/* Written: 2. Read: 1 (host fingerprint, facts, calibration and run variants empty) and 2. */
#define SB_SCHEMA_VERSION 2

struct sb_h5;

/* Creates path.tmp for writing; h5_close() renames it to path. With force == 0 an existing
 * path is an error. Returns NULL and writes one line to err on failure. */
struct sb_h5 *h5_create(const char *path, const struct sb_host *host, int force,
			char *err, size_t errlen);
/* Appends one run (group + runs row) and flushes, so a later crash keeps it. Returns 0/-1. */
int h5_append_run(struct sb_h5 *f, const struct sb_run *r);
/* Marks the file complete or incomplete (attribute `complete`). */
void h5_set_complete(struct sb_h5 *f, int complete);
/* Closes and renames the temp file into place. Returns 0, or -1 after printing one line to
 * stderr (f is freed either way). */
int h5_close(struct sb_h5 *f);
/* Closes and deletes the temp file (nothing written). */
void h5_abort(struct sb_h5 *f);
/* The last error of h5_append_run() / h5_set_complete() on f, one line ("" when none). */
const char *h5_strerror(const struct sb_h5 *f);

/* Reads every run of path. *runs is malloc'd (free each with run_free, then the array).
 * load_samples == 0 skips samples/frames (faster for `show` and the gate): samples and
 * frames stay NULL with count 0, metrics.nsamples still counts them. Rejects a file of
 * another schema version. A damaged file is refused with one line, never followed: counts
 * are checked against the bytes stored, indexes against their tables. A schema 1 file (no
 * checksums) is read in a forked child first, so a crash or hang of libhdf5 on it becomes
 * an error, and is opened in the caller only when that child read it whole: call it from
 * a single-threaded process. Returns 0, or -1 with one line in
 * err. */
int h5_read(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
	    int load_samples, char *err, size_t errlen);
/* The hosts a file's runs ran on. A merged file (harness/cmd_merge.c) holds runs of
 * several machines: each run group records its own host, and its own host_facts and
 * calibration tables when they are not the root's. */
struct h5_run_hosts {
	struct sb_host *v; /* the distinct hosts, in order of their first run */
	size_t n;
	size_t *of_run;    /* run i ran on v[of_run[i]] */
};
/* h5_read(), and each run's host into *hosts when hosts is not NULL (free it with
 * h5_run_hosts_free). A run's host is its group's attributes, its group's host_facts and
 * calibration when it has them, else the root's when the group names the root's host and
 * fingerprint, else none (NaN facts: a merged file written before runs kept them). Returns
 * 0, or -1 with one line in err. */
int h5_read_hosts(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
		  int load_samples, struct h5_run_hosts *hosts, char *err, size_t errlen);
void h5_run_hosts_free(struct h5_run_hosts *hosts);
/* h5_read() of an HDF5 file image in memory (buf[0..len), copied by HDF5, left as it is);
 * name stands for the path in error messages. For the fuzzer and for files that arrive
 * as bytes. Returns 0, or -1 with one line in err. */
int h5_read_image(const void *buf, size_t len, const char *name, struct sb_host *host,
		  struct sb_run **runs, size_t *nruns, int load_samples, char *err,
		  size_t errlen);

/* Replaces the file's `calibration` table with host's rows (start and end phases) and its
 * `host_facts` with host's facts (the start's, plus the end phase's `*_worst_p99_ns`).
 * Returns 0/-1 (h5_strerror). */
int h5_set_calibration(struct sb_h5 *f, const struct sb_host *host);

#endif

/* ---- bench driver: matrix identity, resume, merge (definitions in h5io_resume.c, h5io_write.c and h5io_read.c) ---- */

/* Sets root string attribute name (e.g. `matrix_digest`) and flushes. Returns 0/-1
 * (h5_strerror). */
int h5_set_attr(struct sb_h5 *f, const char *name, const char *value);
/* Reads root string attribute name of path into buf. Returns 0, 1 when absent (buf ""),
 * -1 with one line in err when path cannot be opened. */
int h5_read_attr(const char *path, const char *name, char *buf, size_t len, char *err,
		 size_t errlen);
/* Reopens the `.tmp` file of an interrupted invocation for appending (runs the /runs table
 * does not list are deleted; each listed run group without host_facts and calibration
 * tables of its own gets a copy of the root's, so that it keeps them when
 * h5_set_calibration() replaces the root's); h5_close() renames it to final_path. host:
 * what new run groups record. Returns NULL with one line in err on failure. */
struct sb_h5 *h5_reopen(const char *tmp_path, const char *final_path,
			const struct sb_host *host, char *err, size_t errlen);
/* h5_append_run() with the run group recording host instead of the file's, and host's
 * host_facts and calibration tables when host is not the file's. */
int h5_append_run_host(struct sb_h5 *f, const struct sb_run *r, const struct sb_host *host);
/* Reads numeric root attribute name (e.g. `schema_version`) of path. Returns 0, 1 when
 * absent, -1 with one line in err when path cannot be opened. */
int h5_read_attr_num(const char *path, const char *name, double *out, char *err,
		     size_t errlen);
