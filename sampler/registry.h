/* registry.h - every thread of the process, from creation to exit, for suspend samplers.
 *
 * Threads register themselves, from their own context, before their start routine runs:
 *   Linux:  registry_linux.c's pthread_create() wraps the start routine (real one via
 *           dlsym(RTLD_NEXT)); exit is caught by the wrapper's return and, for
 *           pthread_exit(), by a pthread key destructor.
 *   Darwin: pthread_introspection_hook_install (thread_ctl_darwin.c), chaining the old hook.
 * The main thread is registered by the sampler's start (registry_add_self()).
 *
 * The registry is a fixed array of entries, each with an atomic state and a generation.
 * Exit marks an entry DEAD; registry_compact() (the sampler thread, between ticks) makes
 * dead entries FREE for reuse. Readers take lock-free snapshots: an entry is copied only
 * if it was LIVE with the same generation before and after the copy, so no reader ever
 * waits for a writer and no lock exists that a stopped thread could hold. */
#ifndef SB_REGISTRY_H
#define SB_REGISTRY_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/fpwalk.h"
#include "sampler/thread_ctl.h"

#define REG_CAP 16384 /* threads alive at once (dead entries are recycled) */
#define REG_LOG 4096   /* changes kept for registry_changes() (a power of 2) */

/* One registered thread as copied by registry_snapshot(). */
struct reg_snap {
	uint32_t idx;        /* entry index, < REG_CAP */
	uint32_t gen;        /* entry generation: (idx, gen) names one thread for good */
	pid_t tid;
	pthread_t pthread;
	struct sb_stack_bounds bounds; /* recorded by the thread itself when it registered */
	uintptr_t outer_fp;  /* its outermost frame record then, 0 unknown (tc_peek) */
	int slot;            /* workload slot, -1 when unknown */
	uint64_t reg_ns;     /* sb_now_ns() at registration */
	struct tc_park *park; /* its control block (never freed) */
};

/* Registers the calling thread (idempotent; after fork() the child re-registers).
 * Returns 0, or -1 when the registry is full. */
int registry_add_self(void);
/* Marks the calling thread's entry DEAD. Its control block stays bound to the thread, so
 * a rendezvous that races with the exit still finds valid memory. */
void registry_remove_self(void);
/* Records the calling thread's workload slot (the sampler's thread_start hook). */
void registry_set_self_slot(int slot);

/* Copies up to max LIVE entries into out; returns how many. Lock-free; safe against
 * threads registering and exiting concurrently. O(entries ever used): a sampler with
 * thousands of threads takes one only when registry_epoch() moved. */
int registry_snapshot(struct reg_snap *out, int max);
/* Changes logged so far: a thread registered, exited or set its slot (each logged after
 * the change). A snapshot taken after reading value v holds every change up to v. */
uint64_t registry_epoch(void);
/* The entries changed since change *cursor (registry_epoch() values), up to max of them
 * into idx (an entry may come more than once), and advances *cursor past them. Returns
 * how many, or -1 when some were lost (more than REG_LOG changes since *cursor): then
 * take a snapshot and start again from the epoch read before it. Lock-free; O(changes). */
int registry_changes(uint64_t *cursor, uint32_t *idx, int max);
/* Copies entry idx into out if it is LIVE (as registry_snapshot does). Returns 1, or 0
 * when it is not LIVE. */
int registry_read(uint32_t idx, struct reg_snap *out);
/* Turns DEAD entries into FREE ones. Returns how many. Call between ticks. O(1) when no
 * entry is DEAD. */
int registry_compact(void);
/* Turns entry idx FREE if it is DEAD (a sampler that read its exit in the change log).
 * Returns 1 when it did, else 0. O(1), where registry_compact() scans every entry. */
int registry_free(uint32_t idx);
/* Entries in state LIVE / DEAD right now (racy counts, for tests and stats). */
int registry_live(void);
int registry_dead(void);

/* The real pthread_create (bypasses registration): for threads that must not be
 * sampled, like the sampler thread itself. */
int registry_pthread_create_raw(pthread_t *t, const pthread_attr_t *attr,
				void *(*fn)(void *), void *arg);

#endif
