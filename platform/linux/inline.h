/* linux/inline.h - the parts of the Linux platform layer that must be inlined into their
 * caller (included by platform.h only): the workloads' blocking calls, issued so that the
 * workload's own function is the leaf frame while the thread is off-CPU, and the barrier
 * (pthread's, so stacks stay those of glibc). */
#ifndef SB_PLATFORM_LINUX_INLINE_H
#define SB_PLATFORM_LINUX_INLINE_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PLAT_INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__)
/* The syscall instruction inline: no libc frame under the caller. Returns -errno. */
PLAT_INLINE long plat_syscall4(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
/* Elsewhere the libc wrapper is the leaf: offcpu_sample_fraction then depends on the
 * walker recovering its caller. */
PLAT_INLINE long plat_syscall4(long n, long a, long b, long c, long d)
{
	long ret = syscall(n, a, b, c, d);
	return ret < 0 ? -errno : ret;
}
#endif

/* clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to deadline_ns. Returns 0 or -EINTR. */
PLAT_INLINE long plat_leaf_sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000ull),
			       (long)(deadline_ns % 1000000000ull) };
	return plat_syscall4(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, (long)&ts, 0);
}

/* read(2). Returns bytes read or -errno. */
PLAT_INLINE long plat_leaf_read(int fd, void *buf, size_t len)
{
	return plat_syscall4(SYS_read, fd, (long)buf, (long)len, 0);
}

/* pread(2). Returns bytes read or -errno. */
PLAT_INLINE long plat_leaf_pread(int fd, void *buf, size_t len, long off)
{
	return plat_syscall4(SYS_pread64, fd, (long)buf, (long)len, off);
}

/* Waits up to timeout_ns while *word == val (a private futex). Returns 0 when woken or
 * -errno (-ETIMEDOUT, -EINTR, -EAGAIN when *word != val). */
PLAT_INLINE long plat_wait_word(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull),
			       (long)(timeout_ns % 1000000000ull) };
	long rc = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
	return rc == 0 ? 0 : -errno;
}

/* poll(2) on one descriptor, no timeout (ppoll, so that every architecture has it).
 * Returns the number of ready descriptors or -errno. */
PLAT_INLINE long plat_leaf_poll(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	return plat_syscall4(SYS_ppoll, (long)&p, 1, 0, 0);
}

/* Waits, no timeout, while *word == val (a private futex, the call inline). Returns 0
 * when woken or -errno (-EINTR, -EAGAIN when *word != val). */
PLAT_INLINE long plat_leaf_wait_word(_Atomic uint32_t *word, uint32_t val)
{
	return plat_syscall4(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, val, 0);
}

/* Wakes every thread in plat_leaf_wait_word on word (after the caller changed it). */
PLAT_INLINE void plat_wake_word_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* A barrier for n threads; plat_barrier_wait returns PLAT_BARRIER_SERIAL in one of them. */
typedef pthread_barrier_t plat_barrier_t;
#define PLAT_BARRIER_SERIAL PTHREAD_BARRIER_SERIAL_THREAD
PLAT_INLINE int plat_barrier_init(plat_barrier_t *b, unsigned n)
{
	return pthread_barrier_init(b, NULL, n);
}
PLAT_INLINE int plat_barrier_wait(plat_barrier_t *b)
{
	return pthread_barrier_wait(b);
}
PLAT_INLINE void plat_barrier_destroy(plat_barrier_t *b)
{
	pthread_barrier_destroy(b);
}

#endif
