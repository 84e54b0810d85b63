/* cmd_exec.c - `sampbench exec`: profile an unmodified program, once per sampler, and
 * print the runs side by side (docs/exec.md).
 *
 * In-process samplers (mach, itimer, ctimer, gperftools, plugins) run inside the program
 * through the LD_PRELOAD agent, which pushes samples into a memfd sink this process
 * created; perf samples it from here (exec_ext.c). Either way this process polls the
 * program's threads in /proc for the truth (per-thread CPU time) and keeps a copy of its
 * memory map for symbolization, because the program's layout is not ours.
 *
 * The program's stdin, stdout and stderr are its own: everything sampbench prints goes to
 * stderr. sampbench exits with the program's exit status (of the last run; 128+N when a
 * signal N killed it), so it can stand in for the program in scripts. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "core/exec_shm.h"
#include "harness/cli.h"
#include "harness/exec_ext.h"
#include "harness/host.h"
#include "results/h5io.h"
#include "sampler/plugin.h"

#define EXEC_MAX_SAMPLERS 16
#define EXEC_POLL_NS 5000000ull       /* /proc truth and perf rings */
#define EXEC_MAPS_EVERY 4             /* polls between two copies of the maps */
#define EXEC_SAMPLE_CAP (1u << 21)    /* sink: 2 Mi samples ... */
#define EXEC_FRAME_CAP (1u << 26)     /* ... and 64 Mi frames (sparse memfd: only used pages) */
#define EXEC_MAX_HZ 20000.0
#define EXEC_TOP 12                   /* functions in the side-by-side profile */

static const char exec_usage[] =
	"usage: sampbench exec --sampler S[,S...] [--hz F] [-o FILE.h5] [-f] -- CMD [ARGS...]\n"
	"\n"
	"Runs CMD once per sampler, unmodified: in-process samplers through the preloaded\n"
	"agent (build/libsampbench-agent.so), perf from outside. Truth is each thread's CPU\n"
	"time from /proc. Prints the runs side by side on stderr; CMD's own output is left\n"
	"alone. Exits with CMD's exit status. See docs/exec.md.\n"
	"\n";

static struct env {
	const char *samplers;
	double hz;
	const char *out;
	int force;
	const char *agent;
	int quiet;
	char **cmd;
} env;

static const struct env env_defaults = { .hz = 100 };

/* How one sampler reaches the program. */
struct exec_ctx;
struct exec_mode {
	const char *name;
	/* Before fork: create the sink. */
	int (*prepare)(struct exec_ctx *c);
	/* In the child, before execve: environment. Returns 0 or -1. */
	int (*child)(struct exec_ctx *c);
	/* In the parent, the child forked and waiting: attach. */
	int (*attach)(struct exec_ctx *c);
	/* Every poll, and once after the program exited. */
	void (*poll)(struct exec_ctx *c);
	/* After the program exited: status, stats and maps into the run. */
	void (*finish)(struct exec_ctx *c);
	void (*cleanup)(struct exec_ctx *c);
};

struct exec_ctx {
	const struct sampler *s;
	const struct exec_mode *mode;
	pid_t pid;
	struct sb_sink *sink;
	void *shm;            /* agent: the memfd mapping */
	size_t shm_len;
	int memfd;
	struct exec_perf *perf;
	struct exec_truth *truth;
	char *maps;           /* the program's last memory map we could read */
	size_t maps_len;
	char err[SB_REASON_LEN];
	struct sb_run *r;
	int failed;           /* the sampler failed: r->reason says why */
};

static void add_stat(struct sb_run *r, const char *name, double v)
{
	if (r->nstats >= SB_MAX_STATS + 40)
		return;
	struct sb_stat_row *row = &r->stats[r->nstats++];
	snprintf(row->name, sizeof(row->name), "%s", name);
	row->value = v;
}

static void fail(struct exec_ctx *c, const char *why)
{
	if (c->failed)
		return;
	c->failed = 1;
	snprintf(c->r->reason, sizeof(c->r->reason), "%s", why);
}

/* ---- in-process: the agent ---- */

