/* defect_sigaction.c - test plugin: sets SIGPIPE to SIG_IGN in every thread_start (a
 * library sparing itself broken pipes) and leaves it so: the program's disposition
 * changes under it mid-run.
 * gate-untimed: caught by an integrity count, whatever the host's load
 * gate-expects: integrity_sigaction */
#define DEFECT_NAME "defect-sigaction"
#define DEFECT_DESC "DEFECT: ignores SIGPIPE from thread_start on, for the whole program"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include <signal.h>
#define DEFECT_THREAD_START(index) signal(SIGPIPE, SIG_IGN)
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
