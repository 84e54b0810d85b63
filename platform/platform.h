/* platform.h - what differs between Linux and Darwin, behind one small interface.
 *
 * One implementation file per platform: platform/linux.c, platform/darwin.c. The build
 * compiles exactly one of them (Makefile; `make darwin-check` for Darwin), so shared code
 * calls plat_*() and never tests __APPLE__ / __linux__ itself. Platform-only samplers
 * (ctimer, perf, ptrace on Linux; mach-task on Darwin) are chosen by the build and the
 * sampler tables (sampler/table_linux.c, sampler/table_darwin.c), not here.
 *
 * Everything marked async-signal-safe may run in a signal handler or while another thread
 * of the process is stopped: no allocation, locks or stdio. */
#ifndef SB_PLATFORM_H
#define SB_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Name of the platform this file was built for: "linux" or "darwin". */
extern const char plat_name[];

/* OS id of the calling thread (Linux: gettid; Darwin: pthread_threadid_np, truncated to
 * pid_t: unique among live threads in practice, used as a label only). Async-signal-safe. */
pid_t plat_gettid(void);

/* 1 once thread tid (plat_gettid) of this process has exited, so that nothing can stop or
 * sample it any more (Linux: tgkill with signal 0 fails with ESRCH), 0 while it lives, -1
 * where the system cannot tell (Darwin, whose ids are labels only): callers then rely on
 * their own mark of the thread's end. */
int plat_thread_gone(pid_t tid);

/* Stack bounds [*lo, *hi) of the calling thread. Not async-signal-safe (Linux reads
 * /proc/self/maps for the main thread): call from the thread itself, outside handlers.
 * Returns 0, or -1 when unknown. */
int plat_stack_bounds_self(uintptr_t *lo, uintptr_t *hi);

/* Sleeps until CLOCK_MONOTONIC reaches deadline_ns (absolute), or a signal arrives: the
 * caller re-checks the clock. Linux: clock_nanosleep(TIMER_ABSTIME); Darwin has no
 * absolute sleep on CLOCK_MONOTONIC, so it sleeps the remaining time with nanosleep. */
void plat_sleep_until_ns(uint64_t deadline_ns);

/* Interrupted registers from a signal handler's ucontext (its third argument). lr is 0
 * where the architecture has none (x86_64). Async-signal-safe. */
void plat_regs_from_ucontext(const void *uc, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
			     uintptr_t *lr);

/* pipe(2) with both ends close-on-exec (Linux: pipe2(O_CLOEXEC); Darwin has no pipe2 and
 * sets the flag after). Returns 0 or -1 with errno. */
int plat_pipe_cloexec(int fds[2]);

/* Abbreviated signal name without "SIG" ("KILL"), or NULL when sig is unknown (Linux:
 * sigabbrev_np; Darwin: sys_signame, upper-cased into a thread-local buffer). */
const char *plat_signal_name(int sig);

/* Absolute path of the running executable into buf (NUL-terminated). Linux:
 * /proc/self/exe; Darwin: _NSGetExecutablePath, resolved with realpath. Returns its length,
 * or -1 when unknown or it does not fit. */
int plat_self_exe(char *buf, size_t len);

/* An anonymous read-write file (name is a label), close-on-exec. Linux: memfd_create;
 * Darwin: a file created and unlinked in $TMPDIR. Returns the fd, or -1 with errno. */
int plat_anon_fd(const char *name);

/* The calling thread's user and system CPU time in ns, as the kernel splits it (Linux:
 * getrusage(RUSAGE_THREAD), whose split is sampled at the tick and scaled to the precise
 * total; Darwin: thread_info THREAD_BASIC_INFO). Returns 0, or -1 with errno. */
int plat_thread_times_ns(uint64_t *user_ns, uint64_t *sys_ns);

/* Arranges for the calling process (a forked child) to be killed when its parent dies.
 * Linux: PR_SET_PDEATHSIG. Returns 0, or -1 with errno (ENOSYS on Darwin, which has no
 * such call: there the harness's watchdog and process group are the only safety net). */