static int agent_prepare(struct exec_ctx *c)
{
	size_t hdr = (sizeof(struct sb_exec_shm) + 63) & ~(size_t)63;
	size_t sinkhdr = (sizeof(struct sb_sink) + 63) & ~(size_t)63;
	size_t len = hdr + sinkhdr + (size_t)EXEC_SAMPLE_CAP * sizeof(struct sb_sample) +
		     (size_t)EXEC_FRAME_CAP * sizeof(uint64_t);

	c->memfd = memfd_create("sampbench-exec", MFD_CLOEXEC);
	if (c->memfd < 0 || ftruncate(c->memfd, (off_t)len) != 0) {
		snprintf(c->err, sizeof(c->err), "cannot create the shared sink: %s", strerror(errno));
		return -1;
	}
	c->shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd, 0);
	if (c->shm == MAP_FAILED) {
		c->shm = NULL;
		snprintf(c->err, sizeof(c->err), "cannot map the shared sink: %s", strerror(errno));
		return -1;
	}
	c->shm_len = len;
	struct sb_exec_shm *h = c->shm;
	h->magic = SB_EXEC_MAGIC;
	h->version = SB_EXEC_VERSION;
	h->header_size = sizeof(*h);
	h->total_size = len;
	h->sink_offset = hdr;
	h->samples_offset = hdr + sinkhdr;
	h->frames_offset = h->samples_offset + (size_t)EXEC_SAMPLE_CAP * sizeof(struct sb_sample);
	h->sample_cap = EXEC_SAMPLE_CAP;
	h->frame_cap = EXEC_FRAME_CAP;
	c->sink = sb_exec_sink(c->shm);
	c->sink->sample_cap = EXEC_SAMPLE_CAP;
	c->sink->frame_cap = EXEC_FRAME_CAP;
	atomic_init(&c->sink->nsamples, 0);
	atomic_init(&c->sink->nframes, 0);
	atomic_init(&c->sink->dropped, 0);
	return 0;
}

/* In the child: LD_PRELOAD the agent (in front of any the user set) and tell it where
 * the sink is. dup() gives an fd without FD_CLOEXEC that survives execve. */
static int agent_child(struct exec_ctx *c)
{
	char buf[PATH_MAX * 2], num[32];
	const char *old = getenv("LD_PRELOAD");
	int fd = dup(c->memfd);

	if (fd < 0)
		return -1;
	((struct sb_exec_shm *)c->shm)->target_pid = getpid();
	snprintf(buf, sizeof(buf), "%s%s%s", env.agent, old && *old ? ":" : "", old ? old : "");
	snprintf(num, sizeof(num), "fd:%d", fd);
	if (setenv("LD_PRELOAD", buf, 1) || setenv("SAMPBENCH_OUT", num, 1))
		return -1;
	const char *path = plugin_path(c->s);
	if (setenv("SAMPBENCH_SAMPLER", path ? path : c->s->name, 1))
		return -1;
	snprintf(num, sizeof(num), "%.17g", env.hz);
	if (setenv("SAMPBENCH_HZ", num, 1))
		return -1;
	snprintf(num, sizeof(num), "%d", (int)getpid());
	return setenv("SAMPBENCH_PID", num, 1);
}

static int agent_attach(struct exec_ctx *c)
{
	(void)c;
	return 0;
}

static void agent_poll(struct exec_ctx *c)
{
	(void)c;
}

static void agent_finish(struct exec_ctx *c)
{
	struct sb_exec_shm *h = c->shm;
	int state = atomic_load(&h->state);

	c->sink = sb_exec_sink(c->shm); /* the agent set the pointers for its own mapping */
	if (state == SB_EXEC_INIT)
		fail(c, "the agent never started: not loaded (static or setuid program?) or "
			"SAMPBENCH_* rejected");
	else if (state == SB_EXEC_FAILED || h->signal_conflict)
		fail(c, h->reason[0] ? h->reason : "the agent failed");
	int nh = atomic_load(&h->nhelpers);
	for (int i = 0; i < nh && i < SB_EXEC_MAX_HELPERS; i++) {
		struct exec_tid *t = exec_truth_tid(c->truth, h->helper_tids[i]);
		if (t)
			t->helper = 1;
	}
	for (int i = 0; i < h->nstats && i < SB_EXEC_MAX_STATS; i++)
		add_stat(c->r, h->stats[i].name, h->stats[i].value);
	add_stat(c->r, "agent_stopped", state == SB_EXEC_STOPPED);
	add_stat(c->r, "helper_threads", nh);
	/* Its copy at exit has everything dlopen()ed late; ours may be older. */
	uint32_t ml = atomic_load(&h->maps_len);
	if (ml > 0 && ml <= SB_EXEC_MAPS_MAX) {
		char *m = malloc(ml);
		if (m) {
			memcpy(m, h->maps, ml);
			free(c->maps);
			c->maps = m;
			c->maps_len = ml;
		}
	}
}

