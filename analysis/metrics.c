/* metrics.c - every metric of a run, from its samples and its truth. Definitions are in
 * docs/metrics.md; keep the two in step. */
#include "analysis/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/chisq.h"
#include "analysis/pauses.h"
#include "analysis/symbolize.h"
#include "core/run.h"
#include "sampler/sampler.h"
#include "workloads/integrity.h"
#include "workloads/workload.h"

double tvd(const double *a, const double *b, size_t n)
{
	double sa = 0, sb = 0, d = 0;
	for (size_t i = 0; i < n; i++) {
		sa += a[i];
		sb += b[i];
	}
	if (sa <= 0 || sb <= 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		d += fabs(a[i] / sa - b[i] / sb);
	return d / 2;
}

/* Slot of a sample's leaf function, or -1 when the leaf is not a slot leaf. */
static int leaf_slot(const struct sb_run *r, const struct sb_sample *s)
{
	if (s->depth == 0 || s->frame_offset + s->depth > r->nframes)
		return -1;
	return wl_slot_of_pc(r->frames[s->frame_offset]);
}

/* Quantiles of one latency field over the samples the run counts: for wall samplers the
 * workload threads only, as for nsamples (the harness's own idle threads are not the
 * program under test). */
static void latency_quantiles(const struct sb_run *r, size_t field, double *p50, double *p99,
			      double *max)
{
	double *v = malloc((r->nsamples + 1) * sizeof(*v));
	size_t n = 0;
	if (!v)
		return;
	for (size_t i = 0; i < r->nsamples; i++) {
		if (r->clock == SB_CLOCK_WALL && r->samples[i].thread_index < 0)
			continue;
		v[n++] = *(const double *)((const char *)&r->samples[i] + field);
	}
	*p50 = quantile(v, n, 0.5);
	*p99 = quantile(v, n, 0.99);
	*max = quantile(v, n, 1.0);
	free(v);
}

struct tsample {
	int slot;
	uint32_t ticks; /* sample_ticks(): a reused stack for several ticks, a period apart */
	uint64_t t;
};

static int cmp_tsample(const void *a, const void *b)
{
	const struct tsample *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot - y->slot;
	return (x->t > y->t) - (x->t < y->t);
}

/* Mean and stddev of the intervals between consecutive samples of the same thread. */
static void interval_stats(const struct sb_run *r, double *mean, double *sd)
{
	struct tsample *ts = malloc((r->nsamples + 1) * sizeof(*ts));
	size_t n = 0;
	if (!ts)
		return;
	for (size_t i = 0; i < r->nsamples; i++)
		/* UINT64_MAX: the mechanism has no timestamps (gperftools' format) */
		if (r->samples[i].thread_index >= 0 && r->samples[i].time_ns != UINT64_MAX)
			ts[n++] = (struct tsample){ r->samples[i].thread_index,
						    sample_ticks(&r->samples[i]), r->samples[i].time_ns };
	qsort(ts, n, sizeof(*ts), cmp_tsample);
	double sum = 0, sum2 = 0, period = r->hz > 0 ? 1e9 / r->hz : 0, end = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && ts[i].slot == ts[i - 1].slot) {
			double d = (double)ts[i].t - end;
			sum += d;
			sum2 += d * d;
			k++;
		}
		/* the ticks after the first of a reused stack: one period each */
		sum += (ts[i].ticks - 1) * period;
		sum2 += (ts[i].ticks - 1) * period * period;
		k += ts[i].ticks - 1;
		end = (double)ts[i].t + (ts[i].ticks - 1) * period;
	}
	if (k > 0) {
		*mean = sum / (double)k;
		double var = sum2 / (double)k - *mean * *mean;
		*sd = sqrt(var > 0 ? var : 0);
	}
	free(ts);
}

/* --- workload metrics: stack_correct_fraction, function_tvd, offcpu_* ---
 * Frames are matched to the workload's declared functions by name: the run's symbol table
 * names each frame PC, and the declared function addresses are named by symbolizing them
 * in this process (same binary). GCC clone suffixes (".isra.0", ".constprop.0", ...) are
 * ignored on both sides. */


