/* fpwalk.c - validated frame-pointer walking, shared by every sampler that walks. */
#include "sampler/fpwalk.h"

#include <stddef.h>

#include "platform/platform.h"

int fp_validate(uintptr_t fp, const struct sb_stack_bounds *b)
{
	if (fp < b->lo || b->hi < 16 || fp > b->hi - 16)
		return 0;
	return (fp & 7) == 0;
}

/* Not instrumented: a frame pointer from code built without one (libc) may point anywhere
 * in the validated stack, including AddressSanitizer's redzones between another frame's
 * locals; reading there is the walker's job, not a bug. A peek (thread_ctl.h) walks a
 * blocked thread's stack without stopping it: that thread may wake and write the words
 * read here meanwhile, a race the walk accepts (each record is validated before the next
 * read, a torn chain ends the walk), so ThreadSanitizer does not instrument it either. */
__attribute__((no_sanitize("address", "thread")))
static int read_direct(uintptr_t addr, uintptr_t out[2])
{
	const volatile uintptr_t *p = (const volatile uintptr_t *)addr;
	out[0] = p[0];
	out[1] = p[1];
	return 0;
}

enum sb_walk_end fp_walk(const struct sb_regs *regs, const struct sb_stack_bounds *b,
			 uint64_t *pcs, uint32_t max_depth, uint32_t *depth, sb_read_fn read,
			 void *read_ctx)
{
	uint32_t n = 0;
	uintptr_t fp = regs->fp;
	enum sb_walk_end end = SB_WALK_OK;

	if (max_depth == 0) {
		*depth = 0;
		return SB_WALK_TRUNCATED;
	}
	pcs[n++] = regs->pc;
	while (fp != 0) {
		if (!fp_validate(fp, b)) {
			end = (fp & 7) ? SB_WALK_MISALIGNED : SB_WALK_OUT_OF_BOUNDS;
			break;
		}
		uintptr_t rec[2];
		if (read ? read(read_ctx, fp, rec) != 0 : read_direct(fp, rec) != 0) {
			end = SB_WALK_READ_FAILED;
			break;
		}
		if (rec[1] == 0)
			break;
		if (n >= max_depth) {
			end = SB_WALK_TRUNCATED;
			break;
		}
		pcs[n++] = plat_strip_code_ptr(rec[1]); /* arm64: drop pointer authentication bits */
		if (rec[0] != 0 && rec[0] <= fp) {
			end = SB_WALK_NOT_INCREASING;
			break;
		}
		fp = rec[0];
	}
	*depth = n;
	return end;
}

void regs_from_ucontext(const void *ucp, struct sb_regs *regs)
{
	plat_regs_from_ucontext(ucp, &regs->pc, &regs->sp, &regs->fp, &regs->lr);
}
