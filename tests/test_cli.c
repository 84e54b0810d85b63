/* test_cli.c - bad input to the CLI: one clear line on stderr, exit 2, nothing written. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/sbrun.h"

static char bin[512];
static char tmpdir[] = "/tmp/sbcli.XXXXXX";
static char out_path[600];

/* Runs bin with args; stderr into err, stdout discarded. Returns the exit status. */
static int run(char *err, size_t errlen, const char *const *args)
{
	return sbrun(bin, args, NULL, 0, err, errlen);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Asserts: exit 2, exactly one stderr line containing `want`, lowercase start after the
 * program prefix, no trailing period, and no output file. */
static void expect_usage_error(const char *want, const char *const *args)
{
	char err[4096];
	int rc = run(err, sizeof(err), args);
	if (rc != 2 || count_lines(err) != 1 || !strstr(err, want))
		fail_msg("want exit 2 and one line with '%s', got exit %d: %s", want, rc, err);
	assert_int_equal(strncmp(err, "sampbench: ", 11), 0);
	char first = err[11];
	assert_false(first >= 'A' && first <= 'Z');
	size_t len = strlen(err);
	assert_true(len >= 2 && err[len - 2] != '.');
	struct stat st;
	assert_int_not_equal(stat(out_path, &st), 0);
}


static void test_unknown_sampler(void **state)
{
	(void)state;
	expect_usage_error("unknown sampler 'nope'",
			   ARGS("run", "--sampler", "itimer,nope", "--workload", "skewed", "-o", out_path));
}

static void test_unknown_workload(void **state)
{
	(void)state;
	expect_usage_error("unknown workload 'nope'",
			   ARGS("run", "--sampler", "itimer", "--workload", "nope", "-o", out_path));
}

static void test_bad_hz(void **state)
{
	(void)state;
	expect_usage_error("--hz", ARGS("run", "-s", "itimer", "-w", "skewed", "--hz", "0", "-o", out_path));
	expect_usage_error("--hz", ARGS("run", "-s", "itimer", "-w", "skewed", "--hz", "-5", "-o", out_path));
	expect_usage_error("--hz", ARGS("run", "-s", "itimer", "-w", "skewed", "--hz", "1e9", "-o", out_path));
	expect_usage_error("invalid number", ARGS("run", "-s", "itimer", "-w", "skewed", "--hz", "fast", "-o", out_path));
}

static void test_bad_threads(void **state)
{
	(void)state;
	expect_usage_error("--threads must be between 1 and 10240",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "--threads", "0", "-o", out_path));
	expect_usage_error("--threads must be between 1 and 10240",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "--threads", "10241", "-o", out_path));
	expect_usage_error("--threads must be between 1 and 10240",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "--threads", "2,0", "-o", out_path));
	expect_usage_error("invalid integer '8x' for --threads",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "-t", "2,8x", "-o", out_path));
	expect_usage_error("--threads lists 2 twice",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "-t", "2,8,2", "-o", out_path));
	expect_usage_error("--threads list is empty",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "-t", ",", "-o", out_path));
}

static void test_missing_and_unknown_options(void **state)
{
	(void)state;
	expect_usage_error("missing -o", ARGS("run", "-s", "itimer", "-w", "skewed"));
	expect_usage_error("unknown option '--bogus'",
			   ARGS("run", "-s", "itimer", "-w", "skewed", "--bogus", "-o", out_path));
	expect_usage_error("unknown command 'frobnicate'", ARGS("frobnicate"));
}

static void test_unwritable_path(void **state)
{
	(void)state;
	expect_usage_error("cannot create",
			   ARGS("run", "-s", "none", "-w", "skewed", "-o", "/nonexistent-dir/x.h5"));
}

static void test_existing_output_needs_force(void **state)
{
	(void)state;
	char err[4096];
	char existing[700];
	snprintf(existing, sizeof(existing), "%s/existing.h5", tmpdir);
	FILE *f = fopen(existing, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	int rc = run(err, sizeof(err),
		     ARGS("run", "-s", "none", "-w", "skewed", "-t", "1", "-d", "0.1", "-o", existing));
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "exists"));
	f = fopen(existing, "r");
	char buf[16] = "";
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");
	/* with --force it is replaced by a valid file */
	rc = run(err, sizeof(err), ARGS("run", "-s", "none", "-w", "skewed", "-t", "1", "-d", "0.1",
					"-q", "--force", "-o", existing));
	assert_int_equal(rc, 0);
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "h5dump -H '%s' >/dev/null 2>&1", existing);
	assert_int_equal(system(cmd), 0);
	unlink(existing);
}

/* Runs bin with args; captures stdout into out. Returns the exit status. */
static int run_stdout(char *out, size_t outlen, const char *const *args)
{
	return sbrun(bin, args, out, outlen, NULL, 0);
}

/* --threads 1,2 with two workloads: one run per (workload, threads) cell, in that order,
 * each at its own thread count. */
static void test_threads_list(void **state)
{
	(void)state;
	char out[4096], path[700], wl[4][16];
	int thr[4];
	snprintf(path, sizeof(path), "%s/threads.h5", tmpdir);
	assert_int_equal(run_stdout(out, sizeof(out),
				    ARGS("run", "-s", "none", "-w", "balanced,skewed", "-t", "1,2",
					 "-d", "0.1", "-o", path)),
			 0);
	unlink(path);
	/* the header, then sampler workload thr ... per run */
	const char *line = strchr(out, '\n');
	int n = 0;
	for (; line && line[1] && n < 5; line = strchr(line + 1, '\n')) {
		if (n == 4)
			fail_msg("more than 4 runs: %s", out);
		assert_int_equal(sscanf(line + 1, "none %15s %d", wl[n], &thr[n]), 2);
		n++;
	}
	assert_int_equal(n, 4);
	assert_string_equal(wl[0], "balanced");
	assert_int_equal(thr[0], 1);
	assert_string_equal(wl[1], "balanced");
	assert_int_equal(thr[1], 2);
	assert_string_equal(wl[2], "skewed");
	assert_int_equal(thr[2], 1);
	assert_string_equal(wl[3], "skewed");
	assert_int_equal(thr[3], 2);
}