/* Length of a function name without a GCC clone suffix. */
static size_t base_len(const char *name)
{
	const char *dot = strchr(name, '.');
	return dot ? (size_t)(dot - name) : strlen(name);
}

static int same_function(const char *a, const char *b)
{
	size_t la = base_len(a), lb = base_len(b);
	return la == lb && strncmp(a, b, la) == 0;
}

/* Names the NULL-terminated addresses fns[0..max) into names; returns how many, or -1 when
 * one could not be named (the metric then stays NaN). */
static int name_functions(struct sb_symbolizer *sym, const void *const *fns, int max,
			  char names[][SB_SYM_FUNC_LEN])
{
	int n = 0;
	for (; n < max && fns[n]; n++) {
		struct sb_symbol out;
		if (!symbolize(sym, (uint64_t)(uintptr_t)fns[n], &out))
			return -1;
		snprintf(names[n], SB_SYM_FUNC_LEN, "%s", out.function);
	}
	return n;
}

/* pc's frames as the source has them, innermost first, into out[0..max): the functions
 * inlined at pc (the run's inline chains, DWARF), then the function that holds it (its
 * symbol). Returns how many: 0 when no symbol names pc. */
static int logical_frames(const struct sb_run *r, uint64_t pc, const char **out, int max)
{
	const struct sb_symbol *sy = symbol_find(r->symbols, r->nsymbols, pc);
	size_t ninl = 0;
	int n = 0;

	if (!sy)
		return 0;
	const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, pc, &ninl);
	for (size_t d = 0; c && d < ninl && n < max - 1; d++)
		out[n++] = c[d].function;
	out[n++] = sy->function;
	return n;
}

/* Index of the name in names[0..n) that names pc's innermost frame among those named
 * (logical_frames), or -1. A PC in a declared function inlined into its caller is that
 * function's (the inline builds); one in a helper inlined into a declared function (a
 * system call wrapper, a progress tick) is the declared function's. */
static int match_name(const struct sb_run *r, uint64_t pc, char names[][SB_SYM_FUNC_LEN], int n)
{
	const char *fr[SB_INLINE_MAX_DEPTH + 1];
	int nfr = logical_frames(r, pc, fr, SB_INLINE_MAX_DEPTH + 1);

	for (int d = 0; d < nfr; d++)
		for (int k = 0; k < n; k++)
			if (same_function(fr[d], names[k]))
				return k;
	return -1;
}

/* function_tvd when a G-test of the leaf counts against the declared shares rejects them
 * at p < FUNCTION_FIT_P, else 0: a difference that noise explains is not a misfit, and one
 * too small to matter is judged by its size in the gate (ci/budgets). NaN with fewer than
 * FUNCTION_FIT_MIN samples in declared functions (no test). */
#define FUNCTION_FIT_P 0.001
#define FUNCTION_FIT_MIN 30
static double function_misfit(const double *cnt, const double *share, int k, double tvd_v)
{
	double n = 0, g = 0, tot = 0;
	for (int i = 0; i < k; i++) {
		n += cnt[i];
		tot += share[i];
	}
	if (n < FUNCTION_FIT_MIN || !(tot > 0) || k < 2)
		return NAN;
	for (int i = 0; i < k; i++) {
		double e = n * share[i] / tot;
		if (cnt[i] > 0)
			g += 2 * cnt[i] * log(cnt[i] / e);
	}
	return chisq_sf(g, k - 1) < FUNCTION_FIT_P ? tvd_v : 0;
}

/* 1 when pc is a kernel frame: a kernel address, or a frame the run's symbols name as the
 * kernel's (an imported profile's pseudo PC, analysis/import.h). */
static int frame_in_kernel(const struct sb_run *r, uint64_t pc)
{
	if (pc >= SB_KERNEL_ADDR_MIN)
		return 1;
	const struct sb_symbol *sy = symbol_find(r->symbols, r->nsymbols, pc);
	return sy && symbol_is_kernel(sy);
}

/* The true CPU share of each of w's n declared functions into share: the split the threads
 * measured (the run's func_work stats) where the workload measures it, else the declared
 * one. Returns 0, or -1 when a measured split is missing (a file without the stats: the
 * metric stays NaN). */
