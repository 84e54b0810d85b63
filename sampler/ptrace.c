/* ptrace.c - an out-of-process suspend sampler: a forked tracer stops each workload thread
 * with PTRACE_INTERRUPT, reads its registers, walks its frame-pointer chain with
 * process_vm_readv and resumes it, as gdb-based "poor man's profilers" and py-spy/rbspy in
 * --nonblocking=false mode do.
 *
 * start() forks the sampler process, which PTRACE_SEIZEs every thread of the workload
 * process once (TRACECLONE follows new threads, TRACEEXIT reports exits) and only then lets
 * start() return, so no workload thread runs untraced. Each tick it samples every workload
 * thread registered by the thread_start hook (registration carries the slot and the stack
 * bounds the walker validates against; threads without one, e.g. the main thread, are
 * traced but not sampled). Samples go straight into the MAP_SHARED sink.
 *
 * Nothing here blocks on the target while a thread is stopped: the tracer only issues
 * ptrace requests and process_vm_readv (which needs the target's mmap lock for reading;
 * a thread in a ptrace stop holds no kernel lock, and other threads keep running).
 * No thread is left stopped: the tracer detaches everything on stop, on SIGINT/SIGTERM and
 * on every error path, and if it dies anyway the kernel detaches its tracees (exit_ptrace)
 * and wakes them. PTRACE_O_EXITKILL is deliberately not set.
 *
 * weight_ns: CPU time of the thread since its previous sample, from the first field of
 * /proc/PID/task/TID/schedstat (sum_exec_runtime), read just before the interrupt. The
 * kernel updates that field at ticks and context switches, so one sample's weight may be
 * off by up to a tick, but weights telescope: their sum per thread is exact to one tick.
 * stop_latency_ns: PTRACE_INTERRUPT issued -> stop observed by waitpid.
 * suspend_window_ns: PTRACE_INTERRUPT issued -> PTRACE_CONT issued. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "sampler/extproc.h"
#include "sampler/fpwalk.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"

#define PT_MAX_TRACED 4096          /* threads traced at once */
#define PT_ATTACH_TIMEOUT_MS 5000
#define PT_EXIT_TIMEOUT_MS 5000
#define PT_DETACH_TIMEOUT_NS 1000000000ull
#define PT_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXIT)

/* Lives in a MAP_SHARED mapping created before fork: hooks write registrations, the tracer
 * writes counters, stop() reads them after the tracer exited. */
struct pt_shared {
	_Atomic int rt;
	_Atomic uint64_t ticks, samples, stop_failures, exits, clones, attached, walk_errors,
		dropped, signals_reinjected, group_stops, detached, ticks_late,
		skipped_pending;
	struct extproc_regs regs; /* the workload threads */
};

/* Tracer-private state of one traced thread. */
struct pt_thread {
	pid_t tid;
	int reg;              /* index into shared->reg, -1 until the thread registered */
	int schedfd;          /* /proc/PID/task/TID/schedstat, -1 when unreadable */
	uint64_t last_cpu_ns;
	int interrupt_pending; /* a PTRACE_INTERRUPT whose stop was not seen yet */
	uint64_t req_ns;       /* when it was requested */
	uint64_t req_cpu_ns;   /* schedstat CPU time read just before the request */
	int req_cpu_ok;
	int group_stopped;    /* in PTRACE_LISTEN: stopped by job control, not by us */
};

/* Workload-process side. */
static struct pt_shared *pt_sh;
static struct extproc pt_proc = { .pid = -1, .stop_wr = -1, .cpu_ns = NAN, .exit_status = -1 };

/* Tracer side. */
static pid_t pt_target;
static struct pt_thread pt_threads[PT_MAX_TRACED];
static int pt_nthreads;
static int pt_sigfd = -1;
static volatile sig_atomic_t pt_quit;
static int pt_rt; /* the tracer runs SCHED_FIFO */

static void pt_count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- workload side: registration hook ---- */

/* The thread_start hook: registers the calling thread with the tracer. */
static void pt_thread_start(int index)
{
	if (pt_sh)
		extproc_register_self(&pt_sh->regs, index);
}

/* ---- tracer side ---- */

static struct pt_thread *pt_find(pid_t tid)
{
	for (int i = 0; i < pt_nthreads; i++)
		if (pt_threads[i].tid == tid)
			return &pt_threads[i];
	return NULL;
}

static struct pt_thread *pt_add(pid_t tid)
{
	struct pt_thread *t = pt_find(tid);
	if (t)
		return t;
	if (pt_nthreads >= PT_MAX_TRACED)
		return NULL;
	t = &pt_threads[pt_nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->reg = -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pt_target, (int)tid);
	t->schedfd = open(path, O_RDONLY | O_CLOEXEC);
	return t;
}

