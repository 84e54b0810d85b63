/* runner.c - one run of a spec. The child (child.c: fork, death signal, process group,
 * watchdog) runs sampler + workload and writes into a MAP_SHARED area created before
 * fork, so the parent keeps whatever the child managed to write even when it crashes or
 * hangs. */
#include "harness/runner.h"

#include <errno.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "analysis/symbolize.h"
#include "core/iso_time.h"
#include "harness/child.h"
#include "harness/rssmon.h"
#include "harness/integrity.h"
#include "sampler/threads.h"
#include "workloads/integrity.h"

#define RUNNER_POLL_NS 2000000u /* between two looks at the child */

volatile int runner_interrupted;

enum child_phase { PH_INIT, PH_STARTING, PH_RUNNING, PH_STOPPING, PH_DONE };

struct run_shared {
	_Atomic int phase;
	int status; /* enum sb_status, set by the child when not ok */
	char reason[SB_REASON_LEN];
	uint64_t work_start_ns, work_end_ns;
	/* What the child's CPU went to that is the harness's, not the sampler's: everything
	 * before the sampler's start(), the main thread's own clock around workload_run and
	 * from the sampler's stop() to the end, and the workload's helper threads
	 * (docs/metrics.md "What the sampler costs the process"). */
	uint64_t harness_cpu_ns;
	double rss_start, rss_work_start, rss_work_end; /* private bytes (rssmon.h) */
	int nstats;
	struct sb_stat_row stats[SB_MAX_STATS];
	struct wl_truth truth[SB_MAX_THREADS];
	int integ_done; /* the process checks ran (the child reached its end) */
	struct sb_integrity_counts integ;
};

static const char *phase_name(int p)
{
	static const char *const names[] = { "init", "sampler start", "workload",
					     "sampler stop", "done" };
	return p >= 0 && p <= PH_DONE ? names[p] : "unknown";
}

static void child_fail(struct run_shared *sh, int status, const char *fmt, const char *arg)
{
	sh->status = status;
	snprintf(sh->reason, sizeof(sh->reason), fmt, arg);
}

/* CPU of this process and of its reaped children (a sampler's probe), in ns. */
static uint64_t process_cpu_ns(void)
{
	struct rusage s, c;
	uint64_t ns = 0;

	if (getrusage(RUSAGE_SELF, &s) == 0)
		ns += (uint64_t)s.ru_utime.tv_sec * 1000000000u + (uint64_t)s.ru_utime.tv_usec * 1000u +
		      (uint64_t)s.ru_stime.tv_sec * 1000000000u + (uint64_t)s.ru_stime.tv_usec * 1000u;
	if (getrusage(RUSAGE_CHILDREN, &c) == 0)
		ns += (uint64_t)c.ru_utime.tv_sec * 1000000000u + (uint64_t)c.ru_utime.tv_usec * 1000u +
		      (uint64_t)c.ru_stime.tv_sec * 1000000000u + (uint64_t)c.ru_stime.tv_usec * 1000u;
	return ns;
}

/* Copies the sampler's stats into sh. */
static void child_copy_stats(const struct sampler *s, struct run_shared *sh)
{
	struct sb_stat st[SB_MAX_STATS];
	int n = s->stats(st, SB_MAX_STATS);

	for (int i = 0; i < n && i < SB_MAX_STATS; i++) {
		snprintf(sh->stats[i].name, sizeof(sh->stats[i].name), "%s", st[i].name);
		sh->stats[i].value = st[i].value;
	}
	sh->nstats = n < SB_MAX_STATS ? n : SB_MAX_STATS;
}

/* The process's snapshots (integrity.h): static, the child is a process of its own. */
static struct sb_integrity child_integ;

/* The child: never returns. */
static void child_main(const struct run_spec *spec, struct sb_sink *sink, struct run_shared *sh,
		       struct wl_pauses *pauses)
{
	const struct sampler *s = spec->sampler;
	char why[SB_REASON_LEN] = "";
	struct sb_config cfg = {
		.hz = spec->hz,
		.threads = spec->threads,
		.duration_s = spec->duration_s,
		.seed = spec->seed,
		.max_depth = spec->max_depth ? spec->max_depth : SB_MAX_FRAMES,
		.idle_skip = spec->idle_skip,
		.rt_priority = spec->rt_priority,
		.target_pid = 0,
		.tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
	};
	struct wl_ctx ctx = {
		.threads = spec->threads,
		.duration_s = spec->duration_s,
		.seed = spec->seed,
		.param = spec->param,
		.sample_hz = spec->hz,
		.truth = sh->truth,
		.pauses = pauses,
		.stack_kb = spec->stack_kb,
	};

