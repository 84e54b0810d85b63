/* darwin.c - the platform layer on Darwin (platform.h).
 *
 * Compiled and linked here only by `make darwin-check` (zig cc, macOS SDK headers); it
 * runs only on a Mac (the macos-14 job of .github/workflows/ci.yml). docs/darwin.md. */
#include "platform/platform.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mach-o/dyld.h>
#include <mach/mach.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/event.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

const char plat_name[] = "darwin";

pid_t plat_gettid(void)
{
	uint64_t id = 0;

	pthread_threadid_np(NULL, &id);
	return (pid_t)id;
}

int plat_thread_gone(pid_t tid)
{
	(void)tid;
	return -1;
}

int plat_stack_bounds_self(uintptr_t *lo, uintptr_t *hi)
{
	/* The stack grows down from pthread_get_stackaddr_np (its highest address). */
	uintptr_t top = (uintptr_t)pthread_get_stackaddr_np(pthread_self());
	size_t size = pthread_get_stacksize_np(pthread_self());

	if (top == 0 || size == 0 || size > top)
		return -1;
	*lo = top - size;
	*hi = top;
	return 0;
}

void plat_sleep_until_ns(uint64_t deadline_ns)
{
	struct timespec now, rel;

	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return;
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	if (now_ns >= deadline_ns)
		return;
	uint64_t left = deadline_ns - now_ns;
	rel.tv_sec = (time_t)(left / 1000000000ull);
	rel.tv_nsec = (long)(left % 1000000000ull);
	nanosleep(&rel, NULL);
}

void plat_regs_from_ucontext(const void *ucp, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
			     uintptr_t *lr)
{
	const ucontext_t *uc = ucp;
#if defined(__x86_64__)
	*pc = (uintptr_t)uc->uc_mcontext->__ss.__rip;
	*sp = (uintptr_t)uc->uc_mcontext->__ss.__rsp;
	*fp = (uintptr_t)uc->uc_mcontext->__ss.__rbp;
	*lr = 0;
#elif defined(__arm64__)
	/* The accessors strip pointer authentication bits (arm64e); never read __pc. */
	*pc = (uintptr_t)__darwin_arm_thread_state64_get_pc(uc->uc_mcontext->__ss);
	*sp = (uintptr_t)__darwin_arm_thread_state64_get_sp(uc->uc_mcontext->__ss);
	*fp = (uintptr_t)__darwin_arm_thread_state64_get_fp(uc->uc_mcontext->__ss);
	*lr = plat_strip_code_ptr((uintptr_t)__darwin_arm_thread_state64_get_lr(uc->uc_mcontext->__ss));
#else
#error "unsupported architecture"
#endif
}

const char *plat_signal_name(int sig)
{
	static __thread char name[16];

	if (sig <= 0 || sig >= NSIG || !sys_signame[sig])
		return NULL;
	size_t i = 0;
	for (; sys_signame[sig][i] && i < sizeof(name) - 1; i++)
		name[i] = (char)toupper((unsigned char)sys_signame[sig][i]);
	name[i] = '\0';
	return name;
}

int plat_self_exe(char *buf, size_t len)
{
	char raw[PATH_MAX], real[PATH_MAX];
	uint32_t size = sizeof(raw);

	if (_NSGetExecutablePath(raw, &size) != 0 || !realpath(raw, real))
		return -1;
	size_t n = strlen(real);
	if (n + 1 > len)
		return -1;
	memcpy(buf, real, n + 1);
	return (int)n;
}

int plat_thread_times_ns(uint64_t *user_ns, uint64_t *sys_ns)
{
	thread_basic_info_data_t info;
	mach_msg_type_number_t n = THREAD_BASIC_INFO_COUNT;
	mach_port_t self = mach_thread_self();
	kern_return_t kr = thread_info(self, THREAD_BASIC_INFO, (thread_info_t)&info, &n);

	mach_port_deallocate(mach_task_self(), self);
	if (kr != KERN_SUCCESS) {
		errno = EINVAL;
		return -1;
	}
	*user_ns = (uint64_t)info.user_time.seconds * 1000000000ull +
		   (uint64_t)info.user_time.microseconds * 1000ull;
	*sys_ns = (uint64_t)info.system_time.seconds * 1000000000ull +
		  (uint64_t)info.system_time.microseconds * 1000ull;
	return 0;
}

int plat_pipe_cloexec(int fds[2])
{
	if (pipe(fds) != 0)
		return -1;
	/* Not atomic with the pipe() as pipe2 is: a fork+exec by another thread in between
	 * would inherit the two fds. sampbench forks its run children from one thread. */
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		errno = e;
		return -1;
	}
	return 0;
}

int plat_anon_fd(const char *name)
{
	const char *dir = getenv("TMPDIR");
	char path[1024];

	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof(path), "%s/%s-XXXXXX", dir, name) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int plat_die_with_parent(void)
{
	errno = ENOSYS;
	return -1;
}

int plat_thread_set_name(const char *name)
{
	char cut[16];

	snprintf(cut, sizeof(cut), "%s", name); /* as Linux keeps it: 15 bytes */
	return pthread_setname_np(cut);
}

void plat_thread_get_name(char *buf, size_t len)
{
	if (len == 0)
		return;
	if (pthread_getname_np(pthread_self(), buf, len) != 0)
		buf[0] = 0;
	buf[len - 1] = 0;
}

long plat_wait_word(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull),
			       (long)(timeout_ns % 1000000000ull) };
	struct kevent ev;

	if (atomic_load(word) != val)
		return -EAGAIN;
	int kq = kqueue();
	if (kq < 0)
		return -errno;
	/* No change registered: kevent() only sleeps until the timeout or a signal. */
	int rc = kevent(kq, NULL, 0, &ev, 1, &ts);
	int e = errno;
	close(kq);
	return rc < 0 ? -e : -ETIMEDOUT;
}

int plat_barrier_init(plat_barrier_t *b, unsigned n)
{
	int rc;

	if (n == 0)
		return EINVAL;
	b->n = n;
	b->waiting = 0;
	b->round = 0;
	rc = pthread_mutex_init(&b->mu, NULL);
	if (rc != 0)
		return rc;
	rc = pthread_cond_init(&b->cv, NULL);
	if (rc != 0)
		pthread_mutex_destroy(&b->mu);
	return rc;
}

int plat_barrier_wait(plat_barrier_t *b)
{
	int serial = 0;

	pthread_mutex_lock(&b->mu);
	unsigned long round = b->round;
	if (++b->waiting == b->n) {
		/* The last one in opens the barrier for this round; it is the serial thread. */
		b->waiting = 0;
		b->round++;
		serial = 1;
		pthread_cond_broadcast(&b->cv);
	} else {
		while (round == b->round)
			pthread_cond_wait(&b->cv, &b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return serial ? PLAT_BARRIER_SERIAL : 0;
}

void plat_barrier_destroy(plat_barrier_t *b)
{
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}

int plat_populate_write(void *addr, size_t len)
{
	(void)addr;
	(void)len;
	return -1; /* no such advice; the zero-page copy stays */
}
