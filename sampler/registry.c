/* registry.c - the thread registry behind the suspend sampler (see registry.h).
 *
 * Entry life: FREE -> CLAIMED (being filled) -> LIVE -> DEAD (thread exited) -> FREE
 * (registry_compact). The generation is bumped on every claim before any field is
 * written, so a snapshot that raced with a reuse sees the generation move and drops the
 * copy. All fields are atomics (relaxed) so the seqlock-style copy is race-free. */
#include "sampler/registry.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/sample.h"
#include "sampler/threads.h"

enum { E_FREE = 0, E_CLAIMED, E_LIVE, E_DEAD };

struct reg_entry {
	_Atomic uint32_t state;
	_Atomic uint32_t gen;
	_Atomic pid_t tid;
	_Atomic uintptr_t pthread;
	_Atomic uintptr_t lo, hi;
	_Atomic uintptr_t outer_fp;
	_Atomic int slot;
	_Atomic uint64_t reg_ns;
	struct tc_park park;
} __attribute__((aligned(64)));

static struct reg_entry entries[REG_CAP];
/* Entries [0, high) have been used at least once. Never lowered: lowering it races with
 * a claim and would hide a live entry from snapshots; a scan of REG_CAP is ~1 us. */
static _Atomic uint32_t high;
/* Entries below high that are FREE (compacted), and entries DEAD: claim() scans from 0
 * only when the first is non-zero (with 10,000 threads starting, a scan from 0 each would
 * be quadratic), registry_compact() scans only when the second is. */
static _Atomic uint32_t nfree_low, ndead;
/* The change log: change n names its entry in log[n % REG_LOG], whose seq reads n + 1
 * once written. epoch counts the changes claimed. */
static _Atomic uint64_t epoch;
static struct {
	_Atomic uint64_t seq;
	_Atomic uint32_t idx;
} change_log[REG_LOG];
_Static_assert((REG_LOG & (REG_LOG - 1)) == 0, "REG_LOG is a power of 2");

/* Logs a change of entry e, after the change itself. */
static void log_change(const struct reg_entry *e)
{
	uint64_t n = atomic_fetch_add_explicit(&epoch, 1, memory_order_acq_rel);

	atomic_store_explicit(&change_log[n % REG_LOG].idx, (uint32_t)(e - entries),
			      memory_order_relaxed);
	atomic_store_explicit(&change_log[n % REG_LOG].seq, n + 1, memory_order_release);
}

static __thread struct reg_entry *self_entry SB_TLS;
static __thread pid_t self_tid SB_TLS;

/* Both from the platform layer (threads.c), the same values the sampler uses. */
static pid_t reg_gettid(void)
{
	return sb_gettid();
}

static int reg_bounds_self(struct sb_stack_bounds *b)
{
	return sb_stack_bounds_self(b);
}

/* The outermost frame record of the calling thread's frame-pointer chain, 0 when the
 * bounds are unknown. A peek at this thread, blocked later in a system call, accepts a
 * chain that reaches it (the main thread's chain ends in no zero fp to recognise). */
__attribute__((no_sanitize("address"))) static uintptr_t outer_frame(const struct sb_stack_bounds *b)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0), outer = 0;

	while (fp_validate(fp, b)) {
		uintptr_t next = *(const uintptr_t *)fp;
		outer = fp;
		if (next <= fp)
			break;
		fp = next;
	}
	return outer;
}

/* A FREE entry made CLAIMED: one of the compacted ones below high when there are any,
 * else the first never used (at high), else any. NULL when full. */
static struct reg_entry *claim(void)
{
	uint32_t from = atomic_load_explicit(&nfree_low, memory_order_relaxed) > 0
				? 0
				: atomic_load_explicit(&high, memory_order_relaxed);

	for (uint32_t k = 0; k < REG_CAP; k++) {
		uint32_t i = (from + k) % REG_CAP, want = E_FREE;
		if (atomic_load_explicit(&entries[i].state, memory_order_relaxed) != E_FREE)
			continue;
		if (!atomic_compare_exchange_strong(&entries[i].state, &want, E_CLAIMED))
			continue;
		uint32_t h = atomic_load(&high);
		if (i < h)
			atomic_fetch_sub_explicit(&nfree_low, 1, memory_order_relaxed);
		while (h < i + 1 && !atomic_compare_exchange_weak(&high, &h, i + 1))
			;
		return &entries[i];
	}
	return NULL;
}

