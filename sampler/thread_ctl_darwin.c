/* thread_ctl_darwin.c - suspend / get state / resume on Darwin with Mach thread calls, and
 * the registry's thread discovery (pthread introspection hook).
 *
 * Darwin build only. Compiled and linked for aarch64-macos and x86_64-macos by
 * `make darwin-check` on Linux; it runs only on a Mac (CI's macos-14 job), never here.
 * See docs/darwin.md.
 *
 * Darwin stops a thread synchronously: tc_poll() does the thread_suspend() and returns
 * TC_PARKED at once, so the sampler handles one thread at a time (suspend, walk, resume)
 * and no thread waits, suspended, for another one's walk. There is no rendezvous: the
 * doorbell and the request deadline are unused, and a suspended thread does not run, so
 * idle skip compares CPU times exactly. */
#include "sampler/thread_ctl.h"

#include <mach/mach.h>
#include <pthread.h>
#include <pthread/introspection.h>
#include <time.h>

#include "core/sample.h"
#include "sampler/registry.h"
#include "sampler/thread_state_darwin.h"

static pthread_introspection_hook_t prev_hook;

/* START and TERMINATE run in the context of the thread itself, so the registry records
 * the thread's own stack bounds and Mach port. Chains to the hook installed before us. */
static void introspection_hook(unsigned int event, pthread_t thread, void *addr, size_t size)
{
	if (event == PTHREAD_INTROSPECTION_THREAD_START)
		registry_add_self();
	else if (event == PTHREAD_INTROSPECTION_THREAD_TERMINATE)
		registry_remove_self();
	if (prev_hook)
		prev_hook(event, thread, addr, size);
}

/* No interposition on Darwin (two-level namespaces): the hook registers every thread, so
 * the raw create is the plain one and the sampler thread is registered too; mach.c skips
 * its own tid (both from plat_gettid()). */
int registry_pthread_create_raw(pthread_t *t, const pthread_attr_t *attr,
				void *(*fn)(void *), void *arg)
{
	return pthread_create(t, attr, fn, arg);
}

/* Installed before main() so every thread is seen from its creation. */
__attribute__((constructor)) static void install_hook(void)
{
	prev_hook = pthread_introspection_hook_install(introspection_hook);
}

int tc_init(void)
{
	return 0;
}

void tc_fini(void)
{
}

int tc_signo(void)
{
	return 0;
}

void tc_attach_self(struct tc_park *p, uint32_t ident)
{
	/* mach_thread_self() adds a send right: the name stays ours (a dead thread answers
	 * KERN_TERMINATED) instead of being recycled for another thread. The right of the
	 * block's previous owner is dropped here, when the entry is reused. */
	mach_port_t old = atomic_exchange(&p->port, mach_thread_self());
	if (old != MACH_PORT_NULL)
		mach_port_deallocate(mach_task_self(), old);
	atomic_store(&p->ident, ident);
}

int tc_request(struct tc_target *t)
{
	t->req = 0;
	t->req_ns = sb_now_ns();
	return TC_PENDING;
}

int tc_rearm(struct tc_target *t)
{
	return tc_request(t); /* thread_suspend() leaves nothing undelivered */
}

int tc_poll(struct tc_target *t)
{
	mach_port_t port = atomic_load(&t->park->port);
	kern_return_t kr;

	t->req_ns = sb_now_ns(); /* the request is the thread_suspend() call itself */
	kr = thread_suspend(port);
	if (kr != KERN_SUCCESS)
		return darwin_thread_gone(kr) ? TC_GONE : TC_ERROR;
	atomic_store_explicit(&t->park->parked_ns, sb_now_ns(), memory_order_relaxed);
	return TC_PARKED;
}

int tc_cancel(struct tc_target *t)
{
	(void)t;
	return TC_TIMEOUT; /* never pending: tc_poll() is synchronous */
}

/* thread_suspend() of a thread that is not on a CPU returns at once: nothing to defer. */
int tc_defer(struct tc_target *t, const struct sb_stack_bounds *b)
{
	(void)t;
	(void)b;
	return TC_TIMEOUT;
}

