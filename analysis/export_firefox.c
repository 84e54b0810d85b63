/* export_firefox.c - a run in the Firefox Profiler's processed format (see export.h), as
 * profiler.firefox.com loads from a file: version EXPORT_FIREFOX_VERSION, whose threads
 * carry their own tables (stringArray, funcTable, frameTable, stackTable, samples); the
 * viewer upgrades it to its current version on load. One thread per tid, named as the
 * thread named itself ("tid N" when unknown); one func and one frame per distinct function
 * name; the stack table is the tree of the thread's stacks; sample times in ms from the
 * run's first sample. */
#include "analysis/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A stack node: (prefix, func) once each, found through an open-addressing table. */
struct stack_tree {
	int64_t *prefix;
	uint32_t *func;
	size_t n, cap;
	size_t *slots; /* node index + 1, 0 empty; size nslots, a power of two */
	size_t nslots;
};

static size_t slot_of(int64_t prefix, uint32_t func, size_t nslots)
{
	uint64_t h = (uint64_t)(prefix + 1) * 0x9e3779b97f4a7c15ull ^ func * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h ^ h >> 29) & (nslots - 1);
}

/* The node (prefix, func), added when new. Returns its index or -1 when out of memory. */
static int64_t tree_node(struct stack_tree *t, int64_t prefix, uint32_t func)
{
	if (2 * (t->n + 1) > t->nslots) { /* grow: keep the load at most one half */
		size_t nslots = t->nslots ? 2 * t->nslots : 1024;
		size_t *slots = calloc(nslots, sizeof(*slots));
		if (!slots)
			return -1;
		for (size_t i = 0; i < t->n; i++) {
			size_t s = slot_of(t->prefix[i], t->func[i], nslots);
			while (slots[s])
				s = (s + 1) & (nslots - 1);
			slots[s] = i + 1;
		}
		free(t->slots);
		t->slots = slots;
		t->nslots = nslots;
	}
	size_t s = slot_of(prefix, func, t->nslots);
	for (; t->slots[s]; s = (s + 1) & (t->nslots - 1)) {
		size_t i = t->slots[s] - 1;
		if (t->prefix[i] == prefix && t->func[i] == func)
			return (int64_t)i;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		int64_t *p = realloc(t->prefix, cap * sizeof(*p));
		if (p)
			t->prefix = p;
		uint32_t *f = realloc(t->func, cap * sizeof(*f));
		if (f)
			t->func = f;
		if (!p || !f)
			return -1;
		t->cap = cap;
	}
	t->prefix[t->n] = prefix;
	t->func[t->n] = func;
	t->slots[s] = ++t->n;
	return (int64_t)(t->n - 1);
}

static void tree_free(struct stack_tree *t)
{
	free(t->prefix);
	free(t->func);
	free(t->slots);
	*t = (struct stack_tree){ 0 };
}

/* Writes "name":[v, v, ...] with v the same value n times, or the row indices for "#". */
static void repeat_column(FILE *out, const char *name, const char *v, size_t n)
{
	fprintf(out, "\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		if (strcmp(v, "#") == 0)
			fprintf(out, "%zu", i);
		else
			fputs(v, out);
	}
	fputs("],", out);
}

/* The tables every thread repeats: the names, one func and one frame per name. */
static void write_func_tables(FILE *out, const struct export_frames *fr)
{
	size_t n = fr->nnames;

	fputs("\"stringArray\":[", out);
	for (size_t f = 0; f < n; f++) {
		if (f)
			fputc(',', out);
		export_json_string(out, fr->names[f]);
	}
	fputs("],", out);
	/* column name, then the value of every row ("#" the row's index) */
	static const char *const func_table[][2] = {
		{ "name", "#" }, { "isJS", "false" }, { "relevantForJS", "false" },
		{ "resource", "-1" }, { "fileName", "null" }, { "lineNumber", "null" },
		{ "columnNumber", "null" },
	};
	static const char *const frame_table[][2] = {
		{ "func", "#" }, { "address", "-1" }, { "inlineDepth", "0" }, { "category", "0" },
		{ "subcategory", "0" }, { "nativeSymbol", "null" }, { "innerWindowID", "null" },
		{ "implementation", "null" }, { "line", "null" }, { "column", "null" },
	};
	fputs("\"funcTable\":{", out);
	for (size_t c = 0; c < sizeof(func_table) / sizeof(func_table[0]); c++)
		repeat_column(out, func_table[c][0], func_table[c][1], n);
	fprintf(out, "\"length\":%zu},\"frameTable\":{", n);
	for (size_t c = 0; c < sizeof(frame_table) / sizeof(frame_table[0]); c++)
		repeat_column(out, frame_table[c][0], frame_table[c][1], n);
	fprintf(out, "\"length\":%zu},", n);
	fputs("\"resourceTable\":{\"lib\":[],\"name\":[],\"host\":[],\"type\":[],\"length\":0},"
	      "\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],"
	      "\"length\":0},"
	      "\"markers\":{\"data\":[],\"name\":[],\"startTime\":[],\"endTime\":[],\"phase\":[],"
	      "\"category\":[],\"length\":0},",
	      out);
}

