/* forkburn.c - a program whose forked children burn CPU, for `sampbench exec` tests.
 *
 *   forkburn CHILDREN CHILD_MS MAIN_MS
 *
 * Forks CHILDREN processes that each burn CHILD_MS of CPU and _exit, waits for them
 * (their CPU time then counts in its own wait4 total), and burns MAIN_MS itself in its
 * main thread and as much in one thread of its own, after the children. Exits 0, or 1
 * when a child failed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/progs/burn.h"

static double main_s;

static void *fork_worker(void *p)
{
	(void)p;
	burn(main_s);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: forkburn CHILDREN CHILD_MS MAIN_MS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	double child_s = atof(argv[2]) / 1e3;
	main_s = atof(argv[3]) / 1e3;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			burn(child_s);
			_exit(0);
		}
	}
	int st, bad = 0;
	for (int i = 0; i < n; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	pthread_t t;
	if (pthread_create(&t, NULL, fork_worker, NULL) != 0)
		return 1;
	burn(main_s);
	pthread_join(t, NULL);
	printf("forkburn: %d children\n", n);
	return bad;
}
