/* test_tool.c - tools run from recipes (harness/tool.h, docs/tools.md): the built-in
 * recipes parse; a recipe with a mistake is one "file:line: message" and `run` exits 2 on
 * it; a tool missing here is a skipped run saying why, a failing one a failed run with its
 * exit status and last line; and, where perf can record, `run --tool perf-record` on
 * balanced (2 threads, 1 s) stores a run whose rate is within 0.8..1.2 of the target's
 * true CPU time, whose thread shares are within 0.15 (TVD) of the true ones, whose stacks
 * name the sample's own thread (misattributed_fraction <= 0.01), and whose class the gate
 * reads as the recipe's; and so does perf attached by {pid} to a target that waits.
 * gperftools through CPUPROFILE counts within the same bounds and its relocated addresses
 * give function shares within 0.15 (TVD), thread metrics NaN. bpftrace (where it runs:
 * root and a kernel that loads its programs) is scored like perf with wider bounds: it
 * samples per CPU, not per thread, so its ~70-110 samples of a 1 s run are noisier; so is
 * sysprof (where sysprof-cli runs as root), whose run is stored at its recipe's own rate,
 * 1000 Hz. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gate.h"
#include "harness/tool.h"
#include "results/h5io.h"
#include "tests/support/sbrun.h"


/* The built-in recipe named name among t[0..n) (the test fails without it). */
static const struct tool *builtin(const struct tool *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	fail_msg("no built-in recipe '%s'", name);
	return NULL;
}

static void test_builtin_recipes(void **state)
{
	struct tool t[TOOL_MAX];
	size_t n = 0;
	char err[512] = "";
	(void)state;

	assert_int_equal(tool_recipes_parse(tool_builtin_recipes, "built-in", t, TOOL_MAX, &n, err,
					    sizeof(err)), 0);
	const struct tool *perf = builtin(t, n, "perf-record");
	const struct tool *dwarf = builtin(t, n, "perf-record-dwarf");
	const struct tool *gperf = builtin(t, n, "gperftools-cpuprofile");
	assert_string_equal(perf->format->name, "perf-script");
	assert_int_equal(perf->as_sampler.caps, SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS);
	assert_string_equal(dwarf->format->name, "perf-script");
	assert_non_null(strstr(dwarf->command, "--call-graph dwarf"));
	/* perf script unwinds dwarf's copied stacks by CFI and names the inlined functions
	 * of their PCs (--inline); a frame-pointer callchain gets neither */
	assert_non_null(strstr(dwarf->command, "--inline"));
	assert_int_equal(dwarf->as_sampler.caps,
			 perf->as_sampler.caps | SB_CAP_CFI_STACKS | SB_CAP_INLINE_FRAMES);
	assert_true(gperf->as_sampler.flags & SB_SAMPLER_TICK_DRIVEN);
	assert_false(gperf->as_sampler.caps & SB_CAP_THREAD_IDS);
	assert_non_null(builtin(t, n, "bpftrace"));
	const struct tool *sysprof = builtin(t, n, "sysprof");
	assert_string_equal(sysprof->format->name, "sysprof");
	assert_true(sysprof->rate_hz == 1000);
	assert_int_equal(sysprof->as_sampler.caps, SB_CAP_THREAD_IDS | SB_CAP_STACKS);
	assert_non_null(strstr(sysprof->command, "{tools}/sysprof-record.sh"));
	assert_true(perf->rate_hz == 0);
}

