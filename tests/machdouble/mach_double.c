/* mach_double.c - the Mach double (mach_double.h): the Mach and libpthread calls of
 * sampler/thread_ctl_darwin.c, mach_task_darwin.c and thread_state_darwin.c on Linux.
 *
 * Semantics are Apple's documented ones where the sources depend on them:
 *   - thread_suspend() returns once the thread is stopped; counts nest, and the thread
 *     runs again when thread_resume() brought the count back to 0. thread_resume() at
 *     count 0 fails (KERN_FAILURE). A thread stopped here is really stopped: it waits in
 *     a handler of MD_SIGNO (the Linux rendezvous, as in thread_ctl_linux.c) on a futex.
 *   - thread_get_state() reads the registers of that stopped context.
 *   - mach_thread_self() and task_threads() give a send right per thread port; each must
 *     be released with mach_port_deallocate(), and a name whose rights were all released
 *     is no longer usable (MACH_SEND_INVALID_DEST). Names are small per-task numbers, so
 *     a name carried over from another task may name one of ours, as on Darwin. task_threads() arrays are freed with
 *     mach_vm_deallocate() of their exact size. Rights and arrays are counted.
 *   - an exited thread's port is a dead name: calls on it give KERN_TERMINATED.
 *   - pthread_introspection_hook_install(): the hook gets THREAD_START and
 *     THREAD_TERMINATE in the thread itself, the events the sources use (pthread_create
 *     is interposed for it, as registry_linux.c does; CREATE and DESTROY are not sent).
 * Stricter than a Mac where a stricter answer catches a sampler bug: thread_get_state()
 * of a thread that is not suspended fails (a Mac answers with a state that may be stale)
 * and counts as misuse, as do a thread suspending itself and any use of a name the task
 * holds no right on.
 *
 * Each process has a table of its threads in a MAP_SHARED mapping. A forked child makes
 * a table of its own and keeps its parent's: task_for_pid(parent) names it, and the
 * child's calls stop, read and resume the parent's threads (tgkill, futexes on the
 * shared table, process_vm_readv), as `mach-task` needs. Faults live in the table of the
 * threads they act on. */
#include "tests/machdouble/mach_double.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <pthread/introspection.h>
#include <mach/mach_vm.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"

#define MD_CAP 16384          /* threads per process over its life (records are not reused) */
#define MD_OWN_BASE 0x1000u   /* port name of own thread i: MD_OWN_BASE + i */
#define MD_PARENT_BASE 0x100000u /* port name of the parent's thread i */
#define MD_TASK_SELF 0x103u
#define MD_TASK_PARENT 0x203u
#define MD_MAX_LISTS 64       /* task_threads() arrays outstanding at once, per process */
#define MD_EXIT_WAIT_NS 2000000000ull

enum { MD_FREE = 0, MD_ALIVE, MD_DEAD };
enum { MD_RUN = 0, MD_REQ, MD_PARKED };

struct md_thread {
	_Atomic uint32_t state;
	_Atomic int32_t tid;
	_Atomic int32_t lock;        /* pid of the process holding it, 0 free */
	_Atomic int32_t suspend_count;
	_Atomic uint32_t park;       /* MD_RUN / MD_REQ / MD_PARKED: the futex word */
	_Atomic uint32_t exit_req;
	_Atomic int32_t rights;      /* send rights on its port, all tasks together */
	_Atomic uint64_t rip, rsp, rbp;
};

struct md_fault {
	_Atomic uint64_t calls, injected;
	_Atomic uint64_t nth_at, hang_at;
	_Atomic int32_t exit_tid;
	_Atomic int32_t nth_kr, random_kr;
	_Atomic uint32_t random_ppm;
};

struct md_table {
	pid_t pid;
	_Atomic uint32_t n;
	_Atomic uint64_t lost, exits_injected, rng;
	_Atomic int64_t lists, misuse, dead_suspended;
	struct md_fault fault[MD_NCALLS];
	struct md_thread th[MD_CAP];
};

