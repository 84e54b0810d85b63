/* run.h - one run's record in memory: what the harness measured, what `h5` writes and
 * reads, what the metrics are computed from. */
#ifndef SB_RUN_H
#define SB_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "core/metrics.h"
#include "core/sample.h"
#include "core/symbol.h"

#define SB_NAME_LEN 48
#define SB_REASON_LEN 192
/* A thread's name as Linux keeps it (comm: 15 bytes and the NUL, pthread_setname_np). */
#define SB_THREAD_NAME_LEN 16

/* Truth and sampling per workload slot, as stored in the `threads` dataset. */
struct sb_thread_row {
	int32_t index;
	int32_t tid;             /* last OS tid seen in the slot */
	uint32_t os_threads;     /* OS threads that ran in the slot */
	uint64_t cpu_ns;         /* true CPU time */
	uint64_t alive_ns;       /* true alive time */
	uint64_t offcpu_ns;      /* intended sleep/block time */
	uint64_t ops;            /* work units */
	uint64_t checksum_errors;
	uint64_t eintr;
	uint64_t short_io;
	uint64_t samples;        /* samples attributed to the slot */
	double weight_ns;        /* sum of their weights (NaN when unknown) */
	/* the name the slot's thread gave itself, read by the thread at its end; "" when
	 * unknown (older files, imports). Stored in the optional `thread_names` dataset,
	 * not in `threads`, so files without it still read. */
	char name[SB_THREAD_NAME_LEN];
};

/* The progress clock's account of one workload slot (workloads/progress.c): how long its
 * threads ran their compute phases and how much of that they were kept from running. */
struct sb_progress_row {
	int32_t index;
	uint64_t active_ns;   /* wall time inside compute phases, between progress ticks */
	uint64_t steps;       /* progress ticks (unit boundaries) */
	uint64_t step_ns;     /* the shortest step seen: the thread's own pace */
	uint64_t pauses;      /* gaps whose excess over step_ns reached SB_PAUSE_MIN_NS */
	uint64_t pause_ns;    /* their excess, summed */
	uint64_t logged;      /* pauses offered to the log (rows beyond its room are lost) */
};

/* One bucket of a slot's pause histogram (core/pausehist.h); only non-empty ones. */
struct sb_pause_bucket {
	int32_t index;
	uint64_t lo_ns, hi_ns; /* the bucket holds pauses in [lo_ns, hi_ns) */
	uint64_t count;
};

/* One observed pause with its time: the gap between two progress ticks of a slot. */
struct sb_gap_row {
	int32_t index;
	uint64_t start_ns; /* CLOCK_MONOTONIC of the tick before the gap */
	uint64_t gap_ns;   /* the whole gap, tick to tick */
	uint64_t pause_ns; /* its excess over the slot's step: what the thread lost */
};

struct sb_stat_row {
	char name[SB_NAME_LEN];
	double value;
};

#define SB_HOST_MAX_FACTS 64

/* A numeric host fact: a calibrated floor (`rendezvous_p99_ns`) or a count. */
struct sb_host_fact {
	char name[SB_NAME_LEN];
	double value;
};

/* One calibration measurement: this host's floor for one mechanism sampbench times,
 * measured with the primitives the samplers use (harness/calibrate.c, docs/metrics.md). */
#define SB_CALIB_MAX 32
struct sb_calib_row {
	char name[SB_NAME_LEN]; /* "syscall", "thread_cpu_clock", "futex_cross", "rendezvous", ... */
	char phase[8];          /* "start" or "end" of the invocation */
	int32_t n;              /* repetitions; 0 when not measured here (reason says why) */
	double p50_ns, p99_ns, max_ns;
	char reason[SB_NAME_LEN]; /* "" when measured, else why not ("ptrace not permitted") */
};

/* Host facts, identical for every run of one invocation. */
struct sb_host {
	char host[64];
	char kernel[128];
	int32_t nproc;
	int32_t tick_hz;       /* CONFIG_HZ, or measured; -1 unknown */
	char tick_source[32];  /* "config", "measured", "unknown" */
	char compiler[64];
	char version[32];
	char git_rev[48];
	char build[64];        /* "plain", or "sanitize=...": timings of such builds are not the product's */
	char fingerprint[64];  /* which machine class: timing compares only within one (host.c) */
	struct sb_host_fact facts[SB_HOST_MAX_FACTS]; /* numeric facts (calibration), by name */
	int32_t nfacts;
	struct sb_calib_row calib[SB_CALIB_MAX]; /* the calibration table, start and end */
	int32_t ncalib;
};

