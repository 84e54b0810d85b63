/* cfiwalk_linux.c - libunwind's local unwinder as a sigsample walker (cfiwalk.h). */
#include "sampler/cfiwalk.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

int cfi_walk_init(void)
{
	return unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD) == 0 ? 0 : -1;
}

enum sb_walk_end cfi_walk(const void *uc, uint64_t *pcs, uint32_t max_depth, uint32_t *depth)
{
	unw_cursor_t cursor;
	unw_word_t ip;
	uint32_t n = 0;
	int step = 0;

	*depth = 0;
	/* x86_64's unw_context_t is the ucontext_t a handler gets; UNW_INIT_SIGNAL_FRAME: the
	 * leaf PC is where the thread was interrupted, not a return address */
	if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return SB_WALK_READ_FAILED;
	do {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (n == max_depth) {
			*depth = n;
			return SB_WALK_TRUNCATED;
		}
		pcs[n++] = (uint64_t)ip;
	} while ((step = unw_step(&cursor)) > 0);
	*depth = n;
	return step < 0 ? SB_WALK_READ_FAILED : SB_WALK_OK;
}
