/* expect_step.h - the `--expect FILE` step of `run` and `exec` (harness/cmd_expect.c). */
#ifndef SB_EXPECT_STEP_H
#define SB_EXPECT_STEP_H

#include <stddef.h>

/* Reads the expectation file at path, before anything runs: a bad file is bad input.
 * Returns 0, or -1 after one line on stderr. */
int expect_step_validate(const char *path);

/* Judges the expectation file on the results file just written, printing the checks to
 * stdout. Returns the exit code: 0 when every check passed, 1 when one failed, 2 on a
 * file that does not read. */
int expect_step_run(const char *expect_path, const char *h5_path);

/* Judges the expectation file on runs in memory (an imported profile), printing the
 * checks to stdout. Returns the exit code, as expect_step_run. */
struct sb_run;
int expect_step_runs(const char *expect_path, const struct sb_run *runs, size_t n);

#endif
