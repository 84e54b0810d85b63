/* defect_sigblock.c - test plugin: its thread_start blocks SIGUSR1, SIGUSR2, SIGALRM and
 * SIGCHLD in every workload thread and nothing restores them (a library "protecting" its
 * sampling from the program's signals).
 * gate-untimed: caught by an integrity count, whatever the host's load
 * gate-expects: integrity_sigmask */
#define DEFECT_NAME "defect-sigblock"
#define DEFECT_DESC "DEFECT: blocks SIGUSR1, SIGUSR2, SIGALRM and SIGCHLD in every thread"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_SUSPEND_WINDOW | SAMPBENCH_CAP_TICK_DRIVEN
#include <signal.h>
static void block_program_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}
#define DEFECT_THREAD_START(index) block_program_signals()
#include <pthread.h>
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