	signal(SIGINT, SIG_DFL);
	if (wl_integrity_install() != 0) {
		child_fail(sh, SB_RUN_FAILED, "cannot install the program's signal handler: %s",
			   strerror(errno));
		_exit(1);
	}
	sh->rss_start = rssmon_private_bytes(0);
	sb_thread_begin(-1);
	if (s->available && s->available(why, sizeof(why)) != 0) {
		child_fail(sh, SB_RUN_SKIPPED, "%s", why);
		_exit(0);
	}
	sb_active_sampler = s;
	atomic_store(&sh->phase, PH_STARTING);
	sb_integrity_timer_arm(&child_integ);
	sb_integrity_snap(&child_integ, SB_SNAP_BEFORE);
	uint64_t harness_ns = process_cpu_ns();
	if (s->start(&cfg, sink) != 0) {
		child_fail(sh, SB_RUN_FAILED, "sampler start failed: %s", strerror(errno));
		_exit(1);
	}
	atomic_store(&sh->phase, PH_RUNNING);
	uint64_t main0 = sb_thread_cpu_ns(); /* from here the main thread's CPU is the harness's */
	sb_integrity_snap(&child_integ, SB_SNAP_STARTED);
	sh->rss_work_start = rssmon_private_bytes(0);
	sh->work_start_ns = sb_now_ns();
	int wrc = workload_run(spec->workload, &ctx);
	sh->work_end_ns = sb_now_ns();
	sh->rss_work_end = rssmon_private_bytes(0);
	sb_integrity_timer_disarm(&child_integ);
	sb_integrity_snap(&child_integ, SB_SNAP_WORKED);
	harness_ns += sb_thread_cpu_ns() - main0 + atomic_load(&ctx.aux_cpu_ns);
	atomic_store(&sh->phase, PH_STOPPING);
	if (s->stop() != 0 && sh->status == SB_RUN_OK)
		child_fail(sh, SB_RUN_FAILED, "sampler stop failed: %s", strerror(errno));
	uint64_t main2 = sb_thread_cpu_ns();
	sb_integrity_snap(&child_integ, SB_SNAP_STOPPED);
	sb_integrity_count(&child_integ, &sh->integ);
	sh->integ_done = 1;
	if (wrc != 0 && sh->status == SB_RUN_OK)
		child_fail(sh, SB_RUN_FAILED, "workload failed: %s", strerror(errno));
	if (s->stats)
		child_copy_stats(s, sh);
	sh->harness_cpu_ns = harness_ns + (sb_thread_cpu_ns() - main2);
	atomic_store(&sh->phase, PH_DONE);
	_exit(sh->status == SB_RUN_OK ? 0 : 1);
}

struct child_run_arg {
	const struct run_spec *spec;
	struct sb_sink *sink;
	struct run_shared *sh;
	struct wl_pauses *pauses;
};

static void child_body(void *p)
{
	const struct child_run_arg *a = p;
	child_main(a->spec, a->sink, a->sh, a->pauses);
}

/* Sizes the sink for the worst plausible rate: a wall sampler hits every thread every tick,
 * a CPU sampler at most nproc threads at once; x2 for overshoot. */
static void sink_size(const struct run_spec *spec, size_t *samples, size_t *frames)
{
	if (spec->sink_samples > 0) {
		*samples = spec->sink_samples;
		*frames = spec->sink_samples * 64;
		return;
	}
	long nproc = sysconf(_SC_NPROCESSORS_ONLN);
	double per_tick = spec->sampler->clock == SB_CLOCK_WALL ? spec->threads + 4
							       : (double)(nproc > 0 ? nproc : 1) + 1;
	double n = spec->hz * (spec->duration_s + 1) * per_tick * 2 + 4096;
	if (n > 4e6)
		n = 4e6;
	uint32_t depth = spec->max_depth ? spec->max_depth : SB_MAX_FRAMES;
	double f = n * (depth < 64 ? depth : 64);
	if (f > 32e6)
		f = 32e6;
	*samples = (size_t)n;
	*frames = (size_t)f;
}

