/* import_firefox.c - the Firefox Profiler's processed format, as profiler.firefox.com saves
 * it and samply writes it. Each thread's samples.stack indexes its stackTable (prefix and
 * frame), frameTable.func its funcTable, funcTable.name a string. Where those tables are
 * depends on meta.preprocessedProfileVersion: up to EXPORT_FIREFOX_VERSION (48, what
 * sampbench writes) every thread carries its own, strings in thread.stringArray (or the
 * older thread.stringTable); newer files moved them to profile.shared, so there a table is
 * taken from the thread when it has one and from profile.shared otherwise. samples.weight
 * (weightType "samples") gives counts; times are samples.time or samples.timeDeltas in ms.
 * The thread is thread.tid (a number or a string of digits). */
#include "analysis/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export.h"
#include "analysis/import_json.h"

/* A thread's tables after the lookup. */
struct tables {
	struct json_ints stack_prefix, stack_frame, frame_func, func_name, sample_stack;
	double *weight, *time;
	size_t nweight, ntime;
	int time_deltas;
	const char **strings;
	size_t nstrings;
};

static void tables_free(struct tables *t)
{
	free(t->stack_prefix.v);
	free(t->stack_frame.v);
	free(t->frame_func.v);
	free(t->func_name.v);
	free(t->sample_stack.v);
	free(t->weight);
	free(t->time);
	free(t->strings);
	memset(t, 0, sizeof(*t));
}

