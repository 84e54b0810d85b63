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

int plat_populate_write(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)addr & ~((uintptr_t)page - 1);
	uintptr_t hi = ((uintptr_t)addr + len + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);

	if (page <= 0 || hi <= lo)
		return -1;
	return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)addr;
	(void)len;
	return -1;
#endif
}
