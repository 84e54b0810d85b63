/* sigblock.c - a program that blocks every signal in its threads, as liblzma's workers
 * do, for `sampbench exec` tests.
 *
 *   sigblock libc|raw THREADS MS
 *
 * Starts THREADS threads that block every signal, then burn MS of their own CPU time;
 * the main thread burns MS/4. libc: the threads block with pthread_sigmask (which a
 * preloaded library sees); raw: with the rt_sigprocmask system call itself (which none
 * does). Exits 0. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/progs/burn.h"

static double burn_s;
static int raw;

static void *blocked_worker(void *p)
{
	sigset_t all;
	(void)p;
	sigfillset(&all);
	if (raw)
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, _NSIG / 8);
	else
		pthread_sigmask(SIG_BLOCK, &all, NULL);
	burn(burn_s);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "libc") != 0 && strcmp(argv[1], "raw") != 0)) {
		fprintf(stderr, "usage: sigblock libc|raw THREADS MS\n");
		return 2;
	}
	raw = strcmp(argv[1], "raw") == 0;
	int n = atoi(argv[2]);
	burn_s = atof(argv[3]) / 1e3;
	pthread_t t[64];
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, blocked_worker, NULL) != 0)
			return 1;
	burn(burn_s / 4);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