static void agent_cleanup(struct exec_ctx *c)
{
	if (c->shm)
		munmap(c->shm, c->shm_len);
	if (c->memfd >= 0)
		close(c->memfd);
	c->shm = NULL;
	c->memfd = -1;
}

static const struct exec_mode agent_mode = {
	"agent", agent_prepare, agent_child, agent_attach, agent_poll, agent_finish, agent_cleanup,
};

/* ---- from outside: perf ---- */

static int perf_prepare(struct exec_ctx *c)
{
	c->sink = sink_create(EXEC_SAMPLE_CAP, EXEC_FRAME_CAP / 4);
	if (!c->sink) {
		snprintf(c->err, sizeof(c->err), "cannot allocate the sink");
		return -1;
	}
	return 0;
}

static int perf_child(struct exec_ctx *c)
{
	(void)c;
	return 0;
}

static int perf_attach(struct exec_ctx *c)
{
	c->perf = exec_perf_open(c->pid, env.hz, c->err, sizeof(c->err));
	return c->perf ? 0 : -1;
}

static void perf_poll(struct exec_ctx *c)
{
	if (c->perf)
		exec_perf_drain(c->perf, c->sink);
}

static void perf_finish(struct exec_ctx *c)
{
	const char *names[16];
	double values[16];
	if (!c->perf)
		return;
	exec_perf_drain(c->perf, c->sink);
	int n = exec_perf_stats(c->perf, names, values, 16);
	for (int i = 0; i < n; i++)
		add_stat(c->r, names[i], values[i]);
}

static void perf_cleanup(struct exec_ctx *c)
{
	exec_perf_close(c->perf);
	c->perf = NULL;
	sink_destroy(c->sink);
	c->sink = NULL;
}

static const struct exec_mode perf_mode = {
	"perf", perf_prepare, perf_child, perf_attach, perf_poll, perf_finish, perf_cleanup,
};

/* Samplers that sample from outside; every other one goes through the agent. */
static const struct {
	const char *name;
	const struct exec_mode *mode;
} outside[] = {
	{ "perf", &perf_mode },
};

/* In-process samplers the agent carries (plugins too). */
static const char *const in_agent[] = { "mach", "itimer", "ctimer", "gperftools",
					"gperftools-pt" };

static const struct exec_mode *mode_of(const struct sampler *s)
{
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		if (!strcmp(outside[i].name, s->name))
			return outside[i].mode;
	if (plugin_path(s))
		return &agent_mode;
	for (size_t i = 0; i < sizeof(in_agent) / sizeof(in_agent[0]); i++)
		if (!strcmp(in_agent[i], s->name))
			return &agent_mode;
	return NULL;
}

/* ---- one run ---- */

static uint64_t now_ns(void)
{
	return sb_now_ns();
}

static void iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void poll_maps(struct exec_ctx *c, char *buf, size_t cap)
{
	size_t n = exec_read_maps(c->pid, buf, cap);
	if (n == 0)
		return;
	char *m = realloc(c->maps, n);
	if (!m)
		return;
	memcpy(m, buf, n);
	c->maps = m;
	c->maps_len = n;
}

/* Copies the sink into r, numbers threads by first appearance (the truth's order, then
 * threads only the samples saw), and fills the truth rows. */
