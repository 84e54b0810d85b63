/* gperftools.c - gperftools' CPU profiler (libprofiler) as it ships, driven through its API.
 *
 *   gperftools     the default: one process-wide setitimer(ITIMER_PROF), SIGPROF to
 *                  whichever thread is running when it expires
 *   gperftools-pt  CPUPROFILE_PER_THREAD_TIMERS: one timer_create(CLOCK_THREAD_CPUTIME_ID)
 *                  per thread that called ProfilerRegisterThread
 * Both are checked at the scheduler tick, so neither fires faster than CONFIG_HZ.
 *
 * libprofiler reads CPUPROFILE_FREQUENCY (and the per-thread switches) once, when it is
 * initialised, so it is not linked into sampbench: start() sets the environment and then
 * dlopen()s it. Every run is a fresh child process, so each run initialises it afresh.
 *
 * libprofiler only writes a profile file: aggregated stacks with counts, no timestamps, no
 * thread ids. stop() parses it into the sink, one sample per count. What the format cannot
 * carry is unknown: time_ns = UINT64_MAX, tid = -1, stop_latency_ns and suspend_window_ns
 * NaN. The workload slot is recovered from the PCs (see gp_attribute). docs/gperftools.md
 * has the details. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gperftools/profiler.h> /* struct layouts only; libprofiler is dlopen()ed */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "sampler/cpuprofile.h"
#include "sampler/sampler.h"
#include "sampler/sigsample.h"
#include "sampler/threads.h"

#define GP_LIB "libprofiler.so.0"
#define GP_MAX_HZ 4000        /* libprofiler clamps CPUPROFILE_FREQUENCY to this */
#define GP_STACK_DEPTH 64     /* libprofiler's kMaxStackDepth: deeper stacks are cut */
#define GP_MAX_PROFILE (1ull << 30) /* larger profile files are refused, not read */

typedef int (*gp_start_fn)(const char *fname, const struct ProfilerOptions *opts);
typedef void (*gp_void_fn)(void);
typedef void (*gp_state_fn)(struct ProfilerState *state);

static struct {
	void *lib;
	gp_start_fn start;
	gp_void_fn stop;
	gp_void_fn register_thread;
	gp_state_fn get_state;
	bool running;
	struct sb_sink *sink;
	uint32_t max_depth;
	char path[PATH_MAX];
	bool sink_full;
	/* counters for stats(); NaN until known */
	double samples_gathered, interrupts, evictions, profile_bytes;
	double period_us, records, total_count, parse_errors, pushed, not_pushed;
	double unattributed, truncated;
	_Atomic uint64_t registered_threads; /* written by workload threads */
} gp;

/* The variables libprofiler reads at initialisation. CPUPROFILE would make it start its own
 * profile, CPUPROFILESIGNAL install a toggle handler and CPUPROFILE_REALTIME switch to wall
 * time, so they are cleared whatever the caller's environment holds. */
static const char *const gp_env_clear[] = {
	"CPUPROFILE", "CPUPROFILESIGNAL", "CPUPROFILE_REALTIME", "CPUPROFILE_TIMER_SIGNAL",
	"CPUPROFILE_PER_THREAD_TIMERS",
};

/* Returns 0 when libprofiler can be loaded and is not loaded yet. The check runs dlopen() in
 * a short-lived child: loading it here would initialise it before start() has set
 * CPUPROFILE_FREQUENCY. */
