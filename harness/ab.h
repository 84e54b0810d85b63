/* ab.h - same-run A/B: a candidate build of another revision, run one spec at a time
 * between this build's runs (docs/bench.md). */
#ifndef SB_AB_H
#define SB_AB_H

#include <stddef.h>

#include "harness/runner.h"

struct ab_build {
	char rev[48];  /* the candidate's full commit id */
	char dir[256]; /* its temporary git worktree, outside this tree */
	char bin[320]; /* dir/build/sampbench */
	char out[320]; /* dir/run.h5: each candidate run's file */
};

/* Resolves rev in the repository of the working directory, checks it out with
 * `git worktree add --detach` into a fresh /tmp/sampbench-ab.XXXXXX and builds its
 * sampbench there (make output in dir.log). Returns 0, or -1 with one line in err
 * (and nothing left behind). */
int ab_prepare(const char *rev, struct ab_build *b, char *err, size_t errlen);

/* Removes the candidate's worktree (git worktree remove --force) and its build. */
void ab_cleanup(struct ab_build *b);

/* Runs spec with the candidate build (`sampbench run` of that one spec, same seed, into
 * b->out) and reads the run back into r as run id `id`, variant "B". A candidate that
 * cannot run the spec (exit 2: e.g. a sampler it does not know) gives a failed run saying
 * so. Returns 0 when r holds a record, -1 when the harness itself failed. */
int ab_run_candidate(const struct ab_build *b, const struct run_spec *spec, int64_t id,
		     struct sb_run *r);

#endif