static int true_func_shares(const struct sb_run *r, const struct workload *w, int n,
			    double *share)
{
	double sum = 0;

	for (int k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof(name), WL_FUNC_WORK_STAT, k);
		share[k] = w->func_share_measured ? run_stat(r, name) : w->func_share[k];
		if (!(share[k] >= 0))
			return -1;
		sum += share[k];
	}
	if (!(sum > 0))
		return -1;
	for (int k = 0; k < n; k++)
		share[k] /= sum;
	return 0;
}

/* A truncated stack shorter than this many user frames is not judged as cut by a frame
 * limit: the shallowest limit of a built-in mechanism is libprofiler's 64 frames. */
#define CHAIN_CUT_MIN_FRAMES 64

enum chain_verdict { CHAIN_WRONG, CHAIN_RIGHT, CHAIN_UNWALKABLE };

/* Judges one sample's user frames f[leaf..depth) against the workload's chain, each frame
 * read as its logical frames (a function inlined into it counts as a frame). A leaf in a
 * known module other than `own` (the workload's code, in each of its builds: a walk by
 * frame records that loses the callers in the nofp build is wrong there) is unwalkable:
 * it lies in code without frame pointers (glibc's malloc, futex and barrier waits), whose
 * caller's return address is in no frame record, so a frame-pointer walk cannot recover
 * the caller and the sample says nothing about the chain. A leaf that no module holds is
 * judged (a wrong PC is wrong). A stack flagged truncated and at least
 * CHAIN_CUT_MIN_FRAMES deep holds the chain when it holds its leaf-side part, in order, up
 * to where its frames end (deep's 200 frames against perf's 127-frame limit). */
static enum chain_verdict judge_chain(const struct sb_run *r, const struct sb_sample *s,
				      const uint64_t *f, uint32_t leaf,
				      char chain[][SB_SYM_FUNC_LEN], int nchain, const char *own)
{
	const struct sb_symbol *sy = symbol_find(r->symbols, r->nsymbols, f[leaf]);
	if (sy && symbol_module_known(sy) && !symbol_is_kernel(sy) && strcmp(sy->module, own) != 0)
		return CHAIN_UNWALKABLE;
	int next = 0;
	for (uint32_t d = leaf; d < s->depth && next < nchain; d++) {
		const char *fr[SB_INLINE_MAX_DEPTH + 1];
		int nfr = logical_frames(r, f[d], fr, SB_INLINE_MAX_DEPTH + 1);
		for (int i = 0; i < nfr && next < nchain; i++)
			if (same_function(fr[i], chain[next]))
				next++;
	}
	if (next == nchain)
		return CHAIN_RIGHT;
	if ((s->flags & SB_SAMPLE_TRUNCATED) && next > 0 &&
	    s->depth - leaf >= CHAIN_CUT_MIN_FRAMES)
		return CHAIN_RIGHT;
	return CHAIN_WRONG;
}

/* Samples counted: those on workload threads (slot known), except for function_tvd, which
 * counts every sample whose leaf is a declared function. A sample's leaf is its first
 * user-space frame. stack_correct_fraction judges the walkable samples (judge_chain),
 * stack_unwalkable_fraction counts the others. See docs/metrics.md, "Workload metrics". */
