/* gate_cells.c - how the gate groups runs: cells (sampler, workload, threads, hz) and their
 * repetitions, sampler classes, hosts (runs grouped by host fingerprint), and the check
 * that a cell adds to a result. */
#include "analysis/gate_int.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/mwu.h"
#include "sampler/sampler.h"

/* --- cells --- */

void gate_class_of(const char *sampler, const struct sb_run *runs, size_t n,
		   struct gate_class *cls)
{
	const struct sb_run *r = NULL;
	const struct sampler *s = sampler_find(sampler);

	memset(cls, 0, sizeof(*cls));
	for (size_t i = 0; i < n; i++)
		if (!strcmp(runs[i].sampler, sampler) && (!r || run_scored(runs[i].status)))
			if (!r || !run_scored(r->status))
				r = &runs[i];
	cls->clock = r ? r->clock : s ? (int)s->clock : SB_CLOCK_CPU;
	double caps = r ? run_stat(r, "class_caps") : NAN;
	if (!isnan(caps)) { /* a plugin (sampler/plugin.c) or a tool (harness/tool_run.c):
			    * what it declared */
		double abi = run_stat(r, "class_abi");
		cls->caps = (unsigned)caps & 0xffffu;
		cls->tick_driven = ((unsigned)caps >> 16) & 1;
		cls->recipe = !isnan(run_stat(r, "class_recipe"));
		if (cls->recipe)
			snprintf(cls->source, sizeof(cls->source), "declared by the tool's recipe");
		else if (abi == 1)
			snprintf(cls->source, sizeof(cls->source), "plugin ABI 1: v1 defaults assumed "
				 "(thread_ids, weights, stacks, per-thread)");
		else
			snprintf(cls->source, sizeof(cls->source), "declared by the plugin (ABI %g)",
				 abi);
	} else if (s) {
		cls->caps = s->caps;
		cls->tick_driven = !!(s->flags & SB_SAMPLER_TICK_DRIVEN);
		cls->baseline = !!(s->flags & SB_SAMPLER_BASELINE);
		snprintf(cls->source, sizeof(cls->source), "built-in table");
	} else {
		/* Unknown to this sampbench and no class in the file: judge it by every rule. */
		cls->caps = SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS |
			    SB_CAP_STOP_LATENCY | SB_CAP_SUSPEND_WINDOW;
		snprintf(cls->source, sizeof(cls->source), "unknown sampler, no class in the file: "
			 "every capability assumed");
	}
}

void fmt_class(char *buf, size_t len, const struct gate_class *c)
{
	size_t u = (size_t)snprintf(buf, len, "%s clock, %s%s, claims ",
				    c->clock == SB_CLOCK_WALL ? "wall" : "cpu",
				    (c->caps & SB_CAP_PROCESS_WIDE) ? "process-wide signal" : "per-thread",
				    c->tick_driven ? ", tick-driven" : "");
	int any = 0;
	for (size_t i = 1; i < GATE_NCAPS && u < len; i++)
		if (c->caps & gate_cap_names[i].cap)
			u += (size_t)snprintf(buf + u, len - u, "%s%s", any++ ? "," : "",
					      gate_cap_names[i].name);
	if (u < len)
		snprintf(buf + u, len - u, "%s (%s)", any ? "" : "nothing", c->source);
}

static int same_cell(const struct cell *c, const struct sb_run *r)
{
	return !strcmp(c->sampler, r->sampler) && !strcmp(c->workload, r->workload) &&
	       c->threads == r->threads && c->hz == r->hz;
}

void gate_cells_free(struct cells *cs)
{
	free(cs->v);
	free(cs->idx);
	memset(cs, 0, sizeof(*cs));
}

int gate_cells_build(const struct gate_side *side, struct cells *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->v = calloc(side->nruns + 1, sizeof(*cs->v));
	cs->idx = calloc(side->nruns + 1, sizeof(*cs->idx));
	if (!cs->v || !cs->idx) {
		gate_cells_free(cs);
		return -1;
	}
	/* two passes: count per cell, then place the indices contiguously */
	size_t *cell_of = calloc(side->nruns + 1, sizeof(*cell_of));
	if (!cell_of) {
		gate_cells_free(cs);
		return -1;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		const struct sb_run *r = &side->runs[i];
		size_t c = 0;
		while (c < cs->n && !same_cell(&cs->v[c], r))
			c++;
		if (c == cs->n)
			cs->v[cs->n++] = (struct cell){ .sampler = r->sampler, .workload = r->workload,
							 .threads = r->threads, .hz = r->hz };
		cell_of[i] = c;
		cs->v[c].n++;
		cs->v[c].failed += r->status == SB_RUN_FAILED || r->status == SB_RUN_INCOMPLETE;
		cs->v[c].skipped += r->status == SB_RUN_SKIPPED;
		cs->v[c].lossy += r->status == SB_RUN_LOSSY;
		/* written by an adaptive bench on each run (harness/session.c) */
		double lo = run_stat(r, "reps_min"), hi = run_stat(r, "reps_max");
		if (hi >= 1 && hi <= 1000 && (int)hi > cs->v[c].reps_max) {
			cs->v[c].reps_max = (int)hi;
			cs->v[c].reps_min = lo >= 1 && lo <= hi ? (int)lo : 1;
		}
	}
	size_t off = 0;
	for (size_t c = 0; c < cs->n; c++) {
		cs->v[c].runs = cs->idx + off;
		off += cs->v[c].n;
		cs->v[c].n = 0;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		struct cell *c = &cs->v[cell_of[i]];
		c->runs[c->n++] = i;
	}
	for (size_t c = 0; c < cs->n; c++)
		gate_class_of(cs->v[c].sampler, side->runs, side->nruns, &cs->v[c].cls);
	free(cell_of);
	return 0;
}

