/* mach_scaling.c - what a tick of the `mach` and `mach-idle` samplers costs as threads are
 * added: busy threads (1..64), and idle threads beside two busy ones (0..10,000), against
 * this host's floors measured in the same run.
 *
 *   make build/mach_scaling      (also run by `make bench PROFILE=full`)
 *   build/mach_scaling [--hz F] [--seconds S] [--no-rt] [--busy N,...] [--idle N,...]
 *                      [--sampler mach|mach-idle|both]
 *
 * First it calibrates the host (harness/calibrate.h) and prints the floors. Then for each
 * cell it starts the threads (busy ones spin in their slot leaves, idle ones block in a
 * read of a pipe nobody writes to), waits until the idle ones are blocked, and only then
 * samples for S seconds: the rows are the steady state, not the start of thousands of
 * threads. One row per cell: ticks done/planned, the wall rate of the busy threads (their
 * samples / (busy x planned ticks)) and of all (a reused sample counts for its ticks),
 * the share of the busy threads' samples they took themselves (deferred: they waited for
 * a CPU), suspend window p50/p99 of the samples that stopped a thread, the sampler's CPU
 * per tick (mean, and the median tick), clocks read per tick, and the ratios to the
 * floors: window p99 / rendezvous p99, CPU per tick / (threads x syscall p50). Last, per
 * sampler, the least-squares slopes of CPU per tick (mean and median) against the busy
 * threads and against the idle threads. The mean holds the first samples of every thread
 * (mach-idle spreads them over ticks: MACH_FIRSTS_SHARE); the median is the steady tick
 * once the run is long enough (--seconds 6 at 10,000 threads). Absolute us move 2-4x
 * between hosts; the ratios are what compares. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "harness/calibrate.h"
#include "harness/host.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"
#include "workloads/workload.h"

#define MAX_CELLS 16
#define IDLE_STACK (64 << 10)
#define BUSY_IN_IDLE_CELLS 2

static _Atomic int stop_work;
static _Atomic int idle_blocked;
static int idle_pipe[2];

static void *spin(void *arg)
{
	int index = (int)(intptr_t)arg;
	sb_thread_begin(index);
	while (!atomic_load_explicit(&stop_work, memory_order_relaxed))
		wl_slot_work(index, 42, 2000);
	sb_thread_end();
	return NULL;
}

static void *idle(void *arg)
{
	char b;
	sb_thread_begin((int)(intptr_t)arg);
	atomic_fetch_add(&idle_blocked, 1);
	while (read(idle_pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	sb_thread_end();
	return NULL;
}

static double stat(const struct sampler *s, const char *name)
{
	struct sb_stat st[SB_MAX_STATS];
	int n = s->stats(st, SB_MAX_STATS);
	for (int i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			return st[i].value;
	return NAN;
}

/* What a run of mach_scaling is asked. */
struct opts {
	double hz, seconds;
	int rt;
	const struct sampler *samplers[2];
	int nsamplers;
	int busy[MAX_CELLS], nbusy;
	int idle[MAX_CELLS], nidle;
};

/* Parses "N,N,..." into out (at most MAX_CELLS, each lo..SB_MAX_THREADS - 2). Returns how
 * many, or -1. */