static struct md_table *own, *parent;
/* THREAD_START / THREAD_TERMINATE seen by the hook installed before everyone else's. */
static _Atomic uint64_t first_hook_starts, first_hook_terminates;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static _Atomic(pthread_introspection_hook_t) md_hook;
static _Atomic int md_unknown_bounds_left;
static int md_signo;

/* Rights this process holds, per name space (0: own threads, 1: the parent's). Process-
 * local: a forked child holds none (a Darwin child inherits no thread port rights). */
static int32_t local_rights[2][MD_CAP];
static struct {
	void *addr;
	size_t size;
	struct md_table *t;
} lists[MD_MAX_LISTS];

static __thread struct md_thread *md_self __attribute__((tls_model("initial-exec")));
static __thread int md_no_bounds __attribute__((tls_model("initial-exec")));

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	/* Not FUTEX_PRIVATE: the word may be in another process's table (mach-task). */
	return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct md_table *table_new(void)
{
	struct md_table *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		abort(); /* a test double with no memory cannot say anything true */
	t->pid = getpid();
	atomic_store(&t->rng, 0x9e3779b97f4a7c15ull);
	return t;
}

/* A record for the calling thread in the own table. */
static struct md_thread *register_self(void)
{
	uint32_t i = atomic_fetch_add(&own->n, 1);

	if (i >= MD_CAP) {
		atomic_fetch_add(&own->lost, 1);
		return NULL;
	}
	struct md_thread *t = &own->th[i];
	atomic_store(&t->tid, (int32_t)syscall(SYS_gettid));
	atomic_store(&t->state, MD_ALIVE);
	md_self = t;
	return t;
}

/* The rendezvous: a requested thread saves its interrupted registers and waits until its
 * suspend count is back to 0. A signal that finds no request (stale) returns at once. */
static void md_handler(int sig, siginfo_t *si, void *uc)
{
	struct md_thread *t = md_self;
	int saved = errno;
	uintptr_t pc, sp, fp, lr;

	(void)sig;
	(void)si;
	if (t && atomic_load(&t->park) == MD_REQ) {
		plat_regs_from_ucontext(uc, &pc, &sp, &fp, &lr);
		atomic_store(&t->rip, pc);
		atomic_store(&t->rsp, sp);
		atomic_store(&t->rbp, fp);
		atomic_store(&t->park, MD_PARKED);
		futex(&t->park, FUTEX_WAKE, INT32_MAX, NULL);
		while (atomic_load(&t->park) == MD_PARKED)
			futex(&t->park, FUTEX_WAIT, MD_PARKED, NULL);
	}
	errno = saved;
}

/* In a forked child: the parent's table stays reachable through task_for_pid(parent);
 * the child starts a table of its own, holding no rights and no arrays. */
static void md_atfork_child(void)
{
	parent = own;
	own = table_new();
	memset(local_rights, 0, sizeof(local_rights));
	memset(lists, 0, sizeof(lists));
	md_self = NULL;
	register_self();
}

static void md_init(void)
{
	struct sigaction sa;

	own = table_new();
	register_self();
	md_signo = SIGRTMIN + 3;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = md_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(md_signo, &sa, NULL);
	pthread_atfork(NULL, NULL, md_atfork_child);
	/* A child (mach-task's sampler process) reads our memory with process_vm_readv. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

static void md_ensure(void)
{
	pthread_once(&md_once, md_init);
	if (!md_self || atomic_load(&md_self->tid) != (int32_t)syscall(SYS_gettid))
		register_self(); /* a thread not created through pthread_create below */
}

__attribute__((constructor)) static void md_ctor(void)
{
	md_ensure();
}

/* ---- names ---- */

struct md_ref {
	struct md_table *t;
	struct md_thread *th;
	int space;    /* 0 own, 1 parent */
	uint32_t idx;
};

static int lookup(mach_port_t name, struct md_ref *r)
{
	uint32_t base = MD_OWN_BASE;

	r->space = 0;
	r->t = own;
	if (name >= MD_PARENT_BASE) {
		base = MD_PARENT_BASE;
		r->space = 1;
		r->t = parent;
	}
	if (!r->t || name < base || name - base >= MD_CAP ||
	    name - base >= atomic_load(&r->t->n))
		return -1;
	r->idx = name - base;
	r->th = &r->t->th[r->idx];
	return 0;
}

