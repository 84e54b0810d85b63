/* cmd_top.c - `sampbench top`: a flat profile of a run's leaf frames, in the shape of
 * seed 003 (osxkerneltracer): Module | Method+offset | Calls | Share.
 *
 * Names come from the run's own `symbols` table, resolved by the harness while the run's
 * address layout still existed, so any build of sampbench can read any file. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/symbolize.h"
#include "core/run.h"
#include "harness/cli.h"
#include "results/h5io.h"

#define TOP_DEFAULT_LIMIT 25
#define TOP_USER_MAX 0x0000800000000000ull /* x86_64/aarch64 user addresses lie below */

struct top_row {
	char module[SB_SYM_MODULE_LEN];
	char method[3 * SB_SYM_FUNC_LEN]; /* room for an inline chain of two (longer: cut) */
	uint64_t calls;
};

/* Names pc from the run's symbols table; unknown PCs keep module "?" and their address. */
static void top_resolve(const struct sb_run *r, uint64_t pc, struct top_row *row)
{
	const struct sb_symbol *s = symbol_find(r->symbols, r->nsymbols, pc);

	snprintf(row->module, sizeof(row->module), "%s", SB_SYM_MODULE_UNKNOWN);
	snprintf(row->method, sizeof(row->method), "0x%" PRIx64, pc);
	if (!s)
		return;
	snprintf(row->module, sizeof(row->module), "%s",
		 symbol_is_kernel(s) ? "kernel" : s->module);
	if (!symbol_function_known(s))
		return;
	size_t k, len = 0;
	const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, pc, &k);
	/* a leaf in inlined code: the inlined function first, then what it was inlined into,
	 * out to the function that holds the PC: "inner (inlined into mid, into outer+0x1a)" */
	for (size_t d = 0; d < k && len < sizeof(row->method); d++)
		len += (size_t)snprintf(row->method + len, sizeof(row->method) - len,
					d == 0 ? "%s (inlined into " : "%s, into ", c[d].function);
	if (len < sizeof(row->method))
		snprintf(row->method + len, sizeof(row->method) - len, "%s+0x%" PRIx64 "%s",
			 s->function, s->offset, k ? ")" : "");
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	int c = strcmp(x->module, y->module);
	return c ? c : strcmp(x->method, y->method);
}

