/* thread_ctl_linux.c - suspend / get state / resume on Linux: a signal rendezvous.
 *
 * Linux has no thread_suspend(). The sampler posts a request in the target's control
 * block and sends SIGRTMIN+TC_SIG_OFFSET with tgkill(). The handler (in the target)
 * copies the interrupted registers into the block, flips the request to PARKED, rings
 * the doorbell (a futex the sampler may sleep on) and waits on its own futex until the
 * sampler flips the request to RELEASED. Then it restores errno and returns.
 *
 * p->st holds request number << 3 | phase. Only the sampler creates requests, one at a
 * time per thread, with a fresh number each. The handler parks only by a CAS from
 * (req, REQUESTED) to (req, PARKED); the sampler gives up only by a CAS from
 * (req, REQUESTED) to (req, IDLE) or (req, DEFERRED). Exactly one wins, so a handler that
 * runs after the sampler gave up finds no REQUESTED phase and returns at once: nothing
 * parks forever.
 *
 * Deferred requests: a target that has not parked when the sampler stops waiting is not
 * on a CPU (one that runs takes the signal within microseconds), so its registers are the
 * ones it was preempted with and cannot change before it runs again; and when it runs,
 * the kernel delivers the pending signal before any of its own code. tc_defer() flips the
 * request to DEFERRED: the handler then takes the sample itself (DEFERRED -> SELF by CAS,
 * walks its own stack into p->self_pcs, -> SELF_DONE) and returns without parking. The
 * sampler collects it at a later tick (tc_deferred_poll), or withdraws it by a CAS from
 * DEFERRED to IDLE, which the handler's CAS loses or wins, never both. */
#ifndef __APPLE__

#include "sampler/thread_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/sample.h"
#include "sampler/threads.h"

#define TC_SIG_OFFSET 5 /* SIGRTMIN+5: clear of glibc's and the other samplers' signals */

enum {
	PH_IDLE = 0,
	PH_REQUESTED = 1,
	PH_PARKED = 2,
	PH_RELEASED = 3,
	PH_DEFERRED = 4, /* take your own sample when you next run */
	PH_SELF = 5,     /* the handler is taking it */
	PH_SELF_DONE = 6 /* taken: p->self_* hold it */
};

#define ST(req, ph) (((req) << 3) | (ph))
#define PHASE(st) ((st) & 7u)
#define REQ_MASK 0x1fffffffu /* request numbers: 29 bits, never 0 */

static __thread struct tc_park *self_park SB_TLS;
static __thread uint32_t self_ident SB_TLS;

static _Atomic uint32_t doorbell;      /* bumped by every park */
static _Atomic uint32_t sampler_waits; /* the sampler sleeps on doorbell: wake it */
static _Atomic int32_t tick_pending;   /* requests of this tick not parked or given up */
static _Atomic uint64_t last_park_ns;  /* when the latest park happened */
static _Atomic uint32_t next_req;      /* request numbers (30 bits, never 0) */
static _Atomic uint64_t eintr_caused;
static _Atomic uint32_t release_gen;   /* batch ticks: parked targets sleep on this word */
static _Atomic int32_t tick_batch;     /* policy of the current tick (tc_begin_tick) */
static _Atomic int32_t tick_cpu_after; /* targets read their CPU clock as they leave */
static _Atomic int32_t sampler_cpu = -1;
static _Atomic uint64_t spin_ns = TC_SPIN_DEFAULT_NS;
static _Atomic uint64_t spin_releases;
static _Atomic uint64_t spin_wakes;
static struct sigaction old_action;
static int installed;

/* Without FUTEX_PRIVATE_FLAG: the rendezvous' words go in the kernel's global futex hash,
 * not in the process's own, which Linux 6.16+ sizes by the CPUs (16 buckets on 2 CPUs).
 * Thousands of threads in private futex waits (a pool's parked threads) fill those buckets,
 * and every wait and wake on a word of a bucket walks its waiters under the bucket's lock,
 * with preemption off: beside 5,000 waiters on words of their own a wake cost 3.6 us
 * against 0.2 us, and 214 us on a word that shared the bucket of 5,000 waiters on one
 * word. A wake in a target's handler then held its CPU from the sampler, whose stops of
 * the busy threads took 254-339 us at the p99 beside 10,000 `server` threads, against
 * 59-207 us so (docs/findings.md). */
static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

