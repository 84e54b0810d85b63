/* sigprof.c - a program that installs its own SIGPROF handler after a short spin, as a
 * program with its own profiler would. Under an agent sampler that uses SIGPROF, sampling
 * must stop and the program's handler must be the one installed. Exits 0 when its
 * handler is in place at the end, 1 otherwise. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void mine(int sig)
{
	(void)sig;
}

static void spin(double s)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

int main(void)
{
	struct sigaction sa, cur;
	spin(0.1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mine;
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return 1;
	spin(0.1);
	if (sigaction(SIGPROF, NULL, &cur) != 0 || cur.sa_handler != mine)
		return 1;
	return 0;
}
