/* export.c - folded stacks and gperftools legacy CPU profiles from a run, and the helpers
 * every export shares (see export.h). */
#include "analysis/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/symbolize.h"
#include "sampler/cpuprofile.h"

#define NAME_LEN (SB_SYM_MODULE_LEN + SB_SYM_FUNC_LEN + 8)

static const uint64_t unknown_stack[1] = { EXPORT_UNKNOWN_PC };

/* The stack of sample i (see export.h). */
const uint64_t *export_sample_stack(const struct sb_run *r, size_t i, uint32_t *depth)
{
	const struct sb_sample *s = &r->samples[i];

	if (s->depth == 0 || s->frame_offset > r->nframes ||
	    s->depth > r->nframes - s->frame_offset || r->frames[s->frame_offset] == 0) {
		*depth = 1;
		return unknown_stack;
	}
	*depth = s->depth > CPUPROFILE_MAX_DEPTH ? CPUPROFILE_MAX_DEPTH : s->depth;
	return &r->frames[s->frame_offset];
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (*s == ';' || (unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '_';
}

/* Writes the name of pc (see export.h). */
void export_frame_name(const struct sb_run *r, uint64_t pc, unsigned flags, char *buf,
		       size_t len)
{
	const struct sb_symbol *sym = symbol_find(r->symbols, r->nsymbols, pc);

	if (pc == EXPORT_UNKNOWN_PC && !sym) {
		snprintf(buf, len, "[unknown]");
		return;
	}
	if (!sym || !symbol_function_known(sym)) {
		snprintf(buf, len, "0x%" PRIx64, pc);
		return;
	}
	int kernel = symbol_is_kernel(sym);
	int with_module = (flags & EXPORT_MODULE) && !kernel && symbol_module_known(sym);
	snprintf(buf, len, "%s%s%s%s", with_module ? sym->module : "", with_module ? "!" : "",
		 sym->function, kernel ? "_[k]" : "");
	sanitize(buf);
}

/* Writes the name of pc's inlined frame f (see export.h). */
void export_inline_name(const struct sb_run *r, uint64_t pc, const struct sb_inline_frame *f,
			unsigned flags, char *buf, size_t len)
{
	const struct sb_symbol *sym = symbol_find(r->symbols, r->nsymbols, pc);
	int with_module = (flags & EXPORT_MODULE) && sym && symbol_module_known(sym);

	snprintf(buf, len, "%s%s%s", with_module ? sym->module : "", with_module ? "!" : "",
		 f->function);
	sanitize(buf);
}

/* A growable string. */
struct strbuf {
	char *s;
	size_t len, cap;
};

static int sb_append(struct strbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p)
			return -1;
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folded line of sample i (see export.h). */
char *export_folded_line(const struct sb_run *r, size_t i, unsigned flags)
{
	struct strbuf b = { 0 };
	char name[NAME_LEN];
	uint32_t depth;
	const uint64_t *pcs = export_sample_stack(r, i, &depth);

	if (flags & EXPORT_LABEL) {
		snprintf(name, sizeof(name), "%s/%s/t%d/%ghz/rep%d/run%lld", r->sampler,
			 r->workload, r->threads, r->hz, r->repetition, (long long)r->run_id);
		sanitize(name);
		if (sb_append(&b, name) < 0)
			goto fail;
	}
	if ((flags & EXPORT_THREAD) && r->samples[i].tid >= 0) {
		snprintf(name, sizeof(name), "thread-0/%d", (int)r->samples[i].tid);
		if ((b.len && sb_append(&b, ";") < 0) || sb_append(&b, name) < 0)
			goto fail;
	}
	for (uint32_t d = depth; d-- > 0;) {
		size_t k;
		const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, pcs[d], &k);
		export_frame_name(r, pcs[d], flags, name, sizeof(name));
		if ((b.len && sb_append(&b, ";") < 0) || sb_append(&b, name) < 0)
			goto fail;
		while (k-- > 0) { /* the inlined frames, outermost first */
			export_inline_name(r, pcs[d], &c[k], flags, name, sizeof(name));
			if (sb_append(&b, ";") < 0 || sb_append(&b, name) < 0)
				goto fail;
		}
	}
	if (!b.s && sb_append(&b, "") < 0)
		goto fail;
	return b.s;
fail:
	free(b.s);
	return NULL;
}

/* Writes folded stacks (see export.h). */
int64_t export_folded(FILE *out, const struct sb_run *runs, size_t n, unsigned flags)
{
	size_t total = 0, k = 0;
	char **lines = NULL;
	int64_t ret = -1;

	for (size_t i = 0; i < n; i++)
		total += runs[i].nsamples;
	lines = calloc(total ? total : 1, sizeof(*lines));
	if (!lines)
		return -1;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < runs[i].nsamples; j++, k++)
			if (!(lines[k] = export_folded_line(&runs[i], j, flags)))
				goto cleanup;
	qsort(lines, total, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < total;) {
		size_t j = i + 1;
		while (j < total && strcmp(lines[j], lines[i]) == 0)
			j++;
		if (fprintf(out, "%s %zu\n", lines[i], j - i) < 0)
			goto cleanup;
		i = j;
	}
	ret = (int64_t)total;
cleanup:
	for (size_t i = 0; i < k; i++)
		free(lines[i]);
	free(lines);
	return ret;
}

