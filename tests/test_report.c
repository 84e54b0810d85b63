/* test_report.c - `sampbench report` on small real bench files: every section, every image
 * a PNG with data, the HTML balanced (analysis/report/check.py judges); the checker itself
 * catches a broken page and a blank image; bad input gives one line and exit 2; a merged
 * file of two hosts compared side by side; the History section over several files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "results/h5io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3"
#define CHECKER "analysis/report/check.py"

static char bin[512];
static char dir[] = "/tmp/sbreport.XXXXXX";
static char out_dir[600];
static char samplers_run[128] = "itimer,ctimer,gperftools";

/* Runs a shell command, its stdout and stderr into out. Returns the exit status. */
static int sh(char *out, size_t outlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sh(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	size_t n = 0;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < outlen && fgets(out + n, (int)(outlen - n), p))
		n += strlen(out + n);
	char sink[512];
	while (fgets(sink, sizeof(sink), p))
		;
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("BUILD");
	char out[8192], *samplers = samplers_run;

	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(dir))
		return -1;
	snprintf(out_dir, sizeof(out_dir), "%s/report", dir);
	if (sh(out, sizeof(out), "%s list", bin) == 0 && strstr(out, "\n  mach "))
		strcat(samplers_run, ",mach");
	/* two files, two thread counts: the report merges them; 200 Hz so that every cell
	 * expects enough samples for the rate findings; calibrated, since the report shows
	 * each host's floors */
	unsetenv("SB_CALIBRATE");
	if (sh(out, sizeof(out), "%s run -q -s %s -w skewed -t 4 -z 200 -d 0.25 -r 2 -o %s/a.h5",
	       bin, samplers, dir) != 0 ||
	    sh(out, sizeof(out), "%s run -q -s %s -w skewed -t 2 -z 200 -d 0.25 -o %s/b.h5", bin,
	       samplers, dir) != 0) {
		fprintf(stderr, "sampbench run failed: %s", out);
		return -1;
	}
	if (sh(out, sizeof(out), "%s report %s/a.h5 %s/b.h5 -o %s", bin, dir, dir, out_dir) != 0) {
		fprintf(stderr, "sampbench report failed: %s", out);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char out[256];
	return sh(out, sizeof(out), "rm -rf '%s'", dir);
}

static void test_report_complete(void **state)
{
	(void)state;
	char out[8192];

	int rc = sh(out, sizeof(out), PYTHON " -B " CHECKER " %s", out_dir);
	if (rc != 0)
		fail_msg("report check failed (%d):\n%s", rc, out);
	assert_non_null(strstr(out, ": 13 sections"));
	/* findings name the samplers and the numbers behind them */
	rc = sh(out, sizeof(out), "grep -o '<li class=' %s/index.html | wc -l", out_dir);
	assert_int_equal(rc, 0);
	assert_true(atoi(out) >= 3);
	/* itimer's rate finding names the metric and its value; on a host loaded by the other
	 * lane a cell can get too little CPU to be judged (fewer than 30 expected samples),
	 * and then the report must say so instead */
	rc = sh(out, sizeof(out), "grep -o '<li class=[^>]*>itimer [^<]*rate_accuracy [0-9.]* ' "
		"%s/index.html || grep -o 'cells expect fewer than [0-9]* samples' %s/index.html",
		out_dir, out_dir);
	if (rc != 0)
		fail_msg("no rate finding for itimer and no note of small cells:\n%s", out);
	/* the head-to-head line needs no cell size: both samplers' errors, as numbers */
	if (strstr(samplers_run, "mach")) {
		rc = sh(out, sizeof(out), "grep -o 'mach vs itimer: [^<]*' %s/index.html", out_dir);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "median |rate error| mach "));
		assert_non_null(strstr(out, "%, itimer "));
		/* the head-to-head table of a cell shows every sampler the file ran there: its
		 * groups come from the sampler table's classes, not from a list of names */
		rc = sh(out, sizeof(out), "grep -A1 '<h3>skewed, 4 threads, 200 Hz</h3>' "
			"%s/index.html | tail -1", out_dir);
		assert_int_equal(rc, 0);
		char *copy = strdup(samplers_run), *save = NULL;
		assert_non_null(copy);
		for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			char th[64];
			snprintf(th, sizeof(th), "<th>%s</th>", s);
			if (!strstr(out, th))
				fail_msg("the head-to-head table lacks %s:\n%s", s, out);
		}
		free(copy);
	}
}

