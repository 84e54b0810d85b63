/* go_pprof.c - `go tool pprof` on exported runs (go_pprof.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/support/go_pprof.h"

#include <stdio.h>
#include <unistd.h>

#include "analysis/export.h"
#include "tests/support/sbrun.h"

#define GO_BIN "/usr/bin/go"
#define GO_MAX_ARGS 12

int go_pprof_available(const char *test)
{
	if (access(GO_BIN, X_OK) == 0)
		return 1;
	fprintf(stderr, "%s: skipped: %s not installed\n", test, GO_BIN);
	return 0;
}

void go_pprof_read(const char *path, const char *const *args, char *out, size_t outlen)
{
	const char *argv[GO_MAX_ARGS + 4] = { "tool", "pprof" };
	static char err[4096];
	int n = 2;

	for (; args[n - 2]; n++) {
		assert_true(n - 2 < GO_MAX_ARGS);
		argv[n] = args[n - 2];
	}
	argv[n++] = path;
	argv[n] = NULL;
	int rc = sbrun(GO_BIN, argv, out, outlen, err, sizeof(err));
	if (rc != 0)
		fail_msg("go tool pprof %s failed (%d): %s", args[0] ? args[0] : "", rc, err);
}

void go_pprof(const struct sb_run *r, int64_t want, const char *path, const char *const *args,
	      char *out, size_t outlen)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(export_pprof(f, r), want);
	assert_int_equal(fclose(f), 0);
	go_pprof_read(path, args, out, outlen);
}
