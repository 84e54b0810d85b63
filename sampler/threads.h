/* threads.h - which thread is which, readable from a signal handler.
 *
 * Every workload thread announces itself from itself with sb_thread_begin(index): that
 * records its tid, its stack bounds (platform.h, never inside a handler) and its
 * slot, then calls the active sampler's thread_start hook. Lookups are lock-free. */
#ifndef SB_THREADS_H
#define SB_THREADS_H

#include <sys/types.h>

#include "platform/platform.h"
#include "sampler/fpwalk.h"

#define SB_TLS __attribute__((tls_model("initial-exec")))

/* This thread's slot (-1 when not a workload thread) and stack bounds ({0,0} when unknown). */
extern __thread int sb_self_index SB_TLS;
extern __thread struct sb_stack_bounds sb_self_bounds SB_TLS;

/* Announces the calling thread as workload slot `index` (or -1) and runs the sampler's
 * thread_start hook. Call once per thread, before its work. */
void sb_thread_begin(int index);
/* Runs the sampler's thread_stop hook and marks the thread gone. */
void sb_thread_end(void);

/* Slot of the live thread with OS id tid, or -1. Async-signal-safe. */
int sb_index_of_tid(pid_t tid);

/* Workload slot whose code (leaf or entry function) contains pc, or -1, for samplers that
 * must recover the thread from a stack (gperftools). The workload layer installs the
 * resolver (workloads/slots.c); without one (the exec agent) every pc gives -1. Samplers
 * never include workload headers. Async-signal-safe. */
int sb_slot_of_frame_pc(uint64_t pc);
void sb_set_slot_resolver(int (*resolve)(uint64_t pc));

/* Computes the calling thread's stack bounds. Not async-signal-safe. Returns 0 or -1. */
int sb_stack_bounds_self(struct sb_stack_bounds *b);

/* gettid(2). Async-signal-safe. */
pid_t sb_gettid(void);

#endif
