/* runfile.c - a results file loaded whole, for tests that compare files (runfile.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/runcmp.h"
#include "tests/support/runfile.h"

void rf_load(const char *p, struct rf_file *f)
{
	char err[512];
	memset(f, 0, sizeof(*f));
	if (h5_read(p, NULL, &f->runs, &f->n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* rf_load() with the samples and each run's host. */
void rf_load_all(const char *p, struct rf_file *f)
{
	char err[512];
	memset(f, 0, sizeof(*f));
	if (h5_read_hosts(p, NULL, &f->runs, &f->n, 1, &f->hosts, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

void rf_unload(struct rf_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		run_free(&f->runs[i]);
	free(f->runs);
	h5_run_hosts_free(&f->hosts);
	memset(f, 0, sizeof(*f));
}

/* The run of f with id, or NULL. */
const struct sb_run *rf_by_id(const struct rf_file *f, int64_t id)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->runs[i].run_id == id)
			return &f->runs[i];
	return NULL;
}

const struct sb_host *rf_host_of(const struct rf_file *f, const struct sb_run *r)
{
	return &f->hosts.v[f->hosts.of_run[r - f->runs]];
}

/* Run x of file a and run y of file b (both from load_all) hold the same values: samples,
 * frames, metrics, thread rows, stats, pause tables and the host facts they ran with.
 * Returns 0, or -1 with the first difference in why. */
int rf_same_run(const struct rf_file *a, const struct sb_run *x, const struct rf_file *b,
		    const struct sb_run *y, unsigned flags, char *why, size_t len)
{
	if (runcmp(x, y, flags, why, len) != 0)
		return -1;
	char hw[200];
	if (hostcmp(rf_host_of(a, x), rf_host_of(b, y), hw, sizeof(hw)) != 0) {
		snprintf(why, len, "host: %s", hw);
		return -1;
	}
	return 0;
}

void rf_assert_same_run(const struct rf_file *a, const struct sb_run *x, const struct rf_file *b,
			    const struct sb_run *y, unsigned flags)
{
	char why[300];
	if (rf_same_run(a, x, b, y, flags, why, sizeof(why)) != 0)
		fail_msg("run %lld (%s rep %d) differs: %s", (long long)x->run_id, x->sampler,
			 x->repetition, why);
}

/* No two runs of f share a run id, nor a cell and repetition. */
void rf_assert_distinct(const struct rf_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		assert_ptr_equal(rf_by_id(f, f->runs[i].run_id), &f->runs[i]);
		assert_ptr_equal(runcmp_find(&f->runs[i], f->runs, f->n), &f->runs[i]);
	}
}

/* The same set of runs: the same run ids, each with the same cell (sampler, workload,
 * threads, hz) and repetition, none twice, every one ok. */
void rf_assert_same_runs(const struct rf_file *a, const struct rf_file *b)
{
	assert_int_equal(a->n, b->n);
	rf_assert_distinct(a);
	rf_assert_distinct(b);
	for (size_t i = 0; i < a->n; i++) {
		const struct sb_run *x = &a->runs[i];
		const struct sb_run *y = rf_by_id(b, x->run_id);
		if (!y || runcmp_find(x, b->runs, b->n) != y)
			fail_msg("run %lld (%s rep %d) is not in the other file", (long long)x->run_id,
				 x->sampler, x->repetition);
		assert_int_equal(x->status, SB_RUN_OK);
		assert_int_equal(y->status, SB_RUN_OK);
	}
}