/* Writes one thread: the stack tree of its samples, then the samples. */
static int write_thread(FILE *out, const struct sb_run *r, const struct export_frames *fr,
			int32_t tid, uint64_t t0, double interval_ms, size_t *written)
{
	struct stack_tree tree = { 0 };
	int64_t *leaf = malloc((r->nsamples ? r->nsamples : 1) * sizeof(*leaf));
	size_t n = 0;
	int ret = -1;

	if (!leaf)
		return -1;
	for (size_t i = 0; i < r->nsamples; i++) {
		if ((r->samples[i].tid >= 0 ? r->samples[i].tid : -1) != tid)
			continue;
		uint32_t depth;
		const uint64_t *stack = export_sample_stack(r, i, &depth);
		int64_t node = -1;
		for (uint32_t d = depth; d-- > 0;) { /* inlined frames: frames of their own */
			uint32_t ids[1 + SB_INLINE_MAX_DEPTH];
			uint32_t m = export_frames_funcs(fr, export_frames_pc(fr, stack[d]), ids,
							 1 + SB_INLINE_MAX_DEPTH);
			for (uint32_t j = 0; j < m; j++)
				if ((node = tree_node(&tree, node, ids[j])) < 0)
					goto cleanup;
		}
		leaf[n++] = node;
	}
	fprintf(out, "{\"processType\":\"default\",\"processStartupTime\":0,"
		"\"processShutdownTime\":null,\"registerTime\":0,\"unregisterTime\":null,"
		"\"pausedRanges\":[],\"isMainThread\":false,\"pid\":\"%lld\",\"tid\":%" PRId32
		",\"name\":",
		(long long)r->run_id, tid);
	/* the name alone: the profiler shows the track as its name and the tid beside it
	 * (its tooltip: thread "NAME" (TID)) */
	char name[64];
	if (!*export_tid_name(r, tid, name)) {
		if (tid >= 0)
			snprintf(name, sizeof(name), "tid %" PRId32, tid);
		else
			snprintf(name, sizeof(name), "tid unknown");
	}
	export_json_string(out, name);
	fputc(',', out);
	write_func_tables(out, fr);
	fputs("\"stackTable\":{\"frame\":[", out);
	for (size_t i = 0; i < tree.n; i++)
		fprintf(out, i ? ",%" PRIu32 : "%" PRIu32, tree.func[i]);
	fputs("],\"prefix\":[", out);
	for (size_t i = 0; i < tree.n; i++) {
		if (i)
			fputc(',', out);
		if (tree.prefix[i] < 0)
			fputs("null", out);
		else
			fprintf(out, "%" PRId64, tree.prefix[i]);
	}
	fputs("],", out);
	repeat_column(out, "category", "0", tree.n);
	repeat_column(out, "subcategory", "0", tree.n);
	fprintf(out, "\"length\":%zu},\"samples\":{\"weightType\":\"samples\",\"weight\":null,"
		"\"stack\":[", tree.n);
	for (size_t k = 0; k < n; k++)
		fprintf(out, k ? ",%" PRId64 : "%" PRId64, leaf[k]);
	fputs("],\"time\":[", out);
	size_t k = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		if ((r->samples[i].tid >= 0 ? r->samples[i].tid : -1) == tid) {
			double ms = export_time_known(&r->samples[i]) && r->samples[i].time_ns >= t0
					    ? (r->samples[i].time_ns - t0) / 1e6
					    : (double)i * interval_ms;
			fprintf(out, k++ ? ",%.6f" : "%.6f", ms);
		}
	fprintf(out, "],\"length\":%zu}}", n);
	*written += n;
	ret = 0;
cleanup:
	tree_free(&tree);
	free(leaf);
	return ret;
}

/* Writes the processed format (see export.h). */
int64_t export_firefox(FILE *out, const struct sb_run *r)
{
	struct export_frames fr;
	int32_t *tids = NULL;
	size_t ntids = 0, written = 0;
	uint64_t t0 = UINT64_MAX;
	double interval_ms = r->hz > 0 ? 1e3 / r->hz : 10.0;
	int64_t ret = -1;

	if (export_frames_build(r, 0, &fr) < 0 || !(tids = export_tids(r, &ntids)))
		goto cleanup;
	for (size_t i = 0; i < r->nsamples; i++)
		if (export_time_known(&r->samples[i]) && r->samples[i].time_ns < t0)
			t0 = r->samples[i].time_ns;
	fprintf(out, "{\"meta\":{\"interval\":%.6f,\"startTime\":0,\"abi\":\"\",\"misc\":\"\","
		"\"oscpu\":\"\",\"platform\":\"\",\"processType\":0,\"product\":",
		interval_ms);
	char product[EXPORT_TITLE_LEN];
	export_run_title(r, product, sizeof(product));
	export_json_string(out, product);
	fprintf(out, ",\"stackwalk\":1,\"toolkit\":\"\",\"version\":29,"
		"\"preprocessedProfileVersion\":%d,\"appBuildID\":\"\",\"sourceURL\":\"\","
		"\"physicalCPUs\":0,\"logicalCPUs\":0,\"symbolicated\":true,\"markerSchema\":[],"
		"\"extensions\":{\"id\":[],\"name\":[],\"baseURL\":[],\"length\":0},"
		"\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]}]},"
		"\"libs\":[],\"pages\":[],\"counters\":[],\"threads\":[",
		EXPORT_FIREFOX_VERSION);
	for (size_t t = 0; t < ntids; t++) {
		if (t)
			fputc(',', out);
		if (write_thread(out, r, &fr, tids[t], t0, interval_ms, &written) < 0)
			goto cleanup;
	}
	if (fputs("]}\n", out) < 0)
		goto cleanup;
	ret = (int64_t)written;
cleanup:
	free(tids);
	export_frames_free(&fr);
	return ret;
}
