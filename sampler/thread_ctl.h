/* thread_ctl.h - stop one thread, read its registers, let it go.
 *
 * Three primitives (suspend, get state, resume) with two backends:
 *   thread_ctl_darwin.c Darwin: thread_suspend / thread_get_state / thread_resume.
 *   thread_ctl_linux.c  Linux: a signal rendezvous. The sampler sends SIGRTMIN+k with
 *                       tgkill; the handler saves the interrupted registers, acknowledges
 *                       and parks on a futex until released (Firefox, Boehm GC, HotSpot).
 *
 * Suspend is split in two so one sampler can stop many threads at once: tc_request()
 * starts stopping a thread and never blocks; tc_poll() says whether it is parked yet;
 * tc_wait() sleeps until any requested thread parks. A thread that does not park by its
 * deadline is given up with tc_cancel(), which never leaves it parked: a handler that
 * runs after the sampler gave up sees a stale request number and returns at once.
 *
 * Every tc_poll()/tc_cancel() that returns TC_PARKED must be followed by tc_resume() on
 * every path. Between them the target may hold any lock: no malloc, stdio or locks. */
#ifndef SB_THREAD_CTL_H
#define SB_THREAD_CTL_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/fpwalk.h"

#define TC_TIMEOUT_NS 2000000ull /* give up on a thread that has not parked after 2 ms */
#define TC_SELF_FRAMES 256     /* frames of a deferred sample (SB_MAX_FRAMES) */

/* Per-thread control block: one per registry entry, never freed, so a handler that runs
 * late (or on a thread that is exiting) always finds valid memory. */
struct tc_park {
	_Atomic uint32_t st;      /* request number << 2 | phase (Linux) */
	_Atomic uint32_t sent;    /* signals sent to the thread (sampler side) */
	_Atomic uint32_t entered; /* handler invocations (target side) */
	_Atomic uint32_t ident;   /* registry generation of the thread that parked */
	_Atomic uint32_t port;    /* mach_port_t of the thread (Darwin) */
	_Atomic uintptr_t pc, sp, fp, lr;
	_Atomic uint64_t parked_ns; /* sb_now_ns() when it parked */
	_Atomic uint64_t cpu_after; /* its CPU time as it left the rendezvous of exit_req */
	_Atomic uint32_t exit_req;
	_Atomic int32_t cpu;        /* CPU it last parked on, -1 before its first park (Linux) */
	_Atomic uint32_t sleeping;  /* parked in futex(2): the release must wake it (Linux) */
	/* A deferred request (Linux, tc_defer): the stack bounds the sampler gives the
	 * handler, and the sample the handler takes itself, valid once st says SELF_DONE. */
	_Atomic uintptr_t self_lo, self_hi;
	uint64_t self_entry_ns, self_exit_ns, self_cpu_ns;
	uint32_t self_depth, self_end;
	uint64_t self_pcs[TC_SELF_FRAMES];
};

/* The sampler's view of one stop request. */
struct tc_target {
	struct tc_park *park;
	pid_t tid;
	uint32_t ident;       /* registry generation the sampler expects to find parked */
	uint32_t req;         /* request number, filled by tc_request() */
	uint64_t req_ns;      /* sb_now_ns() just before the request */
	uint64_t deadline_ns; /* give up after this */
};

enum tc_status {
	TC_PARKED = 0, /* stopped: read its state, then tc_resume() */
	TC_PENDING,    /* requested, not parked yet */
	TC_GONE,       /* the thread exited */
	TC_BUSY,       /* an earlier request is still undelivered (signal blocked): skipped */
	TC_TIMEOUT,    /* given up */
	TC_ERROR,
	TC_DEFERRED,   /* the thread takes its own sample when it next runs (tc_defer) */
	TC_SELF_DONE,  /* ... and has taken it */
};

/* A sample a target took itself (tc_deferred_poll); pcs point into its control block. */
struct tc_self_sample {
	const uint64_t *pcs;
	uint32_t depth;
	enum sb_walk_end end;
	uint64_t entry_ns; /* sb_now_ns() as its handler started: it ran again from here */
	uint64_t exit_ns;  /* ... and as the handler ended */
	uint64_t cpu_ns;   /* its CPU clock as the handler started */
};

/* Installs the mechanism (Linux: the rendezvous handler for tc_signo()). Returns 0 or -1
 * with errno. Pair with tc_fini(). */
