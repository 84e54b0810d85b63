/* symbolize.c - the platform-independent half of the symbolizer: batch and lookup. The
 * per-platform half (symbolizer_new, symbolize) is symbolize_linux.c (libdw, kallsyms) or
 * symbolize_darwin.c (the loaded Mach-O images' symbol tables, dladdr). */
#include "analysis/symbolize.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int symbolize_frames(struct sb_symbolizer *s, const uint64_t *frames, size_t n,
		     struct sb_symbol **syms, size_t *nsyms)
{
	uint64_t *pcs = malloc((n + 1) * sizeof(*pcs));
	size_t k = 0;

	*syms = NULL;
	*nsyms = 0;
	if (!pcs)
		return -1;
	memcpy(pcs, frames, n * sizeof(*pcs));
	qsort(pcs, n, sizeof(*pcs), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || pcs[i] != pcs[i - 1])
			pcs[k++] = pcs[i];
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
