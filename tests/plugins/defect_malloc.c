/* defect_malloc.c - test plugin: allocates in its signal handler (malloc and free of 4 KiB,
 * above glibc's tcache, so through the arena and its lock). On malloclock the handler
 * interrupts threads holding their arena's lock and deadlocks them: the watchdog kills the
 * run.
 * gate-expects: failed_runs
 * gate-workload: malloclock
 * gate-watchdog: 2.5 (a 0.5 s run; each of its runs hangs, the default would wait 5.5 s)
 * gate-plain-only (glibc's allocator: a sanitizer build brings its own) */
#include <stdlib.h>

#define DEFECT_NAME "defect-malloc"
#define DEFECT_DESC "DEFECT: calls malloc() and free() in its signal handler"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
/* The defect itself: not async-signal-safe, on purpose. */
#define DEFECT_HANDLER() defect_allocate()
static void defect_allocate(void);
#include "tests/plugins/defect_base.h"

static void defect_allocate(void)
{
	void *volatile p = malloc(4096);
	if (p)
		memset(p, 0xa5, 64);
	free(p);
}

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
