/* linux.c - the platform layer on Linux (platform.h). */
#include "platform/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

const char plat_name[] = "linux";

pid_t plat_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int plat_thread_gone(pid_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, 0) != 0 && errno == ESRCH;
}

int plat_stack_bounds_self(uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return -1;
	int rc = pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	*lo = (uintptr_t)addr;
	*hi = (uintptr_t)addr + size;
	return 0;
}

void plat_sleep_until_ns(uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000ull),
			       (long)(deadline_ns % 1000000000ull) };
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

void plat_regs_from_ucontext(const void *ucp, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
			     uintptr_t *lr)
{
	const ucontext_t *uc = ucp;
#if defined(__x86_64__)
	*pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	*sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	*fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	*lr = 0;
#elif defined(__aarch64__)
	*pc = (uintptr_t)uc->uc_mcontext.pc;
	*sp = (uintptr_t)uc->uc_mcontext.sp;
	*fp = (uintptr_t)uc->uc_mcontext.regs[29];
	*lr = (uintptr_t)uc->uc_mcontext.regs[30];
#else
#error "unsupported architecture"
#endif
}

const char *plat_signal_name(int sig)
{
	return sigabbrev_np(sig);
}

int plat_self_exe(char *buf, size_t len)
{
	ssize_t n = len > 0 ? readlink("/proc/self/exe", buf, len - 1) : -1;

	/* readlink truncates silently: a result that fills the buffer may be cut short. */
	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

int plat_pipe_cloexec(int fds[2])
{
	return pipe2(fds, O_CLOEXEC);
}

int plat_anon_fd(const char *name)
{
	return memfd_create(name, MFD_CLOEXEC);
}

int plat_thread_times_ns(uint64_t *user_ns, uint64_t *sys_ns)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	*user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000ull;
	*sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
	return 0;
}

int plat_die_with_parent(void)
{
	return prctl(PR_SET_PDEATHSIG, SIGKILL);
}

int plat_thread_set_name(const char *name)
{
	char cut[16];

	/* pthread_setname_np refuses a name over 15 bytes (ERANGE): cut it as the kernel would */
	size_t n = strnlen(name, sizeof(cut) - 1);
	memcpy(cut, name, n);
	cut[n] = 0;
	return pthread_setname_np(pthread_self(), cut);
}

void plat_thread_get_name(char *buf, size_t len)
{
	char name[16] = ""; /* PR_GET_NAME writes 16 bytes, NUL included */

	if (len == 0)
		return;
	if (prctl(PR_GET_NAME, name) != 0)
		name[0] = 0;
	name[sizeof(name) - 1] = 0;
	size_t n = strlen(name);
	if (n >= len)
		n = len - 1;
	memcpy(buf, name, n);
	buf[n] = 0;
}

/* One write to the byte at p that leaves it as it was: a locked read-modify-write, which
 * the CPU performs as a write from the start, so the page fault it takes (if any) maps a
 * private page at once, never the shared zero page. Not a compare or a plain store: a
 * compiler may turn an idempotent atomic into a load, and a store would need the value
 * first (a read fault). */
static inline void touch_for_write(volatile unsigned char *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("lock orb $0, %0" : "+m"(*p) : : "memory");
#else
	__atomic_fetch_or(p, 0, __ATOMIC_RELAXED);
#endif
}

/* By touching each page rather than with madvise(MADV_POPULATE_WRITE): madvise takes the
 * process's mmap lock for reading, which waits behind a writer, and at thread creation a
 * writer is nearly always queued (each new thread maps its stack); behind 10,000 starting
 * threads a sampler waited up to 32 ms there in one call. A page fault takes only the lock
 * of its own mapping. */
int plat_populate_write(void *addr, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)addr & ~((uintptr_t)page - 1);
	uintptr_t hi = (uintptr_t)addr + len;

	if (page <= 0 || len == 0)
		return -1;
	touch_for_write((volatile unsigned char *)addr); /* the first page, at addr itself */
	for (uintptr_t p = lo + (uintptr_t)page; p < hi; p += (uintptr_t)page)
		touch_for_write((volatile unsigned char *)p);
	return 0;
}
