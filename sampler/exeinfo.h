/* exeinfo.h - where the main executable is loaded and which build it is.
 *
 * Recorded with a run (stats `exe_load_base`, `exe_build_id`) so that `sampbench top` can
 * symbolize the PCs of a finished run in another process: ASLR loads the executable at
 * another address every time, and only the same build has the same code at the same
 * offsets. Both values fit a double exactly (user addresses have 47 bits; the build id is
 * cut to 48 bits). Header-only so samplers, the runner and `top` share one definition. */
#ifndef SB_EXEINFO_H
#define SB_EXEINFO_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

struct sb_exeinfo {
	uint64_t base;     /* load bias of the main executable (0 when not PIE) */
	uint64_t span;     /* end of its last PT_LOAD segment, relative to base */
	uint64_t build_id; /* first 6 bytes of NT_GNU_BUILD_ID, big-endian; 0 when none */
};

static inline int sb_exeinfo_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sb_exeinfo *e = data;
	(void)size;
	e->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > e->span)
			e->span = ph->p_vaddr + ph->p_memsz;
		if (ph->p_type != PT_NOTE || e->build_id)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const unsigned char *desc =
				(const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && n->n_descsz >= 6) {
				for (int k = 0; k < 6; k++)
					e->build_id = e->build_id << 8 | desc[k];
				break;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object is the main program */
}

/* Fills e for the calling process. Not async-signal-safe (dl_iterate_phdr locks). */
static inline void sb_exeinfo_self(struct sb_exeinfo *e)
{
	memset(e, 0, sizeof(*e));
	dl_iterate_phdr(sb_exeinfo_phdr, e);
}

#endif
