/* manythreads.c - more threads over a program's life than a run has thread slots, for
 * `sampbench exec` tests.
 *
 *   manythreads TOTAL AT_ONCE BURN_MS
 *
 * Creates TOTAL threads, AT_ONCE at a time; each burns BURN_MS of its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and ends one of three ways, in turn: it returns, it calls
 * pthread_exit, or it waits in a cancellation point until the main thread cancels it,
 * and names itself for the way it ends (many-ret, many-exit, many-cancel).
 * Prints one line with the thread count and exits 0; 1 when a thread could not be made. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/progs/burn.h"

static double burn_s;

struct worker {
	pthread_t t;
	int how; /* 0 return, 1 pthread_exit, 2 cancelled */
	atomic_int burned;
};

static void *many_worker(void *p)
{
	static const char *const names[] = { "many-ret", "many-exit", "many-cancel" };
	struct worker *w = p;
	pthread_setname_np(pthread_self(), names[w->how]);
	burn(burn_s);
	atomic_store(&w->burned, 1);
	if (w->how == 1)
		pthread_exit(NULL);
	while (w->how == 2)
		pause(); /* a cancellation point: the main thread cancels it here */
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: manythreads TOTAL AT_ONCE BURN_MS\n");
		return 2;
	}
	int total = atoi(argv[1]), at_once = atoi(argv[2]);
	burn_s = atof(argv[3]) / 1e3;
	if (total < 1 || at_once < 1 || !(burn_s > 0)) {
		fprintf(stderr, "manythreads: bad arguments\n");
		return 2;
	}
	struct worker *w = calloc((size_t)at_once, sizeof(*w));
	if (!w)
		return 1;
	int made = 0;
	while (made < total) {
		int n = total - made < at_once ? total - made : at_once;
		for (int i = 0; i < n; i++) {
			w[i].how = (made + i) % 3;
			atomic_store(&w[i].burned, 0);
			if (pthread_create(&w[i].t, NULL, many_worker, &w[i]) != 0)
				return 1;
		}
		for (int i = 0; i < n; i++) {
			if (w[i].how == 2) {
				while (!atomic_load(&w[i].burned))
					usleep(200);
				pthread_cancel(w[i].t);
			}
			pthread_join(w[i].t, NULL);
		}
		made += n;
	}
	printf("manythreads: %d threads\n", made);
	free(w);
	return 0;
}