/* --variant: each workload in each of the builds it has, workload-major; an unknown
 * variant, or a workload with none of the builds, is a usage error. */
static void test_variants(void **state)
{
	(void)state;
	char out[4096], path[700], wl[4][24];
	snprintf(path, sizeof(path), "%s/variants.h5", tmpdir);
	assert_int_equal(run_stdout(out, sizeof(out),
				    ARGS("run", "-s", "none", "-w", "hotspot,deep", "--variant",
					 "fp,inline", "-t", "1", "-d", "0.1", "-o", path)),
			 0);
	unlink(path);
	const char *line = strchr(out, '\n');
	int n = 0;
	for (; line && line[1] && n < 5; line = strchr(line + 1, '\n')) {
		if (n == 3)
			fail_msg("more than 3 runs: %s", out);
		assert_int_equal(sscanf(line + 1, "none %23s", wl[n]), 1);
		n++;
	}
	assert_int_equal(n, 3);
	assert_string_equal(wl[0], "hotspot");
	assert_string_equal(wl[1], "hotspot@inline");
	assert_string_equal(wl[2], "deep"); /* deep has no inline build */
	expect_usage_error("unknown variant 'O3'",
			   ARGS("run", "-s", "none", "-w", "hotspot", "--variant", "nofp,O3", "-o",
				out_path));
	expect_usage_error("workload 'deep' has no inline build",
			   ARGS("run", "-s", "none", "-w", "hotspot,deep", "--variant", "inline",
				"-o", out_path));
	expect_usage_error("unknown workload 'hotspot@O3'",
			   ARGS("run", "-s", "none", "-w", "hotspot@O3", "-o", out_path));
}

/* Baselines live under results/baselines/ by machine class; bad targets are refused. */
static void test_baseline_paths(void **state)
{
	(void)state;
	char out[1024];
	assert_int_equal(run_stdout(out, sizeof(out), ARGS("baseline", "--path")), 0);
	assert_int_equal(strncmp(out, "results/baselines/", 18), 0);
	assert_non_null(strstr(out, ".h5\n"));
	assert_null(strchr(out + 18, '/')); /* the fingerprint cannot leave the directory */
	expect_usage_error("must end in .h5", ARGS("baseline", "--to", "x.txt", out_path));
	expect_usage_error("cannot open", ARGS("baseline", "/nonexistent/x.h5"));
	expect_usage_error("unexpected argument", ARGS("baseline", "--path", "extra"));
}

/* bench's driver options: bad values are refused in one line before anything runs. */
static void test_bench_driver_options(void **state)
{
	(void)state;
	char tmp[700], other[700];
	snprintf(tmp, sizeof(tmp), "%s/other.h5.tmp", tmpdir);
	expect_usage_error("--resume wants the FILE.h5.tmp", ARGS("bench", "--resume", out_path));
	expect_usage_error("exclude each other",
			   ARGS("bench", "--resume", tmp, "-o", out_path));
	expect_usage_error("--shard wants K/N", ARGS("bench", "--shard", "3/2", "-o", out_path));
	/* the default profile is adaptive: its budgets must load */
	expect_usage_error("(the budgets decide the adaptive repetitions)",
			   ARGS("bench", "--budgets", "/nonexistent/budgets", "--dry-run"));
	expect_usage_error("unknown revision 'no-such-rev'",
			   ARGS("bench", "--ab", "no-such-rev", "-o", out_path));
	/* a file of another bench (no matrix identity) is refused */
	char err[4096];
	snprintf(other, sizeof(other), "%s/other.h5", tmpdir);
	assert_int_equal(run(err, sizeof(err), ARGS("run", "-s", "none", "-w", "balanced", "-t",
						     "1", "-d", "0.1", "-q", "-o", other)),
			 0);
	assert_int_equal(rename(other, tmp), 0);
	expect_usage_error("cannot resume", ARGS("bench", "--profile", "quick", "--resume", tmp));
	unlink(tmp);
}

static void test_help_is_not_an_error(void **state)
{
	(void)state;
	char err[4096];
	assert_int_equal(run(err, sizeof(err), ARGS("run", "--help")), 0);
	assert_int_equal(run(err, sizeof(err), ARGS("list")), 0);
	assert_int_equal(run(err, sizeof(err), ARGS("--help")), 0);
}

int main(void)
{
	const char *b = getenv("BUILD");
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(out_path, sizeof(out_path), "%s/out.h5", tmpdir);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_sampler),
		cmocka_unit_test(test_unknown_workload),
		cmocka_unit_test(test_bad_hz),
		cmocka_unit_test(test_bad_threads),
		cmocka_unit_test(test_threads_list),
		cmocka_unit_test(test_variants),
		cmocka_unit_test(test_missing_and_unknown_options),
		cmocka_unit_test(test_unwritable_path),
		cmocka_unit_test(test_existing_output_needs_force),
		cmocka_unit_test(test_help_is_not_an_error),
		cmocka_unit_test(test_baseline_paths),
		cmocka_unit_test(test_bench_driver_options),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