int tc_init(void);
/* Removes the handler and discards signals still pending. Call with no request open. */
void tc_fini(void);
/* Real-time signal used by the rendezvous (Linux), 0 elsewhere. */
int tc_signo(void);

/* Binds the calling thread to its control block; called by the registry from the thread
 * itself when it registers. ident is the registry generation of its entry. */
void tc_attach_self(struct tc_park *p, uint32_t ident);

/* Starts stopping t (t->park, tid, ident, deadline_ns set by the caller). Never blocks.
 * Returns TC_PENDING, TC_GONE, TC_BUSY or TC_ERROR. */
int tc_request(struct tc_target *t);
/* After tc_request() gave TC_BUSY: asks t to stop without queuing another signal; the
 * undelivered one serves this request when the thread takes it (Linux; Darwin has no
 * undelivered requests and simply requests). For a thread that has not run since the
 * signal was sent (it waits for a CPU), not for one that runs with the signal blocked:
 * that one would hold the tick until the timeout. Returns what tc_request() returns. */
int tc_rearm(struct tc_target *t);
/* TC_PARKED once t is stopped, TC_PENDING before, TC_GONE if it vanished (Darwin). */
int tc_poll(struct tc_target *t);
/* Gives up on t: TC_TIMEOUT, or TC_PARKED when it parked meanwhile (resume it). */
int tc_cancel(struct tc_target *t);
/* Instead of giving up on pending t: the thread takes its own sample when it next runs,
 * before any of its own code, and does not park (Linux; see thread_ctl_linux.c). b: its
 * stack bounds. Only for a request that did not park while the sampler waited, i.e. a
 * thread that is not on a CPU: its registers cannot change before it runs. Returns
 * TC_DEFERRED; TC_PARKED when it parked meanwhile (resume it); TC_TIMEOUT where there
 * is no deferral (Darwin: a suspend never waits for the scheduler). */
int tc_defer(struct tc_target *t, const struct sb_stack_bounds *b);
/* Deferred request req of p: TC_DEFERRED while the thread has not run, TC_BUSY while its
 * handler takes the sample, TC_SELF_DONE with *out filled (valid until tc_deferred_end),
 * TC_TIMEOUT when p holds another request. */
int tc_deferred_poll(const struct tc_park *p, uint32_t req, struct tc_self_sample *out);
/* Ends deferred request req of p: withdraws it if the thread has not taken it yet
 * (TC_TIMEOUT: its handler will return at once), or releases a taken sample after the
 * caller read it (TC_SELF_DONE). TC_BUSY: the handler is taking it now; call again. */
int tc_deferred_end(struct tc_park *p, uint32_t req);
/* A counter that moves whenever some thread parks; read it before polling, then pass it
 * to tc_wait(), which sleeps until it moves or until deadline_ns. */
uint32_t tc_doorbell(void);
void tc_wait(uint32_t seen, uint64_t deadline_ns);
/* Reads the registers of parked t. Returns 0, or -1 when the thread that parked is not
 * the one the sampler asked for (tid reused): resume it and skip. Async-signal-safe. */
int tc_get_state(const struct tc_target *t, struct sb_regs *regs, uint64_t *parked_ns);
/* Lets parked t run again. */
void tc_resume(struct tc_target *t);

/* Batch release: tc_release() marks parked t released without waking it; one
 * tc_release_flush() then wakes every released thread that sleeps, with one system call
 * (Linux: targets of a batch tick sleep on one shared generation word). */
void tc_release(struct tc_target *t);
void tc_release_flush(void);

/* Publishes the policy of the tick about to start, before its first tc_request(): batch
 * (parked threads stay parked until the batch is released) or early (each is released
 * right after its walk). Linux: a target parked in an early tick on another CPU than the
 * sampler spins for up to the spin budget before it sleeps, so its release needs no
 * wake-up; in a batch tick it sleeps at once, because spinning would take the CPU from a
 * target that still has to run to park. want_cpu_after: targets read their CPU clock as
 * they leave (tc_cpu_after(), for idle skip; a system call each, so only on demand).
 * Returns the sampler's CPU (-1 unknown). */
int tc_begin_tick(int batch, int want_cpu_after);
/* sb_now_ns() of the latest park of any thread (0: none; Darwin: always 0). A batch tick,
 * woken only by its last park, reads its progress here. */