static int collect(struct exec_ctx *c)
{
	struct sb_run *r = c->r;
	struct exec_truth *tr = c->truth;
	struct sb_sink *sink = c->sink;
	size_t n = sink_count(sink), nf = atomic_load(&sink->nframes);

	if (nf > sink->frame_cap)
		nf = sink->frame_cap;
	r->samples = malloc((n + 1) * sizeof(*r->samples));
	r->frames = malloc((nf + 1) * sizeof(*r->frames));
	r->thread_rows = calloc(SB_MAX_THREADS, sizeof(*r->thread_rows));
	if (!r->samples || !r->frames || !r->thread_rows)
		return -1;
	memcpy(r->frames, sink->frames, nf * sizeof(*r->frames));
	r->nframes = nf;
	for (size_t i = 0; i < n; i++) {
		struct sb_sample s = sink->samples[i];
		if (s.frame_offset + s.depth > nf)
			continue;
		if (s.tid > 0)
			exec_truth_tid(tr, s.tid);
		r->samples[r->nsamples++] = s;
	}
	/* Slots by order of appearance, sampler threads excluded; beyond 64 no slot. */
	int slot_of[EXEC_MAX_TIDS];
	int nslots = 0;
	double untracked_cpu = 0;
	for (size_t i = 0; i < tr->n; i++) {
		struct exec_tid *t = &tr->t[i];
		slot_of[i] = -1;
		if (t->helper)
			continue;
		if (nslots == SB_MAX_THREADS) {
			untracked_cpu += (double)t->cpu_ns;
			continue;
		}
		slot_of[i] = nslots;
		struct sb_thread_row *row = &r->thread_rows[nslots++];
		row->index = slot_of[i];
		row->tid = t->tid;
		row->os_threads = 1;
		row->cpu_ns = t->cpu_ns;
		row->alive_ns = t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0;
		row->weight_ns = NAN;
	}
	r->nthread_rows = (size_t)nslots;
	for (size_t i = 0; i < r->nsamples; i++) {
		struct sb_sample *s = &r->samples[i];
		s->thread_index = -1;
		for (size_t k = 0; k < tr->n; k++)
			if (tr->t[k].tid == s->tid) {
				s->thread_index = slot_of[k];
				break;
			}
	}
	r->threads = nslots;
	add_stat(r, "sink_dropped", (double)atomic_load(&sink->dropped));
	add_stat(r, "truth_polls", (double)tr->polls);
	add_stat(r, "truth_from_stat_ticks", tr->from_stat);
	add_stat(r, "truth_untracked_cpu_ns", untracked_cpu);
	return 0;
}

/* Runs the program once under c->s. Returns its wait status, or -1 when the program did
 * not run (c->err says why). */