static const cJSON *member(const cJSON *o, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* The table name of thread th, or of shared when the version allows and th has none. */
static const cJSON *table(const cJSON *th, const cJSON *shared, int per_thread, const char *name)
{
	const cJSON *t = member(th, name);
	return t || per_thread ? t : member(shared, name);
}

/* Reads thread th's tables (its own, or the shared ones where the version allows) into t
 * and checks their columns agree. Returns 0, or -1 after import_fail (t's arrays are the
 * caller's to free either way). */
static int read_tables(struct import_run *b, const cJSON *th, const cJSON *shared,
		       int per_thread, size_t index, struct tables *t)
{
	const cJSON *stacks = table(th, shared, per_thread, "stackTable");
	const cJSON *frames = table(th, shared, per_thread, "frameTable");
	const cJSON *funcs = table(th, shared, per_thread, "funcTable");
	const cJSON *samples = member(th, "samples");
	const cJSON *strings = table(th, shared, per_thread, "stringArray");
	if (!strings)
		strings = member(th, "stringTable");
	if (!stacks || !frames || !funcs || !samples || !strings)
		return import_fail(b, "thread %zu: missing stackTable, frameTable, funcTable, "
				   "samples or string array", index);
	if (json_ints(member(stacks, "prefix"), &t->stack_prefix) < 0 ||
	    json_ints(member(stacks, "frame"), &t->stack_frame) < 0 ||
	    json_ints(member(frames, "func"), &t->frame_func) < 0 ||
	    json_ints(member(funcs, "name"), &t->func_name) < 0 ||
	    json_ints(member(samples, "stack"), &t->sample_stack) < 0 ||
	    json_strings(strings, &t->strings, &t->nstrings) < 0)
		return import_fail(b, "thread %zu: a table column is not an array of integers (or "
				   "the string array not of strings)", index);
	const cJSON *w = member(samples, "weight"), *tm = member(samples, "time");
	if (!tm) {
		tm = member(samples, "timeDeltas");
		t->time_deltas = tm != NULL;
	}
	if ((w && !cJSON_IsNull(w) && json_doubles(w, &t->weight, &t->nweight) < 0) ||
	    json_doubles(tm, &t->time, &t->ntime) < 0)
		return import_fail(b, "thread %zu: samples.weight or time is not an array of "
				   "numbers", index);
	if (!tm) { /* no times: json_doubles gave an empty array, not NULL */
		free(t->time);
		t->time = NULL;
	}
	size_t nstack = t->stack_frame.n, n = t->sample_stack.n;
	if (t->stack_prefix.n != nstack || (t->weight && t->nweight != n) || (tm && t->ntime != n))
		return import_fail(b, "thread %zu: columns of different lengths", index);
	const char *wtype = cJSON_GetStringValue(member(samples, "weightType"));
	if (t->weight && wtype && strcmp(wtype, "samples") != 0)
		return import_fail(b, "thread %zu: weightType '%s' is not samples", index, wtype);
	return 0;
}

/* One PC per func of t, named once, into *func_pcs (malloc'd, the caller's). Returns 0, or
 * -1 after import_fail. */
static int name_funcs(struct import_run *b, const struct tables *t, size_t index,
		      uint64_t **func_pcs)
{
	*func_pcs = malloc((t->func_name.n ? t->func_name.n : 1) * sizeof(**func_pcs));
	if (!*func_pcs)
		return import_fail(b, "out of memory");
	for (size_t f = 0; f < t->func_name.n; f++) {
		int64_t s = t->func_name.v[f];
		if (s < 0 || (size_t)s >= t->nstrings)
			return import_fail(b, "thread %zu: func %zu names string %lld of %zu", index,
					   f, (long long)s, t->nstrings);
		if (import_frame(b, t->strings[s], strlen(t->strings[s]), &(*func_pcs)[f]) < 0)
			return -1;
	}
	return 0;
}

/* Thread th's tid (a number or a decimal string), or -1. */
static int32_t thread_tid(const cJSON *th)
{
	const cJSON *tidj = member(th, "tid");
	int32_t tid = -1;
	if (cJSON_IsNumber(tidj) && tidj->valuedouble >= 0 && tidj->valuedouble <= INT32_MAX)
		tid = (int32_t)tidj->valuedouble;
	else if (cJSON_IsString(tidj)) {
		char *e;
		long v = strtol(tidj->valuestring, &e, 10);
		if (*tidj->valuestring && !*e && v >= 0 && v <= INT32_MAX)
			tid = (int32_t)v;
	}
	return tid;
}

/* The frames of sample i's stack into pcs[0..*depth), walked from the leaf; a prefix must
 * come before its stack, so there is no cycle. Returns 0, or -1 after import_fail. */
static int stack_pcs(struct import_run *b, const struct tables *t, const uint64_t *func_pcs,
		     size_t index, size_t i, uint64_t *pcs, uint32_t *depth)
{
	int64_t s = t->sample_stack.v[i];

	*depth = 0;
	if (s >= (int64_t)t->stack_frame.n)
		return import_fail(b, "thread %zu sample %zu: stack %lld out of range", index, i,
				   (long long)s);
	while (s >= 0 && *depth < IMPORT_MAX_DEPTH) {
		int64_t fr = t->stack_frame.v[s], prefix = t->stack_prefix.v[s];
		if (fr < 0 || (size_t)fr >= t->frame_func.n || prefix >= s ||
		    t->frame_func.v[fr] < 0 || (size_t)t->frame_func.v[fr] >= t->func_name.n)
			return import_fail(b, "thread %zu: stack %lld has a bad frame, func or "
					   "prefix", index, (long long)s);
		pcs[(*depth)++] = func_pcs[t->frame_func.v[fr]];
		s = prefix;
	}
	return 0;
}

static int read_thread(struct import_run *b, const cJSON *th, const cJSON *shared,
		       int per_thread, size_t index)
{
	struct tables t = { 0 };
	uint64_t pcs[IMPORT_MAX_DEPTH];
	uint64_t *func_pcs = NULL;
	int ret = -1;

	if (read_tables(b, th, shared, per_thread, index, &t) < 0 ||
	    name_funcs(b, &t, index, &func_pcs) < 0)
		goto cleanup;
	int32_t tid = thread_tid(th);
	double ms = 0;
	for (size_t i = 0; i < t.sample_stack.n; i++) {
		double count = t.weight ? t.weight[i] : 1;
		if (t.time && isfinite(t.time[i]))
			ms = t.time_deltas ? ms + t.time[i] : t.time[i];
		if (!(count >= 0) || count > IMPORT_MAX_SAMPLES) {
			import_fail(b, "thread %zu sample %zu: weight out of range", index, i);
			goto cleanup;
		}
		if (llround(count) == 0)
			continue;
		uint32_t depth;
		if (stack_pcs(b, &t, func_pcs, index, i, pcs, &depth) < 0)
			goto cleanup;
		uint64_t time_ns = t.time && ms >= 0 && ms < 1.8e13 ? (uint64_t)llround(ms * 1e6)
								     : IMPORT_TIME_UNKNOWN;
		if (import_sample(b, pcs, depth, tid, time_ns, NAN, (uint64_t)llround(count)) < 0)
			goto cleanup;
	}
	ret = 0;
cleanup:
	free(func_pcs);
	tables_free(&t);
	return ret;
}

int import_firefox(struct import_run *b, const unsigned char *buf, size_t len)
{
	cJSON *root = cJSON_ParseWithLength((const char *)buf, len);
	const cJSON *th;
	size_t index = 0;
	int ret = -1;

	if (!root)
		return import_fail(b, "not JSON");
	const cJSON *meta = member(root, "meta"), *threads = member(root, "threads");
	const cJSON *version = member(meta, "preprocessedProfileVersion");
	if (!cJSON_IsNumber(version) || !cJSON_IsArray(threads)) {
		import_fail(b, "not a Firefox processed profile: no meta.preprocessedProfileVersion "
			    "or threads");
		goto cleanup;
	}
	int per_thread = version->valuedouble <= EXPORT_FIREFOX_VERSION;
	const cJSON *interval = member(meta, "interval");
	if (cJSON_IsNumber(interval) && interval->valuedouble > 0)
		b->run->hz = 1e3 / interval->valuedouble;
	cJSON_ArrayForEach(th, threads) {
		if (read_thread(b, th, member(root, "shared"), per_thread, index++) < 0)
			goto cleanup;
	}
	ret = 0;
cleanup:
	cJSON_Delete(root);
	return ret;
}