uint64_t tc_last_park_ns(void);
/* CPU that p's thread last parked on, -1 unknown (Darwin: always -1). */
int tc_park_cpu(const struct tc_park *p);
/* Like tc_wait(), but when may_spin, first polls the doorbell for up to the spin budget:
 * a park that comes within it is seen without a sleep and wake-up of the sampler. */
void tc_wait_spin(uint32_t seen, uint64_t deadline_ns, int may_spin);
/* Sets the spin budget (ns) of both sides; 0 disables spinning. TC_SPIN_DEFAULT_NS until
 * a host calibration sets this host's own (calibrate_host(): 2 x the cross-CPU futex round
 * trip, within [10 us, 150 us]); SB_MACH_SPIN_NS overrides both. Measured
 * (docs/validation.md, "Spinning before parking"): with 2 busy threads on 2 CPUs it
 * shortens the suspend windows by a third. */
void tc_set_spin_ns(uint64_t ns);
uint64_t tc_spin_ns(void);
#define TC_SPIN_DEFAULT_NS 50000ull
/* Counters since tc_init(): targets released while they spun (no wake-up needed), and
 * sampler waits that ended while spinning. */
uint64_t tc_spin_releases(void);
uint64_t tc_spin_wakes(void);

/* CPU time thread (p, tid) has used, in ns, read from outside the thread without
 * stopping it (Linux: its CPU-time clock made from the tid). Returns 0, or -1 when the
 * thread is gone. */
int tc_cpu_ns(const struct tc_park *p, pid_t tid, uint64_t *ns);

/* The process's CPU clock (sb_process_cpu_ns()) tells a sampler whether threads it does
 * not read ran at all (mach-idle's idle threads, docs/mach.md "Thousands of threads").
 * Linux sums the threads in the kernel unless a process CPU timer is armed, then keeps
 * one running total: tc_process_clock_open() arms one that never fires (after 31 years
 * of CPU), so a read costs the same at 10 or 10,000 threads. Darwin: libc asks the kernel, which sums the task's threads (one call, not
 * measured here: no Mac). Open returns 0, or -1 when the clock cannot be read. */
int tc_process_clock_open(void);
void tc_process_clock_close(void);

/* Idle skip: CPU time thread p had when it left the rendezvous of request req. On Linux
 * serving a rendezvous costs the target CPU (wakeup, handler, sigreturn): a thread that
 * did nothing else since has used at most TC_IDLE_SLACK_NS more. Returns 0, or -1 when
 * unknown (Darwin: a suspended thread does not run). */
int tc_cpu_after(const struct tc_park *p, uint32_t req, uint64_t *ns);
#define TC_IDLE_SLACK_NS 20000ull

/* Peeking at a thread blocked in a system call (Linux). Its user registers stay in the
 * kernel and its user stack cannot change while it blocks, so its stack can be read from
 * outside without a signal, which would interrupt the call (EINTR) or wake it for
 * nothing. /proc/self/task/TID/syscall gives its user pc and sp; the frame record its fp
 * points to is the first one above sp that starts a valid chain to the stack's end with a
 * return address into executable code. The caller confirms afterwards that the thread
 * did not run meanwhile (its CPU clock did not move), else the peek is void.
 * tc_peek_open() returns an fd for tid (-1: no peeking here, e.g. Darwin, where a
 * suspend interrupts nothing); tc_peek() returns 1 with regs filled (pc, sp, fp) when the
 * thread is blocked in a system call with a findable frame chain, 0 when it is running,
 * 2 when it blocks but no chain was found, -1 on error. A chain is findable when it walks
 * cleanly to the stack's end (a zero fp), or reaches outer_fp, the thread's outermost
 * frame record as the thread saw it when it registered (0: none): the main thread's
 * chain never ends cleanly (libc's start code leaves a non-zero rbp behind main). */
int tc_peek_open(pid_t tid);
int tc_peek(int fd, const struct sb_stack_bounds *b, uintptr_t outer_fp, struct sb_regs *regs);

/* 1 when pc is on, or just past, a system call instruction: a thread stopped there was
 * entering, blocked in, or leaving a system call (a restarted call's pc is moved back onto
 * the instruction). Linux x86_64 and aarch64; 0 elsewhere. */
int tc_pc_at_syscall(uintptr_t pc);

/* EINTRs the rendezvous caused: handlers that interrupted a system call which will now
 * fail with EINTR (despite SA_RESTART, e.g. nanosleep, poll). Since tc_init(). */
uint64_t tc_eintr_caused(void);

#endif