/* The checker is what the test relies on: it must fail on a broken page, a blank image and
 * a missing image (three broken copies of the report, one checker run). */
static void test_checker_catches(void **state)
{
	(void)state;
	char out[8192];

	assert_int_equal(sh(out, sizeof(out),
			    "for b in 1 2 3; do rm -rf %s/bad$b && cp -r %s %s/bad$b || exit 1; done"
			    " && sed -i '0,/<\\/section>/s///' %s/bad1/index.html"
			    " && " PYTHON " -c \"import numpy, matplotlib.pyplot as p; "
			    "p.imsave('%s/bad2/rate_threads.png', numpy.ones((300, 400, 3)))\""
			    " && rm %s/bad3/latency_cdf.png",
			    dir, out_dir, dir, dir, dir, dir), 0);
	assert_int_equal(sh(out, sizeof(out), PYTHON " -B " CHECKER " %s/bad1 %s/bad2 %s/bad3",
			    dir, dir, dir), 1);
	assert_non_null(strstr(out, "bad1: </body> at line"));
	assert_non_null(strstr(out, "bad2: image rate_threads.png: blank"));
	assert_non_null(strstr(out, "bad3: image latency_cdf.png not beside"));
	assert_null(strstr(out, "report ok"));
}

/* The section `id` of the report in out_dir/index.html, tags removed, into buf. */
static void section_text(const char *dirpath, const char *id, char *buf, size_t len)
{
	assert_int_equal(sh(buf, len, PYTHON " -c \"import re, sys, html; "
			    "s = open('%s/index.html').read(); "
			    "m = re.search(r'<section id=.%s.>(.*?)</section>', s, re.S); "
			    "t = re.sub(r'</t[dh]>', ' | ', m.group(1)) if m else 'NONE'; "
			    "print(html.unescape(re.sub(r'<[^>]+>', '', t)))\"", dirpath, id), 0);
}

/* a.h5's runs twice in one file, the second time as host "macmini" (another fingerprint,
 * its own calibration, and a rate_accuracy of 0.5 in every run): what `merge` makes of two
 * machines' benches. */
static void write_two_host_file(const char *path)
{
	char in[600], err[512];
	struct sb_host host, other;
	struct sb_run *runs;
	size_t n;

	snprintf(in, sizeof(in), "%s/a.h5", dir);
	assert_int_equal(h5_read(in, &host, &runs, &n, 1, err, sizeof(err)), 0);
	other = host;
	snprintf(other.host, sizeof(other.host), "macmini");
	snprintf(other.fingerprint, sizeof(other.fingerprint), "arm64-8cpu-bare-0000cafe");
	for (int i = 0; i < other.ncalib; i++)
		other.calib[i].p99_ns = 7.77e6; /* "7.77 ms" in the floors table */
	struct sb_h5 *f = h5_create(path, &host, 1, err, sizeof(err));
	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		runs[i].run_id = (int64_t)i;
		assert_int_equal(h5_append_run(f, &runs[i]), 0);
	}
	for (size_t i = 0; i < n; i++) {
		runs[i].run_id = (int64_t)(n + i);
		runs[i].metrics.rate_accuracy = 0.5;
		assert_int_equal(h5_append_run_host(f, &runs[i], &other), 0);
	}
	assert_int_equal(h5_close(f), 0);
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
}

