/* mach_scaling.c - per-tick cost of the `mach` sampler for 1..256 busy threads, against
 * this host's floors measured in the same run.
 *
 *   make build/mach_scaling      (also run by `make bench PROFILE=full`)
 *   build/mach_scaling [--hz F] [--seconds S] [--idle] [--no-rt] [N...]
 *
 * First it calibrates the host (harness/calibrate.h) and prints the floors. Then for each
 * N it spins N threads in their slot leaves, samples them for S seconds and prints one
 * row: ticks done/planned, the wall rate (samples of the N threads / (N x planned
 * ticks)), the thread-ticks lost (timeouts and withdrawn deferrals), the share of samples
 * the threads took themselves (deferred: they waited for a CPU), stop latency and suspend
 * window percentiles (of the samples that stopped a thread), the sampler's CPU per tick
 * and per thread-sample, its CPU share, and the same as ratios to the floors: window p50
 * / rendezvous p50, window p99 / rendezvous p99, CPU per tick / (N x syscall p50). Last,
 * the least-squares slope of CPU per tick against N, in us per thread. Absolute us move
 * 2-4x between hosts; the ratios are what compares. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/metrics.h"
#include "harness/calibrate.h"
#include "harness/host.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"
#include "workloads/workload.h"

extern const struct sampler sampler_mach;

static _Atomic int stop_work;

static void *spin(void *arg)
{
	int index = (int)(intptr_t)arg;
	sb_thread_begin(index < SB_MAX_THREADS ? index : -1);
	while (!atomic_load_explicit(&stop_work, memory_order_relaxed))
		wl_slot_work(index, 42, 2000);
	sb_thread_end();
	return NULL;
}

static double stat(const char *name)
{
	struct sb_stat st[SB_MAX_STATS];
	int n = sampler_mach.stats(st, SB_MAX_STATS);
	for (int i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			return st[i].value;
	return NAN;
}

/* What a run of mach_scaling is asked: rate, seconds per N, idle skip, RT priority, the
 * thread counts. */
struct opts {
	double hz, seconds;
	int idle, rt;
	int ns[16], nn;
};

/* Parses the command line into o (defaults: 100 Hz, 2 s, 1..256 threads). Returns 0, or 2
 * (the exit code) after one error line. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const int def[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hz") && i + 1 < argc)
			o->hz = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			o->seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--idle"))
			o->idle = 1;
		else if (!strcmp(argv[i], "--no-rt"))
			o->rt = 0;
		else if (o->nn < 16 && atoi(argv[i]) >= 1 && atoi(argv[i]) <= SB_MAX_THREADS)
			o->ns[o->nn++] = atoi(argv[i]);
		else {
			fprintf(stderr, "mach_scaling: bad argument '%s' (threads 1..%d)\n", argv[i],
				SB_MAX_THREADS);
			return 2;
		}
	}
	if (o->nn == 0)
		for (o->nn = 0; o->nn < (int)(sizeof(def) / sizeof(def[0])); o->nn++)
			o->ns[o->nn] = def[o->nn];
	return 0;
}

/* The host's floors the rows are divided by. */
struct floors {
	double w50, w99, sys; /* rendezvous p50 and p99, syscall p50 (ns) */
};

/* Samples n spinning threads with mach for o->seconds into sink, then prints their row
 * (v: room for the samples' values) and gives the sampler's CPU per tick (ns) in
 * *per_tick. Returns 0, or -1 when the sampler cannot start (after one error line). */
