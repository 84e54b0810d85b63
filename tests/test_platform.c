/* test_platform.c - the platform layer (platform/platform.h) on the platform it was built
 * for: the same assertions hold for platform/linux.c and platform/darwin.c (this program
 * runs in `make check` on Linux and on the macos-14 CI job). Also the sampler layer's slot
 * resolver, which the workload layer installs (gperftools attributes through it). What
 * times sleeps and waits is test_platform_timing.c, run alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "core/sample.h"
#include "platform/platform.h"
#include "sampler/threads.h"
#include "workloads/workload.h"

static void *report_tid(void *arg)
{
	*(pid_t *)arg = plat_gettid();
	return NULL;
}

/* Thread ids are per thread, stable within one, and not the process id of a thread. */
static void test_gettid(void **state)
{
	(void)state;
	pthread_t t;
	pid_t other = 0, me = plat_gettid();

	assert_int_equal(plat_gettid(), me);
	assert_int_equal(pthread_create(&t, NULL, report_tid, &other), 0);
	pthread_join(t, NULL);
	assert_int_not_equal(other, 0);
	assert_int_not_equal(other, me);
}

static void *bounds_of_thread(void *arg)
{
	uintptr_t *b = arg;
	volatile char local = 0;

	b[2] = (uintptr_t)&local;
	b[3] = (uintptr_t)plat_stack_bounds_self(&b[0], &b[1]);
	return NULL;
}

/* The bounds contain a local variable of the thread that asked, for the main thread and
 * for a created one. */
static void test_stack_bounds(void **state)
{
	(void)state;
	uintptr_t lo, hi, b[4] = { 0, 0, 0, 1 };
	volatile char local = 0;
	pthread_t t;

	assert_int_equal(plat_stack_bounds_self(&lo, &hi), 0);
	assert_true(lo < (uintptr_t)&local && (uintptr_t)&local < hi);
	assert_int_equal(pthread_create(&t, NULL, bounds_of_thread, b), 0);
	pthread_join(t, NULL);
	assert_int_equal(b[3], 0);
	assert_true(b[0] < b[2] && b[2] < b[1]);
	assert_true(b[1] - b[0] >= 16384);
}

/* Both ends close-on-exec, and the pipe carries bytes. */
static void test_pipe_cloexec(void **state)
{
	(void)state;
	int fds[2];
	char c = 0;

	assert_int_equal(plat_pipe_cloexec(fds), 0);
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fds[1], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_int_equal(plat_leaf_read(fds[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fds[1]);
	assert_int_equal(plat_leaf_read(fds[0], &c, 1), 0); /* EOF */
	close(fds[0]);
	assert_int_equal(plat_leaf_read(-1, &c, 1), -EBADF);
}

/* An anonymous file: close-on-exec, written and read back at offset 0. */
static void test_anon_fd(void **state)
{
	(void)state;
	char buf[8] = { 0 };
	int fd = plat_anon_fd("sampbench-test");

	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "hello", 5), 5);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
	assert_string_equal(buf, "hello");
	close(fd);
}

static void test_signal_name_and_exe(void **state)
{
	(void)state;
	char exe[4096];

	assert_string_equal(plat_signal_name(SIGKILL), "KILL");
	assert_string_equal(plat_signal_name(SIGSEGV), "SEGV");
	assert_null(plat_signal_name(-1));
	int n = plat_self_exe(exe, sizeof(exe));
	assert_true(n > 0);
	assert_int_equal((int)strlen(exe), n);
	assert_non_null(strstr(exe, "test_platform"));
	assert_int_equal(plat_self_exe(exe, 2), -1); /* does not fit */
}

#define BAR_THREADS 4
#define BAR_ROUNDS 200

static plat_barrier_t bar;
static _Atomic int serials, arrived[BAR_ROUNDS];
static _Atomic int order_errors;

/* Each round: count in, wait, check everyone counted in this round, wait again. */
static void *barrier_thread(void *arg)
{
	(void)arg;
	for (int r = 0; r < BAR_ROUNDS; r++) {
		atomic_fetch_add(&arrived[r], 1);
		if (plat_barrier_wait(&bar) == PLAT_BARRIER_SERIAL)
			atomic_fetch_add(&serials, 1);
		if (atomic_load(&arrived[r]) != BAR_THREADS)
			atomic_fetch_add(&order_errors, 1);
		plat_barrier_wait(&bar);
	}
	return NULL;
}

/* Nobody passes before all arrived, and exactly one thread per wait is the serial one. */
static void test_barrier(void **state)
{
	(void)state;
	pthread_t t[BAR_THREADS];

	assert_int_equal(plat_barrier_init(&bar, BAR_THREADS), 0);
	for (int i = 0; i < BAR_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, barrier_thread, NULL), 0);
	for (int i = 0; i < BAR_THREADS; i++)
		pthread_join(t[i], NULL);
	plat_barrier_destroy(&bar);
	assert_int_equal(atomic_load(&order_errors), 0);
	assert_int_equal(atomic_load(&serials), BAR_ROUNDS);
}

