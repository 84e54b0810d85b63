/* threads.c - the tid -> slot table and per-thread stack bounds. */
#include "sampler/threads.h"

#include <stdatomic.h>

#include "sampler/sampler.h"

__thread int sb_self_index SB_TLS = -1;
__thread struct sb_stack_bounds sb_self_bounds SB_TLS;

/* Live workload threads by slot. Churn reuses slots, so a slot holds the latest tid. */
static _Atomic pid_t slot_tid[SB_MAX_THREADS];
/* One past the highest slot ever begun: sb_index_of_tid scans no further. */
static _Atomic int slot_high;

static int (*_Atomic slot_resolver)(uint64_t pc);

void sb_set_slot_resolver(int (*resolve)(uint64_t pc))
{
	atomic_store(&slot_resolver, resolve);
}

int sb_slot_of_frame_pc(uint64_t pc)
{
	int (*resolve)(uint64_t) = atomic_load_explicit(&slot_resolver, memory_order_acquire);
	return resolve ? resolve(pc) : -1;
}

pid_t sb_gettid(void)
{
	return plat_gettid();
}

int sb_stack_bounds_self(struct sb_stack_bounds *b)
{
	return plat_stack_bounds_self(&b->lo, &b->hi);
}

void sb_thread_begin(int index)
{
	struct sb_stack_bounds b = { 0, 0 };
	sb_stack_bounds_self(&b);
	sb_self_bounds = b;
	sb_self_index = index;
	if (index >= 0 && index < SB_MAX_THREADS) {
		atomic_store(&slot_tid[index], sb_gettid());
		int h = atomic_load_explicit(&slot_high, memory_order_relaxed);
		while (h <= index && !atomic_compare_exchange_weak(&slot_high, &h, index + 1))
			;
	}
	if (sb_active_sampler && sb_active_sampler->thread_start)
		sb_active_sampler->thread_start(index);
}

void sb_thread_end(void)
{
	int index = sb_self_index;
	if (sb_active_sampler && sb_active_sampler->thread_stop)
		sb_active_sampler->thread_stop(index);
	if (index >= 0 && index < SB_MAX_THREADS) {
		pid_t me = sb_gettid();
		atomic_compare_exchange_strong(&slot_tid[index], &me, 0);
	}
	sb_self_index = -1;
}

int sb_index_of_tid(pid_t tid)
{
	int h = atomic_load_explicit(&slot_high, memory_order_acquire);

	for (int i = 0; i < h && i < SB_MAX_THREADS; i++)
		if (atomic_load_explicit(&slot_tid[i], memory_order_relaxed) == tid)
			return i;
	return -1;
}
