/* symbolize.h - PCs to (module, function, offset).
 *
 * Runs are symbolized by the harness right after the child exits: the child was forked
 * without exec, so the parent has the same address layout and can resolve the child's PCs
 * (static functions too: libdw reads .symtab). The result is stored with the run (HDF5
 * `symbols`), so readers never need the binary or its load address. The table's types are
 * core/symbol.h. */
#ifndef SB_SYMBOLIZE_H
#define SB_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"
#include "core/symbol.h"

/* Sets out to "nothing known about pc": module SB_SYM_MODULE_UNKNOWN, function "0x<pc>",
 * offset 0. */
void symbol_set_unknown(struct sb_symbol *out, uint64_t pc);
/* 1 when sym names a function, 0 when it holds only the "0x<pc>" placeholder (or nothing). */
int symbol_function_known(const struct sb_symbol *sym);
/* 1 when sym's module is known (kernel included), 0 when empty or SB_SYM_MODULE_UNKNOWN. */
int symbol_module_known(const struct sb_symbol *sym);
/* 1 when sym is the kernel's. */
int symbol_is_kernel(const struct sb_symbol *sym);

/* The distinct PCs of frames[0..n), sorted ascending, malloc'd (the caller frees); *k gets
 * how many. NULL when out of memory. The order symbol tables are kept in (symbol_find). */
uint64_t *symbol_distinct_pcs(const uint64_t *frames, size_t n, size_t *k);

struct sb_symbolizer;

/* Creates a symbolizer for the calling process's current mappings (and /proc/kallsyms
 * when readable). Returns NULL on failure. Free with symbolizer_free(). */
struct sb_symbolizer *symbolizer_new(void);
void symbolizer_free(struct sb_symbolizer *s);

/* Resolves pc into out. Returns 1 when a function was found, 0 otherwise (out still holds
 * the module when known and a hex name). */
int symbolize(struct sb_symbolizer *s, uint64_t pc, struct sb_symbol *out);

/* Symbolizes every distinct PC of frames[0..n): *syms (malloc'd, sorted by pc) and *nsyms.
 * Returns 0 or -1 (out of memory). */
int symbolize_frames(struct sb_symbolizer *s, const uint64_t *frames, size_t n,
		     struct sb_symbol **syms, size_t *nsyms);

/* Finds pc in a table from symbolize_frames (binary search). NULL when absent. */
const struct sb_symbol *symbol_find(const struct sb_symbol *syms, size_t n, uint64_t pc);

/* The inline chain of user-space pc (core/symbol.h): up to max frames into out, innermost
 * first (depth 0), each naming the inlined function and the file:line of the call it was
 * inlined at, looked up at pc itself (see inline_lookup_pc for return addresses). Returns
 * the frames written: 0 when pc is not in inlined code, has no DWARF, or on a platform
 * without inline chains (Darwin). */
int symbolize_inlines(struct sb_symbolizer *s, uint64_t pc, struct sb_inline_frame *out,
		      int max);

/* The first frame of each of samples[0..n) with frames (where it was interrupted), of
 * frames[0..nframes), distinct and sorted, malloc'd (the caller frees); *k gets how many.
 * NULL when out of memory. */
uint64_t *symbol_leaf_pcs(const struct sb_sample *samples, size_t n, const uint64_t *frames,
			  size_t nframes, size_t *k);

/* Where pc's inline chain is looked up: pc itself when it is in leaves[0..nleaves) (sorted,
 * from symbol_leaf_pcs) or leaves is NULL, else pc - 1: a deeper frame is a return
 * address, and the call before it may end an inlined body. */
uint64_t inline_lookup_pc(const uint64_t *leaves, size_t nleaves, uint64_t pc);

/* The inline chains of every PC of syms[0..nsyms) (a table from symbolize_frames), each
 * looked up at inline_lookup_pc(leaves, nleaves, pc) and stored under pc: *out
 * (malloc'd, sorted by pc then depth; NULL when no PC has a chain) and *n. Returns 0 or
 * -1 (out of memory: *out NULL, *n 0). */
int symbolize_inline_table(struct sb_symbolizer *s, const struct sb_symbol *syms,
			   size_t nsyms, const uint64_t *leaves, size_t nleaves,
			   struct sb_inline_frame **out, size_t *n);

struct sb_run;
/* Sets r->inlines and r->ninlines (r owns them) from r's symbols table, each PC looked up
 * as inline_lookup_pc says with the leaves of r's samples. Returns 0 or -1 (out of memory:
 * r has no inline frames). */
int symbolize_run_inlines(struct sb_symbolizer *s, struct sb_run *r);

/* Appends chain[0..k) to the table *t of *n rows and room for *cap (grown, realloc'd).
 * Returns 0 or -1 (out of memory: *t unchanged). For builders of inline tables whose PCs
 * come in ascending order, as symbolize_inline_table's. */
int inline_table_append(struct sb_inline_frame **t, size_t *n, size_t *cap,
			const struct sb_inline_frame *chain, size_t k);

/* The chain of pc in a table from symbolize_inline_table (binary search): its depth-0 row,
 * *count its frames (depth 0 .. *count - 1, contiguous). NULL and *count 0 when pc has
 * none. */
const struct sb_inline_frame *inline_find(const struct sb_inline_frame *t, size_t n,
					  uint64_t pc, size_t *count);

#endif
