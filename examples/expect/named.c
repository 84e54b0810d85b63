/* named.c - an example program whose threads name themselves, for `sampbench exec
 * --expect` (docs/expect.md): two worker threads name themselves "encoder" and "decoder"
 * (pthread_setname_np), the main thread "mux"; the encoder spends SECONDS of CPU in
 * encode_frame, the decoder SECONDS / 2 in decode_frame, the main thread SECONDS / 6 in
 * mux_frame, each by its own thread CPU clock, then the main thread waits for the workers.
 * Their CPU shares are 6:3:1 (0.6, 0.3, 0.1) whatever the load: work by CPU time, not by the
 * wall clock, gives a CPU sampler hz x CPU seconds samples a thread. Usage: named [SECONDS]
 * (default 2). Built with frame pointers and the functions kept out of line, as a profile
 * names them. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* One slice of each thread's work: 1.37 ms of CPU, no multiple of a kernel tick. The empty
 * asm after each call keeps it from being a tail call, which would leave no frame of the
 * caller for a profiler to see. */
static __attribute__((noinline)) uint64_t encode_frame(uint64_t x)
{
	x = spin(1370000, x);
	__asm__ volatile("" : "+r"(x));
	return x;
}

static __attribute__((noinline)) uint64_t decode_frame(uint64_t x)
{
	x = spin(1370000, x);
	__asm__ volatile("" : "+r"(x));
	return x;
}

static __attribute__((noinline)) uint64_t mux_frame(uint64_t x)
{
	x = spin(1370000, x);
	__asm__ volatile("" : "+r"(x));
	return x;
}

/* Calls frame until this thread's CPU clock advanced s seconds; every thread's work is
 * under this frame (the examples' `within`). */
static __attribute__((noinline)) uint64_t run_stage(uint64_t (*frame)(uint64_t), double s,
						    uint64_t x)
{
	uint64_t end = cpu_ns() + (uint64_t)(s * 1e9);

	do
		x = frame(x);
	while (cpu_ns() < end);
	__asm__ volatile("" : "+r"(x));
	return x;
}

static void *encoder(void *arg)
{
	pthread_setname_np(pthread_self(), "encoder");
	return (void *)(uintptr_t)run_stage(encode_frame, seconds, (uintptr_t)arg);
}

static void *decoder(void *arg)
{
	pthread_setname_np(pthread_self(), "decoder");
	return (void *)(uintptr_t)run_stage(decode_frame, seconds / 2, (uintptr_t)arg);
}

int main(int argc, char **argv)
{
	pthread_t enc, dec;
	void *a, *b;

	seconds = argc > 1 ? atof(argv[1]) : 2;
	if (argc > 2 || !(seconds > 0 && seconds <= 3600)) {
		fprintf(stderr, "usage: named [SECONDS] (0 < SECONDS <= 3600)\n");
		return 2;
	}
	pthread_setname_np(pthread_self(), "mux");
	int rc = pthread_create(&enc, NULL, encoder, (void *)1);
	if (rc == 0 && (rc = pthread_create(&dec, NULL, decoder, (void *)2)) != 0)
		pthread_join(enc, &a);
	if (rc != 0) {
		fprintf(stderr, "named: cannot create a thread: %s\n", strerror(rc));
		return 1;
	}
	uint64_t x = run_stage(mux_frame, seconds / 6, 3);
	pthread_join(enc, &a);
	pthread_join(dec, &b);
	printf("named: %g s, %llx\n", seconds,
	       (unsigned long long)(x + (uintptr_t)a + (uintptr_t)b));
	return 0;
}
