/* cmd_target.c - `sampbench target`: one workload in a process of its own, no sampler
 * inside, for a profiler that launches a command or attaches to a pid; its truth (per slot
 * tid, CPU and alive time, ops, checksums) is written at exit for scoring that profiler's
 * output (issue 24). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/sample.h"
#include "harness/cli.h"
#include "sampler/threads.h"
#include "workloads/workload.h"

#define WAIT_LIMIT_S 60 /* --wait gives up after this long without SIGUSR1 */

static const char usage_text[] =
	"usage: sampbench target WORKLOAD [-t N] [-d SECS] [--hz F] [--truth FILE]\n"
	"                        [--pid-file FILE] [--wait | --delay SECS]\n"
	"\n"
	"Runs one workload (see 'sampbench list') in this process, with no sampler, so that\n"
	"any profiler can launch it ('perf record -g -- sampbench target skewed ...') or\n"
	"attach to its pid. At exit it writes the workload's truth: one line per thread slot\n"
	"with its tid, true CPU and alive time in ns, work units and checksum errors, and the\n"
	"CLOCK_MONOTONIC start and end of the work, the work per declared function\n"
	"('func_work K N'), the threads' user and system time ('user_sys_ns U S') and the\n"
	"process's CPU time ('process_cpu_ns N').\n"
	"--hz is the profiler's rate, for workloads whose work keeps step with it (alias).\n"
	"Exit 1 when the workload fails or a checksum is wrong.\n"
	"\n";

static struct env {
	long threads;
	double duration_s;
	long seed;
	double hz;
	const char *truth;
	const char *pid_file;
	int wait;
	double delay_s;
} env;

static const struct env env_defaults = { .threads = 4, .duration_s = 2, .seed = 1 };

const struct opt cmd_target_options[] = {
	OPT_INTEGER('t', "threads", &env.threads, "N", 1, SB_MAX_THREADS,
		    "workload threads (default 4)"),
	OPT_NUMBER('d', "duration", &env.duration_s, "SECS", 0, 3600, "seconds",
		   "how long the work runs (default 2)"),
	OPT_INTEGER(0, "seed", &env.seed, "N", 0, 1L << 62, "seed for random phases (default 1)"),
	OPT_NUMBER(0, "hz", &env.hz, "F", 0.001, 1e5, "Hz",
		   "the profiler's sampling rate, for work in step with it (default: unknown)"),
	OPT_STRING(0, "truth", &env.truth, "FILE", "write the truth here at exit"),
	OPT_STRING(0, "pid-file", &env.pid_file, "FILE",
		   "write this process's pid here before waiting or working"),
	OPT_BOOLEAN(0, "wait", &env.wait,
		    "start the work on SIGUSR1 (a tool has attached), at most 60 s"),
	OPT_NUMBER(0, "delay", &env.delay_s, "SECS", 0, 3600, "seconds",
		   "start the work after this long"),
	OPT_HELP(),
	OPT_END(),
};

static int write_pid(const char *path)
{
	struct atomic_file af = { 0 };
	FILE *f = atomic_file_open(&af, path);

	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)getpid());
	if (fflush(f) != 0 || atomic_file_commit(&af) != 0) {
		atomic_file_abort(&af);
		return -1;
	}
	return 0;
}

/* Slot t's thread name for the truth file's last column: terminated, and one line (a
 * control character, which a name may hold, becomes '?'). */
