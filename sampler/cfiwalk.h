/* cfiwalk.h - a walker that needs no frame pointers: libunwind's local unwinder, which
 * finds each caller from the binary's call frame information (.eh_frame), as gperftools
 * built with libunwind and perf --call-graph dwarf do. Linux only (cfiwalk_linux.c). */
#ifndef SB_CFIWALK_H
#define SB_CFIWALK_H

#include <stdint.h>

#include "sampler/fpwalk.h"

/* Prepares the unwinder outside any handler: per-thread caches of the unwind tables, so a
 * walk in a handler takes no lock of libunwind's. Returns 0 or -1. */
int cfi_walk_init(void);

/* Walks the calling thread's interrupted context uc (its signal handler's ucontext) into
 * pcs[0..max_depth), leaf first (uc's PC, then return addresses), storing the count in
 * *depth; a sigsample_walk_fn. Returns SB_WALK_OK at the outermost frame,
 * SB_WALK_TRUNCATED at max_depth with frames left, SB_WALK_READ_FAILED when a frame has no
 * unwind information or the unwinder failed.
 *
 * Async-signal-safe as libunwind's local unwinder is (unw_init_local2, unw_step: no
 * malloc, no lock of its own with per-thread caches), with one exception it documents: a
 * PC whose unwind table is not cached yet is looked up through dl_iterate_phdr, which
 * takes the dynamic loader's (recursive) lock, so a walk in a thread interrupted while
 * another one dlopens waits for it. gperftools' libunwind mode has the same property. */
enum sb_walk_end cfi_walk(const void *uc, uint64_t *pcs, uint32_t max_depth, uint32_t *depth);

#endif
