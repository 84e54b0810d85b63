/* defect_fd_close.c - test plugin: closes a descriptor of the program's in stop(), as a
 * sampler that keeps one per thread in a zeroed table and "closes" the untouched entries
 * (fd 0) does.
 * gate-untimed: caught by an integrity count, whatever the host's load
 * gate-expects: integrity_fd */
#define DEFECT_NAME "defect-fd-close"
#define DEFECT_DESC "DEFECT: closes descriptor 0, the program's, when it stops"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include <unistd.h>
static void fd_close_stop(void);
#define DEFECT_STOP fd_close_stop
#include "tests/plugins/defect_base.h"

static void fd_close_stop(void)
{
	close(0);
}

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
