/* namedthreads.c - a program whose threads name themselves, for `sampbench exec` tests.
 *
 *   namedthreads THREADS SECONDS
 *
 * The main thread names itself "named-main" and burns SECONDS/4 of its CPU. Worker i names
 * itself "worker-<i>" and burns SECONDS of its own CPU; worker 0 renames itself "late-0"
 * half-way, so the name it ends with is not the one it started with. One more thread
 * names itself "sleeper" and sleeps: it is still alive when main returns, and main renames
 * it "sleeper-end" just before (a name no poll of /proc a few ms apart is likely to see).
 * And first, a thread named "blink" lives for a few µs, between two polls. Prints one line
 * and exits 0 (2 on bad usage, 5 when a thread could not be made or named). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tests/progs/burn.h"

static double secs;

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", i);
	if (pthread_setname_np(pthread_self(), name) != 0)
		exit(5);
	if (i == 0) {
		burn(secs / 2);
		prctl(PR_SET_NAME, "late-0"); /* the other way a thread names itself */
		burn(secs / 2);
	} else {
		burn(secs);
	}
	return NULL;
}

static void *blink(void *arg)
{
	(void)arg;
	if (pthread_setname_np(pthread_self(), "blink") != 0)
		exit(5);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	if (pthread_setname_np(pthread_self(), "sleeper") != 0)
		exit(5);
	for (;;)
		pause(); /* until the process exits */
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: namedthreads THREADS SECONDS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	secs = atof(argv[2]);
	pthread_t t[64], s;
	if (n < 1 || n > 64 || !(secs > 0))
		return 2;
	if (pthread_setname_np(pthread_self(), "named-main") != 0)
		return 5;
	if (pthread_create(&s, NULL, blink, NULL) != 0 || pthread_join(s, NULL) != 0)
		return 5;
	if (pthread_create(&s, NULL, sleeper, NULL) != 0 || pthread_detach(s) != 0)
		return 5;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i) != 0)
			return 5;
	burn(secs / 4);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("namedthreads: %d threads done\n", n);
	fflush(stdout);
	if (pthread_setname_np(s, "sleeper-end") != 0)
		return 5;
	return 0;
}