static void pt_remove(pid_t tid)
{
	struct pt_thread *t = pt_find(tid);
	if (!t)
		return;
	if (t->schedfd >= 0)
		close(t->schedfd);
	*t = pt_threads[--pt_nthreads];
}

static uint64_t pt_read_cpu(struct pt_thread *t, int *ok)
{
	char buf[96];
	*ok = 0;
	if (t->schedfd < 0)
		return 0;
	ssize_t n = pread(t->schedfd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	*ok = 1;
	return strtoull(buf, NULL, 10);
}

static int pt_is_group_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Handles any wait status of a traced thread other than the interrupt stop a sampling tick
 * is waiting for, and resumes it. With detach set, resumes by detaching instead. */
static void pt_handle(pid_t tid, int status, int detach)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		pt_remove(tid);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	struct pt_thread *t = pt_find(tid);
	if (!t) /* a new thread can report its first stop before its parent's clone event */
		t = pt_add(tid);
	int sig = WSTOPSIG(status), event = status >> 16, inject = 0;

	switch (event) {
	case PTRACE_EVENT_CLONE: {
		unsigned long child = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) == 0 && child > 0) {
			pt_add((pid_t)child); /* already traced: TRACECLONE attaches it */
			pt_count(&pt_sh->clones);
		}
		break;
	}
	case PTRACE_EVENT_EXIT:
		pt_count(&pt_sh->exits);
		break;
	case PTRACE_EVENT_STOP:
		if (pt_is_group_stop_sig(sig) && !detach) {
			/* Job control stopped the process: stay stopped as it asked, but keep
			 * receiving events (PTRACE_LISTEN), and do not sample it meanwhile. */
			if (t)
				t->group_stopped = 1;
			pt_count(&pt_sh->group_stops);
			if (ptrace(PTRACE_LISTEN, tid, 0, 0) == 0)
				return;
			break; /* cannot listen: resume rather than leave it stopped */
		}
		/* SIGTRAP: a new thread's first stop, the end of a group stop, or (detaching)
		 * one of our interrupts. */
		if (t) {
			t->interrupt_pending = 0;
			t->group_stopped = 0;
		}
		break;
	case 0:
		/* Signal-delivery-stop: the signal is the workload's, re-inject it. SIGTRAP too:
		 * with PTRACE_SEIZE our own stops arrive as PTRACE_EVENT_* stops, so a plain
		 * SIGTRAP here was really sent to the workload. */
		inject = sig;
		pt_count(&pt_sh->signals_reinjected);
		break;
	default:
		break;
	}
	if (detach) {
		if (ptrace(PTRACE_DETACH, tid, 0, (void *)(long)inject) == 0 || errno == ESRCH) {
			pt_count(&pt_sh->detached);
			pt_remove(tid);
		}
		return;
	}
	if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)inject) != 0 && errno == ESRCH)
		pt_remove(tid); /* killed while stopped (SIGKILL): its exit status follows */
}

static void pt_drain_sigfd(void)
{
	struct signalfd_siginfo si[8];
	while (read(pt_sigfd, si, sizeof(si)) > 0)
		;
}

/* Reaps every pending wait status without blocking. */
static void pt_reap(int detach)
{
	for (;;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG | __WALL);
		if (w <= 0)
			return;
		pt_handle(w, status, detach);
	}
}

/* Waits up to timeout_ns for a SIGCHLD (a tracee changed state) or the stop pipe. Returns
 * 1 when the stop pipe fired, 0 otherwise. */
static int pt_sleep(int stop_rd, uint64_t timeout_ns)
{
	struct pollfd p[2] = { { pt_sigfd, POLLIN, 0 }, { stop_rd, POLLIN, 0 } };
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull),
			       (long)(timeout_ns % 1000000000ull) };
	int n = ppoll(p, stop_rd >= 0 ? 2 : 1, &ts, NULL);
	if (n <= 0)
		return 0;
	if (p[0].revents)
		pt_drain_sigfd();
	return stop_rd >= 0 && p[1].revents != 0;
}

/* Reads 16 bytes of the target's stack through a 4 KiB window cache: one process_vm_readv
 * usually serves the whole walk. */
struct pt_reader {
	pid_t pid;
	uintptr_t hi;       /* stack end: never read past it */
	uintptr_t base;
	size_t len;
	unsigned char buf[4096];
};