static int parse_list(const char *s, int *out, int lo)
{
	int n = 0;
	char *end;

	while (*s && n < MAX_CELLS) {
		long v = strtol(s, &end, 10);
		if (end == s || v < lo || v > SB_MAX_THREADS - BUSY_IN_IDLE_CELLS)
			return -1;
		out[n++] = (int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return *s ? -1 : n;
}

/* Parses the command line into o (defaults: 100 Hz, 2 s, both samplers, busy 1..64, idle
 * 0..10,000). Returns 0, or 2 (the exit code) after one error line. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const int busy[] = { 1, 2, 4, 8, 16, 32, 64 };
	static const int idle_def[] = { 0, 10, 100, 1000, 3000, 10000 };
	const char *which = "both";

	o->nbusy = o->nidle = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hz") && i + 1 < argc)
			o->hz = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			o->seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--no-rt"))
			o->rt = 0;
		else if (!strcmp(argv[i], "--sampler") && i + 1 < argc)
			which = argv[++i];
		else if (!strcmp(argv[i], "--busy") && i + 1 < argc && o->nbusy < 0)
			o->nbusy = parse_list(argv[++i], o->busy, 1);
		else if (!strcmp(argv[i], "--idle") && i + 1 < argc && o->nidle < 0)
			o->nidle = parse_list(argv[++i], o->idle, 0);
		else {
			fprintf(stderr, "mach_scaling: bad argument '%s'\n", argv[i]);
			return 2;
		}
		if ((o->nbusy == -1 && !strcmp(argv[i], "--busy")) ||
		    (o->nidle == -1 && !strcmp(argv[i], "--idle"))) {
			fprintf(stderr, "mach_scaling: bad thread list '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!(o->hz > 0) || !(o->seconds > 0)) {
		fprintf(stderr, "mach_scaling: --hz and --seconds must be positive\n");
		return 2;
	}
	if (o->nbusy < 0)
		for (o->nbusy = 0; o->nbusy < (int)(sizeof(busy) / sizeof(busy[0])); o->nbusy++)
			o->busy[o->nbusy] = busy[o->nbusy];
	if (o->nidle < 0)
		for (o->nidle = 0; o->nidle < (int)(sizeof(idle_def) / sizeof(idle_def[0])); o->nidle++)
			o->idle[o->nidle] = idle_def[o->nidle];
	if (!strcmp(which, "mach") || !strcmp(which, "both"))
		o->samplers[o->nsamplers++] = sampler_find("mach");
	if (!strcmp(which, "mach-idle") || !strcmp(which, "both"))
		o->samplers[o->nsamplers++] = sampler_find("mach-idle");
	if (o->nsamplers == 0 || !o->samplers[0] || (o->nsamplers == 2 && !o->samplers[1])) {
		fprintf(stderr, "mach_scaling: --sampler is mach, mach-idle or both\n");
		return 2;
	}
	return 0;
}

/* The host's floors the rows are divided by. */
struct floors {
	double w99, sys; /* rendezvous p99, syscall p50 (ns) */
};

/* Starts nbusy spinning and nidle blocked threads into t[]; returns when the idle ones are
 * in their read. Returns how many started. */
static int start_threads(pthread_t *t, int nbusy, int nidle)
{
	pthread_attr_t small;
	int n = 0;

	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, IDLE_STACK);
	atomic_store(&stop_work, 0);
	atomic_store(&idle_blocked, 0);
	for (int i = 0; i < nbusy; i++)
		n += pthread_create(&t[n], NULL, spin, (void *)(intptr_t)i) == 0;
	for (int i = 0; i < nidle; i++)
		n += pthread_create(&t[n], &small, idle, (void *)(intptr_t)(nbusy + i)) == 0;
	pthread_attr_destroy(&small);
	while (atomic_load(&idle_blocked) < n - nbusy)
		usleep(1000);
	usleep(20000); /* the last ones from the counter into their read */
	return n;
}

/* Samples with s for o->seconds, threads already running, into sink. */
static int sample(const struct opts *o, const struct sampler *s, int threads,
		  struct sb_sink *sink)
{
	struct sb_config cfg = { .hz = o->hz, .threads = threads, .duration_s = o->seconds,
				 .max_depth = SB_MAX_FRAMES, .rt_priority = o->rt };
	struct timespec d = { (time_t)o->seconds, (long)((o->seconds - (time_t)o->seconds) * 1e9) };

	atomic_store(&sink->nsamples, 0);
	atomic_store(&sink->nframes, 0);
	atomic_store(&sink->dropped, 0);
	sb_active_sampler = s;
	if (s->start(&cfg, sink) != 0) {
		perror("mach_scaling: cannot start sampler");
		return -1;
	}
	while (nanosleep(&d, &d) != 0) /* a rendezvous may interrupt it: EINTR */
		;
	s->stop();
	sb_active_sampler = NULL;
	return 0;
}

/* One cell: nbusy + nidle threads sampled by s; prints its row, gives CPU per tick (ns). */
static int measure(const struct opts *o, const struct sampler *s, int nbusy, int nidle,
		   struct sb_sink *sink, double *v, const struct floors *fl, double *per_tick,
		   double *median_tick)
{
	pthread_t *t = calloc((size_t)(nbusy + nidle), sizeof(*t));
	if (!t)
		return -1;
	int n = start_threads(t, nbusy, nidle);
	int rc = sample(o, s, n, sink);

	atomic_store(&stop_work, 1);
	close(idle_pipe[1]); /* every idle reader returns: end of file */
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	close(idle_pipe[0]);
	if (pipe(idle_pipe) != 0 || rc != 0)
		return -1;

	size_t cnt = sink_count(sink), m = 0;
	double busy = 0, all = 0, deferred = 0;
	for (size_t i = 0; i < cnt; i++) {
		const struct sb_sample *x = &sink->samples[i];
		if (x->thread_index < 0)
			continue;
		all += sample_ticks(x);
		if (x->thread_index < nbusy) {
			busy++;
			deferred += (x->flags & SB_SAMPLE_DEFERRED) != 0;
		}
		if (!isnan(x->suspend_window_ns))
			v[m++] = x->suspend_window_ns;
	}
	double w50 = quantile(v, m, 0.5), w99 = quantile(v, m, 0.99);
	double ticks = stat(s, "ticks_done"), planned = stat(s, "ticks_planned");
	*per_tick = stat(s, "sampler_cpu_ns") / ticks;
	*median_tick = stat(s, "tick_cpu_p50_ns");
	printf("%-9s %5d %5d %6.0f %6.0f %6.3f %6.3f %6.1f %8.1f %8.1f %9.1f %9.1f %8.1f %7.2f "
	       "%7.3f%s\n",
	       s->name, nbusy, nidle, ticks, planned, busy / (nbusy * planned),
	       all / (n * planned), busy ? 100.0 * deferred / busy : 0.0, w50 / 1e3, w99 / 1e3,
	       *per_tick / 1e3, stat(s, "tick_cpu_p50_ns") / 1e3, stat(s, "threads_read") / ticks,
	       w99 / fl->w99, *per_tick / (n * fl->sys),
	       atomic_load(&sink->dropped) ? "  (sink full: samples dropped)" : "");
	fflush(stdout);
	return 0;
}

/* Least-squares slope of y against x over n points, NaN with fewer than 2. */
static double slope(const double *x, const double *y, int n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += x[i] * x[i];
		sxy += x[i] * y[i];
	}
	return n >= 2 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : NAN;
}

