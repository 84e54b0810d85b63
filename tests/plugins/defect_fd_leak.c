/* defect_fd_leak.c - test plugin: opens a descriptor per thread in thread_start (without
 * close-on-exec) and never closes it.
 * gate-untimed: caught by an integrity count, whatever the host's load
 * gate-expects: integrity_fd */
#define DEFECT_NAME "defect-fd-leak"
#define DEFECT_DESC "DEFECT: opens /dev/null in every thread_start and never closes it"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include <fcntl.h>
#define DEFECT_THREAD_START(index) (void)open("/dev/null", O_RDONLY)
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
