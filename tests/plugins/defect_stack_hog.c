/* defect_stack_hog.c - test plugin: its handler puts a 200 KiB buffer on the interrupted
 * thread's stack (fine on glibc's 8 MiB thread stacks, a crash on 64 KiB ones).
 * gate-untimed: caught by a stack depth, whatever the host's load
 * gate-expects: stack_peak_bytes */
#define DEFECT_NAME "defect-stack-hog"
#define DEFECT_DESC "DEFECT: its handler uses 200 KiB of the interrupted thread's stack"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_HANDLER() stack_hog()
static void stack_hog(void);
#include "tests/plugins/defect_base.h"

/* Touches one byte a page, from the top down, as a compiler's stack probe would: the
 * guard page of a small stack is hit, not jumped over. */
static __attribute__((noinline)) void stack_hog(void)
{
	volatile char buf[200 << 10];
	for (size_t i = sizeof(buf); i > 0; i -= 4096)
		buf[i - 1] = (char)i;
	buf[0] = 1;
}

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
