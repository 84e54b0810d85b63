/* mach_double.h - a Mach double for tests: the Mach and libpthread calls the Darwin
 * sources make, implemented on Linux, with fault injection (mach_double.c).
 *
 * Test-only: linked into tests/test_mach_double only, never into the product. Threads
 * are stopped for real (a signal rendezvous: the target parks in a handler until its
 * suspend count is back to 0), thread state comes from the stopped context, send rights
 * and task_threads arrays are counted, and every call can be made to fail. The calls of
 * one process act on its own threads, or on its parent's after a fork (task_for_pid of
 * the parent: the out-of-process `mach-task` sampler). docs/darwin.md "The Mach double". */
#ifndef SB_TEST_MACH_DOUBLE_H
#define SB_TEST_MACH_DOUBLE_H

#include <mach/mach.h>
#include <mach/mach_vm.h>
#include <stdint.h>
#include <sys/types.h>

/* The calls faults can be injected into. */
enum md_call {
	MD_TASK_THREADS,
	MD_THREAD_SUSPEND,
	MD_THREAD_RESUME,
	MD_THREAD_GET_STATE,
	MD_THREAD_INFO,
	MD_PORT_DEALLOCATE,
	MD_VM_READ,
	MD_VM_DEALLOCATE,
	MD_TASK_FOR_PID,
	MD_NCALLS
};

/* Faults are set in the process whose threads are the targets, and act on calls made on
 * them by this process or by its forked children. A failed call changes nothing (no
 * suspend taken, no right given or taken). */
/* The nth call of c from now (1: the next one) returns kr. */
void md_fail_nth(enum md_call c, uint64_t n, kern_return_t kr);
/* Each call of c returns kr with probability per_million / 1e6 (a generator seeded with
 * seed: the same seed, the same sequence of draws). per_million 0 turns it off. */
void md_fail_random(enum md_call c, uint32_t per_million, kern_return_t kr, uint64_t seed);
/* The next call of c that names thread tid makes it exit before the call is carried out
 * (the call then sees it gone). The thread must reach md_exit_point() within 2 s. */
void md_exit_before(enum md_call c, pid_t tid);
/* On the nth call of c from now, the caller never returns (a sampler hung mid-sample). */
void md_hang_nth(enum md_call c, uint64_t n);
/* Clears every fault of this process. */
void md_faults_clear(void);
/* Exits the calling thread (pthread_exit) when md_exit_before() asked it to. */
void md_exit_point(void);
/* The next n threads created report unknown stack bounds (pthread_get_stackaddr_np giving
 * NULL on Darwin: plat_stack_bounds_self() fails in them). */
void md_unknown_bounds_next(int n);

/* Starts a thread no introspection hook sees (as a thread a library made before any hook
 * was installed): the registry never samples it. Returns pthread_create's result. */
int md_create_unhooked(pthread_t *t, void *(*fn)(void *), void *arg);

/* What happened to this process's threads. */
struct md_counts {
	uint64_t calls[MD_NCALLS];    /* on this task's threads, by this process and children */
	uint64_t injected[MD_NCALLS]; /* failures injected */
	uint64_t exits_injected;      /* threads made to exit by md_exit_before() */
	int64_t rights;      /* send rights on this task's thread ports held by any task */
	int64_t max_rights;  /* the most rights on one thread port (a leak per tick grows it) */
	int64_t lists;       /* task_threads() arrays of this task not yet deallocated */
	int64_t suspended;   /* threads of this task with a suspend count above 0 */
	int64_t dead_suspended; /* threads that exited with a suspend count above 0 */
	int64_t misuse;      /* calls refused as misuse: resume at count 0, state of a running
			      * thread, a right not held, a wrong array size */
	uint64_t threads;    /* threads the double has seen in this process */
	uint64_t lost;       /* threads beyond its capacity (not visible to Mach calls) */
	uint64_t hook_starts, hook_terminates; /* seen by an introspection hook installed
						* before the sources' one, which must chain */
};
void md_counts(struct md_counts *out);
/* Suspend count of this process's thread tid, -1 when the double does not know it. */
int md_suspend_count(pid_t tid);
/* Send rights this process holds on thread ports (its own threads' and its parent's). */
int64_t md_rights_held_here(void);

#endif