static int gp_available(char *why, size_t len)
{
	int pfd[2];
	char msg[256] = "";

	if (dlopen(GP_LIB, RTLD_NOW | RTLD_NOLOAD)) {
		snprintf(why, len, "%s already loaded: its frequency can no longer be set", GP_LIB);
		return -1;
	}
	if (pipe(pfd) != 0) {
		snprintf(why, len, "cannot probe %s: pipe: %s", GP_LIB, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "cannot probe %s: fork: %s", GP_LIB, strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		for (size_t i = 0; i < ARRAY_SIZE(gp_env_clear); i++)
			unsetenv(gp_env_clear[i]);
		void *h = dlopen(GP_LIB, RTLD_NOW | RTLD_LOCAL);
		const char *e = h ? (dlsym(h, "ProfilerStartWithOptions") ? "" :
				     "ProfilerStartWithOptions missing") : dlerror();
		ssize_t w = write(pfd[1], e, strlen(e));
		(void)w;
		_exit(0);
	}
	close(pfd[1]);
	ssize_t n, got = 0;
	while ((n = read(pfd[0], msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += n;
	close(pfd[0]);
	msg[got] = '\0';
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, len, "cannot probe %s: probe process died", GP_LIB);
		return -1;
	}
	if (msg[0]) {
		snprintf(why, len, "cannot load %s: %s", GP_LIB, msg);
		return -1;
	}
	return 0;
}

static void gp_reset(void)
{
	void *lib = gp.lib; /* a loaded library stays loaded: its destructors would stop it */
	memset(&gp, 0, sizeof(gp));
	gp.lib = lib;
	gp.samples_gathered = gp.interrupts = gp.evictions = gp.profile_bytes = NAN;
	gp.period_us = gp.records = gp.total_count = NAN;
	gp.parse_errors = gp.pushed = gp.not_pushed = gp.unattributed = gp.truncated = 0;
}

/* Sets libprofiler's environment, loads it and resolves its API. Returns 0 or -1 with one
 * line on stderr. */
static int gp_load(double hz, bool per_thread)
{
	char freq[32];

	for (size_t i = 0; i < ARRAY_SIZE(gp_env_clear); i++)
		unsetenv(gp_env_clear[i]);
	/* libprofiler parses an unsigned integer and clamps it to GP_MAX_HZ itself; the header's
	 * period then tells what it really used */
	long f = lround(hz);
	snprintf(freq, sizeof(freq), "%ld", f < 1 ? 1 : f);
	if (setenv("CPUPROFILE_FREQUENCY", freq, 1) != 0 ||
	    (per_thread && setenv("CPUPROFILE_PER_THREAD_TIMERS", "1", 1) != 0))
		return -1;
	if (dlopen(GP_LIB, RTLD_NOW | RTLD_NOLOAD)) {
		fprintf(stderr, "gperftools: %s already loaded: frequency cannot be set\n", GP_LIB);
		errno = EBUSY;
		return -1;
	}
	gp.lib = dlopen(GP_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!gp.lib) {
		fprintf(stderr, "gperftools: cannot load %s: %s\n", GP_LIB, dlerror());
		errno = ENOENT;
		return -1;
	}
	/* POSIX allows converting dlsym's void * to a function pointer; -Wpedantic does not */
	*(void **)&gp.start = dlsym(gp.lib, "ProfilerStartWithOptions");
	*(void **)&gp.stop = dlsym(gp.lib, "ProfilerStop");
	*(void **)&gp.register_thread = dlsym(gp.lib, "ProfilerRegisterThread");
	*(void **)&gp.get_state = dlsym(gp.lib, "ProfilerGetCurrentState");
	if (!gp.start || !gp.stop || !gp.register_thread || !gp.get_state) {
		fprintf(stderr, "gperftools: symbol missing in %s\n", GP_LIB);
		errno = ENOSYS;
		return -1;
	}
	return 0;
}

/* Starts libprofiler writing to a fresh file in cfg->tmpdir (or /tmp). */
static int gp_start_common(const struct sb_config *cfg, struct sb_sink *sink, bool per_thread)
{
	struct ProfilerOptions opts;
	const char *dir = cfg->tmpdir && cfg->tmpdir[0] ? cfg->tmpdir : "/tmp";

	if (gp.running || !(cfg->hz > 0)) {
		errno = gp.running ? EBUSY : EINVAL;
		return -1;
	}
	gp_reset();
	gp.sink = sink;
	gp.max_depth = cfg->max_depth && cfg->max_depth <= SB_MAX_FRAMES ? cfg->max_depth :
									    SB_MAX_FRAMES;
	if (gp_load(cfg->hz, per_thread) != 0)
		return -1;

	/* mkstemps reserves a unique name; libprofiler reopens it with O_TRUNC */
	int n = snprintf(gp.path, sizeof(gp.path), "%s/sampbench-gperftools-XXXXXX.prof", dir);
	if (n < 0 || (size_t)n >= sizeof(gp.path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = mkstemps(gp.path, 5);
	if (fd < 0) {
		fprintf(stderr, "gperftools: cannot create profile file in %s: %s\n", dir,
			strerror(errno));
		gp.path[0] = '\0';
		return -1;
	}
	close(fd);

	memset(&opts, 0, sizeof(opts));
	if (!gp.start(gp.path, &opts)) {
		fprintf(stderr, "gperftools: ProfilerStartWithOptions failed for %s\n", gp.path);
		unlink(gp.path);
		gp.path[0] = '\0';
		errno = EIO;
		return -1;
	}
	gp.running = true;
	return 0;
}

static int gp_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	return gp_start_common(cfg, sink, false);
}

static int gp_pt_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	return gp_start_common(cfg, sink, true);
}

/* Per-thread mode creates a thread's timer only when the thread registers: without this a
 * workload thread is never sampled. */
static void gp_pt_thread_start(int index)
{
	(void)index;
	if (!gp.register_thread || !gp.running)
		return;
	gp.register_thread();
	atomic_fetch_add_explicit(&gp.registered_threads, 1, memory_order_relaxed);
}

/* Workload slot of a stack: the first frame, leaf first, that lies in a slot's leaf or
 * entry function (every workload thread runs through its slot's entry function, so a walk
 * that reaches the thread's bottom names it). Frame 0 is the interrupted PC; deeper frames
 * are return addresses, looked up as address - 1 so a call that ends a function maps to
 * that function. */
static int gp_attribute(const uint64_t *pcs, uint32_t depth)
{
	for (uint32_t i = 0; i < depth; i++) {
		int slot = sb_slot_of_frame_pc(i == 0 ? pcs[i] : pcs[i] - 1);
		if (slot >= 0)
			return slot;
	}
	return -1;
}

static int gp_push_record(const struct cpuprofile_record *rec, void *arg)
{
	const struct cpuprofile *p = arg;
	struct sb_sample s = sample_unknown();
	uint32_t depth = rec->depth;

	s.time_ns = UINT64_MAX; /* the format has no timestamps */
	s.weight_ns = (double)p->period_us * 1e3;
	s.thread_index = gp_attribute(rec->pcs, rec->depth);
	/* a stack of libprofiler's maximum depth was most likely cut by libprofiler */
	if (depth >= GP_STACK_DEPTH)
		s.flags |= SB_SAMPLE_TRUNCATED;
	if (depth > gp.max_depth) {
		depth = gp.max_depth;
		s.flags |= SB_SAMPLE_TRUNCATED;
	}
	if (s.thread_index < 0)
		gp.unattributed += (double)rec->count;
	if (s.flags & SB_SAMPLE_TRUNCATED)
		gp.truncated += (double)rec->count;
	/* one sample per count, so sample-counting metrics see what pprof reports; the sink's
	 * capacity bounds the loop whatever the count says */
	for (uint64_t i = 0; i < rec->count; i++) {
		if (gp.sink_full || sink_push(gp.sink, &s, rec->pcs, depth) != 0) {
			gp.sink_full = true;
			gp.not_pushed += (double)(rec->count - i);
			break;
		}
		gp.pushed++;
	}
	return 0;
}

/* Parses libprofiler's "PROFILE: interrupts/evictions/bytes = a/b/c" line out of what it
 * wrote to stderr during ProfilerStop; other lines are passed on to stderr. */
static void gp_parse_stop_output(const char *text)
{
	const char *line = text;
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line + 1) : strlen(line);
		int a, b;
		unsigned long long c;
		if (sscanf(line, "PROFILE: interrupts/evictions/bytes = %d/%d/%llu", &a, &b, &c) ==
		    3) {
			gp.interrupts = a;
			gp.evictions = b;
			gp.profile_bytes = (double)c;
		} else {
			fwrite(line, 1, n, stderr);
		}
		line += n;
	}
}