static int pt_read(void *ctx, uintptr_t addr, uintptr_t out[2])
{
	struct pt_reader *r = ctx;
	if (addr < r->base || addr + 16 > r->base + r->len) {
		size_t want = sizeof(r->buf);
		if (r->hi - addr < want)
			want = r->hi - addr;
		struct iovec local = { r->buf, want }, remote = { (void *)addr, want };
		ssize_t n = process_vm_readv(r->pid, &local, 1, &remote, 1, 0);
		if (n < 16) {
			r->len = 0;
			return -1;
		}
		r->base = addr;
		r->len = (size_t)n;
	}
	memcpy(out, r->buf + (addr - r->base), 16);
	return 0;
}

static struct pt_reader pt_rd;

/* Asks t to stop (the stop itself is collected by pt_reap_sample). The schedstat read
 * happens here, before the request, outside the stopped window. Returns 0 or -1. */
static int pt_request(struct pt_thread *t)
{
	t->req_cpu_ns = pt_read_cpu(t, &t->req_cpu_ok);
	t->req_ns = sb_now_ns();
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) != 0) {
		pt_count(&pt_sh->stop_failures);
		return -1; /* ESRCH: gone; its exit status is reaped later */
	}
	t->interrupt_pending = 1;
	return 0;
}

/* t is in the interrupt stop it was asked for: read registers, walk, resume, record. */
static void pt_take(struct pt_thread *t, uint32_t max_depth, struct sb_sink *sink)
{
	pid_t tid = t->tid;
	uint64_t t_stop = sb_now_ns();
	struct user_regs_struct ur;
	uint64_t pcs[SB_MAX_FRAMES];
	uint32_t depth = 0, flags = 0;
	int reg = t->reg;

	t->interrupt_pending = 0;
	int have_regs = reg >= 0 && ptrace(PTRACE_GETREGS, tid, 0, &ur) == 0;
	if (have_regs) {
		struct sb_regs regs = { .pc = ur.rip, .sp = ur.rsp, .fp = ur.rbp, .lr = 0 };
		struct sb_stack_bounds b = { pt_sh->regs.reg[reg].lo, pt_sh->regs.reg[reg].hi };
		pt_rd.pid = pt_target;
		pt_rd.hi = b.hi;
		pt_rd.len = 0;
		enum sb_walk_end end = fp_walk(&regs, &b, pcs, max_depth, &depth, pt_read, &pt_rd);
		if (end == SB_WALK_TRUNCATED)
			flags |= SB_SAMPLE_TRUNCATED;
		else if (end != SB_WALK_OK) {
			flags |= SB_SAMPLE_WALK_ERROR;
			pt_count(&pt_sh->walk_errors);
		}
	}
	uint64_t t_cont = sb_now_ns();
	int gone = ptrace(PTRACE_CONT, tid, 0, 0) != 0 && errno == ESRCH;
	if (!have_regs) {
		pt_count(&pt_sh->stop_failures);
	} else {
		struct sb_sample s = sample_unknown();
		s.time_ns = t_stop;
		s.tid = tid;
		s.thread_index = pt_sh->regs.reg[reg].slot;
		s.stop_latency_ns = (double)(t_stop - t->req_ns);
		s.suspend_window_ns = (double)(t_cont - t->req_ns);
		if (t->req_cpu_ok) {
			s.weight_ns = (double)(t->req_cpu_ns - t->last_cpu_ns);
			if (t->req_cpu_ns > t->last_cpu_ns)
				flags |= SB_SAMPLE_RAN;
			t->last_cpu_ns = t->req_cpu_ns;
		}
		s.flags = flags;
		pt_count(&pt_sh->samples);
		if (sink_push(sink, &s, pcs, depth) != 0)
			pt_count(&pt_sh->dropped);
	}
	if (gone) /* killed while stopped (SIGKILL): its exit status follows */
		pt_remove(tid);
}

/* Reaps every pending wait status without blocking: the interrupt stop of a thread we
 * asked to stop is sampled and resumed at once; anything else goes to pt_handle. Threads
 * reach their stops in any order (a runnable thread that is off-CPU stops only once it is
 * scheduled), so stops are never awaited one by one. */
static void pt_reap_sample(uint32_t max_depth, struct sb_sink *sink)
{
	for (;;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG | __WALL);
		if (w <= 0)
			return;
		struct pt_thread *t = pt_find(w);
		if (t && t->interrupt_pending && WIFSTOPPED(status) &&
		    (status >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(status) == SIGTRAP)
			pt_take(t, max_depth, sink);
		else
			pt_handle(w, status, 0);
	}
}

/* Seizes every thread of the target until a pass finds none new (threads may be created
 * while we enumerate; those created after their creator was seized follow by TRACECLONE).
 * Returns 0 or -errno. */