static mach_port_t name_of(const struct md_ref *r)
{
	return (r->space ? MD_PARENT_BASE : MD_OWN_BASE) + r->idx;
}

static void right_add(const struct md_ref *r)
{
	local_rights[r->space][r->idx]++;
	atomic_fetch_add(&r->th->rights, 1);
}

static struct md_table *task_table(task_t task)
{
	if (task == MD_TASK_SELF)
		return own;
	if (task == MD_TASK_PARENT)
		return parent;
	return NULL;
}

/* ---- faults ---- */

static uint64_t rng_next(struct md_table *t)
{
	uint64_t x = atomic_load(&t->rng), y;
	do {
		y = x ^ (x << 13);
		y ^= y >> 7;
		y ^= y << 17;
	} while (!atomic_compare_exchange_weak(&t->rng, &x, y));
	return y;
}

static void hang(void)
{
	for (;;)
		pause();
}

/* Makes thread th of table t exit, from another thread: asks it and waits until it is
 * gone (it leaves at its next md_exit_point()). */
static void exit_thread(struct md_table *t, struct md_thread *th)
{
	uint64_t until = now_ns() + MD_EXIT_WAIT_NS;

	atomic_store(&th->exit_req, 1);
	while (atomic_load(&th->state) != MD_DEAD && now_ns() < until)
		sched_yield();
	if (atomic_load(&th->state) == MD_DEAD)
		atomic_fetch_add(&t->exits_injected, 1);
}

/* Counts a call of c on table t and returns the failure to inject, KERN_SUCCESS for none.
 * th: the thread the call names (for md_exit_before), or NULL. */
static kern_return_t fault(struct md_table *t, enum md_call c, struct md_thread *th)
{
	struct md_fault *f = &t->fault[c];
	uint64_t k = atomic_fetch_add(&f->calls, 1) + 1;
	uint32_t ppm = atomic_load(&f->random_ppm);

	if (atomic_load(&f->hang_at) == k)
		hang();
	int32_t victim = atomic_load(&f->exit_tid);
	if (th && victim != 0 && atomic_load(&th->tid) == victim &&
	    atomic_compare_exchange_strong(&f->exit_tid, &victim, 0))
		exit_thread(t, th);
	if (atomic_load(&f->nth_at) == k) {
		atomic_fetch_add(&f->injected, 1);
		return atomic_load(&f->nth_kr);
	}
	if (ppm && rng_next(t) % 1000000u < ppm) {
		atomic_fetch_add(&f->injected, 1);
		return atomic_load(&f->random_kr);
	}
	return KERN_SUCCESS;
}

/* A thread call's common checks: the name must be one we hold a right on, and the thread
 * alive (an exited thread's port is a dead name). */
static kern_return_t thread_call(thread_act_t name, enum md_call c, struct md_ref *r)
{
	md_ensure();
	if (lookup(name, r) != 0) {
		struct md_table *t = name >= MD_PARENT_BASE && parent ? parent : own;
		atomic_fetch_add(&t->misuse, 1); /* a name that is not in our space */
		return MACH_SEND_INVALID_DEST;
	}
	if (local_rights[r->space][r->idx] <= 0) {
		atomic_fetch_add(&r->t->misuse, 1); /* used after its last right was released */
		return MACH_SEND_INVALID_DEST;
	}
	kern_return_t kr = fault(r->t, c, r->th);
	if (kr == KERN_SUCCESS && atomic_load(&r->th->state) != MD_ALIVE)
		kr = KERN_TERMINATED;
	return kr;
}

/* Serialises suspenders of one thread, across processes. A holder that died (SIGKILL
 * mid-call) loses the lock to the next one. */
static void th_lock(struct md_thread *th)
{
	int32_t me = getpid(), cur;

	for (;;) {
		cur = 0;
		if (atomic_compare_exchange_weak(&th->lock, &cur, me))
			return;
		if (cur != 0 && cur != me && kill(cur, 0) != 0 && errno == ESRCH &&
		    atomic_compare_exchange_strong(&th->lock, &cur, me))
			return;
		sched_yield();
	}
}

