/* split.c - an example program with a known CPU split, for `sampbench exec --expect`
 * (docs/expect.md): each of its worker threads spends 75 % of its CPU time in
 * parse_request and 25 % in send_reply, by its own thread CPU clock, in slices of 2.61 ms
 * and 0.87 ms, until its CPU clock has advanced SECONDS; the main thread waits. Usage: split
 * [SECONDS [THREADS]] (default 2 s of CPU a worker, 2 threads). Work by CPU time, not by the
 * clock on the wall, makes the profile of a CPU sampler the same on a busy machine: hz x
 * SECONDS samples a worker. The 3.48 ms round is no multiple of a kernel tick: with 3 ms
 * and 1 ms rounds (4 ms, the tick at 250 Hz), a per-thread CPU timer on a busy machine,
 * whose expiries the kernel notices at ticks, put 83.5 % of its samples in parse_request.
 * Built with frame pointers and the two functions kept out of line, as a profile names them. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 64

static double seconds = 2;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until this thread's CPU clock advanced ns; returns a value the caller keeps. */
static __attribute__((noinline)) uint64_t spin(uint64_t ns, uint64_t x)
{
	uint64_t end = cpu_ns() + ns;
	while (cpu_ns() < end)
		for (int i = 0; i < 20000; i++) /* ~20 µs between clock reads */
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* The empty asm after the call keeps it from being a tail call: -O2 would jump to spin
 * and leave no parse_request frame on the stack for a profiler to see. */
static __attribute__((noinline)) uint64_t parse_request(uint64_t x)
{
	x = spin(2610000, x); /* 2.61 ms of CPU */
	__asm__ volatile("" : "+r"(x));
	return x;
}

static __attribute__((noinline)) uint64_t send_reply(uint64_t x)
{
	x = spin(870000, x); /* 0.87 ms of CPU */
	__asm__ volatile("" : "+r"(x));
	return x;
}

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg, end = cpu_ns() + (uint64_t)(seconds * 1e9);

	do
		x = send_reply(parse_request(x));
	while (cpu_ns() < end);
	return (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	int n = argc > 2 ? atoi(argv[2]) : 2;
	uint64_t sum = 0;

	seconds = argc > 1 ? atof(argv[1]) : 2;
	if (!(seconds > 0 && seconds <= 3600) || n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: split [SECONDS [THREADS]] (0 < SECONDS <= 3600, 1..%d threads)\n",
			MAX_THREADS);
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0) {
			perror("split: pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(th[i], &r);
		sum += (uintptr_t)r;
	}
	printf("split: %d threads, %g s, %llx\n", n, seconds, (unsigned long long)sum);
	return 0;
}
