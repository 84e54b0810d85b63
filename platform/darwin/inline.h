/* darwin/inline.h - the Darwin versions of linux/inline.h (included by platform.h only).
 *
 * Darwin's system-call numbers and ABI are private, so the blocking calls go through
 * libSystem: the leaf frame is libsystem_kernel's wrapper and offcpu_sample_fraction
 * depends on the walker recovering its caller (docs/darwin.md). Darwin has no public
 * futex and no pthread barrier: plat_wait_word is an empty kevent() wait with a timeout
 * (an interruptible kernel wait, like FUTEX_WAIT on a word nobody changes; it returns
 * -EAGAIN at once if *word != val) and the barrier is a mutex and a condition variable. */
#ifndef SB_PLATFORM_DARWIN_INLINE_H
#define SB_PLATFORM_DARWIN_INLINE_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define PLAT_INLINE static inline __attribute__((always_inline))

/* Relative nanosleep to deadline_ns (CLOCK_MONOTONIC). Returns 0 or -EINTR. */
PLAT_INLINE long plat_leaf_sleep_until(uint64_t deadline_ns)
{
	struct timespec now, rel;

	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	if (now_ns >= deadline_ns)
		return 0;
	rel.tv_sec = (time_t)((deadline_ns - now_ns) / 1000000000ull);
	rel.tv_nsec = (long)((deadline_ns - now_ns) % 1000000000ull);
	return nanosleep(&rel, NULL) == 0 ? 0 : -errno;
}

/* read(2). Returns bytes read or -errno. */
PLAT_INLINE long plat_leaf_read(int fd, void *buf, size_t len)
{
	ssize_t n = read(fd, buf, len);
	return n >= 0 ? (long)n : -errno;
}

/* pread(2). Returns bytes read or -errno. */
PLAT_INLINE long plat_leaf_pread(int fd, void *buf, size_t len, long off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);
	return n >= 0 ? (long)n : -errno;
}

/* platform/darwin.c */
long plat_wait_word(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns);
/* poll(2) on one descriptor, no timeout. Returns the number ready or -errno. */
PLAT_INLINE long plat_leaf_poll(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, -1);
	return n >= 0 ? n : -errno;
}
/* No futex: waits in 100 ms slices (plat_wait_word) while *word == val, so a waiter sees
 * the change within 100 ms of it; plat_wake_word_all has nothing to do. Returns 0,
 * -EAGAIN when *word != val, or -EINTR. */
PLAT_INLINE long plat_leaf_wait_word(_Atomic uint32_t *word, uint32_t val)
{
	long r = plat_wait_word(word, val, 100000000ull);
	return r == -ETIMEDOUT ? 0 : r;
}
PLAT_INLINE void plat_wake_word_all(_Atomic uint32_t *word)
{
	(void)word;
}

typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned n, waiting;
	unsigned long round;
} plat_barrier_t;
#define PLAT_BARRIER_SERIAL (-1)
int plat_barrier_init(plat_barrier_t *b, unsigned n);
int plat_barrier_wait(plat_barrier_t *b);
void plat_barrier_destroy(plat_barrier_t *b);

#endif
