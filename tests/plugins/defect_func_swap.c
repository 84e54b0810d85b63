/* defect_func_swap.c - test plugin: reports the samples taken in one function as taken in
 * another, as a symbolizer with a wrong load bias or an unwinder that mislabels the leaf
 * would: on hotspot, every sample whose leaf is in hotspot_10 (10 % of the work) gets a
 * leaf in hotspot_60. Counts, threads and weights stay right.
 * gate-expects: function_misfit
 * gate-workload: hotspot
 * The two functions are found at start() in the program's own ELF symbol table (static
 * functions are in .symtab, not in the dynamic one dladdr reads), plus its load bias: every
 * copy of hotspot_10 (the workload's build variants each have one: docs/workloads.md
 * "Variants"), moved into a hotspot_60, which the metrics name alike in any build. */
#define DEFECT_NAME "defect-func-swap"
#define DEFECT_DESC "DEFECT: reports hotspot_10's samples in hotspot_60 (a mislabelled leaf)"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_START find_functions
static void find_functions(void);
#include "tests/plugins/defect_base.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define FROM_MAX 4
static uint64_t from_lo[FROM_MAX], from_hi[FROM_MAX], to_pc; /* [from_lo, from_hi) -> to_pc */
static int nfrom;

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr; /* the first object is the program */
	return 1;
}

static void find_functions(void)
{
	struct stat st;
	uintptr_t bias = 0;

	nfrom = 0;
	to_pc = 0;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	dl_iterate_phdr(main_bias, &bias);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
		const char *str = (const char *)(m + sh[sh[i].sh_link].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++) {
			const char *name = str + sym[k].st_name;
			if (!strcmp(name, "hotspot_10") && nfrom < FROM_MAX) {
				from_lo[nfrom] = bias + sym[k].st_value;
				from_hi[nfrom] = from_lo[nfrom] + sym[k].st_size;
				nfrom++;
			} else if (!strcmp(name, "hotspot_60")) {
				to_pc = bias + sym[k].st_value + sym[k].st_size / 2;
			}
		}
	}
	munmap((void *)m, (size_t)st.st_size);
}

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)seq;
	for (int i = 0; i < nfrom && s->depth > 0 && to_pc; i++)
		if (pcs[0] >= from_lo[i] && pcs[0] < from_hi[i])
			pcs[0] = to_pc;
	return 1;
}