static void workload_metrics(struct sb_run *r, const struct workload *w, double true_alive,
			     double true_offcpu)
{
	struct sb_metrics *m = &r->metrics;
	char chain[WL_MAX_CHAIN][SB_SYM_FUNC_LEN], funcs[WL_MAX_FUNCS][SB_SYM_FUNC_LEN];
	char offcpu[WL_MAX_FUNCS][SB_SYM_FUNC_LEN];
	double fcnt[WL_MAX_FUNCS] = { 0 };
	char own[SB_SYM_MODULE_LEN] = "";
	char harness[WL_INTEGRITY_FUNCS][SB_SYM_FUNC_LEN];
	size_t total = 0, correct = 0, judged = 0, unwalkable = 0, off = 0;
	int nchain, nfuncs, noffcpu, nharness;

	if (!w)
		return;
	if (w->offcpu[0] && true_alive > 0)
		m->offcpu_true_fraction = true_offcpu / true_alive;
	if (!r->symbols || (!w->chain[0] && !w->funcs[0] && !w->offcpu[0]))
		return;
	struct sb_symbolizer *sym = symbolizer_new();
	if (!sym)
		return;
	nchain = name_functions(sym, w->chain, WL_MAX_CHAIN, chain);
	struct sb_symbol own_sym;
	if (nchain > 0 && symbolize(sym, (uint64_t)(uintptr_t)w->chain[0], &own_sym))
		snprintf(own, sizeof(own), "%s", own_sym.module);
	else
		nchain = 0; /* the chain's module unknown: the metric stays NaN */
	nfuncs = name_functions(sym, w->funcs, WL_MAX_FUNCS, funcs);
	noffcpu = name_functions(sym, w->offcpu, WL_MAX_FUNCS, offcpu);
	nharness = name_functions(sym, wl_integrity_funcs, WL_INTEGRITY_FUNCS, harness);
	symbolizer_free(sym);

	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		if (s->frame_offset + s->depth > r->nframes)
			continue;
		const uint64_t *f = &r->frames[s->frame_offset];
		uint32_t leaf = 0, n = sample_ticks(s); /* a reused stack counts for its ticks */
		while (leaf < s->depth && frame_in_kernel(r, f[leaf]))
			leaf++;
		/* A leaf in a declared function is a workload thread's whatever the sample's
		 * thread id says: samplers without thread ids (gperftools) count too. */
		int k = nfuncs > 0 && leaf < s->depth ? match_name(r, f[leaf], funcs, nfuncs) : -1;
		if (k >= 0)
			fcnt[k] += n;
		if (s->thread_index < 0 || s->thread_index >= SB_MAX_THREADS)
			continue;
		total += n;
		if (leaf == s->depth) {
			judged += n; /* no user frame at all: not a walk that lost its way */
			continue;
		}
		/* the harness's own checks at the thread's start and end: no chain to judge */
		if (nharness > 0 && match_name(r, f[leaf], harness, nharness) >= 0)
			continue;
		/* The chain must appear leaf-side first, in order; other frames may sit between. */
		enum chain_verdict v = nchain > 0 ? judge_chain(r, s, f, leaf, chain, nchain, own)
						  : CHAIN_WRONG;
		unwalkable += v == CHAIN_UNWALKABLE ? n : 0;
		judged += v != CHAIN_UNWALKABLE ? n : 0;
		correct += v == CHAIN_RIGHT ? n : 0;
		if (noffcpu > 0 && match_name(r, f[leaf], offcpu, noffcpu) >= 0)
			off += n;
	}
	double share[WL_MAX_FUNCS];
	if (nfuncs > 0 && true_func_shares(r, w, nfuncs, share) == 0) {
		m->function_tvd = tvd(fcnt, share, (size_t)nfuncs);
		m->function_misfit = function_misfit(fcnt, share, nfuncs, m->function_tvd);
	}
	if (total == 0)
		return;
	if (nchain > 0) {
		m->stack_unwalkable_fraction = (double)unwalkable / (double)total;
		if (judged > 0)
			m->stack_correct_fraction = (double)correct / (double)judged;
	}
	if (noffcpu > 0)
		m->offcpu_sample_fraction = (double)off / (double)total;
}

/* Kernel time: kernel_sample_fraction, the share of the samples counted (a wall
 * sampler's: those on workload threads) whose leaf frame is the kernel's (a stack's kernel
 * frames come first), NaN when no sample has one: the mechanism gives no kernel frames,
 * or the host does not let it; kernel_true_fraction, the threads' system time over their
 * user and system time, as the kernel split it (truth_* stats, from getrusage). */
static void kernel_metrics(struct sb_run *r, int wall)
{
	size_t n = 0, kern = 0;

	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		if (wall && (s->thread_index < 0 || s->thread_index >= SB_MAX_THREADS))
			continue;
		n += sample_ticks(s);
		if (s->depth > 0 && s->frame_offset + s->depth <= r->nframes &&
		    frame_in_kernel(r, r->frames[s->frame_offset]))
			kern += sample_ticks(s);
	}
	if (kern > 0)
		r->metrics.kernel_sample_fraction = (double)kern / (double)n;
	double user = run_stat(r, "truth_user_ns"), sys = run_stat(r, "truth_sys_ns");
	if (user + sys > 0)
		r->metrics.kernel_true_fraction = sys / (user + sys);
}