/* Orders sample indices by stack (depth, then PCs), so equal stacks are adjacent. */
static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct sb_run *r = arg;
	uint32_t da, db;
	const uint64_t *pa = export_sample_stack(r, *(const size_t *)a, &da);
	const uint64_t *pb = export_sample_stack(r, *(const size_t *)b, &db);

	if (da != db)
		return da < db ? -1 : 1;
	for (uint32_t i = 0; i < da; i++)
		if (pa[i] != pb[i])
			return pa[i] < pb[i] ? -1 : 1;
	return 0;
}

/* One module's PC range, for the synthetic maps. */
struct module_range {
	const char *name;
	uint64_t lo, hi;
	size_t nsyms;
};

/* Synthetic /proc/self/maps text: one r-xp line per module of r's symbols, covering its
 * PCs (page aligned), named "[module]". The objects of the profiled process may be gone or
 * rebuilt, and its load addresses are not recorded, so the lines tell a reader which module
 * a PC range was without sending pprof to symbolize against a file (bracketed names are
 * not paths to pprof: it shows addresses, and the symbols section gives names). Returns
 * malloc'd text or NULL. */
static char *synthetic_maps(const struct sb_run *r, const char **main_module)
{
	struct module_range *m = calloc(r->nsymbols + 1, sizeof(*m));
	size_t nm = 0, best = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f = NULL;

	*main_module = "sampbench";
	if (!m)
		return NULL;
	for (size_t i = 0; i < r->nsymbols; i++) {
		const struct sb_symbol *s = &r->symbols[i];
		size_t j;
		if (!symbol_module_known(s))
			continue;
		for (j = 0; j < nm && strcmp(m[j].name, s->module) != 0; j++)
			;
		if (j == nm)
			m[nm++] = (struct module_range){ s->module, s->pc, s->pc, 0 };
		if (s->pc < m[j].lo)
			m[j].lo = s->pc;
		if (s->pc > m[j].hi)
			m[j].hi = s->pc;
		m[j].nsyms++;
	}
	f = open_memstream(&text, &len);
	if (!f)
		goto cleanup;
	for (size_t j = 0; j < nm; j++) {
		uint64_t lo = m[j].lo & ~(uint64_t)0xfff;
		uint64_t hi = (m[j].hi | 0xfff) + (m[j].hi == UINT64_MAX ? 0 : 1);
		fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp 00000000 00:00 0 [%s]\n",
			lo, hi, m[j].name);
		if (strcmp(m[j].name, SB_SYM_MODULE_KERNEL) != 0 && m[j].nsyms > m[best].nsyms)
			best = j;
	}
	if (nm)
		*main_module = m[best].name;
	if (fclose(f) != 0) {
		free(text);
		text = NULL;
	}
cleanup:
	free(m);
	return text;
}

/* pprof's "--- symbol" section: every known PC of r, then the marker of the profile. */
static int write_symbols(FILE *out, const struct sb_run *r, const char *binary)
{
	char name[NAME_LEN];

	fprintf(out, "--- symbol\nbinary=%s\n", binary);
	fprintf(out, "0x%016x [unknown]\n", EXPORT_UNKNOWN_PC);
	for (size_t i = 0; i < r->nsymbols; i++) {
		if (r->symbols[i].pc == EXPORT_UNKNOWN_PC)
			continue;
		export_frame_name(r, r->symbols[i].pc, 0, name, sizeof(name));
		fprintf(out, "0x%016" PRIx64 " %s\n", r->symbols[i].pc, name);
	}
	return fprintf(out, "---\n--- profile\n") < 0 ? -1 : 0;
}