const struct cell *gate_cells_find(const struct cells *cs, const char *sampler,
				   const char *workload, int threads, double hz)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cell *c = &cs->v[i];
		if (!strcmp(c->sampler, sampler) && !strcmp(c->workload, workload) &&
		    c->threads == threads && c->hz == hz)
			return c;
	}
	return NULL;
}

size_t gate_cell_values(const struct gate_side *side, const struct cell *c, const char *metric,
			double *out)
{
	int pi = gate_pseudo_index(metric), mi;
	size_t k = 0;

	if (pi >= 0) {
		out[0] = pi == 0 ? c->failed : pi == 1 ? c->skipped : c->lossy;
		return 1;
	}
	mi = gate_metric_index(metric);
	if (mi < 0)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (!run_scored(r->status))
			continue;
		double v = *(const double *)((const char *)&r->metrics + sb_metric_infos[mi].offset);
		if (!isnan(v))
			out[k++] = v;
	}
	return k;
}

/* --- hosts --- */

/* What groups runs into one host: the fingerprint, or the host name without one. */
static const char *host_key(const struct sb_host *h)
{
	return h->fingerprint[0] ? h->fingerprint : h->host;
}

void gate_hosts_free(struct gate_hostset *hs)
{
	free(hs->host);
	free(hs->label);
	free(hs->of_run);
	memset(hs, 0, sizeof(*hs));
}

int gate_hosts_group(const struct gate_side *side, struct gate_hostset *hs)
{
	size_t cap = side->hosts && side->nhosts ? side->nhosts : 1;

	memset(hs, 0, sizeof(*hs));
	hs->host = calloc(cap, sizeof(*hs->host));
	hs->label = calloc(cap, sizeof(*hs->label));
	hs->of_run = calloc(side->nruns + 1, sizeof(*hs->of_run));
	if (!hs->host || !hs->label || !hs->of_run) {
		gate_hosts_free(hs);
		return -1;
	}
	if (!side->hosts || side->nhosts == 0) {
		hs->host[hs->n++] = side->host;
		snprintf(hs->label[0], sizeof(hs->label[0]), "%s", side->host->host);
		return 0; /* of_run: all 0 */
	}
	for (size_t i = 0; i < side->nruns; i++) {
		const struct sb_host *h = &side->hosts[side->run_host[i]];
		size_t g = 0;
		while (g < hs->n && strcmp(host_key(hs->host[g]), host_key(h)))
			g++;
		if (g == hs->n)
			hs->host[hs->n++] = h;
		hs->of_run[i] = g;
	}
	if (hs->n == 0)
		hs->host[hs->n++] = side->host;
	for (size_t g = 0; g < hs->n; g++) {
		int shared = 0;
		for (size_t o = 0; o < hs->n; o++)
			shared |= o != g && !strcmp(hs->host[o]->host, hs->host[g]->host);
		snprintf(hs->label[g], sizeof(hs->label[g]), "%s",
			 shared ? hs->host[g]->fingerprint : hs->host[g]->host);
	}
	return 0;
}

long gate_hosts_find(const struct gate_hostset *hs, const struct sb_host *h)
{
	for (size_t g = 0; g < hs->n; g++)
		if (!strcmp(host_key(hs->host[g]), host_key(h)))
			return (long)g;
	return -1;
}

int gate_side_of_host(const struct gate_side *side, const struct gate_hostset *hs, size_t g,
		      struct gate_side *out, struct sb_run **runs)
{
	size_t n = 0;

	*runs = malloc((side->nruns + 1) * sizeof(**runs));
	if (!*runs)
		return -1;
	for (size_t i = 0; i < side->nruns; i++)
		if (hs->of_run[i] == g)
			(*runs)[n++] = side->runs[i];
	*out = (struct gate_side){ .path = side->path, .host = hs->host[g], .runs = *runs,
				   .nruns = n, .only = side->only };
	return 0;
}

/* --- checks --- */

struct gate_check *add_check(struct gate_result *res, size_t *cap, const struct cell *c,
			     enum gate_kind kind, const char *metric)
{
	if (res->nchecks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct gate_check *v = realloc(res->checks, ncap * sizeof(*v));
		if (!v)
			return NULL;
		res->checks = v;
		*cap = ncap;
	}
	struct gate_check *k = &res->checks[res->nchecks++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->state = GATE_PASS;
	snprintf(k->sampler, sizeof(k->sampler), "%s", c->sampler);
	snprintf(k->workload, sizeof(k->workload), "%s", c->workload);
	k->threads = c->threads;
	k->hz = c->hz;
	snprintf(k->metric, sizeof(k->metric), "%s", metric);
	k->baseline = k->current = k->p = k->effect = NAN;
	return k;
}