static void truth_name(const struct wl_truth *t, char name[SB_THREAD_NAME_LEN])
{
	memcpy(name, t->name, SB_THREAD_NAME_LEN);
	name[SB_THREAD_NAME_LEN - 1] = 0;
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

static int write_truth(const char *path, const char *workload, const struct wl_ctx *ctx,
		       uint64_t start_ns, uint64_t end_ns)
{
	struct atomic_file af = { 0 };
	FILE *f = atomic_file_open(&af, path);

	if (!f)
		return -1;
	fprintf(f, "# sampbench target %s: threads %d duration_s %g seed %" PRIu64 " pid %d\n",
		workload, ctx->threads, ctx->duration_s, ctx->seed, (int)getpid());
	fprintf(f, "start_ns %" PRIu64 " end_ns %" PRIu64 "\n", start_ns, end_ns);
	fprintf(f, "slot tid os_threads cpu_ns alive_ns offcpu_ns ops checksum_errors eintr "
		   "short_io name\n");
	for (int i = 0; i < SB_MAX_THREADS; i++) {
		const struct wl_truth *t = &ctx->truth[i];
		char name[SB_THREAD_NAME_LEN];
		if (atomic_load(&t->os_threads) == 0)
			continue;
		truth_name(t, name);
		fprintf(f, "%d %d %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			   " %" PRIu64 " %" PRIu64 " %s\n",
			i, (int)atomic_load(&t->tid), (unsigned)atomic_load(&t->os_threads),
			atomic_load(&t->cpu_ns), atomic_load(&t->alive_ns),
			atomic_load(&t->offcpu_ns), atomic_load(&t->ops),
			atomic_load(&t->checksum_errors), atomic_load(&t->eintr),
			atomic_load(&t->short_io), name);
	}
	uint64_t work[WL_MAX_FUNCS], user = 0, sys = 0;
	int nwork = wl_func_work(workload_find(workload), ctx->truth, work);
	for (int k = 0; k < nwork; k++)
		fprintf(f, "func_work %d %" PRIu64 "\n", k, work[k]);
	for (int i = 0; i < SB_MAX_THREADS; i++) {
		user += atomic_load(&ctx->truth[i].user_ns);
		sys += atomic_load(&ctx->truth[i].sys_ns);
	}
	if (user + sys > 0)
		fprintf(f, "user_sys_ns %" PRIu64 " %" PRIu64 "\n", user, sys);
	/* the whole process's CPU so far (main thread, setup): what a tool that launched
	 * this process subtracts from its own tree's to find its own cost */
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(f, "process_cpu_ns %" PRIu64 "\n",
			(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u);
	if (fflush(f) != 0 || ferror(f) || atomic_file_commit(&af) != 0) {
		atomic_file_abort(&af);
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/* `sampbench target`: see usage_text. */
int cmd_target(int argc, char **argv)
{
	const struct workload *w;
	struct wl_truth *truth = NULL;
	int ret = SB_EXIT_FAIL;

	env = env_defaults;
	int first = opt_parse("target", cmd_target_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(usage_text, stdout);
		opt_help(stdout, cmd_target_options);
		return SB_EXIT_OK;
	}
	if (first < 0 || opt_operands("target", argv, first, argc, 1, 1, "WORKLOAD") != 0)
		return SB_EXIT_USAGE;
	if (!(w = workload_find(argv[first]))) {
		sb_err("unknown workload '%s' (see 'sampbench list')", argv[first]);
		return SB_EXIT_USAGE;
	}
	if (env.wait && env.delay_s > 0) {
		sb_err("--wait and --delay exclude each other");
		return SB_EXIT_USAGE;
	}
	/* the handler is in place before the pid is out, so an early signal is not lost;
	 * polling rather than sigtimedwait, which macOS lacks */
	if (env.wait) {
		struct sigaction sa = { .sa_handler = on_usr1 };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (env.pid_file && write_pid(env.pid_file) != 0) {
		sb_err("cannot write %s: %s", env.pid_file, strerror(errno));
		return SB_EXIT_USAGE;
	}
	if (env.wait) {
		struct timespec tick = { 0, 10000000 };
		for (int i = 0; !go && i < WAIT_LIMIT_S * 100; i++)
			nanosleep(&tick, NULL);
		if (!go) {
			sb_err("no SIGUSR1 within %d s: no tool attached", WAIT_LIMIT_S);
			return SB_EXIT_FAIL;
		}
	} else if (env.delay_s > 0) {
		struct timespec d = { (time_t)env.delay_s,
				      (long)((env.delay_s - (double)(time_t)env.delay_s) * 1e9) };
		while (nanosleep(&d, &d) != 0 && errno == EINTR)
			;
	}
	if (!(truth = calloc(SB_MAX_THREADS, sizeof(*truth)))) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	struct wl_ctx ctx = {
		.threads = (int)env.threads,
		.duration_s = env.duration_s,
		.seed = (uint64_t)env.seed,
		.sample_hz = env.hz,
		.truth = truth,
	};
	sb_thread_begin(-1);
	uint64_t start_ns = sb_now_ns();
	int wrc = workload_run(w, &ctx);
	uint64_t end_ns = sb_now_ns();
	uint64_t errors = 0;
	for (int i = 0; i < SB_MAX_THREADS; i++)
		errors += atomic_load(&truth[i].checksum_errors);
	if (env.truth && write_truth(env.truth, w->name, &ctx, start_ns, end_ns) != 0) {
		sb_err("cannot write %s: %s", env.truth, strerror(errno));
		goto cleanup;
	}
	if (wrc != 0) {
		sb_err("workload %s failed: %s", w->name, strerror(errno));
		goto cleanup;
	}
	if (errors) {
		sb_err("workload %s: %" PRIu64 " checksum errors", w->name, errors);
		goto cleanup;
	}
	ret = SB_EXIT_OK;
cleanup:
	free(truth);
	return ret;
}
