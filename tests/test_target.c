/* test_target.c - `sampbench target`: the truth file of a workload run alone (one line per
 * slot, its tids, CPU within alive time, skewed's 1:2 work split), --wait and --pid-file
 * (starts on SIGUSR1), bad usage (exit 2), and, where perf can record, an external
 * profiler scored against that truth: `perf record -g` of the target, read back by the
 * perf script importer, gives each thread a sample share within 0.1 (TVD) of its true CPU
 * share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/import.h"
#include "tests/support/sbrun.h"


struct slot {
	int index, tid;
	unsigned long long cpu_ns, alive_ns, ops;
	char name[16]; /* the last column: the name the slot's thread had at its end */
};

/* Reads a truth file's slot lines; returns how many (at most 64). */
static int read_truth(const char *path, struct slot *s)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && n < 64) {
		unsigned os;
		unsigned long long off, errs;
		if (sscanf(line, "%d %d %u %llu %llu %llu %llu %llu", &s[n].index, &s[n].tid, &os,
			   &s[n].cpu_ns, &s[n].alive_ns, &off, &s[n].ops, &errs) == 8) {
			assert_int_equal(errs, 0);
			s[n].name[0] = 0;
			if (sscanf(line, "%*d %*d %*u %*u %*u %*u %*u %*u %*u %*u %15s",
				   s[n].name) != 1)
				s[n].name[0] = 0;
			n++;
		}
	}
	fclose(f);
	return n;
}

static void test_truth(void **state)
{
	(void)state;
	char cmd[2048], truth[600];
	struct slot s[64];

	snprintf(truth, sizeof(truth), "%s/truth.txt", sbrun_dir);
	snprintf(cmd, sizeof(cmd), "%s target skewed -t 2 -d 0.4 --truth %s", sbrun_binary, truth);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(read_truth(truth, s), 2);
	for (int i = 0; i < 2; i++) {
		char want[24]; /* "skewed-" and any int: no truncation warning at -O1 */
		snprintf(want, sizeof(want), "skewed-%d", i);
		assert_int_equal(s[i].index, i);
		assert_string_equal(s[i].name, want); /* the thread named itself */
		assert_true(s[i].tid > 0 && s[i].tid != (int)getpid());
		assert_true(s[i].cpu_ns > 0 && s[i].cpu_ns <= s[i].alive_ns + 10000000ull);
		assert_true(s[i].alive_ns > 300000000ull && s[i].alive_ns < 3000000000ull);
	}
	assert_int_not_equal(s[0].tid, s[1].tid);
	/* skewed gives slot 1 twice slot 0's work units */
	assert_true(s[1].ops > s[0].ops);
}

static void test_wait(void **state)
{
	(void)state;
	char pidfile[600], truth[600];
	snprintf(pidfile, sizeof(pidfile), "%s/pid", sbrun_dir);
	snprintf(truth, sizeof(truth), "%s/wait.txt", sbrun_dir);
	pid_t child = fork();
	if (child == 0) {
		execl(sbrun_binary, sbrun_binary, "target", "balanced", "-t", "1", "-d", "0.1", "--wait",
		      "--pid-file", pidfile, "--truth", truth, (char *)NULL);
		_exit(127);
	}
	int pid = 0;
	for (int i = 0; i < 500 && pid == 0; i++) {
		FILE *f = fopen(pidfile, "r");
		if (f) {
			if (fscanf(f, "%d", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		usleep(10000);
	}
	assert_int_equal(pid, child);
	usleep(200000);
	assert_int_not_equal(access(truth, F_OK), 0); /* still waiting: no work, no truth */
	kill(child, SIGUSR1);
	int st;
	waitpid(child, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct slot s[64];
	assert_int_equal(read_truth(truth, s), 1);
}

static void test_usage(void **state)
{
	(void)state;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s target nosuch 2>/dev/null", sbrun_binary);
	int st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	snprintf(cmd, sizeof(cmd), "%s target skewed --wait --delay 1 2>/dev/null", sbrun_binary);
	st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

/* perf record of the target, imported: each thread's share of samples against its share
 * of true CPU. Skipped when perf is missing or may not record. */
static void test_perf_scored(void **state)
{
	(void)state;
	char cmd[4096], truth[600], data[600], text[600];
	struct slot s[64];

	snprintf(truth, sizeof(truth), "%s/perf-truth.txt", sbrun_dir);
	snprintf(data, sizeof(data), "%s/perf.data", sbrun_dir);
	snprintf(text, sizeof(text), "%s/perf.txt", sbrun_dir);
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -F 499 -g -o %s -- %s target skewed -t 2 -d 1 --truth %s "
		 ">/dev/null 2>&1 && perf script -i %s >%s 2>/dev/null",
		 data, sbrun_binary, truth, data, text);
	if (access("/usr/bin/perf", X_OK) != 0 || system(cmd) != 0) {
		fprintf(stderr, "test_perf_scored: skipped: perf record not available here\n");
		skip();
	}
	assert_int_equal(read_truth(truth, s), 2);
	FILE *f = fopen(text, "rb");
	assert_non_null(f);
	static unsigned char buf[64 << 20];
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	struct sb_run r;
	char err[256];
	if (import_buffer(import_format_find("perf-script"), buf, len, &r, err, sizeof(err)) < 0)
		fail_msg("perf script: %s", err);
	double n[2] = { 0, 0 }, cpu = (double)(s[0].cpu_ns + s[1].cpu_ns);
	for (size_t i = 0; i < r.nsamples; i++)
		for (int k = 0; k < 2; k++)
			n[k] += r.samples[i].tid == s[k].tid;
	run_free(&r);
	assert_true(n[0] + n[1] > 100); /* ~1.3 s of CPU at 499 Hz: ~600 */
	double tvd = fabs(n[0] / (n[0] + n[1]) - (double)s[0].cpu_ns / cpu);
	if (tvd > 0.1)
		fail_msg("perf's thread shares %.0f:%.0f vs true CPU %llu:%llu ns (TVD %.3f)",
			 n[0], n[1], s[0].cpu_ns, s[1].cpu_ns, tvd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truth),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_perf_scored),
	};
	return cmocka_run_group_tests(tests, sbrun_group_setup, sbrun_group_teardown);
}
