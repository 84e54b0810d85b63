/* darwin.c - the platform layer on Darwin (platform.h).
 *
 * Compiled and linked here only by `make darwin-check` (zig cc, macOS SDK headers); it
 * runs only on a Mac (the macos-14 job of .github/workflows/ci.yml). docs/darwin.md. */
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
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
