/* h5io.h - sampbench's HDF5 files (layout in README.md, "HDF5 layout").
 *
 *   /                      attrs: schema_version, host facts, created
 *   /runs                  compound table, one row per run (index for pandas/h5py)
 *   /run_000000/           attrs: sampler, workload, threads, hz, duration_s, repetition,
 *                                 host facts, start_time, status, reason
 *       samples            compound, one row per sample
 *       frames             uint64 PCs, flattened; samples.frame_offset/depth index it
 *       threads            compound, truth and samples per workload slot
 *       metrics            compound (name, value, unit)
 *       stats              compound (name, value): sampler and harness counters
 * Datasets are chunked and deflate-compressed. */
#ifndef SB_H5IO_H
#define SB_H5IO_H

#include "../harness/run.h"

#define SB_SCHEMA_VERSION 1

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
 * another schema version. Returns 0, or -1 with one line in err. */
int h5_read(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
	    int load_samples, char *err, size_t errlen);

#endif

/* ---- bench driver: matrix identity, resume, merge (definitions at the end of h5io.c) ---- */

/* Sets root string attribute name (e.g. `matrix_digest`) and flushes. Returns 0/-1
 * (h5_strerror). */
int h5_set_attr(struct sb_h5 *f, const char *name, const char *value);
/* Reads root string attribute name of path into buf. Returns 0, 1 when absent (buf ""),
 * -1 with one line in err when path cannot be opened. */
int h5_read_attr(const char *path, const char *name, char *buf, size_t len, char *err,
		 size_t errlen);
/* Reopens the `.tmp` file of an interrupted invocation for appending (runs the /runs table
 * does not list are deleted); h5_close() renames it to final_path. host: what new run
 * groups record. Returns NULL with one line in err on failure. */
struct sb_h5 *h5_reopen(const char *tmp_path, const char *final_path,
			const struct sb_host *host, char *err, size_t errlen);
/* h5_append_run() with the run group recording host instead of the file's. */
int h5_append_run_host(struct sb_h5 *f, const struct sb_run *r, const struct sb_host *host);
/* Reads numeric root attribute name (e.g. `schema_version`) of path. Returns 0, 1 when
 * absent, -1 with one line in err when path cannot be opened. */
int h5_read_attr_num(const char *path, const char *name, double *out, char *err,
		     size_t errlen);