uint64_t registry_epoch(void)
{
	return atomic_load_explicit(&epoch, memory_order_acquire);
}

int registry_changes(uint64_t *cursor, uint32_t *idx, int max)
{
	uint64_t head = atomic_load_explicit(&epoch, memory_order_acquire), n = *cursor;
	int k = 0;

	if (head - n > REG_LOG)
		return -1;
	for (; n < head && k < max; n++) {
		uint64_t seq = atomic_load_explicit(&change_log[n % REG_LOG].seq, memory_order_acquire);
		if (seq < n + 1)
			break; /* its writer is still at it: next time */
		uint32_t i = atomic_load_explicit(&change_log[n % REG_LOG].idx, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (seq > n + 1 ||
		    atomic_load_explicit(&change_log[n % REG_LOG].seq, memory_order_relaxed) != n + 1)
			return -1; /* overwritten by a later change */
		idx[k++] = i;
	}
	*cursor = n;
	return k;
}

int registry_add_self(void)
{
	pid_t tid = reg_gettid();
	struct sb_stack_bounds b = { 0, 0 };
	struct reg_entry *e;

	if (self_entry && self_tid == tid &&
	    atomic_load_explicit(&self_entry->state, memory_order_relaxed) == E_LIVE)
		return 0;
	/* Bounds come from the thread itself, now, never while it is stopped. A thread whose
	 * bounds are unknown is still registered: its walks stop at the first frame. */
	reg_bounds_self(&b);
	e = claim();
	if (!e) {
		/* Full: recycle dead entries ourselves. Safe against an in-flight request: the
		 * control block is never reinitialised and a parked thread reports its own
		 * generation, which the sampler checks. */
		registry_compact();
		e = claim();
	}
	if (!e)
		return -1;

	uint32_t gen = atomic_fetch_add_explicit(&e->gen, 1, memory_order_relaxed) + 1;
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&e->tid, tid, memory_order_relaxed);
	atomic_store_explicit(&e->pthread, (uintptr_t)pthread_self(), memory_order_relaxed);
	atomic_store_explicit(&e->lo, b.lo, memory_order_relaxed);
	atomic_store_explicit(&e->hi, b.hi, memory_order_relaxed);
	atomic_store_explicit(&e->outer_fp, outer_frame(&b), memory_order_relaxed);
	atomic_store_explicit(&e->slot, -1, memory_order_relaxed);
	atomic_store_explicit(&e->reg_ns, sb_now_ns(), memory_order_relaxed);
	tc_attach_self(&e->park, gen);
	self_entry = e;
	self_tid = tid;
	atomic_store_explicit(&e->state, E_LIVE, memory_order_release);
	log_change(e); /* after LIVE: a sampler that reads the change sees the entry */
	return 0;
}

void registry_remove_self(void)
{
	struct reg_entry *e = self_entry;
	uint32_t live = E_LIVE;

	if (!e || self_tid != reg_gettid())
		return;
	if (atomic_compare_exchange_strong(&e->state, &live, E_DEAD)) {
		atomic_fetch_add_explicit(&ndead, 1, memory_order_relaxed);
		log_change(e);
	}
	/* self_entry and the tc_park binding stay: a rendezvous racing with the rest of the
	 * exit path must find its control block. */
}

void registry_set_self_slot(int slot)
{
	if (self_entry && self_tid == reg_gettid()) {
		atomic_store_explicit(&self_entry->slot, slot, memory_order_relaxed);
		log_change(self_entry);
	}
}