/* What the sampler costs the process (docs/metrics.md): the run child's CPU from wait4
 * (its reaped tracer or probe included) less the workload threads' truth and the harness's
 * own clocked parts, against the sampler's claim; its private memory from the harness's
 * stats. NaN where a stat is missing (exec and tool runs, older files). A tool's run has
 * its own measure instead: its processes' CPU per sample (stat tool_cpu_ns). */
static void cost_metrics(struct sb_run *r, double true_cpu)
{
	struct sb_metrics *m = &r->metrics;
	double child = run_stat(r, "child_utime_ns") + run_stat(r, "child_stime_ns");
	double measured = child - run_stat(r, "child_harness_cpu_ns") - true_cpu;
	double claimed = run_stat(r, "sampler_cpu_ns");
	double wall = r->wall_s * 1e9;

	m->sampler_cpu_measured_ns = measured;
	if (!isnan(measured) && wall > 0) {
		m->sampler_cpu_measured_fraction = measured / wall;
		if (!isnan(claimed))
			m->sampler_cpu_unreported_fraction = (measured - claimed) / wall;
	}
	double tool = run_stat(r, "tool_cpu_ns"); /* harness/tool_run.c */
	if (r->nsamples > 0)
		m->tool_cpu_per_sample_ns = tool / (double)r->nsamples;
	double peak = run_stat(r, "rss_private_peak_bytes");
	double start = run_stat(r, "rss_private_start_bytes");
	m->rss_peak_bytes = peak - start;
	m->rss_growth_bytes_per_s = run_stat(r, "rss_private_growth_bytes_per_s");
}

/* The integrity counts (docs/metrics.md, "Integrity") from the harness stats the runner
 * wrote (harness/integrity.h, workloads/integrity.h); NaN where a run has no such stat
 * (exec, tools, older files). integrity_violations sums the kinds that were checked. */
static void integrity_metrics(struct sb_run *r)
{
	struct sb_metrics *m = &r->metrics;
	static const struct { const char *stat; size_t off; } kinds[] = {
		{ "integrity_errno", offsetof(struct sb_metrics, integrity_errno) },
		{ "integrity_sigmask", offsetof(struct sb_metrics, integrity_sigmask) },
		{ "integrity_sigaction", offsetof(struct sb_metrics, integrity_sigaction) },
		{ "integrity_signal", offsetof(struct sb_metrics, integrity_signal) },
		{ "integrity_fd", offsetof(struct sb_metrics, integrity_fd) },
	};
	double sum = NAN;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		double v = run_stat(r, kinds[i].stat);
		*(double *)((char *)m + kinds[i].off) = v;
		if (!isnan(v))
			sum = isnan(sum) ? v : sum + v;
	}
	m->integrity_violations = sum;
	m->stack_peak_bytes = run_stat(r, "stack_peak_bytes");
}

/* Per-thread sums of metrics_compute, one bucket per slot plus one (SB_MAX_THREADS) for
 * samples on no workload thread, whose true share is 0. */
struct thread_sums {
	double cnt[SB_MAX_THREADS + 1], wsum[SB_MAX_THREADS + 1];
	double cpu[SB_MAX_THREADS + 1], alive[SB_MAX_THREADS + 1];
	double ops[SB_MAX_THREADS + 1];
};

/* busy_rate_accuracy: the samples of the busy threads over their expected samples (wall:
 * alive time, CPU view: CPU time), NaN with none busy. Busy, by the program's own
 * account: it did work units (ops), and lived at least half as long as the longest-lived
 * thread (not its CPU share: 10,000 threads starting beside the busy ones halve their
 * share, and the last to start live a few ms, all of it on a CPU). */
static double busy_rate(const struct thread_sums *ts, double hz, int wall)
{
	double got = 0, want = 0, longest = 0;

	for (int i = 0; i < SB_MAX_THREADS; i++)
		longest = fmax(longest, ts->alive[i]);
	for (int i = 0; i < SB_MAX_THREADS; i++) {
		if (!(ts->alive[i] > 0) || ts->alive[i] < 0.5 * longest || !(ts->ops[i] > 0))
			continue;
		got += ts->cnt[i];
		want += (wall ? ts->alive[i] : ts->cpu[i]) / 1e9 * hz;
	}
	return want > 0 ? got / want : NAN;
}