static int top_cmp_pc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The leaf of sample s: frames[0], or with kernel == 0 the first user frame (kernel
 * frames come first in perf's callchains). Returns 0 when the sample has none. */
static int top_leaf(const struct sb_run *r, const struct sb_sample *s, int kernel,
		    uint64_t *pc)
{
	if (s->frame_offset + s->depth > r->nframes)
		return 0;
	for (uint32_t k = 0; k < s->depth; k++) {
		uint64_t f = r->frames[s->frame_offset + k];
		if (kernel || f < TOP_USER_MAX) {
			*pc = f;
			return 1;
		}
	}
	return 0;
}

static void top_dashes(FILE *out, int n, const char *sep)
{
	for (int i = 0; i < n; i++)
		fputc('-', out);
	fputs(sep, out);
}

/* Prints run r's flat profile. Resolves each distinct leaf PC once (sorted PCs), then
 * merges rows with the same module and method. Returns 0 or -1 (out of memory). */
static int top_print(FILE *out, const struct sb_run *r, int kernel, long limit)
{
	uint64_t *pcs = malloc((r->nsamples + 1) * sizeof(*pcs));
	struct top_row *rows = malloc((r->nsamples + 1) * sizeof(*rows));
	size_t npcs = 0, nrows = 0;
	int rc = -1;

	if (!pcs || !rows)
		goto cleanup;
	for (size_t i = 0; i < r->nsamples; i++)
		if (top_leaf(r, &r->samples[i], kernel, &pcs[npcs]))
			npcs++;
	qsort(pcs, npcs, sizeof(*pcs), top_cmp_pc);
	for (size_t i = 0; i < npcs;) {
		size_t j = i;
		while (j < npcs && pcs[j] == pcs[i])
			j++;
		struct top_row row;
		top_resolve(r, pcs[i], &row);
		row.calls = j - i;
		size_t k = 0;
		while (k < nrows && (strcmp(rows[k].module, row.module) ||
				     strcmp(rows[k].method, row.method)))
			k++;
		if (k < nrows)
			rows[k].calls += row.calls;
		else
			rows[nrows++] = row;
		i = j;
	}
	qsort(rows, nrows, sizeof(*rows), top_cmp);

	size_t shown = limit > 0 && (size_t)limit < nrows ? (size_t)limit : nrows;
	int wm = (int)strlen("Module"), wf = (int)strlen("Method+offset"), wc = (int)strlen("Calls");
	for (size_t i = 0; i < shown; i++) {
		char calls[32];
		int n = (int)strlen(rows[i].module);
		wm = n > wm ? n : wm;
		n = (int)strlen(rows[i].method);
		wf = n > wf ? n : wf;
		n = snprintf(calls, sizeof(calls), "%" PRIu64, rows[i].calls);
		wc = n > wc ? n : wc;
	}
	fprintf(out, "run %" PRId64 ": %s on %s, %d threads, %g Hz: %zu samples, %zu with a%s leaf\n\n",
		r->run_id, r->sampler, r->workload, r->threads, r->hz, r->nsamples, npcs,
		kernel ? "" : " user");
	fprintf(out, "%-*s | %-*s | %*s | %10s\n", wm, "Module", wf, "Method+offset", wc, "Calls",
		"Share");
	top_dashes(out, wm, "-+-");
	top_dashes(out, wf, "-+-");
	top_dashes(out, wc, "-+-");
	top_dashes(out, 11, "\n");
	for (size_t i = 0; i < shown; i++)
		fprintf(out, "%-*s | %-*s | %*" PRIu64 " | %8.4f %%\n", wm, rows[i].module, wf,
			rows[i].method, wc, rows[i].calls,
			npcs ? 100.0 * (double)rows[i].calls / (double)npcs : 0.0);
	if (shown < nrows)
		fprintf(out, "..\n");
	rc = 0;
cleanup:
	free(pcs);
	free(rows);
	return rc;
}

/* Samples of r in slot index (-1: on no workload thread). */
static uint64_t top_slot_samples(const struct sb_run *r, int32_t index)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].thread_index == index;
	return n;
}

/* Prints run r's samples by thread: one row per slot (its name beside its slot and tid,
 * "-" when unknown), its samples and their share, and its share of the true CPU time,
 * then the samples on no thread. Returns 0. */
static int top_print_threads(FILE *out, const struct sb_run *r, long limit)
{
	double cpu = 0;
	for (size_t i = 0; i < r->nthread_rows; i++)
		cpu += (double)r->thread_rows[i].cpu_ns;
	size_t shown = limit > 0 && (size_t)limit < r->nthread_rows ? (size_t)limit
								    : r->nthread_rows;
	double all = r->nsamples ? (double)r->nsamples : 1;
	fprintf(out, "run %" PRId64 ": %s on %s, %d threads, %g Hz: %zu samples, %zu thread "
		"slots\n\n", r->run_id, r->sampler, r->workload, r->threads, r->hz, r->nsamples,
		r->nthread_rows);
	fprintf(out, "%4s | %-15s | %8s | %8s | %10s | %10s\n", "Slot", "Thread", "Tid", "Samples",
		"Share", "CPU share");
	fprintf(out, "-----+-----------------+----------+----------+------------+-----------\n");
	for (size_t i = 0; i < shown; i++) {
		const struct sb_thread_row *t = &r->thread_rows[i];
		uint64_t n = top_slot_samples(r, t->index);
		fprintf(out, "%4d | %-15s | %8d | %8" PRIu64 " | %8.4f %% | %8.4f %%\n",
			(int)t->index, t->name[0] ? t->name : "-", (int)t->tid, n,
			100.0 * (double)n / all, cpu > 0 ? 100.0 * (double)t->cpu_ns / cpu : 0.0);
	}
	if (shown < r->nthread_rows)
		fprintf(out, "..\n");
	uint64_t none = top_slot_samples(r, -1);
	fprintf(out, "%4s | %-15s | %8s | %8" PRIu64 " | %8.4f %% | %10s\n", "-", "(no thread)", "-",
		none, 100.0 * (double)none / all, "-");
	return 0;
}