static void th_unlock(struct md_thread *th)
{
	atomic_store(&th->lock, 0);
}

/* ---- Mach ---- */

mach_port_t mach_task_self(void)
{
	return MD_TASK_SELF;
}

mach_port_t mach_thread_self(void)
{
	struct md_ref r = { own, NULL, 0, 0 };

	md_ensure();
	if (!md_self)
		return MACH_PORT_NULL;
	r.th = md_self;
	r.idx = (uint32_t)(md_self - own->th);
	right_add(&r);
	return name_of(&r);
}

kern_return_t mach_port_deallocate(ipc_space_t task, mach_port_name_t name)
{
	struct md_ref r;

	md_ensure();
	if (task != MD_TASK_SELF)
		return KERN_INVALID_ARGUMENT;
	if (name == MD_TASK_SELF || name == MD_TASK_PARENT)
		return KERN_SUCCESS; /* task rights are not counted */
	if (lookup(name, &r) != 0) {
		atomic_fetch_add(&own->misuse, 1); /* not a name of our space */
		return KERN_INVALID_NAME;
	}
	kern_return_t kr = fault(r.t, MD_PORT_DEALLOCATE, NULL);
	if (kr != KERN_SUCCESS)
		return kr;
	if (local_rights[r.space][r.idx] <= 0) {
		atomic_fetch_add(&r.t->misuse, 1);
		return KERN_INVALID_RIGHT;
	}
	local_rights[r.space][r.idx]--;
	atomic_fetch_sub(&r.th->rights, 1);
	return KERN_SUCCESS;
}

kern_return_t task_for_pid(mach_port_t target_tport, int pid, task_t *t)
{
	struct md_table *tab;

	md_ensure();
	if (target_tport != MD_TASK_SELF)
		return KERN_INVALID_ARGUMENT;
	tab = pid == getpid() ? own : parent && pid == parent->pid ? parent : NULL;
	if (!tab)
		return KERN_FAILURE;
	kern_return_t kr = fault(tab, MD_TASK_FOR_PID, NULL);
	if (kr != KERN_SUCCESS)
		return kr;
	*t = tab == own ? MD_TASK_SELF : MD_TASK_PARENT;
	return KERN_SUCCESS;
}

kern_return_t task_threads(task_t target_task, thread_act_array_t *act_list,
			   mach_msg_type_number_t *act_listCnt)
{
	struct md_table *t;
	int slot = -1;

	md_ensure();
	t = task_table(target_task);
	if (!t)
		return KERN_INVALID_ARGUMENT;
	kern_return_t kr = fault(t, MD_TASK_THREADS, NULL);
	if (kr != KERN_SUCCESS)
		return kr;
	for (int i = 0; i < MD_MAX_LISTS && slot < 0; i++)
		if (!lists[i].addr)
			slot = i;
	uint32_t n = atomic_load(&t->n), alive = 0;
	if (n > MD_CAP)
		n = MD_CAP;
	thread_act_t *out = malloc(sizeof(*out) * (n ? n : 1));
	if (slot < 0 || !out) {
		free(out);
		return KERN_RESOURCE_SHORTAGE;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct md_ref r = { t, &t->th[i], t == parent, i };
		if (atomic_load(&r.th->state) != MD_ALIVE)
			continue;
		right_add(&r);
		out[alive++] = name_of(&r);
	}
	lists[slot].addr = out;
	lists[slot].size = sizeof(*out) * alive;
	lists[slot].t = t;
	atomic_fetch_add(&t->lists, 1);
	*act_list = out;
	*act_listCnt = alive;
	return KERN_SUCCESS;
}

