/* symbolize_linux.c - symbolizer_new/symbolize on Linux: libdw for user space (static
 * functions too: .symtab), /proc/kallsyms for the kernel. */
#include "analysis/symbolize_linux.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ksym {
	uint64_t addr;
	char name[SB_SYM_FUNC_LEN];
};

struct sb_symbolizer {
	Dwfl *dwfl;
	struct ksym *ksyms;
	size_t nksyms;
	int ksyms_loaded; /* kallsyms is large: read on the first kernel PC only */
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Loads text symbols of /proc/kallsyms; all-zero addresses mean kptr_restrict hides them. */
static void load_kallsyms(struct sb_symbolizer *s)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	size_t cap = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || addr == 0)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (s->nksyms == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			struct ksym *k = realloc(s->ksyms, ncap * sizeof(*k));
			if (!k)
				break;
			s->ksyms = k;
			cap = ncap;
		}
		s->ksyms[s->nksyms].addr = addr;
		snprintf(s->ksyms[s->nksyms].name, SB_SYM_FUNC_LEN, "%.127s", name);
		s->nksyms++;
	}
	fclose(f);
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
}

struct sb_symbolizer *symbolizer_new(void)
{
	struct sb_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (s->dwfl) {
		dwfl_report_begin(s->dwfl);
		if (dwfl_linux_proc_report(s->dwfl, getpid()) != 0) {
			dwfl_end(s->dwfl);
			s->dwfl = NULL;
		} else {
			dwfl_report_end(s->dwfl, NULL, NULL);
		}
	}
	return s;
}

void symbolizer_free(struct sb_symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->ksyms);
	free(s);
}

static int kernel_symbol(struct sb_symbolizer *s, uint64_t pc, struct sb_symbol *out)
{
	snprintf(out->module, sizeof(out->module), "%s", SB_SYM_MODULE_KERNEL);
	if (!s->ksyms_loaded) {
		s->ksyms_loaded = 1;
		load_kallsyms(s);
	}
	size_t lo = 0, hi = s->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	snprintf(out->function, sizeof(out->function), "%s", s->ksyms[lo - 1].name);
	out->offset = pc - s->ksyms[lo - 1].addr;
	return 1;
}

int symbolize_dwfl(Dwfl *dwfl, uint64_t pc, struct sb_symbol *out)
{
	symbol_set_unknown(out, pc);
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, (Dwarf_Addr)pc) : NULL;
	if (!mod)
		return 0;
	const char *mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (mname) {
		const char *base = strrchr(mname, '/');
		snprintf(out->module, sizeof(out->module), "%s", base ? base + 1 : mname);
	}
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, (GElf_Addr)pc, &off, &sym, NULL, NULL, NULL);
	if (!name)
		return 0;
	snprintf(out->function, sizeof(out->function), "%s", name);
	out->offset = off;
	return 1;
}

/* Fills f from the DW_TAG_inlined_subroutine die: the name of its abstract origin and
 * its call site (DW_AT_call_file through the CU's file table, DW_AT_call_line). */
static void inline_frame(Dwarf_Die *cu, Dwarf_Die *die, uint64_t pc, int depth,
			 struct sb_inline_frame *f)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;
	const char *name = dwarf_diename(die); /* follows DW_AT_abstract_origin */

	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->depth = depth;
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	snprintf(f->function, sizeof(f->function), "%s", name ? name : "?");
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &w) == 0 && w <= INT32_MAX)
		f->call_line = (int32_t)w;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &w) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || w >= nfiles)
		return;
	const char *file = dwarf_filesrc(files, w, NULL, NULL);
	if (!file)
		return;
	size_t len = strlen(file);
	/* a long path keeps its tail: the file name is what a reader looks for */
	snprintf(f->call_file, sizeof(f->call_file), "%s",
		 len < sizeof(f->call_file) ? file : file + len - (sizeof(f->call_file) - 1));
}

int symbolize_dwfl_inlines(Dwfl *dwfl, uint64_t pc, struct sb_inline_frame *out, int max)
{
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, (Dwarf_Addr)pc) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, (Dwarf_Addr)pc, &bias) : NULL;
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int n, k = 0;

	if (!cu)
		return 0;
	/* scopes[0] is the innermost scope containing pc. dwarf_getscopes continues past an
	 * inlined subroutine into its abstract definition's scopes, so the concrete nesting
	 * (inlined subroutines inside each other, up to the subprogram holding them all) is
	 * read from scopes[0]'s parents, as eu-addr2line -i does. */
	n = dwarf_getscopes(cu, (Dwarf_Addr)pc - bias, &scopes);
	if (n > 0)
		n = dwarf_getscopes_die(&scopes[0], &chain);
	for (int i = 0; i < n && k < max; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_inlined_subroutine) {
			inline_frame(cu, &chain[i], pc, k, &out[k]);
			k++;
		}
	}
	free(chain);
	free(scopes);
	return k;
}

int symbolize_inlines(struct sb_symbolizer *s, uint64_t pc, struct sb_inline_frame *out,
		      int max)
{
	if (pc >= SB_KERNEL_ADDR_MIN)
		return 0;
	return symbolize_dwfl_inlines(s->dwfl, pc, out, max);
}

int symbolize(struct sb_symbolizer *s, uint64_t pc, struct sb_symbol *out)
{
	if (pc >= SB_KERNEL_ADDR_MIN) {
		symbol_set_unknown(out, pc);
		return kernel_symbol(s, pc, out);
	}
	return symbolize_dwfl(s->dwfl, pc, out);
}
