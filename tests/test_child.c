/* test_child.c - harness/child.c: exit status and rusage come back, the deadline and the
 * interrupt flag kill the child, and a kill reaches the whole process group (a helper
 * the child forked dies with it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/child.h"
#include "harness/rssmon.h"

/* The user time exit_with_7 burns: the kernel splits a process's CPU time into user and
 * system by the ticks it sampled, so a fixed loop count can come back as ru_utime 0 (an
 * ASan child spent its few ticks in the kernel, faulting its shadow in). */
#define BURN_UTIME_US 20000

static long utime_us(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec;
}

/* Spins until its own rusage says BURN_UTIME_US of user time (which wait4 then reports,
 * never less), then exits 7; exits 8 when that takes over 10 s of wall time. */
static void exit_with_7(void *arg)
{
	(void)arg;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (utime_us() < BURN_UTIME_US) {
		for (volatile unsigned x = 0; x < 100000u; x++)
			;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			_exit(8);
	}
	_exit(7);
}

static void test_status_and_rusage(void **state)
{
	(void)state;
	struct child c;
	struct child_exit e;
	struct child_wait_opts o = { .timeout_s = 30, .poll_ns = 1000000 };

	assert_int_equal(child_start(&c, 1, exit_with_7, NULL), 0);
	assert_true(c.pid > 0);
	assert_int_equal(child_wait(&c, &o, &e), 0);
	assert_int_equal(c.pid, -1);
	assert_false(e.killed);
	assert_true(WIFEXITED(e.status));
	assert_int_equal(WEXITSTATUS(e.status), 7);
	assert_true(e.ru.ru_utime.tv_sec * 1000000L + e.ru.ru_utime.tv_usec >= BURN_UTIME_US);
}

/* The child forks a helper, sends its pid up the pipe, and both sleep forever holding
 * the pipe's write end. */
static void sleep_with_helper(void *arg)
{
	int *fds = arg;
	close(fds[0]);
	pid_t helper = fork();
	if (helper == 0)
		for (;;)
			pause();
	if (write(fds[1], &helper, sizeof(helper)) != sizeof(helper))
		_exit(1);
	for (;;)
		pause();
}

/* Starts sleep_with_helper (its own group or not) and waits for its helper's pid; *rd is
 * the pipe's read end, which only the child and the helper hold the other end of. */
static pid_t start_with_helper(struct child *c, int own_group, int *rd)
{
	int fds[2];
	pid_t h = -1;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(child_start(c, own_group, sleep_with_helper, fds), 0);
	close(fds[1]);
	assert_int_equal(read(fds[0], &h, sizeof(h)), sizeof(h));
	assert_true(h > 0);
	*rd = fds[0];
	return h;
}

/* EOF on rd within 5 s: every holder of the write end is gone. */
static int all_writers_gone(int rd)
{
	struct pollfd p = { .fd = rd, .events = POLLIN };
	char b;
	return poll(&p, 1, 5000) == 1 && read(rd, &b, 1) == 0;
}

static void test_deadline_kills_the_group(void **state)
{
	(void)state;
	int rd;
	struct child c;
	struct child_exit e;
	struct child_wait_opts o = { .timeout_s = 0.2, .poll_ns = 1000000 };

	start_with_helper(&c, 1, &rd);
	assert_int_equal(child_wait(&c, &o, &e), 0);
	assert_true(e.killed);
	assert_false(e.interrupted);
	assert_true(WIFSIGNALED(e.status));
	assert_int_equal(WTERMSIG(e.status), SIGKILL);
	assert_true(all_writers_gone(rd)); /* the helper too */
	close(rd);
}

static volatile int stop_now;

static void set_stop(void *arg, uint64_t polls)
{
	(void)arg;
	if (polls == 3)
		stop_now = 1;
}

static void test_interrupt_kills(void **state)
{
	(void)state;
	int rd;
	struct child c;
	struct child_exit e;
	struct child_wait_opts o = { .interrupted = &stop_now, .poll_ns = 1000000,
				     .poll = set_stop };

	stop_now = 0;
	start_with_helper(&c, 1, &rd);
	assert_int_equal(child_wait(&c, &o, &e), 0); /* no deadline: only the flag ends it */
	assert_true(e.killed);
	assert_true(e.interrupted);
	assert_true(all_writers_gone(rd));
	close(rd);
}