/* Calls ProfilerStop with fd 2 redirected to an anonymous file, the only way to get the interrupt and
 * eviction counters, which libprofiler prints and forgets. Falls back to a plain stop. */
static void gp_stop_capturing(void)
{
	char buf[4096];

	fflush(stderr);
	int mfd = plat_anon_fd("sampbench-gperftools-stderr");
	int saved = mfd >= 0 ? dup(2) : -1;
	if (mfd < 0 || saved < 0 || dup2(mfd, 2) < 0) {
		if (saved >= 0)
			close(saved);
		if (mfd >= 0)
			close(mfd);
		gp.stop();
		return;
	}
	gp.stop();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);

	ssize_t n = pread(mfd, buf, sizeof(buf) - 1, 0);
	close(mfd);
	buf[n > 0 ? n : 0] = '\0';
	gp_parse_stop_output(buf);
}

/* Reads the whole file at path into a malloc'd buffer. Returns it (caller frees) or NULL. */
static unsigned char *gp_read_file(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf = NULL;
	size_t got = 0;

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0)
		goto cleanup;
	if (st.st_size < 0 || (uint64_t)st.st_size > GP_MAX_PROFILE) {
		errno = EFBIG;
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		goto cleanup;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	*len = got;
cleanup:
	close(fd);
	return buf;
}

