/* exec_print.c - the tables `sampbench exec` prints on stderr (exec_print.h). */
#include "harness/exec_print.h"

#include "analysis/symbolize.h"
#include "sampler/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXEC_TOP 12 /* functions in the side-by-side profile */

/* v with 3 decimals into buf, or "-" when not measured (NaN), as `run` prints it. */
static const char *fmt3(char *buf, size_t len, double v)
{
	if (isnan(v))
		return "-";
	snprintf(buf, len, "%.3f", v);
	return buf;
}

void exec_print_runs(FILE *out, const struct sb_run *runs, size_t n)
{
	fprintf(out, "%-14s %-10s %5s %8s %8s %9s %9s %10s %4s %7s %7s\n", "sampler", "status",
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
		char rate[16], magn[16], tvd[16];
		fprintf(out, "%-14s %-10s %5s %8.0f %8.0f %9s %9s %10s %4d %7.2f %7.2f",
			r->sampler, run_status_name(r->status), exitb,
			isnan(m->nsamples) ? 0 : m->nsamples, m->expected_samples,
			fmt3(rate, sizeof(rate), m->rate_accuracy),
			fmt3(magn, sizeof(magn), m->magnitude_error),
			fmt3(tvd, sizeof(tvd), m->thread_tvd), (int)r->nthread_rows, cpu / 1e9, r->wall_s);
		if (r->status != SB_RUN_OK || r->reason[0])
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

void exec_print_top(FILE *out, const struct sb_run *runs, size_t n)
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
			/* a wall sampler's samples of no program thread are its idle
			 * helpers'; a CPU sampler's are the program's (gperftools names
			 * no thread) */
			if ((s->thread_index < 0 && r->clock == SB_CLOCK_WALL) || s->depth == 0)
				continue;
			total += w;
			const struct sb_symbol *sym =
				symbol_find(r->symbols, r->nsymbols, r->frames[s->frame_offset]);
			/* PCs of code without symbols move with ASLR from run to run: compare
			 * them per module instead. */
			char modname[SB_SYM_FUNC_LEN];
			const char *name = sym ? sym->function : "?";
			if (sym && !symbol_function_known(sym)) {
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

/* Share of r's sample weight (count where a sample has none) on slot index. */
static double slot_weight_share(const struct sb_run *r, int32_t index)
{
	double mine = 0, total = 0;
	for (size_t k = 0; k < r->nsamples; k++) {
		const struct sb_sample *s = &r->samples[k];
		double w = isnan(s->weight_ns) ? 1 : s->weight_ns;
		total += w;
		mine += s->thread_index == index ? w : 0;
	}
	return total > 0 ? mine / total : NAN;
}

/* Whether thread row k of r is among its EXEC_TOP busiest (by true CPU; ties by slot). */
static int busiest(const struct sb_run *r, size_t k)
{
	size_t above = 0;
	const struct sb_thread_row *t = &r->thread_rows[k];
	for (size_t j = 0; j < r->nthread_rows && above < EXEC_TOP; j++) {
		const struct sb_thread_row *u = &r->thread_rows[j];
		above += u->cpu_ns > t->cpu_ns || (u->cpu_ns == t->cpu_ns && j < k);
	}
	return above < EXEC_TOP;
}

void exec_print_threads(FILE *out, const struct sb_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		double cpu = 0;
		if (r->nthread_rows < 2)
			continue;
		for (size_t k = 0; k < r->nthread_rows; k++)
			cpu += (double)r->thread_rows[k].cpu_ns;
		fprintf(out, "\nthreads under %s: true CPU share, share of the samples' weight%s:\n",
			r->sampler, r->nthread_rows > EXEC_TOP ? " (the busiest)" : "");
		fprintf(out, "%4s  %-15s  %8s  %8s  %8s\n", "slot", "thread", "tid", "cpu", "samples");
		for (size_t k = 0; k < r->nthread_rows; k++) {
			const struct sb_thread_row *t = &r->thread_rows[k];
			char share[16];
			if (!busiest(r, k))
				continue;
			double w = slot_weight_share(r, t->index);
			if (isnan(w))
				snprintf(share, sizeof(share), "-");
			else
				snprintf(share, sizeof(share), "%.1f%%", 100 * w);
			fprintf(out, "%4d  %-15s  %8d  %7.1f%%  %8s\n", (int)t->index,
				t->name[0] ? t->name : "-", (int)t->tid,
				cpu > 0 ? 100 * (double)t->cpu_ns / cpu : 0.0, share);
		}
	}
}