/* Each mistake is refused with its line. */
static void test_recipe_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "tool x\ncommand a {cmd} {out}\nformat nope\n", "f:3: unknown format 'nope'" },
		{ "tool x\ncommand a {cmd} {pid} {out}\nformat folded\n", "f:2: the command needs" },
		{ "tool x\nattach soon\n", "f:2: attach takes seconds" },
		{ "tool x\nrate 0\n", "f:2: rate takes samples per second" },
		{ "tool x\nrate 1kHz\n", "f:2: rate takes samples per second" },
		{ "tool x\ncommand a {cmd} {outt}\nformat folded\n", "f:2: unknown placeholder" },
		{ "tool x\ncommand a {cmd}\nformat folded\n", "f:2: the command needs" },
		{ "tool x\nformat folded\n", "f:1: tool 'x' has no command" },
		{ "format folded\n", "f:1: 'format' before" },
		{ "tool x\nhas wings\n", "f:2: unknown capability 'wings'" },
		{ "tool x\nneeds magic\n", "f:2: unknown need 'magic'" },
		{ "tool perf\n", "f:1: tool name 'perf' is a sampler's" },
		{ "tool x\ncolor red\n", "f:2: unknown key 'color'" },
		{ "# nothing\n", "f:1: no 'tool NAME' line" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tool t[2];
		size_t n = 0;
		char err[512] = "";
		assert_int_equal(tool_recipes_parse(cases[i].text, "f", t, 2, &n, err, sizeof(err)),
				 -1);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu: '%s', expected '%s...'", i, err, cases[i].want);
	}
}

/* Writes text to NAME.recipe in the scratch directory; recipe and h5 (600 bytes each)
 * get its path and a results file's beside it. */
static void write_recipe(const char *name, const char *text, char *recipe, char *h5)
{
	snprintf(recipe, 600, "%s/%s.recipe", sbrun_dir, name);
	snprintf(h5, 600, "%s/%s.h5", sbrun_dir, name);
	FILE *f = fopen(recipe, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* `run --tool FILE` with a syntax error: one line on stderr, exit 2, no file. */
static void test_run_bad_recipe(void **state)
{
	char recipe[600], h5[600], out[4096], err[4096];
	(void)state;

	write_recipe("bad", "tool mine\ncommand perf record -o {out} -- {cmd}\n"
		     "format perf-script\nclock cpu wall\n", recipe, h5);
	int rc = sbrun(sbrun_binary, ARGS("run", "--tool", recipe, "-w", "balanced", "-o", h5), out,
		       sizeof(out), err, sizeof(err));
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "bad.recipe:4: unknown clock 'cpu wall'"));
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err));
	assert_int_not_equal(access(h5, F_OK), 0);
}

/* A tool missing here is a skipped run with the reason (exit 0); a command that fails is a
 * failed run with its exit status and last line (exit 1). */