/* Time the hypervisor gave this VM's CPUs to others, summed over CPUs, in ns (the `steal`
 * column of /proc/stat); NaN when unreadable. Host noise that no sampler can avoid. */
static double steal_ns_now(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = { 0 };
	double ns = NAN;

	if (!f)
		return NAN;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) == 8) {
		long hz = sysconf(_SC_CLK_TCK);
		ns = (double)v[7] * 1e9 / (double)(hz > 0 ? hz : 100);
	}
	fclose(f);
	return ns;
}

/* The progress clock's memory: WL_PAUSE_SLOTS slots, zero (anonymous), MAP_SHARED so the
 * parent reads what the child's threads wrote; untouched pages cost nothing. NULL when
 * SB_PROGRESS_CLOCK=0 (measuring the clock's own cost, docs/metrics.md) or on failure. */
static struct wl_pauses *pauses_map(void)
{
	const char *e = getenv("SB_PROGRESS_CLOCK");
	if (e && !strcmp(e, "0"))
		return NULL;
	void *p = mmap(NULL, WL_PAUSE_SLOTS * sizeof(struct wl_pauses), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Copies the slots' progress rows, histogram buckets and logged pauses into r. */
static int collect_pauses(const struct wl_pauses *pauses, struct sb_run *r)
{
	size_t nb = 0, ng = 0;

	for (int i = 0; i < WL_PAUSE_SLOTS; i++) {
		const struct wl_pauses *p = &pauses[i];
		if (!atomic_load(&p->steps))
			continue;
		for (unsigned b = 0; b < SB_PAUSE_BUCKETS; b++)
			nb += atomic_load(&p->hist[b]) != 0;
		uint64_t lg = atomic_load(&p->logged);
		ng += lg < WL_PAUSE_LOG ? lg : WL_PAUSE_LOG;
		r->nprogress++;
	}
	r->progress = calloc(r->nprogress + 1, sizeof(*r->progress));
	r->pause_hist = calloc(nb + 1, sizeof(*r->pause_hist));
	r->gaps = calloc(ng + 1, sizeof(*r->gaps));
	if (!r->progress || !r->pause_hist || !r->gaps)
		return -1;
	r->nprogress = 0;
	for (int i = 0; i < WL_PAUSE_SLOTS; i++) {
		const struct wl_pauses *p = &pauses[i];
		if (!atomic_load(&p->steps))
			continue;
		uint64_t lg = atomic_load(&p->logged);
		r->progress[r->nprogress++] = (struct sb_progress_row){
			.index = i,
			.active_ns = atomic_load(&p->active_ns),
			.steps = atomic_load(&p->steps),
			.step_ns = atomic_load(&p->step_ns),
			.pauses = atomic_load(&p->pauses),
			.pause_ns = atomic_load(&p->pause_ns),
			.logged = lg,
		};
		for (unsigned b = 0; b < SB_PAUSE_BUCKETS; b++) {
			uint32_t c = atomic_load(&p->hist[b]);
			if (c)
				r->pause_hist[r->npause_hist++] = (struct sb_pause_bucket){
					i, sb_pause_bucket_lo(b), sb_pause_bucket_lo(b + 1), c
				};
		}
		for (uint64_t k = 0; k < lg && k < WL_PAUSE_LOG; k++)
			r->gaps[r->ngaps++] = (struct sb_gap_row){ i, p->log[k].start_ns,
								   p->log[k].gap_ns,
								   p->log[k].pause_ns };
	}
	return 0;
}

static void rss_poll(void *arg, uint64_t polls)
{
	(void)polls;
	rssmon_poll(arg);
}

/* The child's memory and harness CPU as stats (docs/metrics.md "What the sampler costs the
 * process"): private resident bytes at its start and at its peak (the parent's looks and the
 * child's own readings at the work's edges), and their growth over the work. */
static void add_cost_stats(struct sb_run *r, const struct run_shared *sh, struct rssmon *rss)
{
	rssmon_add(rss, sh->work_start_ns, sh->rss_work_start);
	rssmon_add(rss, sh->work_end_ns, sh->rss_work_end);
	run_add_stat(r, "child_harness_cpu_ns",
		     atomic_load(&sh->phase) == PH_DONE ? (double)sh->harness_cpu_ns : NAN);
	run_add_stat(r, "rss_private_start_bytes", sh->rss_start);
	run_add_stat(r, "rss_private_peak_bytes", rss->peak);
	run_add_stat(r, "rss_private_growth_bytes_per_s",
		     rssmon_growth(rss, sh->work_start_ns, sh->work_end_ns));
}

/* The integrity counts as harness stats (metrics_compute makes them metrics): the threads'
 * own checks summed over slots (the stack's deepest use: the largest), with the process's
 * checks when the child got to make them. */
static void collect_integrity(const struct run_shared *sh, struct sb_run *r)
{
	double err = 0, mask = 0, sig = 0, peak = 0;

	for (int i = 0; i < SB_MAX_THREADS; i++) {
		const struct wl_truth *t = &sh->truth[i];
		err += (double)atomic_load(&t->integrity_errno);
		mask += (double)atomic_load(&t->integrity_sigmask);
		sig += (double)atomic_load(&t->integrity_signal);
		peak = fmax(peak, (double)atomic_load(&t->stack_peak));
	}
	run_add_stat(r, "integrity_errno", err);
	run_add_stat(r, "integrity_signal", sig + (sh->integ_done ? (double)sh->integ.timer : 0));
	run_add_stat(r, "stack_peak_bytes", peak > 0 ? peak : NAN);
	if (!sh->integ_done)
		return;
	run_add_stat(r, "integrity_sigmask", mask + (double)sh->integ.sigmask);
	run_add_stat(r, "integrity_sigaction", (double)sh->integ.sigaction);
	run_add_stat(r, "integrity_fd", (double)sh->integ.fd);
	run_add_stat(r, "fd_kept", (double)sh->integ.fd_kept);
	run_add_stat(r, "fd_inheritable", (double)sh->integ.fd_inheritable);
	run_add_stat(r, "timer_ticks", (double)sh->integ.timer_ticks);
	run_add_stat(r, "timer_expected", (double)sh->integ.timer_expected);
}

/* Truth kept as the run's stats: the work per declared function (wl_func_work) as
 * func_work_K, the truth of function_tvd where the workload measures its split, and the
 * threads' user and system time (truth_user_ns, truth_sys_ns), the truth of
 * kernel_true_fraction (analysis/metrics.c). */
static void collect_truth_stats(const struct workload *w, const struct wl_truth *truth,
				struct sb_run *r)
{
	uint64_t work[WL_MAX_FUNCS], user = 0, sys = 0;
	int n = wl_func_work(w, truth, work);

	for (int k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof(name), WL_FUNC_WORK_STAT, k);
		run_add_stat(r, name, (double)work[k]);
	}
	for (int i = 0; i < SB_MAX_THREADS; i++) {
		user += atomic_load(&truth[i].user_ns);
		sys += atomic_load(&truth[i].sys_ns);
	}
	if (user + sys > 0) {
		run_add_stat(r, "truth_user_ns", (double)user);
		run_add_stat(r, "truth_sys_ns", (double)sys);
	}
}

/* Copies what the child left in shared memory into r. */
static int collect(const struct run_spec *spec, const struct sb_sink *sink,
		   const struct run_shared *sh, const struct wl_pauses *pauses, struct sb_run *r,
		   const struct rusage *ru, double steal_ns, struct rssmon *rss)
{
	r->thread_rows = calloc(SB_MAX_THREADS, sizeof(*r->thread_rows));
	if (child_collect_sink(r, sink) != 0 || !r->thread_rows || run_alloc_stats(r) != 0 ||
	    (pauses && collect_pauses(pauses, r) != 0))
		return -1;

	for (int i = 0; i < SB_MAX_THREADS; i++) {
		const struct wl_truth *t = &sh->truth[i];
		if (i >= spec->threads && atomic_load(&t->os_threads) == 0)
			continue;
		struct sb_thread_row *row = &r->thread_rows[r->nthread_rows++];
		row->index = i;
		row->tid = atomic_load(&t->tid);
		row->os_threads = atomic_load(&t->os_threads);
		row->cpu_ns = atomic_load(&t->cpu_ns);
		row->alive_ns = atomic_load(&t->alive_ns);
		row->offcpu_ns = atomic_load(&t->offcpu_ns);
		row->ops = atomic_load(&t->ops);
		row->checksum_errors = atomic_load(&t->checksum_errors);
		row->eintr = atomic_load(&t->eintr);
		row->short_io = atomic_load(&t->short_io);
		row->weight_ns = NAN;
		/* the child's thread wrote it at its end; the child is gone: terminate it */
		memcpy(row->name, t->name, sizeof(row->name));
		row->name[sizeof(row->name) - 1] = 0;
	}
	/* keep the rows used: a bench holds every run's rows, SB_MAX_THREADS is 10,240 */
	struct sb_thread_row *fit = realloc(r->thread_rows, (r->nthread_rows + 1) * sizeof(*fit));
	if (fit)
		r->thread_rows = fit;
	for (int i = 0; i < sh->nstats; i++)
		run_add_stat(r, sh->stats[i].name, sh->stats[i].value);
	collect_truth_stats(spec->workload, sh->truth, r);
	run_add_stat(r, "sink_dropped", (double)atomic_load(&sink->dropped));
	collect_integrity(sh, r);
	if (spec->stack_kb > 0)
		run_add_stat(r, "stack_kb", (double)spec->stack_kb);
	child_add_rusage_stats(r, ru);
	run_add_stat(r, "host_steal_ns", steal_ns);
	add_cost_stats(r, sh, rss);
	return 0;
}

void run_init(struct sb_run *r, const struct run_spec *spec, int64_t run_id)
{
	memset(r, 0, sizeof(*r));
	metrics_clear(&r->metrics);
	r->run_id = run_id;
	snprintf(r->sampler, sizeof(r->sampler), "%s", spec->sampler->name);
	snprintf(r->workload, sizeof(r->workload), "%s", spec->workload->name);
	r->threads = spec->threads;
	r->hz = spec->hz;
	r->duration_s = spec->duration_s;
	r->repetition = spec->repetition;
	r->clock = spec->sampler->clock;
	iso_now(r->start_time, sizeof(r->start_time));
}

/* A wall-clock sampler samples every live thread every tick: the truth (each thread's
 * alive time x hz) says how many samples it owes. An ok run that took fewer than
 * SB_LOSSY_RATE of them is lossy, and says how many it lost, and whether the harness's
 * sink (sink: its room; it holds at most 4 million samples) dropped some: then the
 * loss is the harness's too. mach pushes one sample per thread per tick, 60 million
 * in a minute beside 10,000 threads. */
static void mark_lossy(struct sb_run *r, const struct sb_sink *sink)
{
	double w = r->metrics.wall_rate_accuracy;
	uint64_t dropped = atomic_load(&sink->dropped);
	int n;

	if (r->status != SB_RUN_OK || r->clock != SB_CLOCK_WALL || isnan(w) || w >= SB_LOSSY_RATE)
		return;
	r->status = SB_RUN_LOSSY;
	n = snprintf(r->reason, sizeof(r->reason),
		     "lost %.0f %% of the samples its rate owes the threads' lives (%.0f of %.0f taken)",
		     100 * (1 - w), r->metrics.nsamples, r->metrics.nsamples / w);
	if (dropped > 0 && n > 0 && (size_t)n < sizeof(r->reason))
		snprintf(r->reason + n, sizeof(r->reason) - (size_t)n,
			 "; the harness's sink was full: %zu held, %llu dropped", sink->sample_cap,
			 (unsigned long long)dropped);
}

/* r's status and reason from how its child ended (ex; limit: the watchdog's seconds) and
 * what it reported in sh: killed by the watchdog or an interruption, by a signal, a
 * non-zero exit, or a wrong workload checksum fail the run. */
static void judge_exit(struct sb_run *r, const struct run_shared *sh, const struct child_exit *ex,
		       double limit)
{
	int status = ex->status, killed = ex->killed, interrupted = ex->interrupted;

	r->status = sh->status;
	snprintf(r->reason, sizeof(r->reason), "%s", sh->reason);
	if (killed) {
		r->status = SB_RUN_FAILED;
		if (interrupted)
			snprintf(r->reason, sizeof(r->reason), "interrupted during %s",
				 phase_name(atomic_load(&sh->phase)));
		else
			snprintf(r->reason, sizeof(r->reason),
				 "watchdog: no exit after %.1f s, stuck in %s (deadlock suspected)",
				 limit, phase_name(atomic_load(&sh->phase)));
	} else if (WIFSIGNALED(status)) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "child killed by signal %s during %s",
			 plat_signal_name(WTERMSIG(status)) ? plat_signal_name(WTERMSIG(status)) : "?",
			 phase_name(atomic_load(&sh->phase)));
	} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && r->status == SB_RUN_OK) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "child exited with status %d during %s",
			 WEXITSTATUS(status), phase_name(atomic_load(&sh->phase)));
	}
	if (r->status == SB_RUN_OK) {
		uint64_t checksum = 0;
		for (int i = 0; i < SB_MAX_THREADS; i++)
			checksum += atomic_load(&sh->truth[i].checksum_errors);
		if (checksum) {
			r->status = SB_RUN_FAILED;
			snprintf(r->reason, sizeof(r->reason),
				 "workload checksum wrong in %llu units (register corruption?)",
				 (unsigned long long)checksum);
		}
	}
}

