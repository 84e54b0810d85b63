/* thread_state_darwin.h - the registers of a suspended Mach thread, for the in-process
 * (thread_ctl_darwin.c) and the out-of-process (mach_task_darwin.c) samplers alike. */
#ifndef SB_THREAD_STATE_DARWIN_H
#define SB_THREAD_STATE_DARWIN_H

#include <mach/mach.h>

#include "sampler/fpwalk.h"

/* Reads pc, sp, fp and lr (0 on x86_64) of thread th, which the caller has suspended.
 * arm64: pointer-authentication bits are stripped from pc and lr. Returns 0, or -1 when
 * thread_get_state fails (the thread is gone). Async-signal-safe. */
int darwin_thread_regs(thread_act_t th, struct sb_regs *regs);

/* 1 when kr, returned by a call on a thread's port, says the thread no longer exists: it
 * exited since the port was obtained (normal between a snapshot and a suspend, seed 004),
 * not an error. */
int darwin_thread_gone(kern_return_t kr);

#endif