int plat_die_with_parent(void);

/* Names the calling thread name (cut to 15 bytes, as Linux keeps a thread's name). Linux:
 * pthread_setname_np(pthread_self(), ...); Darwin: pthread_setname_np(name). Returns 0 or
 * an errno value. */
int plat_thread_set_name(const char *name);

/* The calling thread's name into buf[len] (len >= 16), NUL-terminated, "" when unknown.
 * Linux: prctl(PR_GET_NAME), async-signal-safe; Darwin: pthread_getname_np. */
void plat_thread_get_name(char *buf, size_t len);

/* Makes the pages of [addr, addr + len) present and writable without changing what they
 * hold (Linux: one locked write of each page's byte that leaves it as it was): every page
 * holding a byte of it, so the range must be writable memory of the caller's. Memory
 * calloc'd from fresh pages that is read before it is written first maps the shared zero
 * page, then copies it at the first write and flushes the other CPUs' TLBs (an IPI to
 * each CPU running the process); populated first, it takes one fault-free write. Safe
 * beside other writers of the range (each touch is atomic); never takes the process's
 * mmap lock. Returns 0, or -1 where the system cannot (Darwin, len 0): nothing changes. */
int plat_populate_write(void *addr, size_t len);

/* A code address read from the stack (a return address) or a register, with pointer
 * authentication bits removed (arm64: XPACLRI, a hint that is a no-op on cores without
 * PAC, so it is safe on every arm64 and on arm64 Linux too). Identity on x86_64.
 * Async-signal-safe. */
static inline uintptr_t plat_strip_code_ptr(uintptr_t p)
{
#if defined(__aarch64__) || defined(__arm64__)
	register uintptr_t x30 __asm__("x30") = p;
	__asm__("hint #7" /* xpaclri */ : "+r"(x30));
	return x30;
#else
	return p;
#endif
}

/* A function that must keep an address and a body of its own (slot leaves, the frames a
 * workload's truth names): never inlined, cloned or folded with an identical one. GCC
 * needs noclone and no_icf for that; clang has neither attribute and does not fold
 * functions itself (ld64's deduplication is turned off at link time on Darwin). */
#if defined(__clang__)
#define PLAT_DISTINCT_FN noinline
#else
#define PLAT_DISTINCT_FN noinline, noclone, no_icf
#endif

/* A function inlined into every caller whose out-of-line copy (made because its address
 * is taken) still names it: never folded with an identical one (GCC's no_icf). */
#if defined(__clang__)
#define PLAT_INLINED_FN always_inline
#else
#define PLAT_INLINED_FN always_inline, no_icf
#endif

/* Code in a section of its own (name: at most 16 characters), and the linker-made bounds
 * of that section: ELF brackets a section with __start_NAME/__stop_NAME, Mach-O names
 * them section$start$SEGMENT$NAME/section$end$SEGMENT$NAME (in __TEXT here). Use:
 *   __attribute__((PLAT_CODE_SECTION("sb_slots"))) void f(void) ...
 *   extern const char slots_lo[] PLAT_SECTION_START("sb_slots"); */
#if defined(__APPLE__)
#define PLAT_CODE_SECTION(name) section("__TEXT," name ",regular,pure_instructions")
#define PLAT_SECTION_START(name) __asm("section$start$__TEXT$" name)
#define PLAT_SECTION_STOP(name) __asm("section$end$__TEXT$" name)
#else
#define PLAT_CODE_SECTION(name) section(name)
#define PLAT_SECTION_START(name) __asm("__start_" name)
#define PLAT_SECTION_STOP(name) __asm("__stop_" name)
#endif

/* Inlined per-platform parts: blocking calls that keep the caller the leaf frame
 * (plat_leaf_sleep_until, plat_leaf_read, plat_leaf_pread), plat_wait_word, plat_barrier_t. */
#if defined(__APPLE__)
#include "platform/darwin/inline.h"
#else
#include "platform/linux/inline.h"
#endif

#endif