static int exec_once(struct exec_ctx *c, int *status)
{
	int go[2] = { -1, -1 }, ok[2] = { -1, -1 };
	struct rusage ru;
	int rc = -1;
	char *mapbuf = malloc(SB_EXEC_MAPS_MAX);

	c->pid = -1;
	if (!mapbuf || c->mode->prepare(c) != 0)
		goto cleanup;
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ok, O_CLOEXEC) != 0) {
		snprintf(c->err, sizeof(c->err), "pipe: %s", strerror(errno));
		goto cleanup;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(c->err, sizeof(c->err), "fork: %s", strerror(errno));
		goto cleanup;
	}
	if (c->pid == 0) {
		char b;
		int e;
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan keeps running if we die */
		close(go[1]);
		close(ok[0]);
		/* Wait until the parent attached (perf events must exist before execve). */
		while (read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (c->mode->child(c) != 0) {
			e = errno;
		} else {
			execvp(env.cmd[0], env.cmd);
			e = errno;
		}
		if (write(ok[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ok[1]);
	go[0] = ok[1] = -1;
	if (c->mode->attach(c) != 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
		goto cleanup;
	}
	uint64_t t0 = now_ns();
	close(go[1]); /* EOF: exec */
	go[1] = -1;
	int e = 0;
	ssize_t k;
	while ((k = read(ok[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (k == sizeof(e)) {
		snprintf(c->err, sizeof(c->err), "cannot execute '%s': %s", env.cmd[0], strerror(e));
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
		goto cleanup;
	}
	exec_truth_init(c->truth, c->pid);
	for (uint64_t polls = 0;; polls++) {
		pid_t w = wait4(c->pid, status, WNOHANG, &ru);
		if (w == c->pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(c->err, sizeof(c->err), "wait: %s", strerror(errno));
			goto cleanup;
		}
		exec_truth_poll(c->truth);
		c->mode->poll(c);
		if (polls % EXEC_MAPS_EVERY == 0)
			poll_maps(c, mapbuf, SB_EXEC_MAPS_MAX);
		struct timespec ts = { 0, EXEC_POLL_NS };
		nanosleep(&ts, NULL);
	}
	c->r->wall_s = (double)(now_ns() - t0) / 1e9;
	c->mode->finish(c);
	if (collect(c) != 0) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		goto cleanup;
	}
	double ut = (double)ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3;
	double st = (double)ru.ru_stime.tv_sec * 1e9 + ru.ru_stime.tv_usec * 1e3;
	add_stat(c->r, "child_utime_ns", ut);
	add_stat(c->r, "child_stime_ns", st);
	rc = 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ok[i] >= 0)
			close(ok[i]);
	}
	free(mapbuf);
	return rc;
}

/* One run: fills r. Returns the program's wait status, -1 when it could not run. */
static int exec_run(const struct sampler *s, int64_t run_id, struct sb_run *r, char *cmdline)
{
	struct exec_ctx c = { .s = s, .memfd = -1, .r = r };
	int status = -1, rc = -1;

	memset(r, 0, sizeof(*r));
	metrics_clear(&r->metrics);
	r->run_id = run_id;
	snprintf(r->sampler, sizeof(r->sampler), "%s", s->name);
	snprintf(r->workload, sizeof(r->workload), "%s", cmdline);
	r->hz = env.hz;
	r->clock = s->clock;
	iso_now(r->start_time, sizeof(r->start_time));
	r->stats = calloc(SB_MAX_STATS + 48, sizeof(*r->stats));
	c.truth = calloc(1, sizeof(*c.truth));
	if (!r->stats || !c.truth) {
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		r->status = SB_RUN_FAILED;
		goto cleanup;
	}
	c.mode = mode_of(s);
	if (!c.mode) {
		r->status = SB_RUN_SKIPPED;
		snprintf(r->reason, sizeof(r->reason),
			 "%s cannot sample another program yet (exec supports the agent's samplers, "
			 "perf and plugins)", s->name);
		goto cleanup;
	}
	if (exec_once(&c, &status) != 0) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "%s", c.err);
		goto cleanup;
	}
	rc = status;
	r->duration_s = r->wall_s;
	add_stat(r, "exit_code", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	add_stat(r, "exit_signal", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	r->status = c.failed ? SB_RUN_FAILED : SB_RUN_OK;
	if (WIFSIGNALED(status) && !c.failed) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "program killed by signal %s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	}
	if (r->nframes > 0)
		exec_symbolize(c.maps, c.maps_len, r->frames, r->nframes, &r->symbols,
			       &r->nsymbols);
	metrics_compute(r, NULL);
	/* No workload code in the program: slot leaves and chains cannot be judged. */
	r->metrics.misattributed_fraction = NAN;
	r->metrics.stack_correct_fraction = NAN;
	r->metrics.function_tvd = NAN;
cleanup:
	if (c.mode)
		c.mode->cleanup(&c);
	if (c.truth) {
		exec_truth_close(c.truth);
		free(c.truth);
	}
	free(c.maps);
	return rc;
}

/* ---- printing ---- */

static void print_runs(FILE *out, const struct sb_run *runs, size_t n)
{
	fprintf(out, "%-14s %-7s %5s %8s %8s %9s %9s %10s %4s %7s %7s\n", "sampler", "status",
		"exit", "samples", "expected", "rate_acc", "magn_err", "thread_tvd", "thr", "cpu_s",
		"wall_s");
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		const struct sb_metrics *m = &r->metrics;
		double cpu = 0;
		for (size_t k = 0; k < r->nthread_rows; k++)
			cpu += (double)r->thread_rows[k].cpu_ns;
		double ec = run_stat(r, "exit_code"), es = run_stat(r, "exit_signal");
		char exitb[16] = "-";
		if (!isnan(es) && es > 0)
			snprintf(exitb, sizeof(exitb), "sig%.0f", es);
		else if (!isnan(ec))
			snprintf(exitb, sizeof(exitb), "%.0f", ec);
		fprintf(out, "%-14s %-7s %5s %8.0f %8.0f %9.3f %9.3f %10.3f %4d %7.2f %7.2f",
			r->sampler, run_status_name(r->status), exitb,
			isnan(m->nsamples) ? 0 : m->nsamples, m->expected_samples, m->rate_accuracy,
			m->magnitude_error, m->thread_tvd, (int)r->nthread_rows, cpu / 1e9, r->wall_s);
		if (r->status != SB_RUN_OK)
			fprintf(out, "  (%s)", r->reason);
		fputc('\n', out);
	}
}

struct fshare {
	char name[SB_SYM_FUNC_LEN];
	double share[EXEC_MAX_SAMPLERS];
	double key;
};

static int cmp_fshare(const void *a, const void *b)
{
	const struct fshare *x = a, *y = b;
	return (x->key < y->key) - (x->key > y->key);
}

/* The leaf functions side by side: share of each run's sample weight (or count). The
 * order follows perf when it ran (the reference), else the first run. */
static void print_top(FILE *out, const struct sb_run *runs, size_t n)
{
	struct fshare *f = NULL;
	size_t nf = 0, cap = 0, ref = 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(runs[i].sampler, "perf") && runs[i].nsamples > 0)
			ref = i;
	for (size_t i = 0; i < n && i < EXEC_MAX_SAMPLERS; i++) {
		const struct sb_run *r = &runs[i];
		double total = 0;
		for (size_t k = 0; k < r->nsamples; k++) {
			const struct sb_sample *s = &r->samples[k];
			double w = isnan(s->weight_ns) ? 1 : s->weight_ns;
			if (s->thread_index < 0 || s->depth == 0)
				continue;
			total += w;
			const struct sb_symbol *sym =
				symbol_find(r->symbols, r->nsymbols, r->frames[s->frame_offset]);
			/* PCs of code without symbols move with ASLR from run to run: compare
			 * them per module instead. */
			char modname[SB_SYM_FUNC_LEN];
			const char *name = sym ? sym->function : "?";
			if (sym && !strncmp(name, "0x", 2)) {
				snprintf(modname, sizeof(modname), "[%s, no symbols]", sym->module);
				name = modname;
			}
			size_t j = 0;
			while (j < nf && strcmp(f[j].name, name))
				j++;
			if (j == nf) {
				if (nf == cap) {
					cap = cap ? cap * 2 : 64;
					struct fshare *g = realloc(f, cap * sizeof(*f));
					if (!g)
						goto done;
					f = g;
				}
				memset(&f[nf], 0, sizeof(f[nf]));
				snprintf(f[nf].name, sizeof(f[nf].name), "%s", name);
				nf++;
			}
			f[j].share[i] += w;
		}
		for (size_t j = 0; j < nf && total > 0; j++)
			f[j].share[i] /= total;
	}
	for (size_t j = 0; j < nf; j++)
		f[j].key = f[j].share[ref];
	qsort(f, nf, sizeof(*f), cmp_fshare);
	fprintf(out, "\nleaf functions, share of samples' weight (ordered by %s):\n",
		n ? runs[ref].sampler : "-");
	fprintf(out, "%-40s", "function");
	for (size_t i = 0; i < n && i < EXEC_MAX_SAMPLERS; i++)
		fprintf(out, " %14.14s", runs[i].sampler);
	fputc('\n', out);
	for (size_t j = 0; j < nf && j < EXEC_TOP; j++) {
		fprintf(out, "%-40.40s", f[j].name);
		for (size_t i = 0; i < n && i < EXEC_MAX_SAMPLERS; i++)
			fprintf(out, " %13.1f%%", 100 * f[j].share[i]);
		fputc('\n', out);
	}
done:
	free(f);
}

/* ---- command line ---- */

const struct opt cmd_exec_options[] = {
	OPT_STRING('s', "sampler", &env.samplers, "LIST",
		   "mach, itimer, ctimer, gperftools, gperftools-pt, perf or\n"
		   "./plugin.so, comma separated"),
	OPT_NUMBER('z', "hz", &env.hz, "F", 0, EXEC_MAX_HZ, NULL,
		   "sampling frequency, 0 < F <= 20000 (default 100)"),
	OPT_STRING('o', "output", &env.out, "FILE.h5", "also write the runs to FILE.h5"),
	OPT_BOOLEAN('f', "force", &env.force, "overwrite FILE.h5 if it exists"),
	OPT_STRING(0, "agent", &env.agent, "PATH", "the agent .so (default: next to this binary)"),
	OPT_BOOLEAN('q', "quiet", &env.quiet, "print nothing (exit status and FILE.h5 only)"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	/* stop at the first operand, so CMD's own options are never ours */
	int first = opt_parse("exec", cmd_exec_options, argc, argv, OPT_STOP_AT_OPERAND);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (!env.samplers) {
		sb_err("missing --sampler (see 'sampbench exec --help')");
		return -1;
	}
	if (first >= argc) {
		sb_err("missing the command to run after -- (see 'sampbench exec --help')");
		return -1;
	}
	env.cmd = argv + first;
	return 0;
}

/* Is cmd runnable: a path that is an executable file, or a name found on PATH? */
static int command_exists(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", cmd);
		struct stat st;
		if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return 1;
		p += len + (e ? 1 : 0);
		if (!e)
			break;
	}
	return 0;
}

/* The agent next to our own binary (build/sampbench -> build/libsampbench-agent.so). */
static int find_agent(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, len, "%.*s/libsampbench-agent.so", PATH_MAX - 32, self) >= len)
		return -1;
	return access(buf, R_OK) == 0 ? 0 : -1;
}