/* Both series for sampler s; prints the two slopes. */
static int series(const struct opts *o, const struct sampler *s, struct sb_sink *sink,
		  double *v, const struct floors *fl)
{
	double x[MAX_CELLS], y[MAX_CELLS], m[MAX_CELLS], busy_slope, idle_slope, busy_m, idle_m;

	for (int k = 0; k < o->nbusy; k++) {
		x[k] = o->busy[k];
		if (measure(o, s, o->busy[k], 0, sink, v, fl, &y[k], &m[k]) != 0)
			return -1;
	}
	busy_slope = slope(x, y, o->nbusy);
	busy_m = slope(x, m, o->nbusy);
	for (int k = 0; k < o->nidle; k++) {
		x[k] = o->idle[k];
		if (measure(o, s, BUSY_IN_IDLE_CELLS, o->idle[k], sink, v, fl, &y[k], &m[k]) != 0)
			return -1;
	}
	idle_slope = slope(x, y, o->nidle);
	idle_m = slope(x, m, o->nidle);
	printf("%s: cpu per tick grows %.3f us per busy thread and %.4f us per idle thread; "
	       "the median tick %.3f and %.4f us (syscall floor p50 %.2f us)\n", s->name,
	       busy_slope / 1e3, idle_slope / 1e3, busy_m / 1e3, idle_m / 1e3, fl->sys / 1e3);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .hz = 100, .seconds = 2, .rt = 1 };

	if (parse_args(argc, argv, &o) != 0)
		return 2;
	static struct sb_host host;
	host_probe_calibrated(&host);
	struct floors fl = { host_fact(&host, "rendezvous_p99_ns"),
			     host_fact(&host, "syscall_p50_ns") };
	printf("host %s (%s): floors syscall p50 %.2f us, rendezvous p50 %.1f us p99 %.1f us\n",
	       host.fingerprint, host.kernel, fl.sys / 1e3,
	       host_fact(&host, "rendezvous_p50_ns") / 1e3, fl.w99 / 1e3);
	/* room for every thread sampled every tick (mach at 10,000 threads: 2 M in 2 s) */
	size_t cap = (size_t)(o.hz * (o.seconds + 1) * (SB_MAX_THREADS + 4));
	struct sb_sink *sink = sink_create(cap, cap * 8);
	double *v = malloc(cap * sizeof(double));
	if (!sink || !v || pipe(idle_pipe) != 0) {
		fprintf(stderr, "mach_scaling: out of memory\n");
		return 1;
	}
	printf("%-9s %5s %5s %6s %6s %6s %6s %6s %8s %8s %9s %9s %8s %7s %7s\n", "sampler",
	       "busy", "idle", "ticks", "plan", "rate", "all", "defer%", "win50us", "win99us",
	       "cpu/tick", "p50tick", "reads", "w99/fl", "tick/fl");
	for (int k = 0; k < o.nsamplers; k++)
		if (series(&o, o.samplers[k], sink, v, &fl) != 0)
			return 1;
	return 0;
}