kern_return_t mach_vm_deallocate(vm_map_t target, mach_vm_address_t address,
				 mach_vm_size_t size)
{
	md_ensure();
	if (target != MD_TASK_SELF)
		return KERN_INVALID_ARGUMENT;
	for (int i = 0; i < MD_MAX_LISTS; i++) {
		if (!lists[i].addr || (uintptr_t)lists[i].addr != address)
			continue;
		kern_return_t kr = fault(lists[i].t, MD_VM_DEALLOCATE, NULL);
		if (kr != KERN_SUCCESS)
			return kr;
		if (lists[i].size != size) {
			atomic_fetch_add(&lists[i].t->misuse, 1);
			return KERN_INVALID_ARGUMENT;
		}
		atomic_fetch_sub(&lists[i].t->lists, 1);
		free(lists[i].addr);
		lists[i].addr = NULL;
		return KERN_SUCCESS;
	}
	return KERN_SUCCESS; /* not an array of ours: Mach deallocates any range */
}

kern_return_t vm_deallocate(vm_map_t target_task, vm_address_t address, vm_size_t size)
{
	return mach_vm_deallocate(target_task, address, size);
}

kern_return_t thread_suspend(thread_act_t target_act)
{
	struct md_ref r;
	kern_return_t kr = thread_call(target_act, MD_THREAD_SUSPEND, &r);

	if (kr != KERN_SUCCESS)
		return kr;
	if (r.th == md_self) {
		atomic_fetch_add(&r.t->misuse, 1); /* the double cannot stop its caller */
		return KERN_INVALID_ARGUMENT;
	}
	th_lock(r.th);
	if (atomic_load(&r.th->state) != MD_ALIVE) {
		th_unlock(r.th);
		return KERN_TERMINATED;
	}
	if (atomic_fetch_add(&r.th->suspend_count, 1) == 0) {
		pid_t tid = atomic_load(&r.th->tid);
		atomic_store(&r.th->park, MD_REQ);
		if (syscall(SYS_tgkill, r.t->pid, tid, md_signo) != 0) {
			atomic_store(&r.th->park, MD_RUN);
			atomic_store(&r.th->suspend_count, 0);
			atomic_store(&r.th->state, MD_DEAD); /* gone without telling us */
			th_unlock(r.th);
			return KERN_TERMINATED;
		}
		while (atomic_load(&r.th->park) == MD_REQ) {
			struct timespec ms = { 0, 1000000 };
			futex(&r.th->park, FUTEX_WAIT, MD_REQ, &ms);
			if (syscall(SYS_tgkill, r.t->pid, tid, 0) != 0 && errno == ESRCH &&
			    atomic_load(&r.th->park) == MD_REQ) {
				atomic_store(&r.th->park, MD_RUN);
				atomic_store(&r.th->suspend_count, 0);
				atomic_store(&r.th->state, MD_DEAD);
				th_unlock(r.th);
				return KERN_TERMINATED;
			}
		}
	}
	th_unlock(r.th);
	return KERN_SUCCESS;
}

kern_return_t thread_resume(thread_act_t target_act)
{
	struct md_ref r;
	kern_return_t kr = thread_call(target_act, MD_THREAD_RESUME, &r);

	if (kr != KERN_SUCCESS)
		return kr;
	th_lock(r.th);
	if (atomic_load(&r.th->state) != MD_ALIVE) {
		th_unlock(r.th);
		return KERN_TERMINATED;
	}
	if (atomic_load(&r.th->suspend_count) <= 0) {
		th_unlock(r.th);
		atomic_fetch_add(&r.t->misuse, 1);
		return KERN_FAILURE; /* not suspended */
	}
	if (atomic_fetch_sub(&r.th->suspend_count, 1) == 1) {
		atomic_store(&r.th->park, MD_RUN);
		futex(&r.th->park, FUTEX_WAKE, INT32_MAX, NULL);
	}
	th_unlock(r.th);
	return KERN_SUCCESS;
}

kern_return_t thread_get_state(thread_act_t target_act, thread_state_flavor_t flavor,
			       thread_state_t old_state, mach_msg_type_number_t *old_stateCnt)
{
	struct md_ref r;
	kern_return_t kr = thread_call(target_act, MD_THREAD_GET_STATE, &r);
	x86_thread_state64_t st;

	if (kr != KERN_SUCCESS)
		return kr;
	if (flavor != x86_THREAD_STATE64 || *old_stateCnt < x86_THREAD_STATE64_COUNT)
		return KERN_INVALID_ARGUMENT;
	if (atomic_load(&r.th->suspend_count) <= 0 || atomic_load(&r.th->park) != MD_PARKED) {
		atomic_fetch_add(&r.t->misuse, 1);
		return KERN_FAILURE;
	}
	memset(&st, 0, sizeof(st));
	st.__rip = atomic_load(&r.th->rip);
	st.__rsp = atomic_load(&r.th->rsp);
	st.__rbp = atomic_load(&r.th->rbp);
	memcpy(old_state, &st, sizeof(st));
	*old_stateCnt = x86_THREAD_STATE64_COUNT;
	return KERN_SUCCESS;
}