int tc_deferred_poll(const struct tc_park *p, uint32_t req, struct tc_self_sample *out)
{
	(void)p;
	(void)req;
	(void)out;
	return TC_TIMEOUT;
}

int tc_deferred_end(struct tc_park *p, uint32_t req)
{
	(void)p;
	(void)req;
	return TC_TIMEOUT;
}

uint32_t tc_doorbell(void)
{
	return 0;
}

void tc_wait(uint32_t seen, uint64_t deadline_ns)
{
	(void)seen;
	(void)deadline_ns;
}

int tc_get_state(const struct tc_target *t, struct sb_regs *regs, uint64_t *parked_ns)
{
	if (atomic_load(&t->park->ident) != t->ident)
		return -1;
	*parked_ns = atomic_load_explicit(&t->park->parked_ns, memory_order_relaxed);
	return darwin_thread_regs(atomic_load(&t->park->port), regs);
}

void tc_resume(struct tc_target *t)
{
	/* Called exactly once per successful thread_suspend(): suspend counts nest, and an
	 * extra suspend left behind would stop the thread for good. */
	thread_resume(atomic_load(&t->park->port));
}

/* thread_suspend() is synchronous: nothing parks, so nothing spins or waits on a shared
 * word; a batch release is a thread_resume() each. */
void tc_release(struct tc_target *t)
{
	tc_resume(t);
}

void tc_release_flush(void)
{
}

int tc_begin_tick(int batch, int want_cpu_after)
{
	(void)batch;
	(void)want_cpu_after;
	return -1;
}

int tc_park_cpu(const struct tc_park *p)
{
	(void)p;
	return -1;
}

void tc_wait_spin(uint32_t seen, uint64_t deadline_ns, int may_spin)
{
	(void)may_spin;
	tc_wait(seen, deadline_ns);
}

void tc_set_spin_ns(uint64_t ns)
{
	(void)ns;
}

uint64_t tc_spin_ns(void)
{
	return 0;
}

uint64_t tc_spin_releases(void)
{
	return 0;
}

uint64_t tc_spin_wakes(void)
{
	return 0;
}

uint64_t tc_last_park_ns(void)
{
	return 0; /* thread_suspend() returns when the thread is stopped: no parks to wait for */
}

int tc_pc_at_syscall(uintptr_t pc)
{
	(void)pc;
	return 0;
}

/* thread_suspend() interrupts no system call: nothing to gain from peeking. */
int tc_peek_open(pid_t tid)
{
	(void)tid;
	return -1;
}

int tc_peek(int fd, const struct sb_stack_bounds *b, uintptr_t outer_fp, struct sb_regs *regs)
{
	(void)fd;
	(void)b;
	(void)outer_fp;
	(void)regs;
	return -1;
}

int tc_cpu_ns(const struct tc_park *p, pid_t tid, uint64_t *ns)
{
	thread_basic_info_data_t info;
	mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
	kern_return_t kr;

	(void)tid;
	kr = thread_info(atomic_load(&p->port), THREAD_BASIC_INFO, (thread_info_t)&info, &count);
	if (kr != KERN_SUCCESS)
		return -1;
	*ns = ((uint64_t)info.user_time.seconds + (uint64_t)info.system_time.seconds) * 1000000000ull +
	      ((uint64_t)info.user_time.microseconds + (uint64_t)info.system_time.microseconds) * 1000ull;
	return 0;
}

int tc_process_clock_open(void)
{
	uint64_t ns;

	return sb_process_cpu_ns(&ns); /* nothing to arm: the kernel sums the threads */
}

void tc_process_clock_close(void)
{
}

int tc_cpu_after(const struct tc_park *p, uint32_t req, uint64_t *ns)
{
	(void)p;
	(void)req;
	(void)ns;
	return -1; /* a suspended thread does not run: compare CPU times exactly */
}

uint64_t tc_eintr_caused(void)
{
	return 0; /* thread_suspend() does not interrupt system calls */
}
