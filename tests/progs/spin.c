/* spin.c - a small multithreaded program for `sampbench exec` tests.
 *
 *   spin THREADS SECONDS [EXIT_CODE]
 *
 * Starts THREADS workers that each burn SECONDS of their own CPU time (thread CPU
 * clock), plus the main thread burning SECONDS/4. Every thread sets errno to a value of
 * its own before it spins and checks it after every slice: a sampler that clobbers errno
 * in its signal handler or rendezvous is caught (exit 4). Prints one line to stdout at the
 * end, so a test can check that nothing else appears there. Exits with EXIT_CODE. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int errno_bad;

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long spin_slice(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static void burn(double seconds, int my_errno)
{
	unsigned long x = (unsigned long)my_errno;
	double end = thread_cpu_s() + seconds;
	errno = my_errno;
	while (thread_cpu_s() < end) {
		x = spin_slice(x);
		if (errno != my_errno)
			errno_bad = 1;
	}
	if (x == 42)
		putchar('\n'); /* keeps x alive */
}

static double secs;

static void *worker(void *arg)
{
	burn(secs, 1000 + (int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: spin THREADS SECONDS [EXIT_CODE]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	secs = atof(argv[2]);
	int code = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t[64];
	if (n < 0 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i) != 0)
			return 5;
	burn(secs / 4, 999);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (errno_bad) {
		fprintf(stderr, "spin: errno changed under a thread\n");
		return 4;
	}
	printf("spin: %d threads done\n", n);
	return code;
}