static int pt_attach_all(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pt_target);
	for (int fresh = 1; fresh;) {
		fresh = 0;
		DIR *d = opendir(path);
		if (!d)
			return -errno;
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || pt_find(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PT_OPTIONS) != 0) {
				if (errno == ESRCH)
					continue; /* exited meanwhile */
				int e = errno;
				closedir(d);
				return -e;
			}
			if (!pt_add(tid)) {
				closedir(d);
				return -ENOSPC;
			}
			pt_count(&pt_sh->attached);
			fresh = 1;
		}
		closedir(d);
	}
	return 0;
}

/* Detaches every traced thread: a running tracee must be stopped first (PTRACE_DETACH needs
 * a ptrace stop), so interrupt, then detach each as its stop arrives. Bounded: whatever is
 * left when time runs out is detached by the kernel when this process exits. */
static void pt_detach_all(void)
{
	uint64_t t0 = sb_now_ns();
	for (int i = 0; i < pt_nthreads;) {
		struct pt_thread *t = &pt_threads[i];
		/* A listening (group-stopped) tracee is in a ptrace stop: detach it directly. */
		if (t->group_stopped && ptrace(PTRACE_DETACH, t->tid, 0, 0) == 0) {
			pt_count(&pt_sh->detached);
			pt_remove(t->tid);
			continue;
		}
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) != 0 && errno == ESRCH) {
			pt_remove(t->tid); /* dead: nothing to release */
			continue;
		}
		i++;
	}
	while (pt_nthreads > 0 && sb_now_ns() - t0 < PT_DETACH_TIMEOUT_NS) {
		int before = pt_nthreads;
		pt_reap(1);
		if (pt_nthreads == before)
			pt_sleep(-1, 10000000);
	}
}

static void pt_on_signal(int sig)
{
	(void)sig;
	pt_quit = 1;
}

/* The tracer process. Never returns. Reports attach success (0) or the errno on ready_wr. */
static void pt_tracer_main(const struct sb_config *cfg, struct sb_sink *sink, int ready_wr,
			   int stop_rd)
{
	int rc = 0;
	sigset_t chld;
	struct sigaction sa;

	/* SIGCHLD is blocked and read through a signalfd so that ppoll can sleep until either
	 * a tracee changes state or the tick is due. A blocked SIGCHLD is queued, not ignored. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	pt_sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pt_on_signal; /* no SA_RESTART: waits return EINTR and see pt_quit */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* The tracer must win the CPU against the busy threads it samples, or each stop waits
	 * behind them and the window grows by scheduler slices. Best effort. */
	if (cfg->rt_priority) {
		struct sched_param sp = { .sched_priority = 1 };
		pt_rt = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
	}
	atomic_store(&pt_sh->rt, pt_rt);
	rc = pt_sigfd < 0 ? -errno : pt_attach_all();
	int report = -rc; /* 0, or the errno the attach failed with */
	if (write(ready_wr, &report, sizeof(report)) != sizeof(report))
		rc = -EPIPE;
	close(ready_wr);
	if (rc != 0)
		goto cleanup;

	uint64_t period = (uint64_t)(1e9 / cfg->hz);
	uint32_t max_depth = cfg->max_depth && cfg->max_depth <= SB_MAX_FRAMES ? cfg->max_depth
									       : SB_MAX_FRAMES;
	uint64_t next = sb_now_ns() + period;
	while (!pt_quit) {
		uint64_t now = sb_now_ns();
		if (now >= next) {
			pt_count(&pt_sh->ticks);
			for (int i = 0; i < pt_nthreads && !pt_quit; i++) {
				struct pt_thread *t = &pt_threads[i];
				if (t->group_stopped)
					continue;
				if (t->reg < 0 || pt_sh->regs.reg[t->reg].tid != t->tid)
					t->reg = extproc_lookup(&pt_sh->regs, t->tid);
				if (t->reg < 0)
					continue; /* not a workload thread (or not registered yet) */
				if (t->interrupt_pending) {
					/* still on its way to the previous tick's stop */
					pt_count(&pt_sh->skipped_pending);
					continue;
				}
				pt_request(t);
			}
			next += period;
			now = sb_now_ns();
			if (next < now) { /* fell behind: skip missed ticks rather than burst */
				pt_count(&pt_sh->ticks_late);
				next = now + period;
			}
		}
		if (pt_sleep(stop_rd, next - now))
			break;
		pt_reap_sample(max_depth, sink);
	}
cleanup:
	pt_detach_all();
	_exit(rc == 0 ? 0 : 1);
}

