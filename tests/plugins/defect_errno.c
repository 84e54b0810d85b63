/* defect_errno.c - test plugin: its handler returns with errno changed on every other sample
 * (it restores a value of its own, not the one it saved), as a handler that calls a
 * library function and forgets to restore errno does.
 * gate-untimed: caught by an integrity count, whatever the host's load
 * gate-expects: integrity_errno
 * tsan-fails: ThreadSanitizer reports a signal handler that spoils errno (exit 66)
 * gate-workload: mixed */
#define DEFECT_NAME "defect-errno"
#define DEFECT_DESC "DEFECT: its handler returns with errno changed on every other sample"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
/* the skeleton restores saved_errno after this hook: the defect changes what it restores */
#define DEFECT_HANDLER()                                                                   \
	do {                                                                               \
		if (atomic_load(&n_samples) % 2)                                           \
			saved_errno = ENOENT;                                              \
	} while (0)
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
