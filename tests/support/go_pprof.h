/* go_pprof.h - pprof files read back by Go's own reader, `go tool pprof` (Debian's
 * golang-go), in cmocka tests. */
#ifndef SB_TEST_GO_PPROF_H
#define SB_TEST_GO_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "core/run.h"

/* 1 when /usr/bin/go is installed; else prints "<test>: skipped: /usr/bin/go not installed"
 * on stderr and returns 0, and the test should skip(). */
int go_pprof_available(const char *test);

/* Writes r to path as pprof (export_pprof), which must report want samples, then runs
 * `go tool pprof ARGS... path` (args NULL-terminated, at most 12) with its stdout into out.
 * Fails the calling test, with go's stderr, when a step fails. */
void go_pprof(const struct sb_run *r, int64_t want, const char *path, const char *const *args,
	      char *out, size_t outlen);

/* Runs `go tool pprof ARGS... path` on a pprof file already written, as go_pprof does. */
void go_pprof_read(const char *path, const char *const *args, char *out, size_t outlen);

#endif
