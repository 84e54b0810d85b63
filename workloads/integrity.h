/* integrity.h - what a workload thread checks about itself, without the sampler's help
 * (docs/metrics.md, "Integrity"): its errno across work and system calls, its signal mask
 * from before the sampler's thread_start to before its thread_stop, a signal it sends
 * itself, and how deep its stack went (painted at its start, scanned at its end). Counts
 * go to the slot's struct wl_truth. */
#ifndef SB_WL_INTEGRITY_H
#define SB_WL_INTEGRITY_H

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "workloads/workload.h"

#ifndef NSIG /* hidden by strict POSIX modes on some systems: one more than the largest */
#define NSIG 65
#endif

/* A value no system call or library sets: work leaves errno at it, and a signal handler
 * that does not save and restore errno shows as any other value. */
#define WL_ERRNO_SENTINEL 0x5b1d

/* The program's own signal: its handler is installed before the sampler starts, and each
 * workload thread sends it to itself at its end. A sampler must neither take it over nor
 * keep it from arriving. */
#define WL_SELF_SIGNAL SIGUSR2

/* Counts one errno violation in t when errno is not `want`. Cheap (errno is
 * thread-local); call it after work that must not have changed errno. */
static inline void wl_errno_expect(struct wl_truth *t, int want)
{
	if (errno != want)
		atomic_fetch_add_explicit(&t->integrity_errno, 1, memory_order_relaxed);
}

/* Per-thread state between wl_integrity_begin and wl_integrity_end (on the thread's
 * stack, in the trampoline's frame). */
struct wl_integrity {
	sigset_t mask;     /* the mask the thread's creator gave it */
	uintptr_t top;     /* where painting started (just below the trampoline's frame) */
	uintptr_t lo;      /* the painted window's low end */
};

/* The functions a workload thread runs for these checks, outside its truth window (the
 * painting at its start; the scan, its own signal and that signal's handler at its end),
 * NULL-terminated. A sample whose leaf is one of them says nothing about the workload's
 * call chain: the stack metrics leave it unjudged (analysis/metrics.c). */
#define WL_INTEGRITY_FUNCS 8 /* room for wl_integrity_funcs[], its NULL excluded */
extern const void *const wl_integrity_funcs[];

/* Installs the program's handler for WL_SELF_SIGNAL (once per process, before the
 * sampler starts). Returns 0, or -1 with errno set. */
int wl_integrity_install(void);

/* Records the calling thread's signal mask and paints its stack below the caller's frame
 * (at most WL_PAINT_CAP bytes, never the guard). Call first in a new thread, before the
 * sampler's thread_start. */
void wl_integrity_begin(struct wl_integrity *it);

/* Scans the painted stack for its deepest changed word (max into t->stack_peak), compares
 * the mask with the one at begin and sends the thread WL_SELF_SIGNAL, counting what failed
 * in t. Call last, before the sampler's thread_stop. */
void wl_integrity_end(struct wl_integrity *it, struct wl_truth *t);

/* How many times the program's handler of WL_SELF_SIGNAL ran on the calling thread.
 * Async-signal-safe. */
uint64_t wl_self_signal_count(void);
/* Expiries of POSIX timers whose signal is WL_SELF_SIGNAL that the handler saw, overruns
 * included (Linux; 0 elsewhere). */
uint64_t wl_self_timer_expiries(void);

/* 1 when a and b block the same signals. */
int wl_sigset_equal(const sigset_t *a, const sigset_t *b);

#define WL_PAINT_CAP (256u << 10) /* bytes of stack painted below the trampoline */

#endif