/* Writes a gperftools CPU profile (see export.h). */
int64_t export_gperftools(FILE *out, const struct sb_run *r, int symbols)
{
	uint64_t period_us = r->hz > 0 ? (uint64_t)(1e6 / r->hz + 0.5) : 10000;
	const char *binary;
	size_t *idx = NULL;
	char *maps = NULL;
	int64_t ret = -1;

	if (period_us < 1)
		period_us = 1;
	maps = synthetic_maps(r, &binary);
	idx = malloc((r->nsamples ? r->nsamples : 1) * sizeof(*idx));
	if (!maps || !idx)
		goto cleanup;
	for (size_t i = 0; i < r->nsamples; i++)
		idx[i] = i;
	qsort_r(idx, r->nsamples, sizeof(*idx), cmp_stack, (void *)r);
	if (symbols && write_symbols(out, r, binary) < 0)
		goto cleanup;
	if (cpuprofile_write_header(out, period_us) < 0)
		goto cleanup;
	for (size_t i = 0; i < r->nsamples;) {
		size_t j = i + 1;
		uint64_t count = sample_ticks(&r->samples[idx[i]]);
		uint32_t depth;
		const uint64_t *pcs = export_sample_stack(r, idx[i], &depth);
		while (j < r->nsamples && cmp_stack(&idx[i], &idx[j], (void *)r) == 0)
			count += sample_ticks(&r->samples[idx[j++]]);
		if (cpuprofile_write_record(out, count, pcs, depth) < 0)
			goto cleanup;
		i = j;
	}
	if (cpuprofile_write_trailer(out, maps, strlen(maps)) < 0)
		goto cleanup;
	ret = (int64_t)r->nsamples;
cleanup:
	free(idx);
	free(maps);
	return ret;
}

/* Writes s as a JSON string (see export.h). */
void export_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The distinct tids of r's samples (see export.h). */
int32_t *export_tids(const struct sb_run *r, size_t *n)
{
	int32_t *t = malloc((r->nsamples ? r->nsamples : 1) * sizeof(*t));
	size_t k = 0;

	if (!t)
		return NULL;
	for (size_t i = 0; i < r->nsamples; i++)
		t[i] = r->samples[i].tid >= 0 ? r->samples[i].tid : -1;
	qsort(t, r->nsamples, sizeof(*t), cmp_i32);
	for (size_t i = 0; i < r->nsamples; i++)
		if (k == 0 || t[k - 1] != t[i])
			t[k++] = t[i];
	*n = k;
	return t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* A frame's name during export_frames_build: PC pc_index's own (level -1) or its inlined
 * frame `level`. */
struct named_pc {
	size_t pc_index;
	int level;
	char *name;
};

static int cmp_named_pc(const void *a, const void *b)
{
	return strcmp(((const struct named_pc *)a)->name, ((const struct named_pc *)b)->name);
}

/* Allocates f's inline tables for f->pcs and fills inl_at and inl_n from r's chains.
 * Returns 0 or -1 (out of memory). */
static int inline_counts(const struct sb_run *r, struct export_frames *f)
{
	size_t at = 0;

	f->inl_at = calloc(f->npcs ? f->npcs : 1, sizeof(*f->inl_at));
	f->inl_n = calloc(f->npcs ? f->npcs : 1, sizeof(*f->inl_n));
	if (!f->inl_at || !f->inl_n)
		return -1;
	for (size_t i = 0; i < f->npcs; i++) {
		size_t k;
		inline_find(r->inlines, r->ninlines, f->pcs[i], &k);
		f->inl_at[i] = at;
		f->inl_n[i] = (uint32_t)k;
		at += k;
	}
	f->inl_func = calloc(at ? at : 1, sizeof(*f->inl_func));
	return f->inl_func ? 0 : -1;
}

/* Fills f (see export.h). */
int export_frames_build(const struct sb_run *r, unsigned flags, struct export_frames *f)
{
	uint64_t *all = NULL;
	struct named_pc *named = NULL;
	size_t nall = 0, nnamed = 0;
	char name[NAME_LEN];
	int ret = -1;

	*f = (struct export_frames){ 0 };
	for (size_t i = 0; i < r->nsamples; i++) {
		uint32_t depth;
		export_sample_stack(r, i, &depth);
		nall += depth;
	}
	all = malloc((nall ? nall : 1) * sizeof(*all));
	if (!all)
		goto cleanup;
	nall = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		uint32_t depth;
		const uint64_t *s = export_sample_stack(r, i, &depth);
		memcpy(all + nall, s, depth * sizeof(*s));
		nall += depth;
	}
	f->pcs = symbol_distinct_pcs(all, nall, &f->npcs);
	if (!f->pcs || inline_counts(r, f) < 0)
		goto cleanup;
	nnamed = f->npcs + (f->npcs ? f->inl_at[f->npcs - 1] + f->inl_n[f->npcs - 1] : 0);
	f->func = calloc(f->npcs ? f->npcs : 1, sizeof(*f->func));
	f->names = calloc(nnamed ? nnamed : 1, sizeof(*f->names));
	named = calloc(nnamed ? nnamed : 1, sizeof(*named));
	if (!f->func || !f->names || !named)
		goto cleanup;
	for (size_t i = 0, j = 0; i < f->npcs; i++) {
		size_t k;
		const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, f->pcs[i], &k);
		for (int level = -1; level < (int)k; level++, j++) {
			if (level < 0)
				export_frame_name(r, f->pcs[i], flags, name, sizeof(name));
			else
				export_inline_name(r, f->pcs[i], &c[level], flags, name, sizeof(name));
			named[j] = (struct named_pc){ .pc_index = i, .level = level };
			if (!(named[j].name = strdup(name)))
				goto cleanup;
		}
	}
	qsort(named, nnamed, sizeof(*named), cmp_named_pc);
	for (size_t i = 0; i < nnamed; i++) {
		if (i == 0 || strcmp(named[i].name, f->names[f->nnames - 1]) != 0) {
			f->names[f->nnames++] = named[i].name;
			named[i].name = NULL; /* f owns it now */
		}
		if (named[i].level < 0)
			f->func[named[i].pc_index] = (uint32_t)(f->nnames - 1);
		else
			f->inl_func[f->inl_at[named[i].pc_index] + (size_t)named[i].level] =
				(uint32_t)(f->nnames - 1);
	}
	ret = 0;
