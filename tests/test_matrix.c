/* test_matrix.c - the bench matrix config: parsing, line-numbered errors, expansion order,
 * and the real ci/matrix staying in step with the sampler and workload tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/matrix.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

static struct mx_matrix m;
static char err[512];

static void expect_error(const char *text, int line, const char *want);

static void test_blocks_defaults_and_order(void **state)
{
	(void)state;
	const char *text = "# two blocks of one profile, one of another\n"
			   "[p]\n"
			   "samplers = ctimer, none itimer\n"
			   "workloads = skewed\n"
			   "threads = 2 8\n"
			   "\n"
			   "[q]\n"
			   "samplers = ctimer\n"
			   "workloads = balanced skewed\n"
			   "reps = 2\n"
			   "duration = 0.5   # trailing comment\n"
			   "watchdog = 1.5\n"
			   "[p]\n"
			   "samplers = itimer\n"
			   "workloads = balanced\n"
			   "hz = 1000\n"
			   "reps = 1\n";
	struct run_spec *specs;

	assert_int_equal(matrix_parse(text, "t", &m, err, sizeof(err)), 0);
	assert_int_equal(m.nblocks, 3);
	/* unset keys take the documented defaults */
	assert_int_equal(m.blocks[0].reps, 5);
	assert_true(m.blocks[0].duration_s == 2);
	assert_true(m.blocks[0].hz[0] == 100);
	assert_int_equal(m.blocks[1].threads[0], 2);

	long n = matrix_specs(&m, "p", &specs, err, sizeof(err));
	/* 3 samplers x 1 workload x 2 threads x 5 reps + 1 x 1 x 1 x 1 */
	assert_int_equal(n, 3 * 2 * 5 + 1);
	/* within a cell and repetition the baseline sampler runs first, then the listed order */
	assert_string_equal(specs[0].sampler->name, "none");
	assert_string_equal(specs[1].sampler->name, "ctimer");
	assert_string_equal(specs[2].sampler->name, "itimer");
	assert_int_equal(specs[0].repetition, 0);
	assert_int_equal(specs[3].repetition, 1);
	assert_true(specs[3].seed == specs[0].seed + 1);
	assert_int_equal(specs[0].threads, 2);
	assert_int_equal(specs[15].threads, 8);
	assert_true(specs[n - 1].hz == 1000);
	assert_true(specs[0].watchdog_s == 0); /* unset: the runner's own limit */
	assert_string_equal(specs[n - 1].workload->name, "balanced");
	free(specs);

	n = matrix_specs(&m, "q", &specs, err, sizeof(err));
	assert_int_equal(n, 2 * 2);
	assert_true(specs[0].duration_s == 0.5);
	assert_true(specs[0].watchdog_s == 1.5 && specs[3].watchdog_s == 1.5);
	free(specs);

	n = matrix_specs(&m, "nope", &specs, err, sizeof(err));
	assert_int_equal(n, 0);
	assert_non_null(strstr(err, "unknown profile 'nope' (profiles: p, q)"));
}

/* `tools` runs profilers that are programs beside the samplers: after `none` and the
 * samplers in each cell and repetition, as the pooled tool (tool_of); a block may hold
 * only tools, and blocks naming one tool share it. */
static void test_tools_in_blocks(void **state)
{
	(void)state;
	const char *text = "[p]\n"
			   "tools = gperftools-cpuprofile, perf-record\n"
			   "samplers = ctimer none\n"
			   "workloads = balanced hotspot\n"
			   "reps = 2\n"
			   "[p]\n"
			   "tools = perf-record\n"
			   "workloads = skewed\n"
			   "reps = 1\n";
	static const char *const want[] = { "none", "ctimer", "gperftools-cpuprofile",
					    "perf-record" };
	struct run_spec *specs;

	assert_int_equal(matrix_parse(text, "t", &m, err, sizeof(err)), 0);
	long n = matrix_specs(&m, "p", &specs, err, sizeof(err));
	/* 4 x 2 workloads x 2 reps + 1 */
	assert_int_equal(n, 4 * 2 * 2 + 1);
	for (long i = 0; i < 16; i++) {
		assert_string_equal(specs[i].sampler->name, want[i % 4]);
		assert_int_equal(specs[i].repetition, (int)(i / 4) % 2);
		assert_int_equal(tool_of(specs[i].sampler) != NULL, i % 4 >= 2);
	}
	assert_string_equal(specs[8].workload->name, "hotspot");
	assert_string_equal(specs[16].workload->name, "skewed");
	assert_ptr_equal(specs[16].sampler, specs[3].sampler);
	free(specs);

	expect_error("[p]\nsamplers = none\ntools = perf-record nosuch\nworkloads = skewed\n", 3,
		     "unknown tool 'nosuch'");
	expect_error("[p]\ntools = perf-record perf-record\nworkloads = skewed\n", 2,
		     "tool 'perf-record' given twice");
	expect_error("[p]\ntools = perf-record\ntools = bpftrace\n", 3, "set twice");
}