/* SB_RUN_INCOMPLETE: the run finished but its truth does not cover the program (sampbench
 * exec: threads it could not read); judged like a failed run.
 * SB_RUN_LOSSY: the run finished and is scored like an ok one, but its wall-clock sampler
 * took fewer than SB_LOSSY_RATE of the samples its rate promised for the time the threads
 * lived (lost to timeouts, threads it could not stop, ticks it missed): the reason says
 * how many. The gate's rate rules judge it; the status says it at once. */
enum sb_status { SB_RUN_OK = 0, SB_RUN_FAILED, SB_RUN_SKIPPED, SB_RUN_INCOMPLETE, SB_RUN_LOSSY };
#define SB_LOSSY_RATE 0.95

/* 1 when a run of this status has metrics to judge (ok or lossy), 0 otherwise. */
static inline int run_scored(int status)
{
	return status == SB_RUN_OK || status == SB_RUN_LOSSY;
}

struct sb_run {
	int64_t run_id;
	char sampler[SB_NAME_LEN];
	char workload[SB_NAME_LEN];
	int32_t threads;
	double hz;
	double duration_s;
	int32_t repetition;
	int32_t status;              /* enum sb_status */
	char reason[SB_REASON_LEN];  /* why it failed or was skipped, "" when ok */
	char start_time[32];         /* ISO-8601 UTC */
	int32_t clock;               /* enum sb_clock of the sampler */
	double wall_s;               /* measured run wall time */
	char variant[SB_NAME_LEN];   /* A/B benches: which build ran it ("" in a plain bench) */
	struct sb_metrics metrics;

	struct sb_sample *samples;   /* owned by the run */
	size_t nsamples;
	uint64_t *frames;            /* owned; sample i uses frames[frame_offset .. +depth) */
	size_t nframes;
	struct sb_thread_row *thread_rows; /* owned: one per workload slot */
	size_t nthread_rows;
	struct sb_stat_row *stats;   /* owned: sampler counters and harness counters */
	size_t nstats;
	struct sb_symbol *symbols;   /* owned: every distinct frame PC, sorted by pc */
	size_t nsymbols;
	/* owned: the inline chains of the symbols' PCs, sorted by pc then depth; empty when
	 * no PC is in inlined code (older files, imports, binaries without DWARF) */
	struct sb_inline_frame *inlines;
	size_t ninlines;
	/* owned, empty when the workload ran no progress clock (older files, exec, imports) */
	struct sb_progress_row *progress; /* one per slot that ticked */
	size_t nprogress;
	struct sb_pause_bucket *pause_hist; /* non-empty buckets, all slots */
	size_t npause_hist;
	struct sb_gap_row *gaps;     /* the pauses logged, by slot then time */
	size_t ngaps;
};

/* Stats rows a run made by the harness has room for: a sampler's own counters
 * (SB_MAX_STATS, or the exec agent's SB_EXEC_MAX_STATS) and the harness's. */
#define SB_RUN_MAX_STATS 88

/* Gives r an empty stats table with room for SB_RUN_MAX_STATS rows (r owns it; any old
 * table is not freed). Returns 0, or -1 when out of memory. */
int run_alloc_stats(struct sb_run *r);
/* Appends stat name = v to r's table from run_alloc_stats. A stat beyond its room is
 * dropped: a counter more or less never fails a run. */
void run_add_stat(struct sb_run *r, const char *name, double v);
/* Frees what a run owns (not the run itself). */
void run_free(struct sb_run *r);
/* Value of stat `name`, or NaN. */
double run_stat(const struct sb_run *r, const char *name);
const char *run_status_name(int status);
/* Value of numeric host fact `name` (e.g. "rendezvous_p99_ns"), or NaN when h has none. */
double host_fact(const struct sb_host *h, const char *name);
/* Sets numeric host fact `name` to value, adding it when new. Returns 0, or -1 when the
 * table is full or the name too long. */
int host_fact_set(struct sb_host *h, const char *name, double value);

#endif
