/* symbolize_darwin.c - symbolizer_new/symbolize on Darwin: the symbol tables of the Mach-O
 * images loaded in this process (the run's child was forked without exec, so it had the
 * same images at the same addresses).
 *
 * Each image's LC_SYMTAB is read in memory (its __LINKEDIT segment is mapped), lazily, on
 * the first PC that falls in the image's __TEXT: every defined symbol of a section,
 * static functions included (the slot leaves are static), unless the image was stripped.
 * Images of the dyld shared cache keep only their exported symbols in memory; for those
 * and anything else unresolved dladdr() answers with the nearest exported symbol.
 *
 * Darwin build only: compiled by `make darwin-check`, run only on a Mac (docs/darwin.md). */
#include "analysis/symbolize.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <mach-o/dyld.h>
#include <mach-o/loader.h>
#include <mach-o/nlist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dsym {
	uint64_t addr; /* slid: the address in this process */
	const char *name; /* into the image's string table (mapped for the process's life) */
};

struct dimage {
	uint64_t lo, hi; /* __TEXT, slid */
	const struct mach_header_64 *mh;
	intptr_t slide;
	char module[SB_SYM_MODULE_LEN];
	int loaded;       /* symbols read (or tried) */
	struct dsym *syms; /* sorted by addr */
	size_t nsyms;
};

struct sb_symbolizer {
	struct dimage *img;
	size_t nimg;
};

static int cmp_dsym(const void *a, const void *b)
{
	const struct dsym *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Reads the defined section symbols of im from its in-memory LC_SYMTAB. */
static void load_symbols(struct dimage *im)
{
	const struct load_command *lc = (const void *)(im->mh + 1);
	const struct symtab_command *st = NULL;
	const struct segment_command_64 *linkedit = NULL;

	im->loaded = 1;
	for (uint32_t i = 0; i < im->mh->ncmds; i++) {
		if (lc->cmd == LC_SYMTAB)
			st = (const void *)lc;
		else if (lc->cmd == LC_SEGMENT_64 &&
			 strcmp(((const struct segment_command_64 *)lc)->segname, "__LINKEDIT") == 0)
			linkedit = (const void *)lc;
		lc = (const void *)((const char *)lc + lc->cmdsize);
	}
	if (!st || !linkedit || st->nsyms == 0)
		return;
	/* File offsets inside __LINKEDIT map to its slid vmaddr. */
	uintptr_t base = (uintptr_t)im->slide + linkedit->vmaddr - linkedit->fileoff;
	const struct nlist_64 *nl = (const void *)(base + st->symoff);
	const char *strtab = (const char *)(base + st->stroff);

	im->syms = calloc(st->nsyms, sizeof(*im->syms));
	if (!im->syms)
		return;
	for (uint32_t i = 0; i < st->nsyms; i++) {
		if ((nl[i].n_type & N_STAB) || (nl[i].n_type & N_TYPE) != N_SECT)
			continue;
		if (nl[i].n_un.n_strx == 0 || nl[i].n_un.n_strx >= st->strsize)
			continue;
		const char *name = strtab + nl[i].n_un.n_strx;
		im->syms[im->nsyms].addr = nl[i].n_value + (uint64_t)im->slide;
		im->syms[im->nsyms].name = name[0] == '_' ? name + 1 : name; /* C symbols */
		im->nsyms++;
	}
	qsort(im->syms, im->nsyms, sizeof(*im->syms), cmp_dsym);
}

struct sb_symbolizer *symbolizer_new(void)
{
	struct sb_symbolizer *s = calloc(1, sizeof(*s));
	uint32_t n = _dyld_image_count();

	if (!s)
		return NULL;
	s->img = calloc(n + 1, sizeof(*s->img));
	if (!s->img) {
		free(s);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct mach_header_64 *mh = (const void *)_dyld_get_image_header(i);
		const char *path = _dyld_get_image_name(i);
		struct dimage *im = &s->img[s->nimg];

		if (!mh || mh->magic != MH_MAGIC_64)
			continue;
		im->mh = mh;
		im->slide = _dyld_get_image_vmaddr_slide(i);
		const struct load_command *lc = (const void *)(mh + 1);
		for (uint32_t k = 0; k < mh->ncmds; k++) {
			const struct segment_command_64 *seg = (const void *)lc;
			if (lc->cmd == LC_SEGMENT_64 && strcmp(seg->segname, "__TEXT") == 0) {
				im->lo = seg->vmaddr + (uint64_t)im->slide;
				im->hi = im->lo + seg->vmsize;
			}
			lc = (const void *)((const char *)lc + lc->cmdsize);
		}
		if (im->hi == 0)
			continue;
		const char *base = path ? strrchr(path, '/') : NULL;
		snprintf(im->module, sizeof(im->module), "%s", base ? base + 1 : path ? path : "?");
		s->nimg++;
	}
	return s;
}

void symbolizer_free(struct sb_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nimg; i++)
		free(s->img[i].syms);
	free(s->img);
	free(s);
}

int symbolize(struct sb_symbolizer *s, uint64_t pc, struct sb_symbol *out)
{
	symbol_set_unknown(out, pc);

	for (size_t i = 0; i < s->nimg; i++) {
		struct dimage *im = &s->img[i];
		if (pc < im->lo || pc >= im->hi)
			continue;
		snprintf(out->module, sizeof(out->module), "%s", im->module);
		if (!im->loaded)
			load_symbols(im);
		size_t lo = 0, hi = im->nsyms;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (im->syms[mid].addr <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0) {
			snprintf(out->function, sizeof(out->function), "%s", im->syms[lo - 1].name);
			out->offset = pc - im->syms[lo - 1].addr;
			return 1;
		}
		break;
	}
	Dl_info di;
	if (dladdr((const void *)(uintptr_t)pc, &di) && di.dli_sname && di.dli_saddr) {
		if (di.dli_fname) {
			const char *base = strrchr(di.dli_fname, '/');
			snprintf(out->module, sizeof(out->module), "%s", base ? base + 1 : di.dli_fname);
		}
		snprintf(out->function, sizeof(out->function), "%s", di.dli_sname);
		out->offset = pc - (uint64_t)(uintptr_t)di.dli_saddr;
		return 1;
	}
	return 0;
}

/* Mach-O images carry no DWARF in memory (it stays in the .dSYM or the object files):
 * no inline chains here. */
int symbolize_inlines(struct sb_symbolizer *s, uint64_t pc, struct sb_inline_frame *out,
		      int max)
{
	(void)s;
	(void)pc;
	(void)out;
	(void)max;
	return 0;
}