#if defined(__aarch64__) || defined(__arm64__)
#ifndef HWCAP_PACA
#define HWCAP_PACA (1UL << 30)
#endif
/* 1 when the system says the core has pointer authentication (FEAT_PAuth), else 0. A
 * core can have it with the kernel not saying so: XPACLRI strips there all the same. */
static int has_pauth(void)
{
#if defined(__APPLE__)
	int v = 0;
	size_t len = sizeof(v);
	return sysctlbyname("hw.optional.arm.FEAT_PAuth", &v, &len, NULL, 0) == 0 && v != 0;
#else
	return (getauxval(AT_HWCAP) & HWCAP_PACA) != 0;
#endif
}
#endif

/* Bits 54..52 of a code address: inside the authentication code's field for every
 * virtual address size up to 52 bits, and never part of a user address. */
#define PAC_FIELD_BITS ((uintptr_t)0x7 << 52)

/* x86_64 has no pointer authentication: the documented identity, whatever the high bits
 * hold (a mask to the low 48 bits would fail here). arm64: XPACLRI replaces the
 * authentication field of a code address with copies of bit 55 (0 in user space), so an
 * address with bits in that field comes back plain on a core with pointer authentication;
 * a core without executes the hint as a no-op. Either way the address bits stay. */
static void test_strip_code_ptr(void **state)
{
	(void)state;
	uintptr_t pc = (uintptr_t)&test_strip_code_ptr;
	uintptr_t signed_pc = pc | PAC_FIELD_BITS;

	assert_int_equal(pc & PAC_FIELD_BITS, 0);
	assert_int_equal(plat_strip_code_ptr(pc), pc);
	assert_int_equal(plat_strip_code_ptr(0), 0);
	uintptr_t r = plat_strip_code_ptr(signed_pc);
#if defined(__aarch64__) || defined(__arm64__)
	print_message("pointer authentication: %s\n", has_pauth() ? "yes" : "not reported");
	assert_int_equal(r & ~PAC_FIELD_BITS, pc);
	if (has_pauth())
		assert_int_equal(r, pc);
	else
		assert_true(r == pc || r == signed_pc);
#else
	assert_int_equal(r, signed_pc);
	assert_int_equal(plat_strip_code_ptr(~(uintptr_t)0), ~(uintptr_t)0);
#endif
}

/* The workload layer installs the resolver: a PC in slot 5's leaf names slot 5; other
 * code names none. */
static void test_slot_resolver(void **state)
{
	(void)state;
	uint64_t lo, hi;

	wl_slot_range(5, &lo, &hi);
	assert_true(lo < hi);
	assert_int_equal(sb_slot_of_frame_pc(lo), 5);
	assert_int_equal(sb_slot_of_frame_pc(hi - 1), 5);
	assert_int_equal(sb_slot_of_frame_pc((uint64_t)(uintptr_t)&test_slot_resolver), -1);
}

#ifdef __linux__
/* Bytes of private pages the kernel's page tables map in the mapping that starts at
 * start (/proc/self/smaps "Anonymous:"): the shared zero page, which a read maps, is not
 * one of them. -1 when not found. */
static long smaps_anonymous(const void *start)
{
	char line[512], want[32];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)start);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = strncmp(line, want, strlen(want)) == 0;
		else if (in && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}
#endif

/* plat_populate_write: afterwards every page holding a byte of the range is resident
 * (mincore), the pages around it are not, each of them is a private page (smaps, Linux:
 * not the zero page a read would map), and what the range held is unchanged. Where the
 * system cannot (Darwin: -1), only the content is checked. */
static void test_populate_write(void **state)
{
	(void)state;
	long page = sysconf(_SC_PAGESIZE);
	/* 8 pages between two inaccessible ones, so that the 8 are a mapping of their own
	 * (smaps): no neighbour merges into it */
	unsigned char *g = mmap(NULL, 10 * (size_t)page, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *m = g + page;
	unsigned char vec[8];

	assert_true(g != MAP_FAILED);
	assert_int_equal(mprotect(m, 8 * (size_t)page, PROT_READ | PROT_WRITE), 0);
	m[3 * page + 5] = 42;
	int rc = plat_populate_write(m + 2 * page + 100, 2 * (size_t)page); /* pages 2 to 4 */
	assert_int_equal(mincore((void *)m, 8 * (size_t)page, (void *)vec), 0);
#ifdef __linux__
	long anon = smaps_anonymous(m); /* before the reads below, which map nothing new */
#endif
	assert_int_equal(m[3 * page + 5], 42);
	assert_int_equal(m[2 * page + 100], 0);
	if (rc == 0)
		for (int i = 0; i < 8; i++)
			assert_int_equal(vec[i] & 1, i >= 2 && i <= 4);
#ifdef __linux__
	assert_int_equal(rc, 0);
	assert_int_equal(anon, 3 * page);
#endif
	munmap(g, 10 * (size_t)page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gettid),
		cmocka_unit_test(test_stack_bounds),
		cmocka_unit_test(test_pipe_cloexec),
		cmocka_unit_test(test_anon_fd),
		cmocka_unit_test(test_signal_name_and_exe),
		cmocka_unit_test(test_barrier),
		cmocka_unit_test(test_strip_code_ptr),
		cmocka_unit_test(test_slot_resolver),
		cmocka_unit_test(test_populate_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