int tc_signo(void)
{
	return SIGRTMIN + TC_SIG_OFFSET;
}

/* Did this signal interrupt a system call that will now return EINTR? The kernel has
 * already chosen: it left -EINTR in the return register, just past the syscall
 * instruction (a restarted call instead gets its pc moved back onto it). */
static int interrupted_syscall(const ucontext_t *uc)
{
#if defined(__x86_64__)
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (uc->uc_mcontext.gregs[REG_RAX] != -EINTR || (pc & 4095) < 2)
		return 0;
	const volatile unsigned char *ins = (const volatile unsigned char *)(pc - 2);
	return ins[0] == 0x0f && ins[1] == 0x05; /* syscall */
#elif defined(__aarch64__)
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.pc;
	if ((long)uc->uc_mcontext.regs[0] != -EINTR || (pc & 4095) < 4)
		return 0;
	return *(const volatile uint32_t *)(pc - 4) == 0xd4000001u; /* svc #0 */
#else
	(void)uc;
	return 0;
#endif
}

int tc_pc_at_syscall(uintptr_t pc)
{
	/* pc is code the thread was executing: mapped. The instruction before it may sit on
	 * the previous page, the one at it may end on the next: stay inside pc's page. */
#if defined(__x86_64__)
	const volatile unsigned char *at = (const volatile unsigned char *)pc;
	if ((pc & 4095) <= 4094 && at[0] == 0x0f && at[1] == 0x05)
		return 1;
	return (pc & 4095) >= 2 && at[-2] == 0x0f && at[-1] == 0x05;
#elif defined(__aarch64__)
	const volatile uint32_t *at = (const volatile uint32_t *)pc;
	if (pc & 3)
		return 0;
	if ((pc & 4095) <= 4092 && at[0] == 0xd4000001u)
		return 1;
	return (pc & 4095) >= 4 && at[-1] == 0xd4000001u;
#else
	(void)pc;
	return 0;
#endif
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Parked target p waits for its release. Early tick, on another CPU than the sampler:
 * spin first (the sampler walks and releases within microseconds, and a vCPU that halts in
 * futex(2) costs a wake-up through the hypervisor). Same CPU: sleep at once, the sampler
 * cannot run while we spin. Batch tick: sleep on the shared generation word, so one
 * FUTEX_WAKE releases the whole batch. */
static void wait_release(struct tc_park *p, uint32_t parked, int cpu)
{
	uint64_t budget = atomic_load_explicit(&spin_ns, memory_order_relaxed);

	if (atomic_load(&tick_batch)) {
		for (;;) {
			uint32_t g = atomic_load(&release_gen);
			if (atomic_load_explicit(&p->st, memory_order_acquire) != parked)
				return;
			futex(&release_gen, FUTEX_WAIT, g, NULL);
		}
	}
	if (budget > 0 && cpu >= 0 && cpu != atomic_load(&sampler_cpu)) {
		uint64_t until = sb_now_ns() + budget;
		do {
			if (atomic_load_explicit(&p->st, memory_order_acquire) != parked) {
				atomic_fetch_add_explicit(&spin_releases, 1, memory_order_relaxed);
				return;
			}
			cpu_relax();
		} while (sb_now_ns() < until);
	}
	/* Dekker with tc_resume(): we announce the sleep, then futex(2) compares st; the
	 * sampler stores st, then reads sleeping. One of us sees the other. */
	atomic_store(&p->sleeping, 1);
	while (atomic_load_explicit(&p->st, memory_order_acquire) == parked)
		futex(&p->st, FUTEX_WAIT, parked, NULL);
	atomic_store(&p->sleeping, 0);
}

/* The deferred sample, in the target's handler, before any of its own code runs again:
 * its CPU clock, then its own stack walked from the interrupted registers into the
 * control block, then SELF_DONE (release: the sampler reads the rest after it). base is
 * the request's st without its phase. Async-signal-safe: clock_gettime(2) and reads of
 * its own stack. */
static void take_own_sample(struct tc_park *p, uint32_t base, const struct sb_regs *r)
{
	struct sb_stack_bounds b = {
		.lo = atomic_load_explicit(&p->self_lo, memory_order_relaxed),
		.hi = atomic_load_explicit(&p->self_hi, memory_order_relaxed),
	};
	uint32_t depth = 0;

	p->self_entry_ns = sb_now_ns();
	p->self_cpu_ns = sb_thread_cpu_ns();
	p->self_end = (uint32_t)fp_walk(r, &b, p->self_pcs, TC_SELF_FRAMES, &depth, NULL, NULL);
	p->self_depth = depth;
	p->self_exit_ns = sb_now_ns();
	atomic_store_explicit(&p->st, base | PH_SELF_DONE, memory_order_release);
}

/* Async-signal-safe: atomics, futex(2), clock_gettime(2), sched_getcpu() only. */
static void rendezvous(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct tc_park *p = self_park;
	const ucontext_t *uc = ucv;
	struct sb_regs r;

	(void)sig;
	(void)si;
	if (interrupted_syscall(uc))
		atomic_fetch_add_explicit(&eintr_caused, 1, memory_order_relaxed);
	if (!p)
		goto out;
	/* seq_cst, with the load of st below: tc_rearm() stores st, then reads entered. */
	atomic_fetch_add(&p->entered, 1);
	regs_from_ucontext(uc, &r);

	uint32_t s = atomic_load(&p->st);
	for (;;) {
		/* Deferred, possibly between our load and the CAS below: the sampler stopped
		 * waiting, and this thread takes its own sample instead of parking. */
		if (PHASE(s) == PH_DEFERRED) {
			if (atomic_compare_exchange_weak(&p->st, &s, (s & ~7u) | PH_SELF)) {
				take_own_sample(p, s & ~7u, &r);
				goto out;
			}
			continue; /* s reloaded: withdrawn meanwhile, or a spurious failure */
		}
		if (PHASE(s) != PH_REQUESTED)
			goto out; /* late, spurious, or given up: never park */
		/* Written only while REQUESTED: the sampler reads them only after PARKED. */
		atomic_store_explicit(&p->pc, r.pc, memory_order_relaxed);
		atomic_store_explicit(&p->sp, r.sp, memory_order_relaxed);
		atomic_store_explicit(&p->fp, r.fp, memory_order_relaxed);
		atomic_store_explicit(&p->lr, r.lr, memory_order_relaxed);
		atomic_store_explicit(&p->ident, self_ident, memory_order_relaxed);
		atomic_store_explicit(&p->parked_ns, sb_now_ns(), memory_order_relaxed);
		if (atomic_compare_exchange_weak(&p->st, &s, (s & ~7u) | PH_PARKED))
			break;
	}
	uint32_t parked = (s & ~7u) | PH_PARKED;
	int cpu = sched_getcpu();
	atomic_store_explicit(&p->cpu, cpu, memory_order_relaxed);
	/* A batch tick walks nothing before the last park: only the last one wakes the
	 * sampler (one wake-up a tick instead of one a target; each would also take the
	 * sampler's CPU from a target that still has to run to park). */
	atomic_store_explicit(&last_park_ns, atomic_load_explicit(&p->parked_ns, memory_order_relaxed),
			      memory_order_relaxed);
	int32_t left = atomic_fetch_sub(&tick_pending, 1) - 1;
	atomic_fetch_add(&doorbell, 1);
	if (atomic_load(&sampler_waits) && (left <= 0 || !atomic_load(&tick_batch)))
		futex(&doorbell, FUTEX_WAKE, 1, NULL);
	wait_release(p, parked, cpu);
	/* Released: not in the stopped window any more. */
	if (atomic_load_explicit(&tick_cpu_after, memory_order_relaxed))
		atomic_store_explicit(&p->cpu_after, sb_thread_cpu_ns(), memory_order_relaxed);
	atomic_store_explicit(&p->exit_req, parked >> 3, memory_order_release);
out:
	errno = saved_errno;
}

/* --- peeking at blocked threads --------------------------------------------------- */

#define TC_TEXT_MAX 512
#define TC_SCAN_BYTES 4096 /* how far above sp a frame record is looked for */

static struct {
	uintptr_t lo, hi;
} text[TC_TEXT_MAX];
static int ntext;

/* Adds one /proc/self/maps line to text[] when its mapping is executable. */
static void add_text_line(const char *line)
{
	unsigned long lo, hi;
	char perms[8];

	if (ntext < TC_TEXT_MAX && sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
	    perms[2] == 'x') {
		text[ntext].lo = lo;
		text[ntext].hi = hi;
		ntext++;
	}
}

/* Executable mappings of this process, from /proc/self/maps: at tc_init, and again at a
 * peek while none could be read (a process out of descriptors at the start would
 * otherwise find no blocked thread's pc in code, and signal them all for the whole
 * run). With open and read into static buffers, no stdio and no allocation: the sampler
 * thread calls it between stops; only it and tc_init, which runs before it, touch text[]. */
static void load_text(void)
{
	static char buf[8192], line[512];
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	ntext = 0;
	if (fd < 0)
		return;
	while (ntext < TC_TEXT_MAX && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = 0;
			len = 0;
			add_text_line(line);
		}
	}
	close(fd);
}

