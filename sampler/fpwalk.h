/* fpwalk.h - the shared frame-pointer walker.
 *
 * Every read is validated first: the frame pointer must lie in [stack_lo, stack_hi - 16],
 * be 8-byte aligned and strictly increase from frame to frame. A zero return address ends
 * the walk. Bounds come from the thread's registration, never from inside a handler. */
#ifndef SB_FPWALK_H
#define SB_FPWALK_H

#include <stdint.h>

struct sb_regs {
	uintptr_t pc, sp, fp, lr; /* lr is 0 where the architecture has none (x86_64) */
};

struct sb_stack_bounds {
	uintptr_t lo; /* lowest valid address of the stack */
	uintptr_t hi; /* one past the highest */
};

enum sb_walk_end {
	SB_WALK_OK = 0,        /* reached a zero frame pointer or zero return address */
	SB_WALK_TRUNCATED,     /* max_depth reached with frames left */
	SB_WALK_OUT_OF_BOUNDS, /* fp outside the stack */
	SB_WALK_MISALIGNED,    /* fp not 8-byte aligned */
	SB_WALK_NOT_INCREASING, /* fp did not move up the stack (cycle or corruption) */
	SB_WALK_READ_FAILED,   /* the reader callback failed (out-of-process walks) */
};

/* Reads 16 bytes (saved fp, return address) at addr into out[2]. Returns 0 on success.
 * NULL means "read directly from this address space". Must be async-signal-safe when the
 * walk runs in a handler. */
typedef int (*sb_read_fn)(void *ctx, uintptr_t addr, uintptr_t out[2]);

/* Returns 1 when fp may be dereferenced as a frame record inside bounds, 0 otherwise. */
int fp_validate(uintptr_t fp, const struct sb_stack_bounds *b);

/* Walks from regs into pcs[] (leaf first: regs->pc, then return addresses). Writes at most
 * max_depth entries, stores the count in *depth and returns why the walk ended.
 * Async-signal-safe with read == NULL. */
enum sb_walk_end fp_walk(const struct sb_regs *regs, const struct sb_stack_bounds *b,
			 uint64_t *pcs, uint32_t max_depth, uint32_t *depth, sb_read_fn read,
			 void *read_ctx);

/* Fills regs from a signal handler's ucontext (void * to keep <ucontext.h> out). */
void regs_from_ucontext(const void *uc, struct sb_regs *regs);

#endif
