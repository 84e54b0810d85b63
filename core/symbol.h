/* symbol.h - one symbolized frame PC (module, function, offset): the rows of a run's
 * symbol table (struct sb_run.symbols, HDF5 `symbols`). Resolving PCs is
 * analysis/symbolize.c. */
#ifndef SB_SYMBOL_H
#define SB_SYMBOL_H

#include <stdint.h>

#define SB_SYM_MODULE_LEN 64
#define SB_SYM_FUNC_LEN 128

/* The lowest kernel address (x86_64 and arm64 Linux: the upper half). perf callchains hold
 * kernel frames first; nothing else stores them. */
#define SB_KERNEL_ADDR_MIN 0xffff800000000000ull

#define SB_SYM_MODULE_KERNEL "[kernel]"
#define SB_SYM_MODULE_UNKNOWN "?"

struct sb_symbol {
	uint64_t pc;
	char module[SB_SYM_MODULE_LEN];  /* basename of the object, SB_SYM_MODULE_KERNEL, or
					  * SB_SYM_MODULE_UNKNOWN */
	char function[SB_SYM_FUNC_LEN];  /* symbol name, or "0x<pc>" when unknown */
	uint64_t offset;                 /* pc - symbol start (0 when unknown) */
};

#endif