#define TOP_STR(x) #x
#define TOP_XSTR(x) TOP_STR(x)

static struct env {
	long run_id; /* -1: every run with samples */
	int kernel;
	int threads; /* by thread instead of by leaf function */
	long limit;
} env;

static const struct env env_defaults = { .run_id = -1, .limit = TOP_DEFAULT_LIMIT };

const struct opt cmd_top_options[] = {
	OPT_INTEGER('r', "run", &env.run_id, "ID", 0, INT64_MAX, "only run ID"),
	OPT_BOOLEAN('k', "kernel", &env.kernel,
		    "count kernel leaf frames (default: the first user frame)"),
	OPT_BOOLEAN('t', "threads", &env.threads,
		    "by thread: each slot's name, tid, samples and true CPU share"),
	OPT_INTEGER('n', "limit", &env.limit, "N", 0, 1000000,
		    "rows per run, 0 for all (default " TOP_XSTR(TOP_DEFAULT_LIMIT) ")"),
	OPT_HELP(),
	OPT_END(),
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sampbench top [--run ID] [--kernel] [--threads] [--limit N] FILE.h5\n\n"
		"Prints a flat profile of the leaf frames of each run with samples (or of run ID):\n"
		"Module | Method+offset | Calls | Share. A leaf in inlined code reads\n"
		"'inner (inlined into outer+0x1a)'. User frames are symbolized when the run\n"
		"was recorded by this executable (same build id); kernel frames from\n"
		"/proc/kallsyms (right for runs recorded since the last boot). With --threads,\n"
		"by thread instead: Slot | Thread (the name it gave itself, - when unknown) |\n"
		"Tid | Samples | Share | CPU share (its share of the true CPU time).\n\n");
	opt_help(out, cmd_top_options);
}

/* `sampbench top [--run ID] [--kernel] [--threads] [--limit N] FILE.h5`. Returns the exit
 * code. */
int cmd_top(int argc, char **argv)
{
	struct sb_run *runs = NULL;
	struct sb_host host;
	size_t nruns = 0, printed = 0;
	int rc = SB_EXIT_USAGE;
	char err[512];

	env = env_defaults;
	int first = opt_parse("top", cmd_top_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		usage(stdout);
		return SB_EXIT_OK;
	}
	if (first < 0)
		return SB_EXIT_USAGE;
	if (opt_operands("top", argv, first, argc, 1, 1, "FILE.h5") != 0)
		return SB_EXIT_USAGE;
	const char *path = argv[first];
	if (h5_read(path, &host, &runs, &nruns, 1, err, sizeof(err)) < 0) {
		sb_err("%s", err); /* a missing, damaged or foreign file is bad input: 2 */
		rc = SB_EXIT_USAGE;
		goto cleanup;
	}

	rc = SB_EXIT_OK;
	for (size_t i = 0; i < nruns; i++) {
		const struct sb_run *r = &runs[i];
		if (env.run_id >= 0 ? r->run_id != env.run_id : r->nsamples == 0)
			continue;
		if (printed++)
			fputc('\n', stdout);
		if (env.threads ? top_print_threads(stdout, r, env.limit) < 0
				: top_print(stdout, r, env.kernel, env.limit) < 0) {
			sb_err("out of memory");
			rc = SB_EXIT_FAIL;
			goto cleanup;
		}
	}
	if (env.run_id >= 0 && printed == 0) {
		sb_err("no run %ld in '%s'", env.run_id, path);
		rc = SB_EXIT_USAGE;
	} else if (printed == 0) {
		sb_err("no run with samples in '%s'", path);
		rc = SB_EXIT_FAIL;
	}
cleanup:
	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	return rc;
}
