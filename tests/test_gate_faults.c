/* test_gate_faults.c - the gate on real runs: fault-drop (ctimer losing 30 % of its
 * samples) against healthy ctimer runs must regress on rate_accuracy, and fail a rate
 * budget under --sampler. The verdicts rest on the samplers' measured rates, so this
 * program runs alone in `make check` (CHECK_SERIAL); the gate's logic on synthetic runs
 * is test_gate.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/sbrun.h"

#include "results/h5io.h"

static char bin[512];
static char tmpdir[] = "/tmp/sbgatef.XXXXXX";
static char out[1 << 16];

/* Runs bin with args; stdout and stderr into out. Returns the exit status. */
static int run(char *o, size_t len, const char *const *args)
{
	return sbrun(bin, args, o, len, o, len);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Prints the rate_accuracy of every run in h5 (the ranges the comments state). */
static void print_rates(const char *h5)
{
	char err[512];
	struct sb_run *runs = NULL;
	size_t n = 0;

	if (h5_read(h5, NULL, &runs, &n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	print_message("%s:", strrchr(h5, '/') + 1);
	for (size_t i = 0; i < n; i++) {
		print_message(" %.3f", runs[i].metrics.rate_accuracy);
		run_free(&runs[i]);
	}
	print_message("\n");
	free(runs);
}

/* Runs `sampler` reps x on balanced, 2 threads, 100 Hz, into tmpdir/SAMPLER-REPS.h5 (once:
 * later calls reuse the file) and writes that path into h5. Fails the test when the run
 * does not succeed. (Every fault sampler and defective plugin is gated under its own name
 * with ci/budgets by tests/gate_defects.sh.) */
static void run_file(const char *sampler, const char *reps, const char *duration, char *h5,
		     size_t len)
{
	snprintf(h5, len, "%s/%s-%s.h5", tmpdir, sampler, reps);
	if (access(h5, F_OK) == 0)
		return;
	int rc = run(out, sizeof(out), ARGS("run", "-s", sampler, "-w", "balanced", "-t", "2",
					    "--hz", "100", "-d", duration, "-r", reps, "-q", "-f",
					    "-o", h5));
	if (rc != 0)
		fail_msg("run %s: exit %d: %s", sampler, rc, out);
	print_rates(h5);
}

/* fault-drop against a baseline of healthy ctimer runs, 5 repetitions of 0.5 s a side: the
 * U test itself must call it a regression of rate_accuracy. Measured rates, 3 passes alone
 * on the 2-core VM: ctimer 0.969-1.008, fault-drop 0.633-0.775; with 1 s runs at load
 * average 8-10: ctimer 0.935-1.016, fault-drop 0.518-0.787 (medians 0.958-0.972 against
 * 0.707-0.736): the rule's 0.1 is a quarter of the gap. */
static void test_fault_drop_regresses_against_baseline(void **state)
{
	(void)state;
	char base[256], cur[256], budgets[256];
	snprintf(budgets, sizeof(budgets), "%s/regress.budgets", tmpdir);
	write_file(budgets, "regress rate_accuracy off-one 0.1\n");
	/* the fault-drop file is test_cli_sampler_filter's too */
	run_file("ctimer", "5", "0.5", base, sizeof(base));
	run_file("fault-drop", "5", "0.5", cur, sizeof(cur));
	int rc = run(out, sizeof(out), ARGS("gate", "-q", "--budgets", budgets, "--baseline", base,
					    "--alias", "fault-drop=ctimer", cur));
	const char *row = strstr(out, "✗ ctimer/balanced/2t/100Hz");
	if (rc != 1 || !row || !strstr(row, "rate_accuracy") || !strstr(row, "regressed"))
		fail_msg("want a rate_accuracy regression, got exit %d:\n%s", rc, out);
	printf("%s", row);
	/* the baseline against itself: nothing */
	rc = run(out, sizeof(out), ARGS("gate", "--budgets", budgets, "--baseline", base, base));
	if (rc != 0)
		fail_msg("baseline against itself: exit %d:\n%s", rc, out);
	unlink(budgets);
}

/* --sampler: one verdict per sampler of a file, the others kept as references. The budget
 * 0.9 lies between fault-drop's measured rates (0.518-0.787) and ctimer's (0.935-1.016,
 * above). */
static void test_cli_sampler_filter(void **state)
{
	(void)state;
	char h5[256], budgets[256];
	snprintf(budgets, sizeof(budgets), "%s/f.budgets", tmpdir);
	write_file(budgets, "budget * rate_accuracy >= 0.9\n");
	run_file("fault-drop", "5", "0.5", h5, sizeof(h5));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "-q", "--budgets", budgets, "--sampler",
						    "fault-drop", h5)), 1);
	assert_non_null(strstr(out, "✗ fault-drop/balanced/2t/100Hz"));
	assert_non_null(strstr(out, "because: rule"));
	assert_int_equal(run(out, sizeof(out), ARGS("gate", "--budgets", budgets, "--sampler",
						    "ctimer", h5)), 2);
	assert_non_null(strstr(out, "has no runs of ctimer"));
	unlink(budgets);
}

int main(void)
{
	const char *b = getenv("BUILD");
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_drop_regresses_against_baseline),
		cmocka_unit_test(test_cli_sampler_filter),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	static const char *const names[] = { "fault-drop-5.h5", "ctimer-5.h5" };
	char path[256];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
		unlink(path);
	}
	if (rmdir(tmpdir) != 0)
		fprintf(stderr, "test_gate_faults: cannot remove %s: %s\n", tmpdir, strerror(errno));
	return rc;
}
