/* h5io_resume.c - reopening an unfinished results file to resume it: drop the run groups
 * the /runs index does not list, then append as a writer does. */
#include "results/h5io_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


struct orphan_scan {
	char (*listed)[GROUP_LEN];
	size_t nlisted;
	char (*orphans)[GROUP_LEN];
	size_t norphans, cap;
};

static herr_t orphan_cb(hid_t loc, const char *name, const H5L_info_t *info, void *data)
{
	struct orphan_scan *s = data;

	(void)loc;
	(void)info;
	if (strncmp(name, "run_", 4) != 0 || strlen(name) >= GROUP_LEN)
		return 0;
	for (size_t i = 0; i < s->nlisted; i++)
		if (!strcmp(s->listed[i], name))
			return 0;
	if (s->norphans == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		void *p = realloc(s->orphans, cap * sizeof(*s->orphans));
		if (!p)
			return -1;
		s->orphans = p;
		s->cap = cap;
	}
	snprintf(s->orphans[s->norphans++], GROUP_LEN, "%s", name);
	return 0;
}

/* Gives run group name copies of the root's host_facts and calibration tables unless it
 * has its own: the runs already in the file were measured against the root's, which the
 * resuming invocation replaces with its own calibration (h5_set_calibration). Returns
 * 0/-1. */
static int pin_run_host(hid_t file, const char *name)
{
	static const char *const tables[] = { "host_facts", "calibration" };
	hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
	int ret = g < 0 ? -1 : 0;

	for (size_t i = 0; ret == 0 && i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (H5Lexists(file, tables[i], H5P_DEFAULT) <= 0 ||
		    H5Lexists(g, tables[i], H5P_DEFAULT) > 0)
			continue; /* nothing to keep (schema 1), or kept already */
		if (H5Ocopy(file, tables[i], g, tables[i], H5P_DEFAULT, H5P_DEFAULT) < 0)
			ret = -1;
	}
	close_id(&g);
	return ret;
}

/* Deletes run groups that /runs does not list: a run whose write was cut short. Gives the
 * listed ones their own copy of the root's host tables (pin_run_host). */
static int delete_orphan_groups(struct sb_h5 *f)
{
	struct orphan_scan s = { 0 };
	hid_t gt = -1;
	int ret = -1;

	if (f->nruns) {
		s.listed = calloc(f->nruns, GROUP_LEN);
		gt = H5Tcreate(H5T_COMPOUND, GROUP_LEN);
		hid_t st = str_type(GROUP_LEN);
		if (!s.listed || gt < 0 || st < 0 || H5Tinsert(gt, "group", 0, st) < 0 ||
		    H5Dread(f->runs, gt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.listed) < 0) {
			close_id(&st);
			goto cleanup;
		}
		close_id(&st);
		s.nlisted = f->nruns;
	}
	if (H5Literate(f->file, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, orphan_cb, &s) < 0)
		goto cleanup;
	for (size_t i = 0; i < s.norphans; i++)
		if (H5Ldelete(f->file, s.orphans[i], H5P_DEFAULT) < 0)
			goto cleanup;
	for (size_t i = 0; i < s.nlisted; i++) {
		s.listed[i][GROUP_LEN - 1] = 0;
		if (pin_run_host(f->file, s.listed[i]) < 0)
			goto cleanup;
	}
	ret = 0;
cleanup:
	close_id(&gt);
	free(s.listed);
	free(s.orphans);
	return ret;
}

/* Opens tmp_path, the `.tmp` file of an interrupted invocation, to append more runs;
 * h5_close() renames it to final_path. host is what the new runs' groups record (the
 * file's own, from h5_read). Run groups the /runs table does not list (a write cut short)
 * are deleted; the listed ones get their own copy of the root's host tables. Returns the
 * open file, or NULL with one line in err. */
struct sb_h5 *h5_reopen(const char *tmp_path, const char *final_path,
			const struct sb_host *host, char *err, size_t errlen)
{
	struct sb_h5 *f = NULL;
	char why[128];
	hsize_t dims = 0;
	int ok = 0;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (access(tmp_path, R_OK | W_OK) != 0) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, strerror(errno));
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, strerror(ENOMEM));
		return NULL;
	}
	f->file = f->runs = f->runs_type = f->sample_type = -1;
	f->thread_type = f->stat_type = f->metric_type = f->symbol_type = -1;
	f->fact_type = f->calib_type = -1;
	f->progress_type = f->pause_bucket_type = f->gap_type = f->thread_name_type = -1;
	f->inline_type = -1;
	f->host = *host;
	f->path = strdup(final_path);
	f->tmp = strdup(tmp_path);
	if (!f->path || !f->tmp) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, strerror(ENOMEM));
		goto cleanup;
	}
	f->file = open_h5(tmp_path, H5F_ACC_RDWR, H5P_DEFAULT);
	if (f->file < 0) {
		seterr(err, errlen, "cannot open '%s': %s", tmp_path, h5_why(why));
		goto cleanup;
	}
	f->runs = H5Dopen2(f->file, "runs", H5P_DEFAULT);
	hid_t space = f->runs < 0 ? -1 : H5Dget_space(f->runs);
	if (space < 0 || H5Sget_simple_extent_dims(space, &dims, NULL) != 1) {
		close_id(&space);
		seterr(err, errlen, "'%s' has no readable /runs table", tmp_path);
		goto cleanup;
	}
	close_id(&space);
	f->nruns = dims;
	if (make_types(f) != 0) {
		seterr(err, errlen, "cannot open '%s': cannot build HDF5 types", tmp_path);
		goto cleanup;
	}
	if (delete_orphan_groups(f) < 0 || attr_i32(f->file, "complete", 0) < 0 ||
	    H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0) {
		seterr(err, errlen, "cannot write '%s': %s", tmp_path, h5_why(why));
		goto cleanup;
	}
	f->force = 0;
	ok = 1;
cleanup:
	if (!ok) {
		close_all(f);
		close_id(&f->file);
		h5_free(f);
		f = NULL;
	}
	return f;
}