int cmd_exec(int argc, char **argv)
{
	const struct sampler *samplers[EXEC_MAX_SAMPLERS];
	char *list = NULL, agentbuf[PATH_MAX], agentreal[PATH_MAX], cmdline[SB_NAME_LEN];
	struct sb_run *runs = NULL;
	struct sb_h5 *h5 = NULL;
	struct sb_host host;
	int ns = 0, rc = SB_EXIT_USAGE, last_status = -1, need_agent = 0;
	struct sigaction ign, old_int, old_quit;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(exec_usage, stdout);
		opt_help(stdout, cmd_exec_options);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	list = strdup(env.samplers);
	if (!list) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (ns == EXEC_MAX_SAMPLERS) {
			sb_err("sampler list is longer than %d", EXEC_MAX_SAMPLERS);
			goto cleanup;
		}
		samplers[ns] = sampler_resolve(tok);
		if (!samplers[ns])
			goto cleanup;
		need_agent |= mode_of(samplers[ns]) == &agent_mode;
		ns++;
	}
	if (ns == 0) {
		sb_err("sampler list is empty");
		goto cleanup;
	}
	if (!command_exists(env.cmd[0])) {
		sb_err("command not found: '%s'", env.cmd[0]);
		goto cleanup;
	}
	if (need_agent) {
		if (!env.agent && find_agent(agentbuf, sizeof(agentbuf)) != 0) {
			sb_err("agent not found next to sampbench (build it with 'make', or pass "
			       "--agent PATH)");
			goto cleanup;
		}
		/* ld.so wants an absolute path when the program changes directory */
		if (!realpath(env.agent ? env.agent : agentbuf, agentreal)) {
			sb_err("agent '%s' not found", env.agent ? env.agent : agentbuf);
			goto cleanup;
		}
		env.agent = agentreal;
	}
	host_probe_calibrated(&host);
	if (env.out) {
		char err[256];
		h5 = h5_create(env.out, &host, env.force, err, sizeof(err));
		if (!h5) {
			sb_err("%s", err);
			goto cleanup;
		}
	}
	/* workload = the command line, cut to fit */
	size_t off = 0;
	cmdline[0] = 0;
	for (char **a = env.cmd; *a && off + 1 < sizeof(cmdline); a++)
		off += (size_t)snprintf(cmdline + off, sizeof(cmdline) - off, "%s%s",
					a == env.cmd ? "" : " ", *a);
	runs = calloc((size_t)ns, sizeof(*runs));
	if (!runs) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	/* Ctrl-C is the program's to handle, as with time(1); we record how it ended. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	rc = SB_EXIT_OK;
	int done = 0;
	for (int i = 0; i < ns; i++) {
		int st = exec_run(samplers[i], i, &runs[i], cmdline);
		done++;
		if (st >= 0)
			last_status = st;
		if (h5 && h5_append_run(h5, &runs[i]) != 0) {
			sb_err("cannot write %s: %s", env.out, h5_strerror(h5));
			rc = SB_EXIT_FAIL;
		}
		if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGINT)
			break; /* the user interrupted the program: do not start it again */
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (!env.quiet) {
		fprintf(stderr, "\nsampbench exec: %s, %g Hz\n", cmdline, env.hz);
		print_runs(stderr, runs, (size_t)done);
		print_top(stderr, runs, (size_t)done);
		if (env.out)
			fprintf(stderr, "\nwritten: %s\n", env.out);
	}
	if (h5) {
		h5_set_complete(h5, done == ns);
		if (h5_close(h5) != 0)
			rc = SB_EXIT_FAIL;
		h5 = NULL;
	}
	/* The program's status wins, except that a file we failed to write turns its 0 into
	 * 1; a program that never ran is a failure. */
	if (last_status < 0) {
		rc = SB_EXIT_FAIL;
	} else {
		int prog = WIFEXITED(last_status) ? WEXITSTATUS(last_status)
						  : 128 + WTERMSIG(last_status);
		rc = prog == 0 && rc != SB_EXIT_OK ? rc : prog;
	}
	for (int i = 0; i < done; i++)
		run_free(&runs[i]);
cleanup:
	if (h5)
		h5_abort(h5);
	free(runs);
	free(list);
	return rc;
}