/* CPU time of thread tid of process pid: its CPU-time clock when it is ours, else the
 * first field of /proc/PID/task/TID/schedstat. Returns 0 or -1 (gone). */
static int thread_cpu_ns(pid_t pid, pid_t tid, uint64_t *ns)
{
	if (pid == getpid()) {
		struct timespec ts;
		clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6); /* per-thread, sched */
		if (clock_gettime(clk, &ts) != 0)
			return -1;
		*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		return 0;
	}
	char path[64], buf[128];
	int fd, len;
	/* snprintf is not async-signal-safe but this never runs in a handler */
	len = (int)(sizeof(path));
	if (snprintf(path, (size_t)len, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid) >= len)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	*ns = strtoull(buf, NULL, 10);
	return 0;
}

kern_return_t thread_info(thread_act_t target_act, thread_flavor_t flavor,
			  thread_info_t thread_info_out, mach_msg_type_number_t *thread_info_outCnt)
{
	struct md_ref r;
	kern_return_t kr = thread_call(target_act, MD_THREAD_INFO, &r);
	pid_t tid;

	if (kr != KERN_SUCCESS)
		return kr;
	tid = atomic_load(&r.th->tid);
	if (flavor == THREAD_IDENTIFIER_INFO) {
		thread_identifier_info_data_t id = { .thread_id = (uint64_t)tid };
		if (*thread_info_outCnt < THREAD_IDENTIFIER_INFO_COUNT)
			return KERN_INVALID_ARGUMENT;
		memcpy(thread_info_out, &id, sizeof(id));
		*thread_info_outCnt = THREAD_IDENTIFIER_INFO_COUNT;
		return KERN_SUCCESS;
	}
	if (flavor != THREAD_BASIC_INFO || *thread_info_outCnt < THREAD_BASIC_INFO_COUNT)
		return KERN_INVALID_ARGUMENT;
	thread_basic_info_data_t bi;
	uint64_t ns;
	memset(&bi, 0, sizeof(bi));
	if (thread_cpu_ns(r.t->pid, tid, &ns) != 0)
		return KERN_TERMINATED;
	/* Linux gives one CPU time: all of it is reported as user time (both are summed). */
	bi.user_time.seconds = (integer_t)(ns / 1000000000ull);
	bi.user_time.microseconds = (integer_t)(ns % 1000000000ull / 1000);
	bi.suspend_count = atomic_load(&r.th->suspend_count);
	bi.run_state = bi.suspend_count > 0 ? TH_STATE_STOPPED : TH_STATE_RUNNING;
	memcpy(thread_info_out, &bi, sizeof(bi));
	*thread_info_outCnt = THREAD_BASIC_INFO_COUNT;
	return KERN_SUCCESS;
}

kern_return_t mach_vm_read_overwrite(vm_map_t target_task, mach_vm_address_t address,
				     mach_vm_size_t size, mach_vm_address_t data,
				     mach_vm_size_t *outsize)
{
	struct md_table *t;

	md_ensure();
	t = task_table(target_task);
	if (!t)
		return KERN_INVALID_ARGUMENT;
	kern_return_t kr = fault(t, MD_VM_READ, NULL);
	if (kr != KERN_SUCCESS)
		return kr;
	struct iovec local = { (void *)(uintptr_t)data, (size_t)size };
	struct iovec remote = { (void *)(uintptr_t)address, (size_t)size };
	ssize_t got = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
	if (got != (ssize_t)size)
		return KERN_INVALID_ADDRESS;
	*outsize = size;
	return KERN_SUCCESS;
}

/* ---- libpthread ---- */

