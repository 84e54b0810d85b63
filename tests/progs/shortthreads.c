/* shortthreads.c - a program of short-lived threads, as thread-per-task servers and
 * parallel tools are, for `sampbench exec` tests.
 *
 *   shortthreads SECONDS [LIFE_MS]
 *
 * For SECONDS of wall time, creates two threads at a time, each burning LIFE_MS (default
 * 1) of its own CPU time, and joins them: hundreds of threads over the run, none alive for
 * long. Prints the thread count to stdout at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/progs/burn.h"

static double life_s = 0.001;

__attribute__((noinline)) static void *short_worker(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;
	double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + life_s;
	while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: shortthreads SECONDS [LIFE_MS]\n");
		return 2;
	}
	double secs = atof(argv[1]);
	if (argc > 2)
		life_s = atof(argv[2]) / 1e3;
	double end = clock_s(CLOCK_MONOTONIC) + secs;
	unsigned long n = 0;
	while (clock_s(CLOCK_MONOTONIC) < end) {
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, short_worker, (void *)(n + (unsigned long)i)) != 0)
				return 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		n += 2;
	}
	printf("shortthreads: %lu threads\n", n);
	return 0;
}
