/* matrix.h - the bench matrix config (ci/matrix): named profiles, each a list of blocks,
 * each block a cross product samplers x workloads x threads x hz x repetitions.
 *
 *   # comment
 *   [quick]                      a block of profile `quick` (repeat the header to add one)
 *   samplers  = ctimer itimer    names from `sampbench list`, space or comma separated
 *   tools     = perf-record      profilers that are programs (docs/tools.md), beside them
 *   workloads = skewed
 *   threads   = 2 8              default 2
 *   hz        = 100              default 100
 *   reps      = 5                default 5; MIN..MAX (3..5): adaptive, docs/gate.md
 *   duration  = 2                seconds, default 2
 *   param     = 0                workload knob, default 0
 *   seed      = 1                first repetition's seed, default 1
 *
 * Format and rules: docs/gate.md. */
#ifndef SB_MATRIX_H
#define SB_MATRIX_H

#include <stddef.h>

#include "harness/runner.h"
#include "harness/tool.h"

#define MX_MAX_LIST 32
#define MX_MAX_BLOCKS 64
#define MX_NAME_LEN 32

struct mx_block {
	char profile[MX_NAME_LEN];
	int line; /* of its [profile] header */
	const struct sampler *samplers[MX_MAX_LIST];
	int nsamplers;
	const struct tool *tools[MX_MAX_LIST]; /* in the process's tool pool (tool_intern) */
	int ntools;
	const struct workload *workloads[MX_MAX_LIST];
	int nworkloads;
	/* `variants`: the build variants each workload runs in (docs/workloads.md
	 * "Variants"), expanded into workloads[] at the block's end; none: as named */
	const char *variants[MX_MAX_LIST];
	int nvariants;
	int threads[MX_MAX_LIST];
	int nthreads;
	double hz[MX_MAX_LIST];
	int nhz;
	int reps;     /* the repetitions expanded: the fixed count, or the adaptive maximum */
	int reps_min; /* adaptive `reps = MIN..MAX`: MIN; 0 for a fixed count */
	double duration_s;
	double watchdog_s; /* 0: the runner's default (duration + max(5 s, duration)) */
	unsigned stack_kb; /* workload threads' stack in KiB (`stack_kb`), 0: the default */
	unsigned param;
	unsigned long seed;
};

struct mx_matrix {
	struct mx_block blocks[MX_MAX_BLOCKS];
	int nblocks;
};

/* Parses a matrix config held in text; name is the file name used in errors
 * ("name:LINE: problem"). Every profile is checked, not only the one that will run, so a
 * sampler or workload missing from the tables fails at once. Returns 0, or -1 with one
 * line in err. */
int matrix_parse(const char *text, const char *name, struct mx_matrix *m, char *err,
		 size_t errlen);
/* Reads and parses the file path. Returns 0, or -1 with one line in err. */
int matrix_load(const char *path, struct mx_matrix *m, char *err, size_t errlen);

/* Expands profile `profile` of m into run specs (malloc'd, caller frees). Order: per block,
 * per (workload, threads, hz) cell group, per repetition, every sampler with `none`
 * first, then every tool, so drift hits all alike and `none` gives the others their
 * overhead. A tool's spec has the tool's sampler (tool_of finds the tool). An adaptive
 * block (`reps = MIN..MAX`) expands to MAX repetitions, each spec carrying the range
 * (reps_min, reps_max): the bench decides which of those from MIN on it runs.
 * Returns the number of specs, 0 with err set when the profile does not exist, or -1 when
 * out of memory. */
long matrix_specs(const struct mx_matrix *m, const char *profile, struct run_spec **specs,
		  char *err, size_t errlen);

/* The identity of an expanded run list: a 64-bit FNV-1a digest, as 16 hex digits, of
 * every spec's sampler, workload, threads, hz, duration, repetition, param and seed in
 * order (and its adaptive range, when it has one). Resume and merge refuse files of
 * another digest. */
void matrix_digest(const struct run_spec *specs, size_t n, char buf[17]);

/* Marks in keep[0..n) the specs of shard k of nshards (1 <= k <= nshards), a
 * deterministic split: each cell (sampler in a workload x threads x hz x duration group of
 * one block) goes whole, with all its repetitions, to the least loaded shard so far
 * (expected seconds; ties to the lowest k) in spec order, and a shard holding any cell of
 * a group also runs that group's `none` runs (the overhead reference, so several shards
 * may run the same `none` spec; merge keeps one). Returns the number kept. */
size_t matrix_shard(const struct run_spec *specs, size_t n, int k, int nshards, char *keep);

/* Parses "K/N" (1 <= K <= N <= 1000). Returns 0, or -1. */
int matrix_parse_shard(const char *s, int *k, int *nshards);

/* Writes the profile names of m, comma separated, into buf. */
void matrix_profile_names(const struct mx_matrix *m, char *buf, size_t len);

#endif
