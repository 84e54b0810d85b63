/* burn.h - the test programs' CPU burn: spins until the calling thread's own CPU clock has
 * advanced by the given seconds, so each thread's truth is known to the program. */
#ifndef SB_TESTS_PROGS_BURN_H
#define SB_TESTS_PROGS_BURN_H

#include <time.h>

/* Seconds on clock id. */
static inline double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Uses s seconds of the calling thread's CPU. noinline: its frame names the work in a
 * sample's stack. */
__attribute__((noinline, unused)) static void burn(double s)
{
	volatile unsigned long x = 1;
	double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + s;
	while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
}

#endif
