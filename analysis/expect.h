/* expect.h - a user's expectations of a profile (docs/expect.md): "60 % of the weight is
 * under parse_request", "the worker thread takes 200 samples a second", "the sampler's own
 * handler never shows". An expectation file is JSON; each entry selects samples by regular
 * expressions over the folded stack (root to leaf, frames joined by ';') or the leaf
 * frame, optionally by workload thread slot, by the name its thread gave itself and by
 * sampler, and states one measure of them with a margin. Each entry is judged on each run of a results file that took samples. */
#ifndef SB_EXPECT_H
#define SB_EXPECT_H

#include <regex.h>
#include <stddef.h>
#include <stdio.h>

#include "core/run.h"

#define EXPECT_NAME_LEN 96
#define EXPECT_MAX_PATTERNS 8 /* "any": the sum of several patterns' matches */

enum expect_measure {
	EXPECT_SHARE,           /* matched weight / the run's weight (samples when unweighted) */
	EXPECT_SAMPLES_PER_S,   /* matched samples per second of the run's wall time */
	EXPECT_CPU_PER_S,       /* matched weight (CPU seconds) per second of wall time */
	EXPECT_ABSENT,          /* the share, expected 0 (margin: how much is tolerated) */
};

struct expect_entry {
	char name[EXPECT_NAME_LEN];
	regex_t pattern[EXPECT_MAX_PATTERNS]; /* a sample matches when any one does */
	size_t npatterns;      /* 0: every stack (an entry that selects by thread only) */
	int leaf_only;         /* patterns see the leaf frame's name, not the folded stack */
	int thread_index;      /* only samples of this workload slot; -1: every sample */
	int has_thread_name;
	regex_t thread_name;   /* only samples of threads whose name matches (never unnamed) */
	int has_sampler;
	regex_t sampler;       /* only runs whose sampler name matches */
	int has_within;
	regex_t within;        /* share: of the samples whose folded stack matches (else all) */
	enum expect_measure measure;
	double value, margin;
};

struct expect_set {
	struct expect_entry *entries;
	size_t n;
};

/* One entry's result on one run. */
struct expect_result {
	double measured;       /* NaN when the run cannot be judged */
	size_t matched;        /* samples that matched */
	int pass;
};

/* Reads the expectation file at path into *set (the caller frees it with expect_free).
 * Returns 0, or -1 with one line in err ("FILE: ...": JSON errors give their line; an
 * unknown key, a bad pattern or a missing value names the entry). */
int expect_load(const char *path, struct expect_set *set, char *err, size_t errlen);
void expect_free(struct expect_set *set);

/* Whether entry e can be measured on run r: its sampler pattern matches, r is not
 * `none`'s, and r is scored (ok or lossy: run_scored). */
int expect_applies(const struct expect_entry *e, const struct sb_run *r);

/* Measures entry e on run r into *out. Returns 0, or -1 when out of memory. */
int expect_judge(const struct expect_entry *e, const struct sb_run *r, struct expect_result *out);

/* Judges every entry of set on every run its sampler pattern selects (none's and skipped
 * runs aside), printing one row per check and a verdict line to out. A run that is not
 * scored (failed, incomplete) is a failed check. Returns the number of failed checks, or
 * -1 when out of memory or nothing was judged (err says which). */
int expect_report(FILE *out, const struct expect_set *set, const struct sb_run *runs, size_t n,
		  char *err, size_t errlen);

/* Per sampler and entry over the runs: mean, standard deviation and a suggested margin
 * (docs/expect.md), one row each, to out. Returns 0, or -1 when out of memory. */
int expect_margins(FILE *out, const struct expect_set *set, const struct sb_run *runs, size_t n);

#endif
