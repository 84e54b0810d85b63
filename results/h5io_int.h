/* h5io_int.h - what the files of results/ that implement h5io.h share: the file's row
 * structs and field tables, the writer's handle, the reader's state and the helpers
 * more than one of them calls. Private to results/h5io_*.c. */
#ifndef SB_H5IO_INT_H
#define SB_H5IO_INT_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "results/h5io.h"
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

/* One row of a run's optional `thread_names` dataset: the name slot `index`'s thread gave
 * itself (struct sb_thread_row.name). Only slots whose name is known have a row. */
struct sb_thread_name_row {
	int32_t index;
	char name[SB_THREAD_NAME_LEN];
};

enum kind { K_I32, K_U32, K_I64, K_U64, K_F64, K_STR };

struct field {
	const char *name;
	size_t offset;
	enum kind kind;
	size_t size;
};

extern const struct field sample_fields[];
extern const size_t n_sample_fields;
extern const struct field thread_fields[];
extern const size_t n_thread_fields;
extern const struct field stat_fields[];
extern const size_t n_stat_fields;
extern const struct field symbol_fields[];
extern const size_t n_symbol_fields;
extern const struct field fact_fields[];
extern const size_t n_fact_fields;
extern const struct field calib_fields[];
extern const size_t n_calib_fields;
extern const struct field metric_fields[];
extern const size_t n_metric_fields;
extern const struct field runs_fields[];
extern const size_t n_runs_fields;
extern const struct field progress_fields[];
extern const size_t n_progress_fields;
extern const struct field pause_bucket_fields[];
extern const size_t n_pause_bucket_fields;
extern const struct field gap_fields[];
extern const size_t n_gap_fields;
extern const struct field thread_name_fields[];
extern const size_t n_thread_name_fields;
extern const struct field inline_fields[];
extern const size_t n_inline_fields;

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
	hid_t progress_type, pause_bucket_type, gap_type; /* the progress clock's tables */
	hid_t thread_name_type; /* the optional `thread_names` table */
	hid_t inline_type;      /* the optional `symbol_inlines` table */
	hsize_t nruns;
	struct sb_host host; /* repeated on every run group */
	struct sb_host root; /* the root's host, while h5_append_run_host() writes another */
	int run_host_tables; /* the run group's host is not the root's: write its own tables */
	int force;
	char *path;
	char *tmp;
	char err[320];
};

/* The reader's state for one file. */
struct rd {
	const char *path;
	hid_t file;
	int version;         /* schema version of the file: 1 or 2 */
	uint64_t file_size;  /* bytes, bounds every dataset's extent */
	char *err;
	size_t errlen;
	struct h5_run_hosts *hosts; /* NULL: the runs' own hosts are not wanted */
};

void seterr(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *h5_why(char buf[128]);
void close_id(hid_t *id);
hid_t str_type(size_t size);
hid_t vlen_str_type(void);
hid_t compound_type(size_t size, const struct field *f, size_t n);
hid_t runs_type(int with_variant, int with_metrics);
const char *column_unit(const char *name);
int attr_i32(hid_t loc, const char *name, int32_t v);
int host_same(const struct sb_host *a, const struct sb_host *b);
void close_all(struct sb_h5 *f);
void h5_free(struct sb_h5 *f);
int make_types(struct sb_h5 *f);
hid_t open_h5(const char *path, unsigned flags, hid_t fapl);
hid_t open_path(struct rd *rd);
int read_file(struct rd *rd, struct sb_host *host, struct sb_run **runs,
	      size_t *nruns, int load_samples);
/* Checks that rd->file (open) is one of our schemas and notes its version and size.
 * Returns 0, or -1 with one line in rd->err. */
int check_schema(struct rd *rd);

#endif
