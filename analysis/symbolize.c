/* symbolize.c - the platform-independent half of the symbolizer: batch and lookup. The
 * per-platform half (symbolizer_new, symbolize) is symbolize_linux.c (libdw, kallsyms) or
 * symbolize_darwin.c (the loaded Mach-O images' symbol tables, dladdr). */
#include "analysis/symbolize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/run.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void symbol_set_unknown(struct sb_symbol *out, uint64_t pc)
{
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	snprintf(out->module, sizeof(out->module), "%s", SB_SYM_MODULE_UNKNOWN);
	snprintf(out->function, sizeof(out->function), "0x%" PRIx64, pc);
}

int symbol_function_known(const struct sb_symbol *sym)
{
	return sym->function[0] && strncmp(sym->function, "0x", 2) != 0;
}

int symbol_module_known(const struct sb_symbol *sym)
{
	return sym->module[0] && strcmp(sym->module, SB_SYM_MODULE_UNKNOWN) != 0;
}

int symbol_is_kernel(const struct sb_symbol *sym)
{
	return strcmp(sym->module, SB_SYM_MODULE_KERNEL) == 0;
}

uint64_t *symbol_distinct_pcs(const uint64_t *frames, size_t n, size_t *k)
{
	uint64_t *pcs = malloc((n + 1) * sizeof(*pcs));

	*k = 0;
	if (!pcs)
		return NULL;
	memcpy(pcs, frames, n * sizeof(*pcs));
	qsort(pcs, n, sizeof(*pcs), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (*k == 0 || pcs[i] != pcs[*k - 1])
			pcs[(*k)++] = pcs[i];
	return pcs;
}

int symbolize_frames(struct sb_symbolizer *s, const uint64_t *frames, size_t n,
		     struct sb_symbol **syms, size_t *nsyms)
{
	size_t k;
	uint64_t *pcs = symbol_distinct_pcs(frames, n, &k);

	*syms = NULL;
	*nsyms = 0;
	if (!pcs)
		return -1;
	struct sb_symbol *out = calloc(k + 1, sizeof(*out));
	if (!out) {
		free(pcs);
		return -1;
	}
	for (size_t i = 0; i < k; i++)
		symbolize(s, pcs[i], &out[i]);
	free(pcs);
	*syms = out;
	*nsyms = k;
	return 0;
}

const struct sb_symbol *symbol_find(const struct sb_symbol *syms, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (syms[mid].pc < pc)
			lo = mid + 1;
		else if (syms[mid].pc > pc)
			hi = mid;
		else
			return &syms[mid];
	}
	return NULL;
}

int inline_table_append(struct sb_inline_frame **t, size_t *n, size_t *cap,
			const struct sb_inline_frame *chain, size_t k)
{
	if (*n + k > *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		while (ncap < *n + k)
			ncap *= 2;
		struct sb_inline_frame *p = realloc(*t, ncap * sizeof(*p));
		if (!p)
			return -1;
		*t = p;
		*cap = ncap;
	}
	memcpy(*t + *n, chain, k * sizeof(*chain));
	*n += k;
	return 0;
}

uint64_t *symbol_leaf_pcs(const struct sb_sample *samples, size_t n, const uint64_t *frames,
			  size_t nframes, size_t *k)
{
	uint64_t *pcs = malloc((n + 1) * sizeof(*pcs));
	size_t m = 0;

	*k = 0;
	if (!pcs)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (samples[i].depth > 0 && samples[i].frame_offset < nframes)
			pcs[m++] = frames[samples[i].frame_offset];
	qsort(pcs, m, sizeof(*pcs), cmp_u64);
	for (size_t i = 0; i < m; i++)
		if (*k == 0 || pcs[i] != pcs[*k - 1])
			pcs[(*k)++] = pcs[i];
	return pcs;
}

uint64_t inline_lookup_pc(const uint64_t *leaves, size_t nleaves, uint64_t pc)
{
	if (!leaves || pc == 0 || bsearch(&pc, leaves, nleaves, sizeof(pc), cmp_u64))
		return pc;
	return pc - 1;
}

int symbolize_inline_table(struct sb_symbolizer *s, const struct sb_symbol *syms,
			   size_t nsyms, const uint64_t *leaves, size_t nleaves,
			   struct sb_inline_frame **out, size_t *n)
{
	struct sb_inline_frame chain[SB_INLINE_MAX_DEPTH], *t = NULL;
	size_t cap = 0, nt = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < nsyms; i++) {
		if (symbol_is_kernel(&syms[i]))
			continue;
		uint64_t at = inline_lookup_pc(leaves, nleaves, syms[i].pc);
		int k = symbolize_inlines(s, at, chain, SB_INLINE_MAX_DEPTH);
		for (int j = 0; j < k; j++)
			chain[j].pc = syms[i].pc; /* stored under the frame's PC */
		if (k > 0 && inline_table_append(&t, &nt, &cap, chain, (size_t)k) < 0) {
			free(t);
			return -1;
		}
	}
	*out = t; /* syms is sorted by pc and each chain by depth: so is t */
	*n = nt;
	return 0;
}

int symbolize_run_inlines(struct sb_symbolizer *s, struct sb_run *r)
{
	size_t nleaves;
	uint64_t *leaves = symbol_leaf_pcs(r->samples, r->nsamples, r->frames, r->nframes,
					   &nleaves);
	int ret = -1;

	free(r->inlines);
	r->inlines = NULL;
	r->ninlines = 0;
	if (leaves)
		ret = symbolize_inline_table(s, r->symbols, r->nsymbols, leaves, nleaves,
					     &r->inlines, &r->ninlines);
	free(leaves);
	return ret;
}

const struct sb_inline_frame *inline_find(const struct sb_inline_frame *t, size_t n,
					  uint64_t pc, size_t *count)
{
	size_t lo = 0, hi = n;

	*count = 0;
	while (lo < hi) { /* the first row with t[].pc >= pc */
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || t[lo].pc != pc)
		return NULL;
	size_t end = lo;
	while (end < n && t[end].pc == pc)
		end++;
	*count = end - lo;
	return &t[lo];
}