static int measure(const struct opts *o, int n, struct sb_sink *sink, double *v,
		   const struct floors *fl, double *per_tick)
{
	pthread_t t[256];
	struct sb_config cfg = { .hz = o->hz, .threads = n, .duration_s = o->seconds,
				 .max_depth = SB_MAX_FRAMES, .idle_skip = o->idle,
				 .rt_priority = o->rt };
	atomic_store(&sink->nsamples, 0);
	atomic_store(&sink->nframes, 0);
	atomic_store(&stop_work, 0);
	sb_active_sampler = &sampler_mach;
	for (int i = 0; i < n && i < 256; i++)
		pthread_create(&t[i], NULL, spin, (void *)(intptr_t)i);
	if (sampler_mach.start(&cfg, sink) != 0) {
		perror("mach_scaling: cannot start sampler");
		return -1;
	}
	struct timespec d = { (time_t)o->seconds, (long)((o->seconds - (time_t)o->seconds) * 1e9) };
	while (nanosleep(&d, &d) != 0) /* the rendezvous interrupts it: EINTR */
		;
	/* Workers first, as the harness does: a thread still waiting for a CPU when the
	 * sampler stops has not taken its deferred sample yet (its ticks are lost);
	 * one that runs to its end takes it on the way. */
	atomic_store(&stop_work, 1);
	for (int i = 0; i < n && i < 256; i++)
		pthread_join(t[i], NULL);
	sampler_mach.stop();

	size_t cnt = sink_count(sink), m = 0, mine = 0, deferred = 0;
	for (size_t i = 0; i < cnt; i++) {
		const struct sb_sample *smp = &sink->samples[i];
		if (smp->thread_index < 0)
			continue;
		mine++;
		deferred += (smp->flags & SB_SAMPLE_DEFERRED) != 0;
		if (!isnan(smp->suspend_window_ns))
			v[m++] = smp->stop_latency_ns;
	}
	double s50 = quantile(v, m, 0.5), s99 = quantile(v, m, 0.99);
	m = 0;
	for (size_t i = 0; i < cnt; i++)
		if (sink->samples[i].thread_index >= 0 && !isnan(sink->samples[i].suspend_window_ns))
			v[m++] = sink->samples[i].suspend_window_ns;
	double w50 = quantile(v, m, 0.5), w99 = quantile(v, m, 0.99);
	double ticks = stat("ticks_done"), cpu = stat("sampler_cpu_ns");
	double planned = stat("ticks_planned");
	*per_tick = cpu / ticks;
	printf("%4d %6.0f %6.0f %6.3f %7.0f %7.1f %8.1f %8.1f %8.1f %8.1f %9.1f %9.2f %7.3f "
	       "%7.2f %7.2f %8.1f\n",
	       n, ticks, planned, (double)mine / (n * planned),
	       stat("timeouts") + stat("deferred_lost"),
	       mine ? 100.0 * (double)deferred / (double)mine : 0.0, s50 / 1e3, s99 / 1e3,
	       w50 / 1e3, w99 / 1e3, *per_tick / 1e3, *per_tick / 1e3 / (n + 1),
	       100.0 * cpu / (o->seconds * 1e9), w50 / fl->w50, w99 / fl->w99,
	       *per_tick / (n * fl->sys));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .hz = 100, .seconds = 2, .rt = 1 };
	double sx = 0, sy = 0, sxx = 0, sxy = 0;

	if (parse_args(argc, argv, &o) != 0)
		return 2;
	static struct sb_host host;
	host_probe_calibrated(&host);
	struct floors fl = { host_fact(&host, "rendezvous_p50_ns"),
			     host_fact(&host, "rendezvous_p99_ns"),
			     host_fact(&host, "syscall_p50_ns") };
	printf("host %s (%s): floors syscall p50 %.2f us, futex_cross p50 %.1f us, "
	       "rendezvous p50 %.1f us p99 %.1f us, spin budget %.0f us\n",
	       host.fingerprint, host.kernel, fl.sys / 1e3,
	       host_fact(&host, "futex_cross_p50_ns") / 1e3, fl.w50 / 1e3, fl.w99 / 1e3,
	       host_fact(&host, "spin_budget_ns") / 1e3);
	struct sb_sink *sink = sink_create(1 << 20, 1 << 24);
	double *v = malloc(sizeof(double) << 20);
	if (!sink || !v) {
		fprintf(stderr, "mach_scaling: out of memory\n");
		return 1;
	}
	printf("%4s %6s %6s %6s %7s %7s %8s %8s %8s %8s %9s %9s %7s %7s %7s %8s\n", "thr", "ticks",
	       "planned", "rate", "lost", "defer%", "stp50us", "stp99us", "win50us", "win99us",
	       "cpu/tick", "us/thread", "cpu%", "w50/fl", "w99/fl", "tick/fl");
	for (int k = 0; k < o.nn; k++) {
		int n = o.ns[k];
		double per_tick;
		if (measure(&o, n, sink, v, &fl, &per_tick) != 0)
			return 1;
		sx += n;
		sy += per_tick;
		sxx += (double)n * n;
		sxy += n * per_tick;
	}
	if (o.nn >= 2) {
		double slope = (o.nn * sxy - sx * sy) / (o.nn * sxx - sx * sx);
		printf("cpu per tick grows %.2f us per thread (syscall floor p50 %.2f us, rendezvous "
		       "floor p50 %.1f us)\n", slope / 1e3, fl.sys / 1e3, fl.w50 / 1e3);
	}
	return 0;
}