/* Each bad config fails with "t:LINE: <want>". */
static void expect_error(const char *text, int line, const char *want)
{
	char prefix[32];
	if (matrix_parse(text, "t", &m, err, sizeof(err)) == 0)
		fail_msg("parsed: %s", text);
	snprintf(prefix, sizeof(prefix), "t:%d: ", line);
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, want))
		fail_msg("want '%s%s', got '%s'", prefix, want, err);
}

static void test_errors_name_the_line(void **state)
{
	(void)state;
	expect_error("[p]\nsamplers = ctimer nosuch\nworkloads = skewed\n", 2,
		     "unknown sampler 'nosuch'");
	expect_error("[p]\nsamplers = ctimer\n\n# c\nworkloads = skewed nosuch\n", 5,
		     "unknown workload 'nosuch'");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\ncolour = blue\n", 4,
		     "unknown key 'colour'");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nwatchdog = 0\n", 4,
		     "'watchdog' must be in (0, 3600]");
	expect_error("[p]\nsamplers ctimer\n", 2, "expected 'key = value'");
	expect_error("samplers = ctimer\n", 1, "before the first [profile]");
	expect_error("[p]\nsamplers = ctimer\nsamplers = itimer\n", 3, "set twice");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nthreads = 0\n", 4,
		     "'threads' must be between 1 and 10240");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nhz = fast\n", 4,
		     "invalid number 'fast'");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nreps = 2 3\n", 4,
		     "takes one value");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nreps = 5..3\n", 4,
		     "'reps' range 5..3 must have MIN < MAX");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nreps = 0..3\n", 4,
		     "'reps' must be between 1 and 1000, got 0");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nreps = 3..x\n", 4,
		     "invalid integer 'x' for 'reps'");
	expect_error("[p\nsamplers = ctimer\n", 1, "malformed block header");
	expect_error("[]\n", 1, "invalid profile name");
	/* a block without samplers is reported at its header */
	expect_error("[p]\nworkloads = skewed\n[q]\nsamplers = ctimer\nworkloads = skewed\n", 1,
		     "block [p] has no 'samplers' or 'tools'");
	expect_error("[p]\nsamplers = ctimer\n", 1, "has no 'workloads'");
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nvariants = O3\n", 4,
		     "unknown variant 'O3'");
	/* a workload with none of the block's variants: at the block's header */
	expect_error("[p]\nsamplers = ctimer\nworkloads = skewed\nvariants = nofp\n", 1,
		     "workload 'skewed' has none of its variants");
	expect_error("[p]\nsamplers =\n", 2, "has no value");
	assert_int_equal(matrix_parse("# nothing\n", "t", &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no [profile] blocks"));
}

/* `variants` crosses the workloads with their build variants, workload-major, whatever
 * the key order; a workload runs in the variants it has (deep has no inline build). */
static void test_variants_key(void **state)
{
	(void)state;
	struct run_spec *specs;
	assert_int_equal(matrix_parse("[p]\nvariants = fp, inline nofp\nsamplers = ctimer\n"
				      "workloads = hotspot deep\nreps = 1\n",
				      "t", &m, err, sizeof(err)), 0);
	long n = matrix_specs(&m, "p", &specs, err, sizeof(err));
	assert_int_equal(n, 5);
	const char *want[] = { "hotspot", "hotspot@inline", "hotspot@nofp", "deep", "deep@nofp" };
	for (long i = 0; i < n; i++)
		assert_string_equal(specs[i].workload->name, want[i]);
	free(specs);
}

/* `reps = MIN..MAX` expands to MAX repetitions in the drift-fair order, each spec carrying
 * the range; a fixed count carries none; the range is part of the digest. */
static void test_adaptive_reps(void **state)
{
	(void)state;
	struct run_spec *specs;
	char d1[17], d2[17];
	assert_int_equal(matrix_parse("[p]\nsamplers = ctimer none\nworkloads = skewed\n"
				      "reps = 2..4\n[q]\nsamplers = ctimer none\n"
				      "workloads = skewed\nreps = 4\n", "t", &m, err, sizeof(err)), 0);
	assert_int_equal(m.blocks[0].reps, 4);
	assert_int_equal(m.blocks[0].reps_min, 2);
	assert_int_equal(m.blocks[1].reps_min, 0);
	long n = matrix_specs(&m, "p", &specs, err, sizeof(err));
	assert_int_equal(n, 8);
	for (long i = 0; i < n; i++) {
		assert_int_equal(specs[i].repetition, i / 2);
		assert_string_equal(specs[i].sampler->name, i % 2 ? "ctimer" : "none");
		assert_int_equal(specs[i].reps_min, 2);
		assert_int_equal(specs[i].reps_max, 4);
	}
	matrix_digest(specs, (size_t)n, d1);
	free(specs);
	assert_int_equal(matrix_specs(&m, "q", &specs, err, sizeof(err)), 8);
	assert_int_equal(specs[7].reps_min, 0);
	assert_int_equal(specs[7].reps_max, 0);
	matrix_digest(specs, 8, d2);
	assert_string_not_equal(d1, d2);
	free(specs);
}

static void test_load_missing_file(void **state)
{
	(void)state;
	assert_int_equal(matrix_load("/nonexistent/matrix", &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot read matrix '/nonexistent/matrix'"));
}

/* The shipped ci/matrix parses with today's tables, has the profiles the Makefile uses,
 * and its quick profile (run inside `make check`) stays within its budget of time. */
/* Shards: every spec in exactly one shard except `none`, which goes with each shard that
 * holds a cell of its group; a cell's repetitions stay together; the split is
 * deterministic. */
static void test_shards_partition_cells(void **state)
{
	(void)state;
	const char *text = "[s]\n"
			   "samplers = none ctimer itimer mach perf\n"
			   "workloads = balanced skewed\n"
			   "threads = 2 8\n"
			   "reps = 3\n";
	struct run_spec *specs;

	assert_int_equal(matrix_parse(text, "t", &m, err, sizeof(err)), 0);
	long n = matrix_specs(&m, "s", &specs, err, sizeof(err));
	assert_int_equal(n, 5 * 2 * 2 * 3);
	for (int nshards = 1; nshards <= 5; nshards++) {
		int count[200] = { 0 };
		size_t total = 0;
		char keep[200], again[200];
		for (int k = 1; k <= nshards; k++) {
			size_t kept = matrix_shard(specs, (size_t)n, k, nshards, keep);
			assert_int_equal(matrix_shard(specs, (size_t)n, k, nshards, again), kept);
			assert_memory_equal(keep, again, (size_t)n);
			total += kept;
			for (long i = 0; i < n; i++) {
				count[i] += keep[i];
				/* a kept spec's whole cell is kept, and its group's none runs */
				for (long j = 0; keep[i] && j < n; j++) {
					int same_group = specs[j].workload == specs[i].workload &&
							 specs[j].threads == specs[i].threads;
					if (same_group && (specs[j].sampler == specs[i].sampler ||
							   !strcmp(specs[j].sampler->name, "none")))
						assert_true(keep[j]);
				}
			}
		}
		for (long i = 0; i < n; i++) {
			if (strcmp(specs[i].sampler->name, "none"))
				assert_int_equal(count[i], 1);
			else
				assert_true(count[i] >= 1);
		}
		assert_true(total >= (size_t)n);
		if (nshards > 1) /* 16 cells over a few shards: none is empty */
			for (int k = 1; k <= nshards; k++)
				assert_true(matrix_shard(specs, (size_t)n, k, nshards, keep) > 0);
	}
	char keep[200];
	assert_int_equal(matrix_shard(specs, (size_t)n, 3, 2, keep), 0);
	free(specs);
}

static void test_shard_arg_and_digest(void **state)
{
	(void)state;
	int k, nshards;
	assert_int_equal(matrix_parse_shard("2/3", &k, &nshards), 0);
	assert_int_equal(k, 2);
	assert_int_equal(nshards, 3);
	assert_int_equal(matrix_parse_shard("0/3", &k, &nshards), -1);
	assert_int_equal(matrix_parse_shard("4/3", &k, &nshards), -1);
	assert_int_equal(matrix_parse_shard("1/", &k, &nshards), -1);
	assert_int_equal(matrix_parse_shard("1/2x", &k, &nshards), -1);

	struct run_spec *specs;
	char a[17], b[17];
	assert_int_equal(matrix_parse("[s]\nsamplers = ctimer\nworkloads = skewed\n", "t", &m,
				      err, sizeof(err)), 0);
	long n = matrix_specs(&m, "s", &specs, err, sizeof(err));
	matrix_digest(specs, (size_t)n, a);
	matrix_digest(specs, (size_t)n, b);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 16);
	specs[n - 1].seed++; /* any change of the run list changes the identity */
	matrix_digest(specs, (size_t)n, b);
	assert_string_not_equal(a, b);
	matrix_digest(specs, (size_t)n - 1, b);
	assert_string_not_equal(a, b);
	free(specs);
}

#ifdef __linux__
/* The workloads profile (make gate-workloads): every healthy built-in on every workload,
 * >= 5 runs a cell (a one-sided sign test needs 5), and short enough for CI. */
static void check_workloads_profile(void)
{
	struct run_spec *specs;
	long n = matrix_specs(&m, "workloads", &specs, err, sizeof(err));
	double secs = 0;

	assert_true(n > 0);
	/* the runs below MIN, and a quarter of those past it (as the default's: a margin) */
	for (long i = 0; i < n; i++)
		secs += (specs[i].duration_s + 0.3) *
			(specs[i].reps_max && specs[i].repetition >= specs[i].reps_min ? 0.25 : 1);
	for (size_t w = 0; workload_at(w); w++)
		for (size_t k = 0; sampler_at(k) && !workload_at(w)->variant; k++) {
			const struct sampler *sp = sampler_at(k);
			if (sp->flags & (SB_SAMPLER_FAULT | SB_SAMPLER_TEST))
				continue;
			long reps = 0;
			for (long i = 0; i < n; i++)
				reps += specs[i].sampler == sp && specs[i].workload == workload_at(w);
			if (reps < 5)
				fail_msg("workloads profile: %s on %s has %ld runs, want >= 5", sp->name,
					 workload_at(w)->name, reps);
		}
	free(specs);
	if (secs > 12 * 60)
		fail_msg("workloads profile expects %.0f s, more than 12 min", secs);
}
#endif

static void test_ci_matrix(void **state)
{
	(void)state;
	struct run_spec *specs;
	const char *path = getenv("SB_MATRIX") ? getenv("SB_MATRIX") : "ci/matrix";

	if (matrix_load(path, &m, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	long n = matrix_specs(&m, "quick", &specs, err, sizeof(err));
	assert_true(n > 0);
	double secs = 0;
	for (long i = 0; i < n; i++)
		secs += specs[i].duration_s + 0.3;
	free(specs);
	if (secs > 60)
		fail_msg("quick profile plans %.0f s, more than 60", secs);

	n = matrix_specs(&m, "default", &specs, err, sizeof(err));
	assert_true(n > 0);
	secs = 0;
	for (long i = 0; i < n; i++) {
		secs += specs[i].duration_s + 0.3;
		if (!(specs[i].sampler->flags & SB_SAMPLER_BASELINE) && specs[i].repetition == 0) {
			/* the U test needs >= 4 repetitions a side to ever reach p < 0.05 */
			long reps = 0;
			for (long j = 0; j < n; j++)
				reps += specs[j].sampler == specs[i].sampler &&
					specs[j].workload == specs[i].workload &&
					specs[j].threads == specs[i].threads && specs[j].hz == specs[i].hz;
			assert_true(reps >= 5);
		}
	}
	free(specs);
	if (secs > 30 * 60)
		fail_msg("default profile plans %.0f s, more than 30 min", secs);
	/* make bench within 10 minutes: the runs below MIN, and a quarter of those past it
	 * (five times the share the bench's ETA expects, harness/cmd_bench.c: a margin) */
	n = matrix_specs(&m, "default", &specs, err, sizeof(err));
	secs = 0;
	for (long i = 0; i < n; i++)
		secs += (specs[i].duration_s + 0.3) *
			(specs[i].reps_max && specs[i].repetition >= specs[i].reps_min ? 0.25 : 1);
	free(specs);
	if (secs > 10 * 60)
		fail_msg("default profile expects %.0f s, more than 10 min", secs);
	assert_true(matrix_specs(&m, "full", &specs, err, sizeof(err)) > 0);
	free(specs);
#ifdef __linux__ /* the table of this platform's built-ins: ci/matrix is Linux's */
	check_workloads_profile();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks_defaults_and_order),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_tools_in_blocks),
		cmocka_unit_test(test_variants_key),
		cmocka_unit_test(test_adaptive_reps),
		cmocka_unit_test(test_load_missing_file),
		cmocka_unit_test(test_ci_matrix),
		cmocka_unit_test(test_shards_partition_cells),
		cmocka_unit_test(test_shard_arg_and_digest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