int registry_read(uint32_t i, struct reg_snap *s)
{
	struct reg_entry *e = &entries[i % REG_CAP];

	if (atomic_load_explicit(&e->state, memory_order_acquire) != E_LIVE)
		return 0;
	uint32_t gen = atomic_load_explicit(&e->gen, memory_order_acquire);
	s->idx = i;
	s->gen = gen;
	s->tid = atomic_load_explicit(&e->tid, memory_order_relaxed);
	s->pthread = (pthread_t)atomic_load_explicit(&e->pthread, memory_order_relaxed);
	s->bounds.lo = atomic_load_explicit(&e->lo, memory_order_relaxed);
	s->bounds.hi = atomic_load_explicit(&e->hi, memory_order_relaxed);
	s->outer_fp = atomic_load_explicit(&e->outer_fp, memory_order_relaxed);
	s->slot = atomic_load_explicit(&e->slot, memory_order_relaxed);
	s->reg_ns = atomic_load_explicit(&e->reg_ns, memory_order_relaxed);
	s->park = &e->park;
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->gen, memory_order_relaxed) == gen &&
	       atomic_load_explicit(&e->state, memory_order_relaxed) == E_LIVE;
}

int registry_snapshot(struct reg_snap *out, int max)
{
	uint32_t h = atomic_load_explicit(&high, memory_order_acquire);
	int n = 0;

	for (uint32_t i = 0; i < h && n < max; i++)
		n += registry_read(i, &out[n]);
	return n;
}

int registry_compact(void)
{
	uint32_t h = atomic_load_explicit(&high, memory_order_acquire);
	int n = 0;

	if (atomic_load_explicit(&ndead, memory_order_relaxed) == 0)
		return 0;
	for (uint32_t i = 0; i < h; i++) {
		uint32_t dead = E_DEAD;
		if (atomic_load_explicit(&entries[i].state, memory_order_relaxed) == E_DEAD &&
		    atomic_compare_exchange_strong(&entries[i].state, &dead, E_FREE)) {
			atomic_fetch_sub_explicit(&ndead, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&nfree_low, 1, memory_order_relaxed);
			n++;
		}
	}
	return n;
}

int registry_free(uint32_t idx)
{
	struct reg_entry *e = &entries[idx % REG_CAP];
	uint32_t dead = E_DEAD;

	if (atomic_load_explicit(&e->state, memory_order_relaxed) != E_DEAD ||
	    !atomic_compare_exchange_strong(&e->state, &dead, E_FREE))
		return 0;
	atomic_fetch_sub_explicit(&ndead, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&nfree_low, 1, memory_order_relaxed);
	return 1;
}

static int count_state(uint32_t st)
{
	uint32_t h = atomic_load(&high);
	int n = 0;

	for (uint32_t i = 0; i < h; i++)
		n += atomic_load_explicit(&entries[i].state, memory_order_relaxed) == st;
	return n;
}

int registry_live(void)
{
	return count_state(E_LIVE);
}

int registry_dead(void)
{
	return count_state(E_DEAD);
}

/* In a fork() child only the forking thread exists, under a new tid: forget every entry
 * and every open request, and let the thread register again. Runs single-threaded. */
static void reg_atfork_child(void)
{
	uint32_t h = atomic_load_explicit(&high, memory_order_relaxed), nd = 0;

	/* entries at and above high were never used: nothing to forget there */
	for (uint32_t i = 0; i < h; i++) {
		struct tc_park *p = &entries[i].park;
		if (atomic_load_explicit(&entries[i].state, memory_order_relaxed) != E_FREE) {
			atomic_store_explicit(&entries[i].state, E_DEAD, memory_order_relaxed);
			nd++;
		}
		atomic_store_explicit(&p->st, 0, memory_order_relaxed);
		atomic_store_explicit(&p->sent, 0, memory_order_relaxed);
		atomic_store_explicit(&p->entered, 0, memory_order_relaxed);
		/* Darwin: a port name of the parent's IPC space means nothing here, or names
		 * another thread of ours: tc_attach_self() must not deallocate it. */
		atomic_store_explicit(&p->port, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&ndead, nd, memory_order_relaxed);
	/* every change before the fork is lost to the child's sampler: it starts with a
	 * snapshot */
	atomic_fetch_add_explicit(&epoch, REG_LOG + 1, memory_order_relaxed);
	self_entry = NULL;
	self_tid = 0;
}

__attribute__((constructor)) static void reg_init(void)
{
	pthread_atfork(NULL, NULL, reg_atfork_child);
}

/* How threads get registered is per platform: registry_linux.c interposes pthread_create,
 * thread_ctl_darwin.c installs a pthread introspection hook. */