void metrics_compute(struct sb_run *r, const struct workload *w)
{
	struct sb_metrics *m = &r->metrics;
	/* ~330 KB: on the heap */
	struct thread_sums *ts = calloc(1, sizeof(*ts));
	double true_cpu = 0, true_alive = 0, weights = 0, checksum_errors = 0;
	double eintr = 0, short_io = 0, true_offcpu = 0;
	size_t weighted = 0, truncated = 0, slotted = 0, misattributed = 0;
	int wall = r->clock == SB_CLOCK_WALL;

	metrics_clear(m);
	if (!ts)
		return;
	double *cnt = ts->cnt, *wsum = ts->wsum, *cpu = ts->cpu, *alive = ts->alive;
	for (size_t i = 0; i < r->nthread_rows; i++) {
		struct sb_thread_row *t = &r->thread_rows[i];
		if (t->index < 0 || t->index >= SB_MAX_THREADS)
			continue;
		cpu[t->index] = (double)t->cpu_ns;
		alive[t->index] = (double)t->alive_ns;
		ts->ops[t->index] = (double)t->ops;
		true_cpu += (double)t->cpu_ns;
		true_alive += (double)t->alive_ns;
		checksum_errors += (double)t->checksum_errors;
		eintr += (double)t->eintr;
		short_io += (double)t->short_io;
		true_offcpu += (double)t->offcpu_ns;
		t->samples = 0;
		t->weight_ns = 0;
	}

	size_t counted = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		int idx = s->thread_index;
		int b = (idx >= 0 && idx < SB_MAX_THREADS) ? idx : SB_MAX_THREADS;
		/* Wall samplers sample idle non-workload threads by design: leave those out. */
		if (wall && b == SB_MAX_THREADS)
			continue;
		/* a reused stack may stand for several ticks of an idle thread */
		uint32_t n = sample_ticks(s);
		counted += n;
		cnt[b] += n;
		if (!isnan(s->weight_ns)) {
			wsum[b] += s->weight_ns;
			weights += s->weight_ns;
			weighted++;
		}
		if (s->flags & SB_SAMPLE_TRUNCATED)
			truncated += n;
		int ls = leaf_slot(r, s);
		if (ls >= 0) {
			slotted++;
			/* beyond WL_SLOT_FNS threads a leaf names its slot modulo WL_SLOT_FNS */
			if (ls != (idx >= 0 ? idx % WL_SLOT_FNS : idx))
				misattributed++;
		}
	}
	for (size_t i = 0; i < r->nthread_rows; i++) {
		struct sb_thread_row *t = &r->thread_rows[i];
		if (t->index >= 0 && t->index < SB_MAX_THREADS) {
			t->samples = (uint64_t)cnt[t->index];
			t->weight_ns = weighted ? wsum[t->index] : NAN;
		}
	}

	m->busy_rate_accuracy = busy_rate(ts, r->hz, wall);
	m->nsamples = (double)counted;
	m->checksum_errors = checksum_errors;
	if (wall) {
		m->expected_samples = true_alive / 1e9 * r->hz;
		m->wall_rate_accuracy = m->expected_samples > 0 ? counted / m->expected_samples : NAN;
		m->rate_accuracy = m->wall_rate_accuracy;
		m->wall_thread_tvd = tvd(cnt, alive, SB_MAX_THREADS + 1);
		m->thread_tvd = weighted ? tvd(wsum, cpu, SB_MAX_THREADS + 1) : NAN;
	} else {
		m->expected_samples = true_cpu / 1e9 * r->hz;
		m->rate_accuracy = m->expected_samples > 0 ? counted / m->expected_samples : NAN;
		m->thread_tvd = tvd(cnt, cpu, SB_MAX_THREADS + 1);
	}
	free(ts);
	if (weighted > 0) {
		double mx = fmax(weights, true_cpu);
		m->magnitude_error = mx > 0 ? fabs(weights - true_cpu) / mx : NAN;
	}
	if (slotted > 0)
		m->misattributed_fraction = (double)misattributed / (double)slotted;
	if (counted > 0) {
		m->truncated_fraction = (double)truncated / (double)counted;
		m->eintr_per_1k_samples = eintr * 1000.0 / (double)counted;
		m->short_io_per_1k_samples = short_io * 1000.0 / (double)counted;
	}
	latency_quantiles(r, offsetof(struct sb_sample, stop_latency_ns), &m->stop_latency_p50_ns,
			  &m->stop_latency_p99_ns, &m->stop_latency_max_ns);
	latency_quantiles(r, offsetof(struct sb_sample, suspend_window_ns),
			  &m->suspend_window_p50_ns, &m->suspend_window_p99_ns,
			  &m->suspend_window_max_ns);
	interval_stats(r, &m->interval_mean_ns, &m->interval_jitter_ns);
	metrics_pauses(r);

	workload_metrics(r, w, true_alive, true_offcpu);
	kernel_metrics(r, wall);

	double sampler_cpu = run_stat(r, "sampler_cpu_ns");
	if (!isnan(sampler_cpu) && r->wall_s > 0)
		m->sampler_cpu_fraction = sampler_cpu / (r->wall_s * 1e9);
	cost_metrics(r, true_cpu);
	integrity_metrics(r);
}

