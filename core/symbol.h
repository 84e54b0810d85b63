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

/* Inline chains (HDF5 `symbol_inlines`): a PC in code the compiler inlined names the
 * function it was inlined into (struct sb_symbol.function); its chain names the inlined
 * functions around it, from DWARF's DW_TAG_inlined_subroutine scopes. One row per frame:
 * depth 0 is the innermost inlined function, depth d + 1 the one frame d was inlined
 * into, and the symbol's function contains the outermost. A PC outside inlined code, or in
 * a binary without DWARF, has no rows. */
#define SB_SYM_FILE_LEN 128
#define SB_INLINE_MAX_DEPTH 16 /* frames kept per PC, innermost first */

struct sb_inline_frame {
	uint64_t pc;
	int32_t depth;                   /* 0: innermost */
	int32_t call_line;               /* line of the call this frame was inlined at, in the
					  * function one level out; 0 when unknown */
	char function[SB_SYM_FUNC_LEN];  /* the inlined function's name */
	char call_file[SB_SYM_FILE_LEN]; /* source file of that call ("" when unknown; the
					  * path's tail when longer) */
};

#endif
