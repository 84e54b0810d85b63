/* run.c - helpers for struct sb_run. */
#include "core/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int run_alloc_stats(struct sb_run *r)
{
	r->stats = calloc(SB_RUN_MAX_STATS, sizeof(*r->stats));
	r->nstats = 0;
	return r->stats ? 0 : -1;
}

void run_add_stat(struct sb_run *r, const char *name, double v)
{
	if (!r->stats || r->nstats >= SB_RUN_MAX_STATS)
		return;
	struct sb_stat_row *row = &r->stats[r->nstats++];
	snprintf(row->name, sizeof(row->name), "%s", name);
	row->value = v;
}

void run_free(struct sb_run *r)
{
	if (!r)
		return;
	free(r->samples);
	free(r->frames);
	free(r->thread_rows);
	free(r->stats);
	free(r->symbols);
	free(r->inlines);
	free(r->progress);
	free(r->pause_hist);
	free(r->gaps);
	r->progress = NULL;
	r->pause_hist = NULL;
	r->gaps = NULL;
	r->nprogress = r->npause_hist = r->ngaps = 0;
	r->samples = NULL;
	r->frames = NULL;
	r->thread_rows = NULL;
	r->stats = NULL;
	r->symbols = NULL;
	r->inlines = NULL;
	r->ninlines = 0;
	r->nsamples = r->nframes = r->nthread_rows = r->nstats = r->nsymbols = 0;
}

double run_stat(const struct sb_run *r, const char *name)
{
	for (size_t i = 0; i < r->nstats; i++)
		if (strcmp(r->stats[i].name, name) == 0)
			return r->stats[i].value;
	return NAN;
}

const char *run_status_name(int status)
{
	switch (status) {
	case SB_RUN_OK: return "ok";
	case SB_RUN_FAILED: return "failed";
	case SB_RUN_SKIPPED: return "skipped";
	case SB_RUN_INCOMPLETE: return "incomplete";
	case SB_RUN_LOSSY: return "lossy";
	}
	return "unknown";
}

double host_fact(const struct sb_host *h, const char *name)
{
	for (int32_t i = 0; i < h->nfacts; i++)
		if (strcmp(h->facts[i].name, name) == 0)
			return h->facts[i].value;
	return NAN;
}

int host_fact_set(struct sb_host *h, const char *name, double value)
{
	if (strlen(name) >= sizeof(h->facts[0].name))
		return -1;
	for (int32_t i = 0; i < h->nfacts; i++)
		if (strcmp(h->facts[i].name, name) == 0) {
			h->facts[i].value = value;
			return 0;
		}
	if (h->nfacts >= SB_HOST_MAX_FACTS)
		return -1;
	snprintf(h->facts[h->nfacts].name, sizeof(h->facts[0].name), "%s", name);
	h->facts[h->nfacts++].value = value;
	return 0;
}
