/* defect_leak.c - test plugin: a helper thread allocates 512 KB every 10 ms, touches it and
 * never frees it (about 50 MB/s of private memory); its samples are healthy.
 * gate-untimed: caught by a memory slope, whatever the host's load
 * gate-expects: rss_growth_bytes_per_s */
#define DEFECT_NAME "defect-leak"
#define DEFECT_DESC "DEFECT: a helper thread leaks 512 KB every 10 ms"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_START leak_start
#define DEFECT_STOP leak_stop
static void leak_start(void);
static void leak_stop(void);
#include "tests/plugins/defect_base.h"

#include <pthread.h>
#include <stdlib.h>

#define LEAK_BYTES (512 * 1024)
#define LEAK_PERIOD_NS 10000000L

static pthread_t leak_thread;
static _Atomic int leak_run, leak_started;

static void *leak_main(void *p)
{
	(void)p;
	struct timespec ts = { 0, LEAK_PERIOD_NS };

	while (atomic_load(&leak_run)) {
		char *b = malloc(LEAK_BYTES);
		if (b)
			memset(b, 1, LEAK_BYTES); /* resident: every page touched; never freed */
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void leak_start(void)
{
	atomic_store(&leak_run, 1);
	atomic_store(&leak_started, pthread_create(&leak_thread, NULL, leak_main, NULL) == 0);
}

static void leak_stop(void)
{
	atomic_store(&leak_run, 0);
	if (atomic_exchange(&leak_started, 0))
		pthread_join(leak_thread, NULL);
}

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}