/* ---- workload side: start / stop ---- */

static int pt_available(char *why, size_t len)
{
#if !defined(__x86_64__)
	snprintf(why, len, "ptrace sampler supports x86_64 only");
	return -1;
#else
	(void)why;
	(void)len;
	return 0;
#endif
}

struct pt_args {
	const struct sb_config *cfg;
	struct sb_sink *sink;
};

static void pt_tracer_entry(void *arg, int ready_wr, int stop_rd)
{
	const struct pt_args *a = arg;
	pt_tracer_main(a->cfg, a->sink, ready_wr, stop_rd);
}

/* Forks the tracer and returns once it has seized every thread of this process, so no
 * workload thread starts untraced. Returns 0, or -1 with errno (the tracer's attach error,
 * e.g. EPERM, or ETIMEDOUT). */
static int pt_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct pt_args args = { cfg, sink };

	if (cfg->hz <= 0) {
		errno = EINVAL;
		return -1;
	}
	pt_sh = mmap(NULL, sizeof(*pt_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (pt_sh == MAP_FAILED) {
		pt_sh = NULL;
		return -1;
	}
	memset(pt_sh, 0, sizeof(*pt_sh));
	/* YAMA (ptrace_scope 1) only lets ancestors trace: the tracer is our child. Fails
	 * harmlessly with EINVAL where YAMA is not built in. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	pt_target = getpid();
	if (extproc_start(&pt_proc, pt_tracer_entry, &args, PT_ATTACH_TIMEOUT_MS) != 0) {
		int e = errno;
		munmap(pt_sh, sizeof(*pt_sh));
		pt_sh = NULL;
		errno = e;
		return -1;
	}
	return 0;
}

/* Asks the tracer to detach and exit (EOF on the stop pipe), waits up to
 * PT_EXIT_TIMEOUT_MS, then kills it (the kernel releases its tracees). Collects its CPU
 * time. Returns 0, or -1 when it had to be killed or failed. The shared block stays mapped
 * for stats(). */
static int pt_stop(void)
{
	switch (extproc_stop(&pt_proc, PT_EXIT_TIMEOUT_MS)) {
	case 0:
		return 0;
	case 1:
		errno = ETIMEDOUT;
		return -1;
	default:
		errno = EOWNERDEAD; /* the tracer failed or was killed: its samples are partial */
		return -1;
	}
}

static int pt_stats(struct sb_stat *out, int max)
{

	if (!pt_sh)
		return 0;
	struct sb_stat all[] = {
		{ "ticks", (double)atomic_load(&pt_sh->ticks) },
		{ "samples", (double)atomic_load(&pt_sh->samples) },
		{ "stop_failures", (double)atomic_load(&pt_sh->stop_failures) },
		{ "exits_followed", (double)atomic_load(&pt_sh->exits) },
		{ "clones_followed", (double)atomic_load(&pt_sh->clones) },
		{ "threads_attached", (double)atomic_load(&pt_sh->attached) },
		{ "threads_detached", (double)atomic_load(&pt_sh->detached) },
		{ "walk_errors", (double)atomic_load(&pt_sh->walk_errors) },
		{ "sink_dropped", (double)atomic_load(&pt_sh->dropped) },
		{ "signals_reinjected", (double)atomic_load(&pt_sh->signals_reinjected) },
		{ "group_stops", (double)atomic_load(&pt_sh->group_stops) },
		{ "ticks_late", (double)atomic_load(&pt_sh->ticks_late) },
		{ "skipped_pending", (double)atomic_load(&pt_sh->skipped_pending) },
		{ "registrations_lost", (double)atomic_load(&pt_sh->regs.overflow) },
		{ "sampler_cpu_ns", pt_proc.cpu_ns },
		{ "sampler_rt", (double)atomic_load(&pt_sh->rt) },
		{ "sampler_exit_status", (double)pt_proc.exit_status },
	};
	int n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(all) && n < max; i++)
		out[n++] = all[i];
	return n;
}

/* For tests: the tracer's pid while it runs, or -1. */
pid_t sb_ptrace_tracer_pid(void);
pid_t sb_ptrace_tracer_pid(void)
{
	return pt_proc.pid;
}

const struct sampler sampler_ptrace = {
	.name = "ptrace",
	.description = "out-of-process tracer: PTRACE_INTERRUPT, GETREGS, remote fp walk",
	.clock = SB_CLOCK_WALL,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_EXTERNAL,
	.available = pt_available,
	.start = pt_start,
	.stop = pt_stop,
	.stats = pt_stats,
	.thread_start = pt_thread_start,
};
