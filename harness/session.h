/* session.h - a list of runs executed one by one into one HDF5 file. */
#ifndef SB_SESSION_H
#define SB_SESSION_H

#include <stdio.h>

#include "harness/runner.h"

struct session_opts {
	const char *out_path;
	int force;       /* overwrite an existing file */
	int quiet;       /* no per-run lines */
	int progress;    /* bench: progress line on a terminal */
	/* Optional: called before each run (r == NULL) and after it (r: its record). */
	void (*hook)(void *arg, size_t i, size_t n, const struct run_spec *spec,
		     const struct sb_run *r);
	void *hook_arg;

	/* Bench driver (all optional, zero: a plain session). */
	const int64_t *run_ids; /* run id of spec i (resume and shards keep the matrix's
				 * numbering); NULL: i */
	/* Runs spec i instead of tool_or_runner_run (A/B: the candidate build); same
	 * contract. */
	int (*run)(void *arg, size_t i, const struct run_spec *spec, int64_t id,
		   struct sb_run *r);
	void *run_arg;
	/* Adaptive repetitions: called before spec i runs, with the host and the runs so far
	 * (prior ones included); 0 leaves the spec out (its cell is decided), 1 runs it.
	 * NULL: every spec runs. */
	int (*want)(void *arg, size_t i, const struct run_spec *spec, const struct sb_host *host,
		    const struct sb_run *done, size_t ndone);
	void *want_arg;
	const char *const *attrs; /* root string attributes, name, value, ..., NULL */
	/* Resume: append to this `.tmp` file (renamed to out_path at the end) instead of
	 * creating out_path; resume_host is the file's host (h5_read). */
	const char *resume_tmp;
	const struct sb_host *resume_host;
	/* Runs already in the file (resume), owned by the session from the call on: they give
	 * later runs their overhead and come first in runs_out. */
	struct sb_run *prior;
	size_t nprior;
};

/* Runs specs[0..n) in order (after opts->prior; those opts->want leaves out are not
 * run), appends each run to opts->out_path (written to a temp file and renamed at the
 * end, also after Ctrl-C, then marked incomplete) and prints one line per run. A spec
 * with an adaptive range (reps_max) gives its run the stats reps_min and reps_max, which
 * the gate reads. `none` runs give later runs of the same cell their `overhead`. When
 * runs_out is not NULL it receives the runs (metrics and threads only; caller frees with
 * run_free + free). Returns 0 when every run was ok or skipped, 1 when a run failed, 2
 * when the file could not be written, 130 when interrupted. */
int session_run(const struct session_opts *opts, const struct run_spec *specs, size_t n,
		struct sb_run **runs_out, size_t *nruns_out);

/* The narrowest sampler column of the run lines. */
#define RUN_NAME_WIDTH 14

/* The sampler column's width for the runs of specs[0..n): the longest sampler or tool
 * name, at least RUN_NAME_WIDTH. */
int run_name_width(const struct run_spec *specs, size_t n);

/* The header and the one-line summary of a run that `run` and `bench` print, the sampler
 * column name_width wide (run_name_width). */
void run_print_header(FILE *out, int name_width);
void run_print_line(FILE *out, const struct sb_run *r, int name_width);

/* Warns on stderr when hz exceeds the kernel tick for a tick-driven sampler. */
void warn_tick_cap(const struct sb_host *host, const struct run_spec *specs, size_t n);

#endif