int runner_run(const struct run_spec *spec, int64_t run_id, struct sb_run *r)
{
	struct sb_sink *sink = NULL;
	struct run_shared *sh = MAP_FAILED;
	struct wl_pauses *pauses = NULL;
	size_t ns, nf;
	int rc = -1;

	run_init(r, spec, run_id);

	sink_size(spec, &ns, &nf);
	sink = sink_create(ns, nf);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!sink || sh == MAP_FAILED)
		goto cleanup;
	memset(sh, 0, sizeof(*sh));
	pauses = pauses_map();

	double steal0 = steal_ns_now();
	struct child_run_arg arg = { spec, sink, sh, pauses };
#ifdef __GLIBC__
	/* The child inherits this process's heap: free chunks left resident by earlier runs
	 * would take its allocations without a new page, hiding them from its private RSS
	 * (gperftools' start: 8.5 MB in the first run of a file, 0.15 MB in the next ones).
	 * Handing them back first makes every run's child start alike. */
	malloc_trim(0);
#endif
	struct child child;
	if (child_start(&child, 1, child_body, &arg) != 0)
		goto cleanup;
	static struct rssmon rss; /* 16 KB: not on the stack */
	rssmon_init(&rss, child.pid);

	double limit = spec->watchdog_s > 0 ? spec->watchdog_s
					    : spec->duration_s + fmax(5.0, spec->duration_s);
	struct child_wait_opts wopts = {
		.timeout_s = limit,
		.interrupted = &runner_interrupted,
		.poll_ns = RUNNER_POLL_NS,
		.poll = rss_poll,
		.arg = &rss,
	};
	struct child_exit ex;
	child_wait(&child, &wopts, &ex); /* wait4 failing: recorded as what is known */
	rssmon_close(&rss);
	struct rusage ru = ex.ru;

	judge_exit(r, sh, &ex, limit);
	if (sh->work_end_ns > sh->work_start_ns)
		r->wall_s = (double)(sh->work_end_ns - sh->work_start_ns) / 1e9;
	if (collect(spec, sink, sh, pauses, r, &ru, steal_ns_now() - steal0, &rss) != 0) {
		run_free(r);
		goto cleanup;
	}
	/* Same layout as the child (fork without exec): resolve its PCs here, once. */
	if (r->nframes > 0) {
		struct sb_symbolizer *sym = symbolizer_new();
		if (sym &&
		    symbolize_frames(sym, r->frames, r->nframes, &r->symbols, &r->nsymbols) == 0)
			symbolize_run_inlines(sym, r);
		symbolizer_free(sym);
	}
	if (r->status != SB_RUN_SKIPPED)
		metrics_compute(r, spec->workload);
	mark_lossy(r, sink);
	rc = 0;
cleanup:
	if (sh != MAP_FAILED)
		munmap(sh, sizeof(*sh));
	if (pauses)
		munmap(pauses, WL_PAUSE_SLOTS * sizeof(*pauses));
	sink_destroy(sink);
	return rc;
}