cleanup:
	for (size_t i = 0; named && i < nnamed; i++)
		free(named[i].name);
	free(named);
	free(all);
	return ret;
}

/* The index of pc in f->pcs (see export.h). */
size_t export_frames_pc(const struct export_frames *f, uint64_t pc)
{
	const uint64_t *hit = bsearch(&pc, f->pcs, f->npcs, sizeof(pc), cmp_u64);
	return hit ? (size_t)(hit - f->pcs) : 0;
}

/* PC i's frames, root first (see export.h). */
uint32_t export_frames_funcs(const struct export_frames *f, size_t i, uint32_t *out,
			     uint32_t max)
{
	uint32_t n = 0;

	if (max == 0)
		return 0;
	out[n++] = f->func[i];
	for (uint32_t k = f->inl_n[i]; k-- > 0 && n < max;)
		out[n++] = f->inl_func[f->inl_at[i] + k];
	return n;
}

void export_frames_free(struct export_frames *f)
{
	free(f->inl_func);
	free(f->inl_at);
	free(f->inl_n);
	for (size_t i = 0; f->names && i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->func);
	free(f->pcs);
	*f = (struct export_frames){ 0 };
}

/* A line naming r (see export.h). */
void export_run_title(const struct sb_run *r, char *buf, size_t len)
{
	snprintf(buf, len, "sampbench run %lld: %s, %s, %d threads, %g Hz", (long long)r->run_id,
		 r->sampler, r->workload, r->threads, r->hz);
}

/* The row of sample s's thread: by slot, else by tid; NULL when none. */
static const struct sb_thread_row *thread_row(const struct sb_run *r, const struct sb_sample *s)
{
	int32_t slot = s->thread_index;

	if (!r->thread_rows)
		return NULL;
	/* the rows are usually in slot order: try the slot's own place first */
	if (slot >= 0 && (size_t)slot < r->nthread_rows && r->thread_rows[slot].index == slot)
		return &r->thread_rows[slot];
	for (size_t k = 0; slot >= 0 && k < r->nthread_rows; k++)
		if (r->thread_rows[k].index == slot)
			return &r->thread_rows[k];
	for (size_t k = 0; s->tid >= 0 && k < r->nthread_rows; k++)
		if (r->thread_rows[k].tid == s->tid)
			return &r->thread_rows[k];
	return NULL;
}

/* The name of sample i's thread (see export.h). */
const char *export_thread_name(const struct sb_run *r, size_t i, char *name)
{
	const struct sb_thread_row *row = thread_row(r, &r->samples[i]);
	/* a name read from a file may fill its 16 bytes: at most 15 are a name */
	size_t n = row ? strnlen(row->name, SB_THREAD_NAME_LEN - 1) : 0;

	memcpy(name, row ? row->name : "", n);
	name[n] = 0;
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)name[k] < 0x20 || name[k] == 0x7f)
			name[k] = '_';
	return name;
}

/* The name of the thread with tid (see export.h). */
const char *export_tid_name(const struct sb_run *r, int32_t tid, char *name)
{
	char one[SB_THREAD_NAME_LEN];
	int seen = 0;

	name[0] = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		if ((r->samples[i].tid >= 0 ? r->samples[i].tid : -1) != tid)
			continue;
		export_thread_name(r, i, one);
		if (seen++ == 0)
			memcpy(name, one, sizeof(one));
		else if (strcmp(name, one) != 0) {
			name[0] = 0;
			break;
		}
	}
	return name;
}