pthread_introspection_hook_t pthread_introspection_hook_install(pthread_introspection_hook_t hook)
{
	return atomic_exchange(&md_hook, hook);
}

static void call_hook(unsigned int event)
{
	pthread_introspection_hook_t h = atomic_load(&md_hook);
	pthread_attr_t a;
	void *addr = NULL;
	size_t size = 0;

	if (!h)
		return;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getstack(&a, &addr, &size);
		pthread_attr_destroy(&a);
	}
	h(event, pthread_self(), addr, size);
}

/* A hook installed before any other, like a system library's on a Mac: the sources'
 * hook must chain to it (thread_ctl_darwin.c keeps the previous one). */
static void first_hook(unsigned int event, pthread_t thread, void *addr, size_t size)
{
	(void)thread;
	(void)addr;
	(void)size;
	if (event == PTHREAD_INTROSPECTION_THREAD_START)
		atomic_fetch_add(&first_hook_starts, 1);
	else if (event == PTHREAD_INTROSPECTION_THREAD_TERMINATE)
		atomic_fetch_add(&first_hook_terminates, 1);
}

__attribute__((constructor(101))) static void install_first_hook(void)
{
	atomic_store(&md_hook, first_hook);
}

/* The end of a thread: TERMINATE in its own context, then its port becomes a dead name.
 * Taking the lock waits out a suspender that is stopping it (the stop still completes:
 * signals are not blocked here). */
static void thread_gone(void)
{
	struct md_thread *t = md_self;

	call_hook(PTHREAD_INTROSPECTION_THREAD_TERMINATE);
	if (!t)
		return;
	th_lock(t);
	if (atomic_load(&t->suspend_count) > 0)
		atomic_fetch_add(&own->dead_suspended, 1);
	atomic_store(&t->state, MD_DEAD);
	th_unlock(t);
	/* md_self stays: a call from the rest of its exit must not register it again. */
}

static pthread_key_t exit_key;

static void exit_dtor(void *v)
{
	(void)v;
	thread_gone(); /* pthread_exit() skipped the trampoline's return */
}

struct md_start {
	void *(*fn)(void *);
	void *arg;
	int no_bounds;
};

static void *trampoline(void *p)
{
	struct md_start s = *(struct md_start *)p;

	free(p);
	md_no_bounds = s.no_bounds;
	register_self();
	pthread_setspecific(exit_key, (void *)1);
	call_hook(PTHREAD_INTROSPECTION_THREAD_START);
	void *ret = s.fn(s.arg);
	pthread_setspecific(exit_key, NULL);
	thread_gone();
	return ret;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void key_init(void)
{
	pthread_key_create(&exit_key, exit_dtor);
}

static create_fn real_create(void)
{
	static _Atomic(create_fn) real;
	create_fn f = atomic_load(&real);

	if (!f) {
		void *sym = dlsym(RTLD_NEXT, "pthread_create");
		memcpy(&f, &sym, sizeof(f));
		atomic_store(&real, f);
	}
	return f;
}

int md_create_unhooked(pthread_t *t, void *(*fn)(void *), void *arg)
{
	create_fn f = real_create();
	return f ? f(t, NULL, fn, arg) : EAGAIN;
}

int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict attr,
		   void *(*fn)(void *), void *restrict arg)
{
	static pthread_once_t key_once = PTHREAD_ONCE_INIT;
	create_fn f = real_create();
	struct md_start *s;
	int rc, left;

	md_ensure();
	pthread_once(&key_once, key_init);
	s = malloc(sizeof(*s));
	if (!f || !s) {
		free(s);
		return EAGAIN;
	}
	s->fn = fn;
	s->arg = arg;
	left = atomic_load(&md_unknown_bounds_left);
	s->no_bounds = 0;
	while (left > 0 && !(s->no_bounds = atomic_compare_exchange_weak(&md_unknown_bounds_left,
									 &left, left - 1)))
		;
	rc = f(t, attr, trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}

/* pthread_get_stackaddr_np giving NULL: platform/linux.c's plat_stack_bounds_self is
 * wrapped (-Wl,--wrap) so the threads md_unknown_bounds_next() chose have no bounds. */
int __real_plat_stack_bounds_self(uintptr_t *lo, uintptr_t *hi);
int __wrap_plat_stack_bounds_self(uintptr_t *lo, uintptr_t *hi);
int __wrap_plat_stack_bounds_self(uintptr_t *lo, uintptr_t *hi)
{
	if (md_no_bounds)
		return -1;
	return __real_plat_stack_bounds_self(lo, hi);
}

/* Processes of the samplers end in _exit(): flush gcov's counters first when built for
 * coverage (make coverage-darwin), or the forked sampler process's lines count as unrun. */
extern void __gcov_dump(void) __attribute__((weak));
void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status)
{
	if (__gcov_dump)
		__gcov_dump();
	__real__exit(status);
}

