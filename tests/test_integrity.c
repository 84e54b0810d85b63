/* test_integrity.c - the program's checks of itself (workloads/integrity.h and
 * harness/integrity.h): each kind counts what a sampler did to the thread or the process,
 * and nothing when it did nothing. The sampler is simulated here by the test doing what a
 * defective one would, between the same snapshots the runner takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <math.h>
#include <stdlib.h>

#include "core/run.h"
#include "harness/integrity.h"
#include "results/h5io.h"
#include "sampler/threads.h"
#include "workloads/integrity.h"
#include "workloads/workload.h"

static struct sb_integrity in;

static void empty_handler(int sig)
{
	(void)sig;
}

/* A healthy sampler: installs its handler at start and leaves it after stop. */
static void test_declared_signal_is_fair(void **state)
{
	struct sb_integrity_counts c;
	struct sigaction sa, old;

	(void)state;
	assert_int_equal(wl_integrity_install(), 0);
	sigaction(SIGPROF, NULL, &old);
	sb_integrity_snap(&in, SB_SNAP_BEFORE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = empty_handler;
	sigaction(SIGPROF, &sa, NULL);
	sb_integrity_snap(&in, SB_SNAP_STARTED);
	sb_integrity_snap(&in, SB_SNAP_WORKED);
	sb_integrity_snap(&in, SB_SNAP_STOPPED);
	sb_integrity_count(&in, &c);
	assert_int_equal(c.sigaction, 0);
	assert_int_equal(c.fd, 0);
	assert_int_equal(c.sigmask, 0);
	sigaction(SIGPROF, &old, NULL);
}

/* Mutation: count_sigaction without the started->worked comparison (this test fails).
 * Both states are set through signal(), so that the restored one is the same as the first
 * in every build (ThreadSanitizer keeps its own copy of what sigaction() returns). */
static void test_disposition_changed_mid_run(void **state)
{
	struct sb_integrity_counts c;

	(void)state;
	signal(SIGPIPE, SIG_DFL);
	sb_integrity_snap(&in, SB_SNAP_BEFORE);
	sb_integrity_snap(&in, SB_SNAP_STARTED);
	signal(SIGPIPE, SIG_IGN);
	sb_integrity_snap(&in, SB_SNAP_WORKED);
	signal(SIGPIPE, SIG_DFL); /* restored at stop: still changed during the run */
	sb_integrity_snap(&in, SB_SNAP_STOPPED);
	sb_integrity_count(&in, &c);
	assert_int_equal(c.sigaction, 1);
}

/* start() taking over the program's own handler (WL_SELF_SIGNAL) is not "declared". */
static void test_program_handler_taken(void **state)
{
	struct sb_integrity_counts c;
	struct sigaction sa;

	(void)state;
	assert_int_equal(wl_integrity_install(), 0);
	sb_integrity_snap(&in, SB_SNAP_BEFORE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = empty_handler;
	sigaction(WL_SELF_SIGNAL, &sa, NULL);
	sb_integrity_snap(&in, SB_SNAP_STARTED);
	sb_integrity_snap(&in, SB_SNAP_WORKED);
	sb_integrity_snap(&in, SB_SNAP_STOPPED);
	sb_integrity_count(&in, &c);
	assert_int_equal(c.sigaction, 1);
	assert_int_equal(wl_integrity_install(), 0);
}

/* An inheritable descriptor left after stop is a leak; a close-on-exec one is only kept. */
static void test_fd_leak(void **state)
{
	struct sb_integrity_counts c;

	(void)state;
	sb_integrity_snap(&in, SB_SNAP_BEFORE);
	sb_integrity_snap(&in, SB_SNAP_STARTED);
	int a = open("/dev/null", O_RDONLY);
	int b = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(a >= 0 && b >= 0);
	sb_integrity_snap(&in, SB_SNAP_WORKED);
	sb_integrity_snap(&in, SB_SNAP_STOPPED);
	sb_integrity_count(&in, &c);
	assert_int_equal(c.fd, 1);
	assert_int_equal(c.fd_kept, 1);
	assert_int_equal(c.fd_inheritable, 1);
	close(a);
	close(b);
	sb_integrity_snap(&in, SB_SNAP_STOPPED);
	sb_integrity_count(&in, &c);
	assert_int_equal(c.fd, 0);
	assert_int_equal(c.fd_kept, 0);
}

static void test_main_mask_changed(void **state)
{
	struct sb_integrity_counts c;
	sigset_t set, old;

	(void)state;
	sb_integrity_snap(&in, SB_SNAP_BEFORE);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	sb_integrity_snap(&in, SB_SNAP_STARTED);
	sb_integrity_snap(&in, SB_SNAP_WORKED);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	sb_integrity_snap(&in, SB_SNAP_STOPPED);
	sb_integrity_count(&in, &c);
	assert_int_equal(c.sigmask, 2);
}

/* The program's own timer over 400 ms: it fires (0), and blocked in the main thread as a
 * sampler's start() might block it, it does not (1). Mutation: sb_integrity_count
 * without the timer comparison (the blocked case fails). */
static int timer_over(int block)
{
	struct sb_integrity_counts c;
	sigset_t set, old;
	struct timespec ts = { 0, 400000000 };

	assert_int_equal(wl_integrity_install(), 0);
	memset(&in, 0, sizeof(in));
	sigemptyset(&set);
	sigaddset(&set, WL_SELF_SIGNAL);
	sb_integrity_timer_arm(&in);
	if (block)
		pthread_sigmask(SIG_BLOCK, &set, &old);
	for (int i = 0; i < 1000 && nanosleep(&ts, &ts) != 0; i++)
		;
	sb_integrity_timer_disarm(&in);
	if (block)
		pthread_sigmask(SIG_SETMASK, &old, NULL); /* the pending one arrives now */
	sb_integrity_count(&in, &c);
	assert_true(c.timer_expected >= 7);
	return (int)c.timer;
}

static void test_program_timer(void **state)
{
	(void)state;
	assert_int_equal(timer_over(0), 0);
	assert_int_equal(timer_over(1), 1);
}

/* --- a workload thread's own checks --- */

struct thr {
	struct wl_truth t;
	int block;        /* block WL_SELF_SIGNAL between begin and end */
	int use;          /* use 100 KiB of stack between begin and end */
};

/* Uses 100 KiB of stack: a buffer of that size, every 512th byte and its lowest written
 * (a sanitizer build may touch all of it: the same 100 KiB). */
static __attribute__((noinline)) void use_stack(void)
{
	volatile char buf[100 << 10];
	for (size_t i = 0; i < sizeof(buf); i += 512)
		buf[sizeof(buf) - 1 - i] = 1;
	buf[0] = 1;
}

static void *thread_body(void *p)
{
	struct thr *a = p;
	struct wl_integrity it;

	wl_integrity_begin(&it);
	if (a->block) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, WL_SELF_SIGNAL);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	if (a->use)
		use_stack();
	wl_integrity_end(&it, &a->t);
	return NULL;
}

static void run_thread(struct thr *a)
{
	pthread_t t;
	assert_int_equal(wl_integrity_install(), 0);
	assert_int_equal(pthread_create(&t, NULL, thread_body, a), 0);
	pthread_join(t, NULL);
}

static void test_thread_clean(void **state)
{
	struct thr a = { .block = 0 };

	(void)state;
	run_thread(&a);
	assert_int_equal(atomic_load(&a.t.integrity_sigmask), 0);
	assert_int_equal(atomic_load(&a.t.integrity_signal), 0);
	assert_true(atomic_load(&a.t.stack_peak) > 0);
	assert_true(atomic_load(&a.t.stack_peak) < (16u << 10));
}

/* Mutation: wl_integrity_end without the mask comparison, or without the self signal
 * (this test fails on the matching assertion). */
static void test_thread_blocked_signal(void **state)
{
	struct thr a = { .block = 1 };

	(void)state;
	run_thread(&a);
	assert_int_equal(atomic_load(&a.t.integrity_sigmask), 1);
	assert_int_equal(atomic_load(&a.t.integrity_signal), 1);
}

/* 100 KiB used between begin and end shows as a peak of at least that. */
static void test_thread_stack_peak(void **state)
{
	struct thr a = { .use = 1 };

	(void)state;
	run_thread(&a);
	assert_true(atomic_load(&a.t.stack_peak) >= (100u << 10));
	assert_true(atomic_load(&a.t.stack_peak) < (100u << 10) + (16u << 10));
}

/* --- errno across wl_unit: a handler that clobbers errno, on a 2 ms CPU timer --- */

static volatile int clobber;

static void errno_handler(int sig)
{
	(void)sig;
	if (clobber)
		errno = EIO; /* the defect: not restored */
}

/* Units for ~60 ms of CPU under a 2 ms thread CPU timer whose handler clobbers errno (or
 * not). Returns integrity_errno. */
static uint64_t units_under_timer(int do_clobber)
{
	static struct wl_truth truth[SB_MAX_THREADS];
	struct wl_ctx ctx = { .threads = 1, .truth = truth };
	struct sigaction sa;
	struct sigevent sev;
	timer_t tm;

	memset(truth, 0, sizeof(truth));
	clobber = do_clobber;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = errno_handler;
	sigaction(SIGPROF, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	assert_int_equal(timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &tm), 0);
	struct itimerspec its = { { 0, 2000000 }, { 0, 2000000 } };
	timer_settime(tm, 0, &its, NULL);
	uint64_t c0 = sb_thread_cpu_ns();
	while (sb_thread_cpu_ns() - c0 < 60000000ull)
		wl_unit(&ctx, 0);
	timer_delete(tm);
	signal(SIGPROF, SIG_IGN);
	return atomic_load(&truth[0].integrity_errno);
}

/* Mutation: wl_unit without wl_errno_expect (this test fails: 0 counted). Not under
 * ThreadSanitizer, which runs a handler later, restores errno itself and reports the
 * handler that spoils it (a report that also fails every later fork of this process). */
static void test_unit_errno(void **state)
{
	(void)state;
	assert_int_equal(units_under_timer(0), 0);
#if defined(__SANITIZE_THREAD__)
	skip();
#endif
	assert_true(units_under_timer(1) >= 5); /* ~30 ticks, most inside a unit */
}

/* A file written before the checks existed (schema 1, 26189d1) reads NaN for every
 * integrity metric, never 0: "not checked" is not "clean". */
static void test_older_file_reads_nan(void **state)
{
	struct sb_host host;
	struct sb_run *runs = NULL;
	size_t n = 0;
	char err[256];

	(void)state;
	if (h5_read("tests/data/schema1-2runs.h5", &host, &runs, &n, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct sb_metrics *m = &runs[i].metrics;
		assert_true(isnan(m->integrity_errno) && isnan(m->integrity_sigmask));
		assert_true(isnan(m->integrity_sigaction) && isnan(m->integrity_signal));
		assert_true(isnan(m->integrity_fd) && isnan(m->integrity_violations));
		assert_true(isnan(m->stack_peak_bytes));
		assert_false(isnan(m->checksum_errors));
		run_free(&runs[i]);
	}
	free(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_older_file_reads_nan),
		cmocka_unit_test(test_declared_signal_is_fair),
		cmocka_unit_test(test_disposition_changed_mid_run),
		cmocka_unit_test(test_program_handler_taken),
		cmocka_unit_test(test_fd_leak),
		cmocka_unit_test(test_main_mask_changed),
		cmocka_unit_test(test_program_timer),
		cmocka_unit_test(test_thread_clean),
		cmocka_unit_test(test_thread_blocked_signal),
		cmocka_unit_test(test_thread_stack_peak),
		cmocka_unit_test(test_unit_errno),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