/* Stops libprofiler, parses its profile into the sink and removes the file. */
static int gp_stop(void)
{
	struct ProfilerState state;
	struct cpuprofile prof;
	char err[256];
	size_t len = 0;
	int rc = -1, saved_errno = 0;

	if (!gp.running) {
		errno = EINVAL;
		return -1;
	}
	/* samples_gathered resets to 0 once stopped */
	memset(&state, 0, sizeof(state));
	gp.get_state(&state);
	gp.samples_gathered = state.samples_gathered;
	gp_stop_capturing();
	gp.running = false;

	unsigned char *buf = gp_read_file(gp.path, &len);
	if (!buf) {
		saved_errno = errno;
		fprintf(stderr, "gperftools: cannot read profile %s: %s\n", gp.path,
			strerror(errno));
		goto cleanup;
	}
	if (cpuprofile_parse(buf, len, &prof, err, sizeof(err)) != 0) {
		fprintf(stderr, "gperftools: cannot parse profile %s: %s\n", gp.path, err);
		gp.parse_errors = 1;
		saved_errno = EBADMSG;
		goto cleanup;
	}
	gp.period_us = (double)prof.period_us;
	gp.records = (double)prof.records;
	gp.total_count = (double)prof.total_count;
	cpuprofile_foreach(&prof, gp_push_record, &prof);
	rc = 0;
cleanup:
	free(buf);
	unlink(gp.path);
	if (rc != 0)
		errno = saved_errno; /* for the harness's "sampler stop failed" reason */
	return rc;
}

static int gp_stats(struct sb_stat *out, int max)
{
	double hz = gp.period_us > 0 ? 1e6 / gp.period_us : NAN;
	struct sb_stat st[] = {
		{ "samples_gathered", gp.samples_gathered },
		{ "interrupts", gp.interrupts },
		{ "evictions", gp.evictions },
		{ "profile_bytes", gp.profile_bytes },
		{ "period_us", gp.period_us },
		{ "profiler_hz", hz },
		{ "records", gp.records },
		{ "total_count", gp.total_count },
		{ "parse_errors", gp.parse_errors },
		{ "samples_pushed", gp.pushed },
		{ "samples_not_pushed", gp.not_pushed },
		{ "unattributed_samples", gp.unattributed },
		{ "truncated_samples", gp.truncated },
		{ "registered_threads", (double)atomic_load(&gp.registered_threads) },
	};
	int n = 0;
	for (size_t i = 0; n < max && i < ARRAY_SIZE(st); i++)
		out[n++] = st[i];
	return n;
}

const struct sampler sampler_gperftools = {
	.name = "gperftools",
	.description = "gperftools libprofiler, process-wide setitimer(ITIMER_PROF)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAP_PROCESS_WIDE | SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS,
	.flags = SB_SAMPLER_TICK_DRIVEN | SB_SAMPLER_IN_PROCESS,
	.available = gp_available,
	.start = gp_start,
	.stop = gp_stop,
	.stats = gp_stats,
	.signal = sigsample_sigprof,
};

const struct sampler sampler_gperftools_pt = {
	.name = "gperftools-pt",
	.description = "gperftools libprofiler, CPUPROFILE_PER_THREAD_TIMERS (timer_create)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS,
	.flags = SB_SAMPLER_TICK_DRIVEN | SB_SAMPLER_IN_PROCESS,
	.available = gp_available,
	.start = gp_pt_start,
	.stop = gp_stop,
	.stats = gp_stats,
	.thread_start = gp_pt_thread_start,
	.signal = sigsample_sigprof,
};