/* ---- control ---- */

void md_fail_nth(enum md_call c, uint64_t n, kern_return_t kr)
{
	md_ensure();
	atomic_store(&own->fault[c].nth_kr, kr);
	atomic_store(&own->fault[c].nth_at, atomic_load(&own->fault[c].calls) + n);
}

void md_fail_random(enum md_call c, uint32_t per_million, kern_return_t kr, uint64_t seed)
{
	md_ensure();
	atomic_store(&own->rng, seed ? seed : 1);
	atomic_store(&own->fault[c].random_kr, kr);
	atomic_store(&own->fault[c].random_ppm, per_million);
}

void md_exit_before(enum md_call c, pid_t tid)
{
	md_ensure();
	atomic_store(&own->fault[c].exit_tid, tid);
}

void md_hang_nth(enum md_call c, uint64_t n)
{
	md_ensure();
	atomic_store(&own->fault[c].hang_at, atomic_load(&own->fault[c].calls) + n);
}

void md_faults_clear(void)
{
	md_ensure();
	for (int c = 0; c < MD_NCALLS; c++) {
		atomic_store(&own->fault[c].nth_at, 0);
		atomic_store(&own->fault[c].exit_tid, 0);
		atomic_store(&own->fault[c].hang_at, 0);
		atomic_store(&own->fault[c].random_ppm, 0);
	}
}

void md_exit_point(void)
{
	if (md_self && atomic_load(&md_self->exit_req))
		pthread_exit(NULL);
}

void md_unknown_bounds_next(int n)
{
	atomic_store(&md_unknown_bounds_left, n);
}

void md_counts(struct md_counts *out)
{
	md_ensure();
	memset(out, 0, sizeof(*out));
	for (int c = 0; c < MD_NCALLS; c++) {
		out->calls[c] = atomic_load(&own->fault[c].calls);
		out->injected[c] = atomic_load(&own->fault[c].injected);
	}
	uint32_t n = atomic_load(&own->n);
	if (n > MD_CAP)
		n = MD_CAP;
	for (uint32_t i = 0; i < n; i++) {
		int32_t r = atomic_load(&own->th[i].rights);
		out->rights += r;
		if (r > out->max_rights)
			out->max_rights = r;
		out->suspended += atomic_load(&own->th[i].suspend_count) > 0;
	}
	out->exits_injected = atomic_load(&own->exits_injected);
	out->lists = atomic_load(&own->lists);
	out->dead_suspended = atomic_load(&own->dead_suspended);
	out->misuse = atomic_load(&own->misuse);
	out->threads = n;
	out->hook_starts = atomic_load(&first_hook_starts);
	out->hook_terminates = atomic_load(&first_hook_terminates);
	out->lost = atomic_load(&own->lost);
}

int md_suspend_count(pid_t tid)
{
	int found = -1;

	md_ensure();
	uint32_t n = atomic_load(&own->n);
	for (uint32_t i = 0; i < n && i < MD_CAP; i++)
		if (atomic_load(&own->th[i].tid) == tid && atomic_load(&own->th[i].state) == MD_ALIVE)
			found = atomic_load(&own->th[i].suspend_count);
	return found;
}

int64_t md_rights_held_here(void)
{
	int64_t sum = 0;

	for (int s = 0; s < 2; s++)
		for (int i = 0; i < MD_CAP; i++)
			sum += local_rights[s][i];
	return sum;
}
