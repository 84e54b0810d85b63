/* runfile.h - a results file loaded whole, for tests that compare files run by run:
 * merge, resume, baseline. Failures are cmocka failures of the calling test. */
#ifndef SB_TESTS_RUNFILE_H
#define SB_TESTS_RUNFILE_H

#include <stddef.h>
#include <stdint.h>

#include "results/h5io.h"

struct rf_file {
	struct sb_run *runs;
	size_t n;
	struct h5_run_hosts hosts; /* rf_load_all() only */
};

/* Reads the runs of p (no samples) into f, which the caller frees with rf_unload(). */
void rf_load(const char *p, struct rf_file *f);
/* rf_load() with the samples and each run's host. */
void rf_load_all(const char *p, struct rf_file *f);
void rf_unload(struct rf_file *f);
/* The run of f with id, or NULL. */
const struct sb_run *rf_by_id(const struct rf_file *f, int64_t id);
/* The host run r of f (from rf_load_all) ran on. */
const struct sb_host *rf_host_of(const struct rf_file *f, const struct sb_run *r);
/* Run x of a and run y of b (both from rf_load_all) hold the same values, host facts
 * included (runcmp flags). Returns 0, or -1 with the first difference in why. */
int rf_same_run(const struct rf_file *a, const struct sb_run *x, const struct rf_file *b,
		const struct sb_run *y, unsigned flags, char *why, size_t len);
/* Fails the test, naming the difference, unless rf_same_run() holds. */
void rf_assert_same_run(const struct rf_file *a, const struct sb_run *x, const struct rf_file *b,
			const struct sb_run *y, unsigned flags);
/* Fails unless no two runs of f share a run id, nor a cell and repetition. */
void rf_assert_distinct(const struct rf_file *f);
/* Fails unless a and b hold the same set of runs: the same run ids, each with the same cell
 * and repetition, none twice, every one ok. */
void rf_assert_same_runs(const struct rf_file *a, const struct rf_file *b);

#endif