static int is_text(uintptr_t a)
{
	for (int i = 0; i < ntext; i++)
		if (a >= text[i].lo && a < text[i].hi)
			return 1;
	return 0;
}

int tc_peek_open(pid_t tid)
{
	char path[64];

	if (ntext == 0)
		load_text(); /* unread at tc_init: retried before errno is set below */
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Two words of a blocked thread's stack, inside its bounds. The scan crosses
 * AddressSanitizer's redzones between that thread's frames: reading there is the scan's
 * job (as fp_walk's), not a bug. Nothing orders these reads with the thread's own writes
 * (it may wake and rewrite its frames while they run): the race is the peek's design,
 * every word read is checked before it is trusted (a frame record, a chain that walks),
 * and a torn stack is one wrong sample, never a fault (the reads stay inside the bounds).
 * So the reads are volatile, each word once, and not instrumented by ThreadSanitizer,
 * which would report the race the peek accepts. */
__attribute__((no_sanitize("address", "thread")))
static void read_pair(uintptr_t addr, uintptr_t out[2])
{
	const volatile uintptr_t *p = (const volatile uintptr_t *)addr;
	out[0] = p[0];
	out[1] = p[1];
}

/* Does the frame chain from record fp reach outer, the thread's outermost record? */
static int reaches(uintptr_t fp, uintptr_t outer, const struct sb_stack_bounds *b)
{
	while (outer != 0 && fp_validate(fp, b)) {
		uintptr_t w[2];
		if (fp == outer)
			return 1;
		read_pair(fp, w);
		if (w[0] <= fp)
			return 0;
		fp = w[0];
	}
	return 0;
}

/* The numbers of a /proc/TID/syscall line, "NR A0 A1 A2 A3 A4 A5 SP PC" (NR decimal, the
 * rest hex, "0x..."): 1 when all nine are there, else 0 ("running", or "-1 SP PC" for a
 * thread blocked outside a system call). strtoul, not sscanf: 61 against 226 ns here. */
static int parse_syscall(const char *s, long *nr, unsigned long *sp, unsigned long *pc)
{
	unsigned long v[8];
	char *end;

	*nr = strtol(s, &end, 10);
	if (end == s)
		return 0;
	for (int i = 0; i < 8; i++) {
		s = end;
		v[i] = strtoul(s, &end, 16);
		if (end == s)
			return 0;
	}
	*sp = v[6];
	*pc = v[7];
	return 1;
}

int tc_peek(int fd, const struct sb_stack_bounds *b, uintptr_t outer_fp, struct sb_regs *regs)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long nr;
	unsigned long sp, pc;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (buf[0] == 'r') /* "running" */
		return 0;
	if (!parse_syscall(buf, &nr, &sp, &pc) || nr < 0)
		return 0; /* blocked outside a system call (page fault, stop): not ours */
	if (sp < b->lo || sp >= b->hi || !is_text(pc))
		return 2;
	/* The first word pair above sp that is a frame record: a saved fp further up the
	 * stack and a return address into code, from which the chain walks cleanly to its
	 * end (glibc zeroes the outermost fp of every thread and of main). The thread is
	 * blocked, so its stack holds still while we look. */
	uintptr_t end = sp + TC_SCAN_BYTES < b->hi - 16 ? sp + TC_SCAN_BYTES : b->hi - 16;
	for (uintptr_t p = (sp + 7) & ~(uintptr_t)7; p < end; p += 8) {
		uintptr_t w[2];
		read_pair(p, w);
		if (!(w[0] > p && w[0] <= b->hi - 16 && (w[0] & 7) == 0) || !is_text(w[1]))
			continue;
		struct sb_regs r = { .pc = pc, .sp = sp, .fp = p, .lr = 0 };
		uint64_t pcs[64];
		uint32_t depth;
		enum sb_walk_end e = fp_walk(&r, b, pcs, 64, &depth, NULL, NULL);
		int clean = e == SB_WALK_OK || e == SB_WALK_TRUNCATED;
		if (depth >= 2 && (clean || reaches(p, outer_fp, b))) {
			*regs = r;
			return 1;
		}
	}
	return 2;
}

int tc_init(void)
{
	struct sigaction sa;

	if (installed)
		return 0;
	load_text();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rendezvous;
	/* SA_RESTART: read(), write(), futex waits... resume after the rendezvous instead of
	 * failing with EINTR. Calls the kernel never restarts (nanosleep, poll, epoll_wait)
	 * still fail: those are counted. */
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	atomic_store(&eintr_caused, 0);
	atomic_store(&spin_releases, 0);
	atomic_store(&spin_wakes, 0);
	if (sigaction(tc_signo(), &sa, &old_action) != 0)
		return -1;
	installed = 1;
	return 0;
}

void tc_fini(void)
{
	struct sigaction ign;

	if (!installed)
		return;
	/* SIG_IGN discards instances still pending in any thread (a request given up while
	 * the target had the signal blocked); then the old action is safe to restore. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(tc_signo(), &ign, NULL);
	sigaction(tc_signo(), &old_action, NULL);
	installed = 0;
}

void tc_attach_self(struct tc_park *p, uint32_t ident)
{
	/* A previous owner of the block may have died with a signal undelivered: start
	 * with nothing pending. */
	atomic_store_explicit(&p->entered, atomic_load(&p->sent), memory_order_relaxed);
	atomic_store_explicit(&p->cpu, -1, memory_order_relaxed);
	atomic_store_explicit(&p->sleeping, 0, memory_order_relaxed);
	self_ident = ident;
	self_park = p;
}

int tc_request(struct tc_target *t)
{
	struct tc_park *p = t->park;
	uint32_t req;

	/* An earlier signal has not been delivered yet (the thread blocks it, or has not run
	 * since): it will serve this request when it arrives. Do not queue another one, and do
	 * not wait for it either; RT signals queue, and a blocked thread would cost a full
	 * timeout every tick. */
	if ((int32_t)(atomic_load(&p->sent) - atomic_load(&p->entered)) > 0)
		return TC_BUSY;
	do
		req = (atomic_fetch_add(&next_req, 1) + 1) & REQ_MASK;
	while (req == 0);
	t->req = req;
	t->req_ns = sb_now_ns();
	atomic_fetch_add(&tick_pending, 1);
	atomic_store_explicit(&p->st, ST(req, PH_REQUESTED), memory_order_release);
	atomic_fetch_add(&p->sent, 1);
	if (syscall(SYS_tgkill, getpid(), t->tid, tc_signo()) == 0)
		return TC_PENDING;

	int err = errno;
	atomic_fetch_sub(&p->sent, 1);
	atomic_fetch_sub(&tick_pending, 1);
	uint32_t want = ST(req, PH_REQUESTED);
	atomic_compare_exchange_strong(&p->st, &want, ST(req, PH_IDLE));
	if (err == ESRCH)
		return TC_GONE;
	if (err == EAGAIN)
		return TC_BUSY; /* the signal queue is full */
	return TC_ERROR;
}

int tc_rearm(struct tc_target *t)
{
	struct tc_park *p = t->park;
	uint32_t req;

	if ((int32_t)(atomic_load(&p->sent) - atomic_load(&p->entered)) <= 0)
		return tc_request(t); /* delivered meanwhile */
	do
		req = (atomic_fetch_add(&next_req, 1) + 1) & REQ_MASK;
	while (req == 0);
	t->req = req;
	t->req_ns = sb_now_ns();
	atomic_fetch_add(&tick_pending, 1);
	atomic_store(&p->st, ST(req, PH_REQUESTED));
	/* The handler counts `entered` before it reads st (both seq_cst): a signal still
	 * undelivered after our store will see this request. */
	if ((int32_t)(atomic_load(&p->sent) - atomic_load(&p->entered)) > 0)
		return TC_PENDING;
	/* It was taken meanwhile and may have missed the request: withdraw it, unless the
	 * thread parked for it, and signal afresh. */
	uint32_t want = ST(req, PH_REQUESTED);
	if (!atomic_compare_exchange_strong(&p->st, &want, ST(req, PH_IDLE)))
		return TC_PENDING; /* it parked: tc_poll() sees it */
	atomic_fetch_sub(&tick_pending, 1);
	return tc_request(t);
}

int tc_poll(struct tc_target *t)
{
	uint32_t s = atomic_load_explicit(&t->park->st, memory_order_acquire);
	return s == ST(t->req, PH_PARKED) ? TC_PARKED : TC_PENDING;
}

int tc_cancel(struct tc_target *t)
{
	uint32_t want = ST(t->req, PH_REQUESTED);

	if (atomic_compare_exchange_strong(&t->park->st, &want, ST(t->req, PH_IDLE))) {
		atomic_fetch_sub(&tick_pending, 1); /* it will never park */
		return TC_TIMEOUT;
	}
	return want == ST(t->req, PH_PARKED) ? TC_PARKED : TC_TIMEOUT;
}

int tc_defer(struct tc_target *t, const struct sb_stack_bounds *b)
{
	struct tc_park *p = t->park;
	uint32_t want = ST(t->req, PH_REQUESTED);

	/* The bounds are read by the handler only after it wins DEFERRED -> SELF, which
	 * our CAS below publishes (seq_cst). */
	atomic_store_explicit(&p->self_lo, b->lo, memory_order_relaxed);
	atomic_store_explicit(&p->self_hi, b->hi, memory_order_relaxed);
	if (atomic_compare_exchange_strong(&p->st, &want, ST(t->req, PH_DEFERRED))) {
		atomic_fetch_sub(&tick_pending, 1); /* it will never park */
		return TC_DEFERRED;
	}
	return want == ST(t->req, PH_PARKED) ? TC_PARKED : TC_TIMEOUT;
}

int tc_deferred_poll(const struct tc_park *p, uint32_t req, struct tc_self_sample *out)
{
	uint32_t s = atomic_load_explicit(&p->st, memory_order_acquire);

	if (s == ST(req, PH_DEFERRED))
		return TC_DEFERRED;
	if (s == ST(req, PH_SELF))
		return TC_BUSY;
	if (s != ST(req, PH_SELF_DONE))
		return TC_TIMEOUT;
	out->pcs = p->self_pcs;
	out->depth = p->self_depth <= TC_SELF_FRAMES ? p->self_depth : TC_SELF_FRAMES;
	out->end = (enum sb_walk_end)p->self_end;
	out->entry_ns = p->self_entry_ns;
	out->exit_ns = p->self_exit_ns;
	out->cpu_ns = p->self_cpu_ns;
	return TC_SELF_DONE;
}

int tc_deferred_end(struct tc_park *p, uint32_t req)
{
	uint32_t want = ST(req, PH_DEFERRED);

	if (atomic_compare_exchange_strong(&p->st, &want, ST(req, PH_IDLE)))
		return TC_TIMEOUT; /* withdrawn: its handler will return at once */
	if (want == ST(req, PH_SELF))
		return TC_BUSY;
	if (want == ST(req, PH_SELF_DONE) &&
	    atomic_compare_exchange_strong(&p->st, &want, ST(req, PH_IDLE)))
		return TC_SELF_DONE;
	return TC_TIMEOUT; /* not this request any more */
}

uint32_t tc_doorbell(void)
{
	return atomic_load(&doorbell);
}

void tc_wait(uint32_t seen, uint64_t deadline_ns)
{
	uint64_t now = sb_now_ns();
	struct timespec ts;

	if (now >= deadline_ns)
		return;
	ts.tv_sec = (time_t)((deadline_ns - now) / 1000000000ull);
	ts.tv_nsec = (long)((deadline_ns - now) % 1000000000ull);
	/* Announce the sleep before the kernel compares doorbell with seen: a handler that
	 * parks after our last poll either sees sampler_waits set and wakes us, or bumped the
	 * doorbell before this store, so FUTEX_WAIT returns at once. */
	atomic_store(&sampler_waits, 1);
	if (atomic_load(&doorbell) == seen)
		futex(&doorbell, FUTEX_WAIT, seen, &ts);
	atomic_store(&sampler_waits, 0);
}

int tc_get_state(const struct tc_target *t, struct sb_regs *regs, uint64_t *parked_ns)
{
	struct tc_park *p = t->park;

	if (atomic_load_explicit(&p->ident, memory_order_relaxed) != t->ident)
		return -1;
	regs->pc = atomic_load_explicit(&p->pc, memory_order_relaxed);
	regs->sp = atomic_load_explicit(&p->sp, memory_order_relaxed);
	regs->fp = atomic_load_explicit(&p->fp, memory_order_relaxed);
	regs->lr = atomic_load_explicit(&p->lr, memory_order_relaxed);
	*parked_ns = atomic_load_explicit(&p->parked_ns, memory_order_relaxed);
	return 0;
}

void tc_resume(struct tc_target *t)
{
	atomic_store(&t->park->st, ST(t->req, PH_RELEASED));
	if (atomic_load(&t->park->sleeping))
		futex(&t->park->st, FUTEX_WAKE, 1, NULL);
	else if (atomic_load_explicit(&tick_batch, memory_order_relaxed))
		tc_release_flush(); /* it sleeps on the generation word */
}

void tc_release(struct tc_target *t)
{
	atomic_store(&t->park->st, ST(t->req, PH_RELEASED));
}

void tc_release_flush(void)
{
	atomic_fetch_add(&release_gen, 1);
	futex(&release_gen, FUTEX_WAKE, INT_MAX, NULL);
}

int tc_begin_tick(int batch, int want_cpu_after)
{
	int cpu = sched_getcpu();

	atomic_store(&tick_batch, batch != 0);
	atomic_store(&tick_cpu_after, want_cpu_after != 0);
	atomic_store(&tick_pending, 0); /* every request of the last tick was resolved */
	atomic_store(&sampler_cpu, cpu);
	return cpu;
}

uint64_t tc_last_park_ns(void)
{
	return atomic_load_explicit(&last_park_ns, memory_order_relaxed);
}

int tc_park_cpu(const struct tc_park *p)
{
	return atomic_load_explicit(&p->cpu, memory_order_relaxed);
}

void tc_wait_spin(uint32_t seen, uint64_t deadline_ns, int may_spin)
{
	uint64_t budget = atomic_load_explicit(&spin_ns, memory_order_relaxed);

	if (may_spin && budget > 0) {
		uint64_t until = sb_now_ns() + budget;
		if (until > deadline_ns)
			until = deadline_ns;
		do {
			if (atomic_load(&doorbell) != seen) {
				atomic_fetch_add_explicit(&spin_wakes, 1, memory_order_relaxed);
				return;
			}
			cpu_relax();
		} while (sb_now_ns() < until);
	}
	tc_wait(seen, deadline_ns);
}

void tc_set_spin_ns(uint64_t ns)
{
	atomic_store(&spin_ns, ns);
}

uint64_t tc_spin_ns(void)
{
	return atomic_load(&spin_ns);
}

uint64_t tc_spin_releases(void)
{
	return atomic_load(&spin_releases);
}

uint64_t tc_spin_wakes(void)
{
	return atomic_load(&spin_wakes);
}

int tc_cpu_ns(const struct tc_park *p, pid_t tid, uint64_t *ns)
{
	/* glibc's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): works for any thread of this
	 * process without holding a pthread_t that may already be freed. */
	clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6);
	struct timespec ts;

	(void)p;
	if (clock_gettime(clk, &ts) != 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

static timer_t proc_timer;
static int proc_timer_armed;

int tc_process_clock_open(void)
{
	/* A SIGEV_NONE timer is never armed in the kernel, so it would not start the running
	 * total: this one names a signal it never sends (SIGWINCH, ignored by default, in case),
	 * after about 31 years of CPU. */
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGWINCH };
	struct itimerspec far = { .it_value = { .tv_sec = 1000000000 } };
	uint64_t ns;

	if (!proc_timer_armed && timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &proc_timer) == 0) {
		if (timer_settime(proc_timer, 0, &far, NULL) == 0)
			proc_timer_armed = 1;
		else
			timer_delete(proc_timer);
	}
	return sb_process_cpu_ns(&ns);
}

void tc_process_clock_close(void)
{
	if (proc_timer_armed)
		timer_delete(proc_timer);
	proc_timer_armed = 0;
}

int tc_cpu_after(const struct tc_park *p, uint32_t req, uint64_t *ns)
{
	if (atomic_load_explicit(&p->exit_req, memory_order_acquire) != req)
		return -1;
	*ns = atomic_load_explicit(&p->cpu_after, memory_order_relaxed);
	return 0;
}

uint64_t tc_eintr_caused(void)
{
	return atomic_load(&eintr_caused);
}

#endif