/* host fact name, or NaN when absent or not positive */
static double floor_of(const struct sb_host *h, const char *mech, const char *stat)
{
	char name[SB_NAME_LEN];

	snprintf(name, sizeof(name), "%s_%s_ns", mech, stat);
	double v = host_fact(h, name);
	return v > 0 ? v : NAN;
}

void metrics_floor_ratios(struct sb_run *r, const struct sb_host *h, int external)
{
	struct sb_metrics *m = &r->metrics;
	double ticks = run_stat(r, external ? "ticks" : "ticks_done");
	double cpu = run_stat(r, "sampler_cpu_ns");

	m->sampler_cpu_per_tick_ns = ticks > 0 && cpu >= 0 ? cpu / ticks : NAN;
	m->stop_latency_p99_floor_ratio = NAN;
	m->suspend_window_p50_floor_ratio = NAN;
	m->suspend_window_p99_floor_ratio = NAN;
	m->sampler_cpu_per_tick_floor_ratio = NAN;
	/* Only a sampler that stops threads from a sampler thread or process has a floor:
	 * a signal handler's run time (itimer, ctimer) is not a rendezvous. */
	if (r->clock != SB_CLOCK_WALL)
		return;
	const char *stop = external ? "ptrace_interrupt" : "rendezvous_stop";
	const char *whole = external ? "ptrace_interrupt" : "rendezvous";
	m->stop_latency_p99_floor_ratio = m->stop_latency_p99_ns / floor_of(h, stop, "p99");
	m->suspend_window_p50_floor_ratio = m->suspend_window_p50_ns / floor_of(h, whole, "p50");
	m->suspend_window_p99_floor_ratio = m->suspend_window_p99_ns / floor_of(h, whole, "p99");
	/* The least a tick can cost: one system call per stopped thread (tgkill or
	 * PTRACE_INTERRUPT). */
	if (r->threads > 0)
		m->sampler_cpu_per_tick_floor_ratio =
			m->sampler_cpu_per_tick_ns / (floor_of(h, "syscall", "p50") * r->threads);
}

void metrics_cost_excess(struct sb_run *r, const struct sb_run *done, size_t ndone)
{
	double sum = 0;
	int k = 0;

	if (!strcmp(r->sampler, "none")) {
		r->metrics.rss_peak_excess_bytes = isnan(r->metrics.rss_peak_bytes) ? NAN : 0;
		return;
	}
	for (size_t i = 0; i < ndone; i++) {
		const struct sb_run *d = &done[i];
		/* a `none` of a variant is that variant's reference; one without is everyone's */
		if (strcmp(d->sampler, "none") || (d->variant[0] && strcmp(d->variant, r->variant)) ||
		    strcmp(d->workload, r->workload) || d->threads != r->threads ||
		    d->duration_s != r->duration_s || !run_scored(d->status) ||
		    isnan(d->metrics.rss_peak_bytes))
			continue;
		sum += d->metrics.rss_peak_bytes;
		k++;
	}
	r->metrics.rss_peak_excess_bytes = k ? r->metrics.rss_peak_bytes - sum / k : NAN;
}