static void test_skipped_and_failed_tools(void **state)
{
	static const struct {
		const char *name, *text;
		int exit, status;
		const char *reason;
	} cases[] = {
		{ "missing", "# a tool nobody has\ntool nosuch\n"
		  "command nosuch-profiler -o {out} {cmd}\nformat folded\n"
		  "needs binary nosuch-profiler\n",
		  0, SB_RUN_SKIPPED, "nosuch-profiler not found on PATH" },
		{ "failing", "tool failing\n"
		  "command sh -c 'echo cannot profile here >&2; exit 3' {cmd} {out}\n"
		  "format folded\n",
		  1, SB_RUN_FAILED, "the tool's command exited with status 3: cannot profile here" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char recipe[600], h5[600], msg[512];
		struct sb_host host;
		struct sb_run *runs = NULL;
		size_t n = 0;
		write_recipe(cases[i].name, cases[i].text, recipe, h5);
		assert_int_equal(sbrun(sbrun_binary, ARGS("run", "--tool", recipe, "-w", "balanced",
							  "-q", "-o", h5), NULL, 0, NULL, 0),
				 cases[i].exit);
		assert_int_equal(h5_read(h5, &host, &runs, &n, 1, msg, sizeof(msg)), 0);
		assert_int_equal(n, 1);
		assert_int_equal(runs[0].status, cases[i].status);
		assert_string_equal(runs[0].reason, cases[i].reason);
		sbrun_free_runs(runs, n);
	}
}

/* The run lines' columns hold under a tool name longer than the 14 columns a sampler name
 * gets: each line's workload starts where the header's does. */
static void test_run_lines_aligned(void **state)
{
	char recipe[600], h5[600], out[4096];
	(void)state;

	write_recipe("long", "tool a-profiler-with-a-long-name\n"
		     "command nosuch-profiler -o {out} {cmd}\nformat folded\n"
		     "needs binary nosuch-profiler\n", recipe, h5);
	assert_int_equal(sbrun(sbrun_binary, ARGS("run", "-s", "none", "--tool", recipe, "-w",
						  "balanced", "-t", "1", "-d", "0.1", "-o", h5),
			       out, sizeof(out), NULL, 0), 0);
	const char *col = strstr(out, " workload ");
	assert_non_null(col);
	long at = col - out + 1, lines = 0;
	for (const char *l = strchr(out, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		const char *w = strstr(l + 1, " balanced ");
		assert_non_null(w);
		assert_int_equal(w + 1 - (l + 1), at);
		lines++;
	}
	assert_int_equal(lines, 2);
}

/* `list` names each built-in tool, and why it cannot run here when it cannot. */
static void test_list_shows_tools(void **state)
{
	char out[16384];
	(void)state;

	assert_int_equal(sbrun(sbrun_binary, ARGS("list"), out, sizeof(out), NULL, 0), 0);
	const char *tools = strstr(out, "\ntools:\n");
	assert_non_null(tools);
	assert_non_null(strstr(tools, "\n  perf-record "));
	assert_non_null(strstr(tools, "\n  gperftools-cpuprofile "));
	const char *bt = strstr(tools, "\n  bpftrace ");
	assert_non_null(bt);
	if (access("/usr/bin/bpftrace", X_OK) != 0 && access("/usr/sbin/bpftrace", X_OK) != 0)
		assert_non_null(strstr(bt, "[not here: bpftrace not found on PATH]"));
}

/* What a tool's balanced run (2 threads, 1 s) must reach, and its class. */
struct scored_bounds {
	double rate_lo, rate_hi, tvd_max;
	unsigned caps;
	double hz;            /* the run's rate: the recipe's own; 0: the requested 100 Hz */
	const char *workload; /* NULL: balanced */
};

/* perf record samples each thread's own CPU clock: rates 0.98-1.04, thread TVD 0.003-0.12
 * in single 1 s runs here at load averages 3-50 (0.115 once, over the former bound 0.1);
 * a run that put all samples on one of the 2 threads would be at 0.5 */
static const struct scored_bounds perf_bounds = {
	0.8, 1.2, 0.15, SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS, 0, NULL
};

/* `run --tool TOOL` on balanced (or b's workload), 2 threads, 1 s, judged by bounds b;
 * skipped where the tool is not available. */
static void tool_scored(const char *tool, const char *name, const struct scored_bounds *b)
{
	char h5[600];
	struct sb_run *runs = NULL;
	size_t n = 0;
	const char *wl = b->workload ? b->workload : "balanced";
	const size_t plain = strcspn(wl, "@"); /* a build's threads are named as its workload's */

	snprintf(h5, sizeof(h5), "%s/%s.h5", sbrun_dir, name);
	assert_int_equal(sbrun_runs(sbrun_binary, ARGS("run", "--tool", tool, "-w", wl, "-t", "2",
						       "-d", "1", "-q", "-o", h5),
				    h5, &runs, &n), 0);
	assert_int_equal(n, 1);
	struct sb_run *r = &runs[0];
	assert_string_equal(r->sampler, name);
	if (r->status == SB_RUN_SKIPPED) {
		fprintf(stderr, "%s: skipped: %s\n", name, r->reason);
		sbrun_free_runs(runs, n);
		skip();
	}
	/* sysprof-record.sh refuses where sysprof would count cycles, not the recipe's
	 * cpu-clock rate (a machine with a hardware cycle counter): not this tool's place */
	if (r->status != SB_RUN_OK && strstr(r->reason, "hardware cycle counter")) {
		fprintf(stderr, "%s: skipped: %s\n", name, r->reason);
		sbrun_free_runs(runs, n);
		skip();
	}
	if (r->status != SB_RUN_OK)
		fail_msg("%s run failed: %s", name, r->reason);
	assert_int_equal(r->nthread_rows, 2);
	assert_true(r->hz == (b->hz > 0 ? b->hz : 100));
	/* the names the target's threads gave themselves, through its truth file */
	for (size_t i = 0; i < r->nthread_rows; i++) {
		char want[SB_THREAD_NAME_LEN];
		snprintf(want, sizeof(want), "%.*s-%d", (int)plain, wl, (int)r->thread_rows[i].index);
		assert_string_equal(r->thread_rows[i].name, want);
	}
	if (!(r->metrics.rate_accuracy >= b->rate_lo && r->metrics.rate_accuracy <= b->rate_hi))
		fail_msg("%s: rate_accuracy %.3f outside %g..%g", name, r->metrics.rate_accuracy,
			 b->rate_lo, b->rate_hi);
	if (!(r->metrics.thread_tvd <= b->tvd_max))
		fail_msg("%s: thread_tvd %.3f above %g", name, r->metrics.thread_tvd, b->tvd_max);
	/* balanced's leaves name their slot: the sample's tid and stack agree */
	if (!b->workload && !(r->metrics.misattributed_fraction <= 0.01))
		fail_msg("%s: misattributed_fraction %.3f above 0.01", name,
			 r->metrics.misattributed_fraction);
	/* hotspot's leaves name its functions (in its inline build, only as DWARF inline
	 * scopes): the split, as the built-ins give it (function_tvd 0.005-0.040 there) */
	double ns = r->metrics.nsamples, ftvd = r->metrics.function_tvd;
	if (b->workload && !(ftvd < 0.05 + 1 / sqrt(ns)))
		fail_msg("%s on %s: %.0f samples, function_tvd %.3f", name, wl, ns, ftvd);

	/* The tool's own CPU (its processes less the target, harness/tool_run.c): 0.1-0.4 s a
	 * run here (perf record and perf script, bpftrace, sysprof-cli), against the 2 s the
	 * target's threads burn. Kept in, the target's CPU alone would exceed it; an attached
	 * target, not in the tool's processes, taken out, would leave 0. Mutations: either. */
	double tool_cpu = run_stat(r, "tool_cpu_ns"), target_cpu = run_stat(r, "target_cpu_ns");
	if (!(tool_cpu > 0 && tool_cpu < target_cpu && r->metrics.tool_cpu_per_sample_ns > 0))
		fail_msg("%s: tool_cpu_ns %.0f, target_cpu_ns %.0f: want 0 < tool < target", name,
			 tool_cpu, target_cpu);

	struct gate_class cls;
	gate_class_of(name, runs, n, &cls);
	assert_int_equal(cls.caps, b->caps);
	assert_int_equal(cls.tick_driven, 0);
	assert_string_equal(cls.source, "declared by the tool's recipe");
	sbrun_free_runs(runs, n);
}

static void test_perf_record_scored(void **state)
{
	(void)state;
	tool_scored("perf-record", "perf-record", &perf_bounds);
}

/* The same with DWARF call graphs: perf copies 16 KiB of each sample's stack and perf
 * script unwinds it from the binary's CFI and names the functions inlined at each PC
 * (--inline; perf 6.1 does so by default, for DWARF-unwound frames only); the samples and
 * their threads are perf's. On hotspot@inline, whose measured functions exist only as
 * DWARF inline scopes, its leaves name them. Mutation: the importer skipping perf script's
 * "(inlined)" lines (function_tvd NaN: every leaf is hotspot_thread). */
static void test_perf_record_dwarf_scored(void **state)
{
	struct scored_bounds dwarf_bounds = perf_bounds;
	(void)state;
	dwarf_bounds.caps |= SB_CAP_CFI_STACKS | SB_CAP_INLINE_FRAMES;
	dwarf_bounds.workload = "hotspot@inline";
	tool_scored("perf-record-dwarf", "perf-record-dwarf", &dwarf_bounds);
}

/* bpftrace's profile:hz samples each CPU at hz, whatever runs there: rates 0.83-1.14 and
 * thread TVD 0.006-0.078 in 16 runs at 2 threads here at load averages 3-8, and a rate of
 * 1.36 at load 11 (other processes' short bursts escape the CPU's timer, a busy target's
 * threads do not); no weights: its period is a count. A run that lost its pid filter
 * counts every process; one that put all samples on one thread has a TVD of 0.5. */
static void test_bpftrace_scored(void **state)
{
	static const struct scored_bounds bpftrace_bounds = {
		0.6, 1.6, 0.2, SB_CAP_THREAD_IDS | SB_CAP_STACKS, 0, NULL
	};
	(void)state;
	tool_scored("bpftrace", "bpftrace", &bpftrace_bounds);
}

/* sysprof (where sysprof-cli runs: root; tools/sysprof-record.sh brings its own system bus
 * with sysprofd and polkitd where there is none) samples each CPU every 1 ms of its
 * cpu-clock, whatever runs there, as bpftrace's profile:hz at 1000 Hz: the recipe's rate
 * 1000 is the run's. Rates 0.60-1.17 and thread TVD 0.001-0.051 in 7 runs here at load
 * averages 3-4 (the low rates in the most loaded runs); misattributed 0 once the slot
 * leaves, which sysprof leaves unnamed, are named through the capture's maps. No weights:
 * a capture's sample has no period. A run stored at the requested 100 Hz has a rate of
 * ~10; one that lost the pid filter counts the whole system. */
static void test_sysprof_scored(void **state)
{
	static const struct scored_bounds sysprof_bounds = {
		0.5, 1.6, 0.15, SB_CAP_THREAD_IDS | SB_CAP_STACKS, 1000, NULL
	};
	(void)state;
	tool_scored("sysprof", "sysprof", &sysprof_bounds);
}

/* The same perf attached by pid to a target that waits for it ({pid}, `attach`). */
static void test_perf_attach_scored(void **state)
{
	char recipe[600], h5[600];
	(void)state;

	write_recipe("attach", "tool perf-attach\n"
		     "command perf record -q -e cpu-clock -F {hz} --call-graph fp -p {pid} "
		     "-o {out}.data && perf script -i {out}.data "
		     "-F comm,pid,tid,time,period,event,ip,sym,dso > {out}\n"
		     "format perf-script\nattach 1\nhas thread_ids weights stacks\n"
		     "needs binary perf\nneeds perf-events\n", recipe, h5);
	tool_scored(recipe, "perf-attach", &perf_bounds);
}

/* gperftools through CPUPROFILE on hotspot: no thread ids (thread metrics NaN), its
 * addresses relocated from the target's maps and named here, so function shares are
 * measured. */
static void test_gperftools_cpuprofile_scored(void **state)
{
	char h5[600];
	struct sb_run *runs = NULL;
	size_t n = 0;
	(void)state;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* the sanitizer runtime refuses a library preloaded ahead of it */
	fprintf(stderr, "gperftools-cpuprofile: skipped: a sanitizer build\n");
	skip();
#endif
	snprintf(h5, sizeof(h5), "%s/cpuprofile.h5", sbrun_dir);
	assert_int_equal(sbrun_runs(sbrun_binary, ARGS("run", "--tool", "gperftools-cpuprofile",
						       "-w", "hotspot", "-t", "2", "-d", "1", "-q",
						       "-o", h5), h5, &runs, &n), 0);
	assert_int_equal(n, 1);
	struct sb_run *r = &runs[0];
	if (r->status == SB_RUN_SKIPPED) {
		fprintf(stderr, "gperftools-cpuprofile: skipped: %s\n", r->reason);
		sbrun_free_runs(runs, n);
		skip();
	}
	if (r->status != SB_RUN_OK)
		fail_msg("gperftools-cpuprofile run failed: %s", r->reason);
	if (!(r->metrics.rate_accuracy >= 0.8 && r->metrics.rate_accuracy <= 1.2))
		fail_msg("rate_accuracy %.3f outside 0.8..1.2", r->metrics.rate_accuracy);
	if (!(r->metrics.function_tvd <= 0.15))
		fail_msg("function_tvd %.3f above 0.15", r->metrics.function_tvd);
	assert_true(isnan(r->metrics.thread_tvd));
	assert_true(isnan(r->metrics.misattributed_fraction));
	sbrun_free_runs(runs, n);

	/* show --all says why: the recipe's class has no thread_ids */
	char out[4096];
	assert_int_equal(sbrun(sbrun_binary, ARGS("show", "--all", "-m",
						  "rate_accuracy,thread_tvd", h5),
			       out, sizeof(out), NULL, 0), 0);
	const char *tvd = strstr(out, "\n  thread_tvd ");
	assert_non_null(tvd);
	const char *eol = strchr(tvd + 1, '\n');
	assert_non_null(strstr(tvd, "(no thread ids: the recipe has no thread_ids)"));
	assert_true(strstr(tvd, "(no thread ids") < eol);
	const char *rate = strstr(out, "\n  rate_accuracy ");
	assert_non_null(rate);
	assert_true(strchr(rate, '(') > strchr(rate + 1, '\n')); /* measured: no reason */
}

/* The NaN reasons follow the recipe's class: a metric the class allows has none. */
static void test_metric_nan_reasons(void **state)
{
	const unsigned gperf = SB_CAP_PROCESS_WIDE | SB_CAP_WEIGHTS | SB_CAP_STACKS;
	const unsigned perf = SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS;
	(void)state;

	assert_non_null(strstr(tool_metric_nan_reason("thread_tvd", gperf, 0), "thread_ids"));
	assert_non_null(strstr(tool_metric_nan_reason("stack_correct_fraction", gperf, 0),
			       "thread_ids"));
	assert_non_null(strstr(tool_metric_nan_reason("stack_unwalkable_fraction", gperf, 0),
			       "thread_ids"));
	assert_null(tool_metric_nan_reason("thread_tvd", perf, 0));
	assert_null(tool_metric_nan_reason("misattributed_fraction", perf, 0));
	assert_non_null(strstr(tool_metric_nan_reason("magnitude_error", SB_CAP_THREAD_IDS, 0),
			       "weights"));
	assert_null(tool_metric_nan_reason("magnitude_error", perf, 0));
	assert_non_null(strstr(tool_metric_nan_reason("suspend_window_p99_ns", perf, 0),
			       "suspend_window"));
	assert_null(tool_metric_nan_reason("suspend_window_p99_ns", SB_CAP_SUSPEND_WINDOW, 1));
	assert_non_null(strstr(tool_metric_nan_reason("wall_rate_accuracy", perf, 0), "cpu clock"));
	assert_null(tool_metric_nan_reason("wall_rate_accuracy", perf, 1));
	/* what the workload or the data decide has no class reason */
	assert_null(tool_metric_nan_reason("rate_accuracy", 0, 0));
	assert_null(tool_metric_nan_reason("function_tvd", 0, 0));
	assert_null(tool_metric_nan_reason("interval_mean_ns", 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_recipes),
		cmocka_unit_test(test_recipe_errors),
		cmocka_unit_test(test_metric_nan_reasons),
		cmocka_unit_test(test_run_bad_recipe),
		cmocka_unit_test(test_skipped_and_failed_tools),
		cmocka_unit_test(test_run_lines_aligned),
		cmocka_unit_test(test_list_shows_tools),
		cmocka_unit_test(test_perf_record_scored),
		cmocka_unit_test(test_perf_record_dwarf_scored),
		cmocka_unit_test(test_perf_attach_scored),
		cmocka_unit_test(test_bpftrace_scored),
		cmocka_unit_test(test_sysprof_scored),
		cmocka_unit_test(test_gperftools_cpuprofile_scored),
	};
	return cmocka_run_group_tests(tests, sbrun_group_setup, sbrun_group_teardown);
}
