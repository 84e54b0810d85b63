/* threads.c - the tid -> slot table and per-thread stack bounds. */
#include "threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler.h"

__thread int sb_self_index SB_TLS = -1;
__thread struct sb_stack_bounds sb_self_bounds SB_TLS;

/* Live workload threads by slot. Churn reuses slots, so a slot holds the latest tid. */
static _Atomic pid_t slot_tid[SB_MAX_THREADS];

pid_t sb_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int sb_stack_bounds_self(struct sb_stack_bounds *b)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return -1;
	int rc = pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	b->lo = (uintptr_t)addr;
	b->hi = (uintptr_t)addr + size;
	return 0;
}

void sb_thread_begin(int index)
{
	struct sb_stack_bounds b = { 0, 0 };
	sb_stack_bounds_self(&b);
	sb_self_bounds = b;
	sb_self_index = index;
	if (index >= 0 && index < SB_MAX_THREADS)
		atomic_store(&slot_tid[index], sb_gettid());
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
	for (int i = 0; i < SB_MAX_THREADS; i++)
		if (atomic_load_explicit(&slot_tid[i], memory_order_relaxed) == tid)
			return i;
	return -1;
}