/* The verdict at the top is the gate's: a file with a sampler that drops 30 % of its
 * samples shows FAIL and exactly the rows `sampbench gate` fails (each cell named in the
 * Failed table), and as many rows as the gate fails. */
static void test_verdict_is_the_gates(void **state)
{
	(void)state;
	char out[16384], rep[600], gate[8192];

	snprintf(rep, sizeof(rep), "%s/report3", dir);
	assert_int_equal(sh(out, sizeof(out), "%s run -q -s ctimer,fault-drop -w balanced -t 2 "
			    "-d 0.5 -r 3 -o %s/f.h5", bin, dir), 0);
	assert_int_equal(sh(out, sizeof(out), "%s report %s/f.h5 -o %s", bin, dir, rep), 0);
	/* the gate's own failed rows, run from the tree (ci/budgets); one line per row,
	 * so two rules failing one metric count twice, as in the report */
	assert_int_equal(sh(gate, sizeof(gate), "%s gate -q %s/f.h5 | grep '^✗' | "
			    "awk '{print $2, $3}'", bin, dir), 0);
	assert_non_null(strstr(gate, "fault-drop/balanced/2t/100Hz rate_accuracy"));
	section_text(rep, "verdict", out, sizeof(out));
	assert_non_null(strstr(out, "f.h5: FAIL"));
	/* as many failed rows as the gate's, no more (ctimer fails here only if the gate
	 * fails it too, e.g. on a loaded host) */
	int rows = 0;
	for (const char *p = gate; (p = strchr(p, '\n')); p++)
		rows++;
	char want_rows[32];
	snprintf(want_rows, sizeof(want_rows), "Failed (%d)", rows);
	if (!strstr(out, want_rows))
		fail_msg("the report's verdict has not '%s':\n%s", want_rows, out);
	for (char *line = strtok(gate, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strchr(line, ' ');
		assert_non_null(sp);
		*sp = 0;
		char want[256];
		snprintf(want, sizeof(want), "%s | %s | ", line, sp + 1); /* cell | metric | */
		if (!strstr(out, want))
			fail_msg("gate row '%s' not in the report's verdict", want);
	}
}

/* Two hosts: a section with each cell's metrics per host in adjacent columns, and each
 * host's own floors; a file of one host has no such section. History over a.h5, b.h5 and
 * the merged file: the table with b's failed gate marked, and the plot. */
static void test_hosts_and_history(void **state)
{
	(void)state;
	char out[16384], two[600], rep[600], budgets[600];

	snprintf(two, sizeof(two), "%s/two.h5", dir);
	snprintf(rep, sizeof(rep), "%s/report2", dir);
	snprintf(budgets, sizeof(budgets), "%s/fail.budgets", dir);
	write_two_host_file(two);
	/* b's gate JSON, as make bench writes it beside the file: itimer's rate fails */
	assert_int_equal(sh(out, sizeof(out), "echo 'budget itimer rate_accuracy >= 2' > %s && "
			    "%s gate --budgets %s --json %s/b.gate.json %s/b.h5 >/dev/null; "
			    "test $? = 1", budgets, bin, budgets, dir, dir), 0);
	int rc = sh(out, sizeof(out), "%s report %s -o %s --history-metric rate_accuracy "
		    "--history %s/a.h5 %s/b.h5 %s", bin, two, rep, dir, dir, two);
	if (rc != 0)
		fail_msg("report with two hosts and history failed (%d): %s", rc, out);
	rc = sh(out, sizeof(out), PYTHON " -B " CHECKER " %s", rep);
	if (rc != 0)
		fail_msg("report check failed (%d):\n%s", rc, out);

	section_text(rep, "hosts", out, sizeof(out));
	assert_non_null(strstr(out, "rate_accuracy macmini"));
	assert_non_null(strstr(out, "7.77 ms"));
	/* the itimer cell at 4 threads: 0.500 in macmini's column, right after this host's */
	const char *row = strstr(out, "itimer/skewed/4t/200Hz | ");
	assert_non_null(row);
	row += strlen("itimer/skewed/4t/200Hz | ");
	assert_int_not_equal(strncmp(row, "0.500 |", 7), 0);
	row = strstr(row, " | ");
	assert_non_null(row);
	assert_int_equal(strncmp(row, " | 0.500 | ", 11), 0);

	section_text(rep, "history", out, sizeof(out));
	assert_non_null(strstr(out, "rate_accuracy"));
	assert_non_null(strstr(out, "FAIL")); /* b's verdict */
	row = strstr(out, "itimer/skewed/2t/200Hz");
	assert_non_null(row);
	assert_non_null(strchr(row, '!'));    /* b's failed value */
	assert_int_equal(sh(out, sizeof(out), "grep -c '<circle' %s/history.svg", rep), 0);

	/* one host: no side-by-side section */
	assert_int_not_equal(sh(out, sizeof(out), "grep -q 'id=\"hosts\"' %s/index.html",
				out_dir), 0);
}

/* Asserts exit code want and one "sampbench: " line containing msg. */
static void expect_error(int want, const char *msg, const char *cmd)
{
	char out[4096];
	int rc = sh(out, sizeof(out), "%s", cmd);

	if (rc != want || count_lines(out) != 1 || !strstr(out, msg) ||
	    strncmp(out, "sampbench: ", 11) != 0)
		fail_msg("want exit %d and one line with '%s', got %d: %s", want, msg, rc, out);
}

static void test_bad_input(void **state)
{
	(void)state;
	char cmd[2048], out[256];

	snprintf(cmd, sizeof(cmd), "%s report /nonexistent.h5 -o %s/x", bin, dir);
	expect_error(2, "cannot read /nonexistent.h5", cmd);
	assert_int_not_equal(sh(out, sizeof(out), "test -e %s/x", dir), 0);
	snprintf(cmd, sizeof(cmd), "echo junk > %s/junk.h5 && %s report %s/junk.h5 -o %s/x", dir,
		 bin, dir, dir);
	expect_error(2, "cannot read", cmd);
	snprintf(cmd, sizeof(cmd), "%s report %s/a.h5", bin, dir);
	expect_error(2, "-o/--output", cmd);
	snprintf(cmd, sizeof(cmd), "SAMPBENCH_ROOT=%s %s report %s/a.h5 -o %s/x", dir, bin, dir,
		 dir);
	expect_error(1, "report script", cmd);
}

/* The footprint table (overhead section): per cell, the CPU measured from the process
 * beside the sampler's claim, as numbers; metrics the file lacks (the integrity counts
 * before they existed, the RSS excess without a `none` run) print `-`. */
static void test_footprint_table(void **state)
{
	(void)state;
	char out[65536];

	section_text(out_dir, "overhead", out, sizeof(out));
	assert_non_null(strstr(out, "CPU measured % | CPU claimed % | unreported % | "));
	char *row = strstr(out, "ctimer | skewed | 4 | 200 | ");
	if (!row)
		fail_msg("no footprint row for ctimer:\n%s", out);
	/* measured, claimed and unreported are numbers; no `none` ran: no RSS excess */
	double measured = NAN, claimed = NAN, unreported = NAN;
	char excess[16];
	int got = sscanf(row + strlen("ctimer | skewed | 4 | 200 | "), "%lf | %lf | %lf | %15s",
			 &measured, &claimed, &unreported, excess);
	if (got != 4)
		fail_msg("footprint row not numbers (%d read): %.200s", got, row);
	assert_true(measured >= 0 && measured < 100 && claimed >= 0);
	assert_string_equal(excess, "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_complete),
		cmocka_unit_test(test_checker_catches),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_hosts_and_history),
		cmocka_unit_test(test_verdict_is_the_gates),
		cmocka_unit_test(test_footprint_table),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