/* Without a group of its own the child is killed alone: its helper lives on. */
static void test_without_group_only_the_child(void **state)
{
	(void)state;
	int rd;
	struct child c;
	struct child_exit e;
	struct child_wait_opts o = { .timeout_s = 0.2, .poll_ns = 1000000 };

	pid_t helper = start_with_helper(&c, 0, &rd);
	assert_int_equal(getpgid(c.pid), getpgrp());
	assert_int_equal(child_wait(&c, &o, &e), 0);
	assert_true(e.killed);
	struct pollfd p = { .fd = rd, .events = POLLIN };
	int alive = poll(&p, 1, 200) == 0; /* the helper still holds the pipe */
	kill(helper, SIGKILL);
	assert_true(all_writers_gone(rd));
	close(rd);
	assert_true(alive);
}

/* The growth slope of a series that leaks 50 MB/s after a flat first quarter, thinned past
 * RSSMON_MAX points, and the peak. */
static void test_rssmon_growth(void **state)
{
	(void)state;
	static struct rssmon m;
	rssmon_init(&m, 0);
	rssmon_close(&m); /* the points come from here, not from /proc */
	/* 4000 looks 1 ms apart over 4 s: flat at 10 MB for the first second (setup, not
	 * counted), then +50 MB/s, then one reading after the work (not counted) */
	for (int i = 0; i < 4000; i++) {
		double t = i / 1000.0;
		rssmon_add(&m, (uint64_t)(t * 1e9), 10e6 + (t < 1 ? 0 : (t - 1) * 50e6));
	}
	rssmon_add(&m, 5000000000ull, 1e9);
	assert_true(m.n <= RSSMON_MAX);
	assert_true(m.stride >= 4);
	assert_float_equal(m.peak, 1e9, 1);
	assert_float_equal(rssmon_growth(&m, 0, 3999000000ull), 50e6, 0.5e6);
	/* a flat series grows 0; too few points or an empty window say nothing */
	rssmon_init(&m, 0);
	rssmon_close(&m);
	for (int i = 0; i < 100; i++)
		rssmon_add(&m, (uint64_t)i * 10000000ull, 5e6);
	assert_float_equal(rssmon_growth(&m, 0, 1000000000ull), 0, 1e-6);
	assert_true(isnan(rssmon_growth(&m, 0, 20000000ull)));
	assert_true(isnan(rssmon_growth(&m, 1000000000ull, 1000000000ull)));
	rssmon_add(&m, 2000000000ull, NAN);
	assert_float_equal(m.peak, 5e6, 1);
}

/* Private bytes count touched private pages, and not a touched MAP_SHARED area (the sample
 * sink is one). */
static void test_rssmon_private_excludes_shared(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer maps shadow memory, private, for every page the test touches, the
	 * shared area's included (its count grew by more than 4 MB there) */
	skip();
#endif
	size_t len = 32u << 20;
	double before = rssmon_private_bytes(0);
	assert_false(isnan(before));
	char *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	memset(sh, 1, len);
	double after_shared = rssmon_private_bytes(0);
	char *pv = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pv != MAP_FAILED);
	memset(pv, 1, len);
	double after_private = rssmon_private_bytes(getpid());
	/* 32 MB touched each: the shared area moves the count by less than 4 MB (the test's
	 * own heap), the private one by all of it */
	assert_true(after_shared - before < 4e6);
	assert_true(after_private - after_shared > 30e6);
	/* a watch on this process: one look is one point at the private bytes */
	static struct rssmon m;
	rssmon_init(&m, getpid());
	rssmon_poll(&m);
	assert_int_equal(m.n, 1);
	assert_true(m.peak > 30e6);
	rssmon_close(&m);
	rssmon_poll(&m); /* closed: nothing more */
	assert_int_equal(m.n, 1);
	munmap(sh, len);
	munmap(pv, len);
	assert_true(isnan(rssmon_private_bytes(999999999)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_and_rusage),
		cmocka_unit_test(test_deadline_kills_the_group),
		cmocka_unit_test(test_interrupt_kills),
		cmocka_unit_test(test_without_group_only_the_child),
		cmocka_unit_test(test_rssmon_growth),
		cmocka_unit_test(test_rssmon_private_excludes_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
