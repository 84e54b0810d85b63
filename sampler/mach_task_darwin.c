/* mach_task_darwin.c - `mach-task`: the out-of-process Darwin suspend sampler (seed 002),
 * the Darwin twin of `ptrace`.
 *
 * start() forks a sampler process, which takes the workload process's task port with
 * task_for_pid() and only then lets start() return. Each tick it lists the task's threads
 * (task_threads), and for every workload thread that registered through the thread_start
 * hook (tid, slot and stack bounds in a MAP_SHARED block; the main thread is not sampled,
 * as with ptrace): reads its CPU time (thread_info), thread_suspend, thread_get_state,
 * walks its frame pointers with mach_vm_read_overwrite, thread_resume. Samples go straight
 * into the MAP_SHARED sink.
 *
 * Never leaving a thread suspended: every successful thread_suspend() is followed by
 * exactly one thread_resume() on every path (the walk cannot fail in between: a failed
 * read ends the walk, it does not leave). The sampler process blocks every catchable
 * signal while a thread is suspended, so SIGTERM/SIGINT land between threads. Only SIGKILL
 * can stop it in that window; a Mach suspend count outlives the task that took it, so
 * stop() repairs that case from the inside: when the sampler process did not exit cleanly
 * it resumes every thread of its own process whose suspend count is above zero.
 *
 * task_for_pid needs root or the debugger entitlement on macOS (even for one's own child
 * or parent): without it start() fails with EPERM and the run is recorded as an error.
 *
 * Darwin build only: compiled and linked by `make darwin-check`, run only on a Mac. Never
 * run on this project's Linux machines (docs/darwin.md).
 *
 * weight_ns: user + system time of the thread since its previous sample (thread_info,
 * microsecond resolution), read just before the suspend. stop_latency_ns: thread_suspend()
 * called -> returned (synchronous: the thread is off-CPU when it returns).
 * suspend_window_ns: thread_suspend() called -> thread_resume() returned. */
#include <errno.h>
#include <fcntl.h>
#include <mach/mach.h>
#include <mach/mach_vm.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "sampler/extproc.h"
#include "sampler/fpwalk.h"
#include "sampler/sampler.h"
#include "sampler/thread_state_darwin.h"
#include "sampler/threads.h"

#define MT_START_TIMEOUT_MS 5000
#define MT_EXIT_TIMEOUT_MS 5000

/* MAP_SHARED, created before the fork: hooks write registrations, the sampler process
 * writes counters, stop() and stats() read them. */
struct mt_shared {
	_Atomic uint64_t ticks, samples, suspend_failures, state_failures, resume_failures,
		walk_errors, dropped, threads_seen, ticks_late, threads_gone;
	struct extproc_regs regs; /* the workload threads */
};

/* Workload-process side. */
static struct mt_shared *mt_sh;
static struct extproc mt_proc = { .pid = -1, .stop_wr = -1, .cpu_ns = NAN, .exit_status = -1 };
static uint64_t mt_repaired; /* threads stop() had to resume itself */

static void mt_count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- workload side ---- */

/* The thread_start hook: registers the calling thread with the sampler process. */
static void mt_thread_start(int index)
{
	if (mt_sh)
		extproc_register_self(&mt_sh->regs, index);
}

/* ---- sampler-process side ---- */

struct mt_reader {
	task_t task;
};

/* fp_walk's reader: 16 bytes of the target at addr. */
static int mt_read(void *ctx, uintptr_t addr, uintptr_t out[2])
{
	const struct mt_reader *rd = ctx;
	mach_vm_size_t got = 0;
	kern_return_t kr = mach_vm_read_overwrite(rd->task, (mach_vm_address_t)addr,
						  2 * sizeof(uintptr_t),
						  (mach_vm_address_t)(uintptr_t)out, &got);
	return kr == KERN_SUCCESS && got == 2 * sizeof(uintptr_t) ? 0 : -1;
}

static int mt_cpu_ns(thread_act_t th, uint64_t *ns)
{
	thread_basic_info_data_t info;
	mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;

	if (thread_info(th, THREAD_BASIC_INFO, (thread_info_t)&info, &count) != KERN_SUCCESS)
		return -1;
	*ns = ((uint64_t)info.user_time.seconds + (uint64_t)info.system_time.seconds) *
		      1000000000ull +
	      ((uint64_t)info.user_time.microseconds + (uint64_t)info.system_time.microseconds) *
		      1000ull;
	return 0;
}

static int mt_thread_id(thread_act_t th, int32_t *tid)
{
	thread_identifier_info_data_t info;
	mach_msg_type_number_t count = THREAD_IDENTIFIER_INFO_COUNT;

	if (thread_info(th, THREAD_IDENTIFIER_INFO, (thread_info_t)&info, &count) != KERN_SUCCESS)
		return -1;
	*tid = (int32_t)(pid_t)info.thread_id; /* the same truncation as plat_gettid() */
	return 0;
}

static struct extproc_reg *mt_lookup(int32_t tid)
{
	int i = extproc_lookup(&mt_sh->regs, tid);
	return i < 0 ? NULL : &mt_sh->regs.reg[i];
}

/* Samples thread th of the target, registered as r: suspend, state, walk, resume. Every
 * catchable signal is blocked (by the caller) for the whole call. */
static void mt_sample_one(thread_act_t th, struct extproc_reg *r, struct mt_reader *rd,
			  uint32_t max_depth, uint64_t *pcs, struct sb_sink *sink)
{
	struct sb_stack_bounds b = { (uintptr_t)r->lo, (uintptr_t)r->hi };
	struct sb_regs regs;
	uint64_t cpu, req_ns, parked_ns, resumed_ns;
	uint32_t depth = 0;
	enum sb_walk_end end = SB_WALK_OK;
	int state_ok;

	if (mt_cpu_ns(th, &cpu) != 0) {
		mt_count(&mt_sh->threads_gone); /* exited since task_threads() */
		return;
	}
	req_ns = sb_now_ns();
	kern_return_t kr = thread_suspend(th);
	if (kr != KERN_SUCCESS) {
		/* Exited since thread_info: skipped, not a failure. */
		mt_count(darwin_thread_gone(kr) ? &mt_sh->threads_gone : &mt_sh->suspend_failures);
		return;
	}
	parked_ns = sb_now_ns();
	state_ok = darwin_thread_regs(th, &regs) == 0;
	if (state_ok)
		end = fp_walk(&regs, &b, pcs, max_depth, &depth, mt_read, rd);
	/* The one resume of this suspend, on every path. */
	if (thread_resume(th) != KERN_SUCCESS)
		mt_count(&mt_sh->resume_failures); /* it died meanwhile: nothing left to resume */
	resumed_ns = sb_now_ns();
	if (!state_ok) {
		mt_count(&mt_sh->state_failures);
		return;
	}

	struct sb_sample s = sample_unknown();
	s.time_ns = parked_ns;
	s.tid = r->tid;
	s.thread_index = r->slot;
	s.weight_ns = cpu > r->last_cpu_ns ? (double)(cpu - r->last_cpu_ns) : 0;
	s.stop_latency_ns = (double)(parked_ns - req_ns);
	s.suspend_window_ns = (double)(resumed_ns - req_ns);
	s.flags = cpu > r->last_cpu_ns ? SB_SAMPLE_RAN : 0;
	if (end == SB_WALK_TRUNCATED) {
		s.flags |= SB_SAMPLE_TRUNCATED;
	} else if (end != SB_WALK_OK) {
		s.flags |= SB_SAMPLE_WALK_ERROR;
		mt_count(&mt_sh->walk_errors);
	}
	r->last_cpu_ns = cpu;
	if (sink_push(sink, &s, pcs, depth) == 0)
		mt_count(&mt_sh->samples);
	else
		mt_count(&mt_sh->dropped);
}

static void mt_tick(task_t task, struct mt_reader *rd, uint32_t max_depth, uint64_t *pcs,
		    struct sb_sink *sink)
{
	thread_act_array_t list = NULL;
	mach_msg_type_number_t n = 0;
	sigset_t all, old;

	if (task_threads(task, &list, &n) != KERN_SUCCESS)
		return;
	sigfillset(&all);
	for (mach_msg_type_number_t i = 0; i < n; i++) {
		int32_t tid;
		struct extproc_reg *r;

		if (mt_thread_id(list[i], &tid) != 0)
			mt_count(&mt_sh->threads_gone); /* exited since task_threads() */
		else if ((r = mt_lookup(tid)) != NULL) {
			mt_count(&mt_sh->threads_seen);
			sigprocmask(SIG_BLOCK, &all, &old);
			mt_sample_one(list[i], r, rd, max_depth, pcs, sink);
			sigprocmask(SIG_SETMASK, &old, NULL);
		}
		mach_port_deallocate(mach_task_self(), list[i]);
	}
	mach_vm_deallocate(mach_task_self(), (mach_vm_address_t)(uintptr_t)list,
			   (mach_vm_size_t)n * sizeof(*list));
	mt_count(&mt_sh->ticks);
}

/* The sampler process: never returns. Reports task_for_pid's result on ready_wr (0 or an
 * errno), then ticks until stop_rd reaches EOF. */
static void mt_sampler_main(const struct sb_config *cfg, struct sb_sink *sink, pid_t target,
			    int ready_wr, int stop_rd)
{
	static uint64_t pcs[SB_MAX_FRAMES];
	struct mt_reader rd;
	uint32_t max_depth = cfg->max_depth == 0 || cfg->max_depth > SB_MAX_FRAMES
				     ? SB_MAX_FRAMES
				     : cfg->max_depth;
	uint64_t interval = (uint64_t)(1e9 / cfg->hz);
	int status = 0;

	kern_return_t kr = task_for_pid(mach_task_self(), target, &rd.task);
	if (kr != KERN_SUCCESS)
		status = EPERM; /* not root and no debugger entitlement */
	if (write(ready_wr, &status, sizeof(status)) != (ssize_t)sizeof(status) || status != 0)
		_exit(1);
	close(ready_wr);

	uint64_t next = sb_now_ns() + interval;
	for (;;) {
		struct pollfd p = { stop_rd, POLLIN, 0 };
		if (poll(&p, 1, 0) != 0)
			break; /* EOF (or error): stop() asked us to finish */
		plat_sleep_until_ns(next);
		if (sb_now_ns() < next)
			continue; /* woken early by a signal */
		mt_tick(rd.task, &rd, max_depth, pcs, sink);
		next += interval;
		uint64_t now = sb_now_ns();
		if (next < now) {
			mt_count(&mt_sh->ticks_late);
			next = now + interval;
		}
	}
	mach_port_deallocate(mach_task_self(), rd.task);
	_exit(0);
}

/* task_for_pid on a process of our own is refused without root or the debugger
 * entitlement: ask from a child about its parent (us), the same question start() asks. */
static int mt_available(char *why, size_t len)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		task_t t;
		_exit(task_for_pid(mach_task_self(), getppid(), &t) == KERN_SUCCESS ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		snprintf(why, len, "cannot fork to test task_for_pid");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, len, "task_for_pid refused: needs root or the debugger entitlement");
		return -1;
	}
	return 0;
}

struct mt_args {
	const struct sb_config *cfg;
	struct sb_sink *sink;
	pid_t target;
};

static void mt_sampler_entry(void *arg, int ready_wr, int stop_rd)
{
	const struct mt_args *a = arg;
	mt_sampler_main(a->cfg, a->sink, a->target, ready_wr, stop_rd);
}

/* Forks the sampler process and returns once it holds this process's task port. Returns
 * 0, or -1 with errno (EPERM when task_for_pid was refused, ETIMEDOUT). */
static int mt_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	struct mt_args args = { cfg, sink, getpid() };

	if (!cfg || !sink || !(cfg->hz > 0) || cfg->hz > 1e6) {
		errno = EINVAL;
		return -1;
	}
	mt_sh = mmap(NULL, sizeof(*mt_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (mt_sh == MAP_FAILED) {
		mt_sh = NULL;
		return -1;
	}
	memset(mt_sh, 0, sizeof(*mt_sh));
	mt_repaired = 0;
	if (extproc_start(&mt_proc, mt_sampler_entry, &args, MT_START_TIMEOUT_MS) != 0) {
		int e = errno;
		munmap(mt_sh, sizeof(*mt_sh));
		mt_sh = NULL;
		errno = e;
		return -1;
	}
	return 0;
}

/* After the sampler process was killed: resume every thread of ours that it may have left
 * suspended (Mach suspend counts outlive the task that took them). Returns how many. */
static uint64_t mt_repair_suspended(void)
{
	thread_act_array_t list = NULL;
	mach_msg_type_number_t n = 0;
	uint64_t fixed = 0;

	if (task_threads(mach_task_self(), &list, &n) != KERN_SUCCESS)
		return 0;
	for (mach_msg_type_number_t i = 0; i < n; i++) {
		thread_basic_info_data_t info;
		mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
		if (thread_info(list[i], THREAD_BASIC_INFO, (thread_info_t)&info, &count) ==
		    KERN_SUCCESS) {
			for (integer_t k = 0; k < info.suspend_count; k++)
				if (thread_resume(list[i]) == KERN_SUCCESS)
					fixed++;
		}
		mach_port_deallocate(mach_task_self(), list[i]);
	}
	mach_vm_deallocate(mach_task_self(), (mach_vm_address_t)(uintptr_t)list,
			   (mach_vm_size_t)n * sizeof(*list));
	return fixed;
}

/* Asks the sampler process to finish (EOF on the stop pipe), waits, kills it after
 * MT_EXIT_TIMEOUT_MS and then resumes whatever it left suspended. Collects its CPU time.
 * Returns 0, or -1 when it had to be killed or failed. */
static int mt_stop(void)
{
	int r = extproc_stop(&mt_proc, MT_EXIT_TIMEOUT_MS);

	if (r != 0)
		mt_repaired = mt_repair_suspended();
	if (r == 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (r == 2) {
		errno = EOWNERDEAD; /* the sampler process failed: its samples are partial */
		return -1;
	}
	return 0;
}

static int mt_stats(struct sb_stat *out, int max)
{
	if (!mt_sh)
		return 0;
	struct sb_stat all[] = {
		{ "ticks", (double)atomic_load(&mt_sh->ticks) },
		{ "samples", (double)atomic_load(&mt_sh->samples) },
		{ "threads_seen", (double)atomic_load(&mt_sh->threads_seen) },
		{ "threads_gone", (double)atomic_load(&mt_sh->threads_gone) },
		{ "suspend_failures", (double)atomic_load(&mt_sh->suspend_failures) },
		{ "state_failures", (double)atomic_load(&mt_sh->state_failures) },
		{ "resume_failures", (double)atomic_load(&mt_sh->resume_failures) },
		{ "walk_errors", (double)atomic_load(&mt_sh->walk_errors) },
		{ "sink_dropped", (double)atomic_load(&mt_sh->dropped) },
		{ "ticks_late", (double)atomic_load(&mt_sh->ticks_late) },
		{ "registrations_lost", (double)atomic_load(&mt_sh->regs.overflow) },
		{ "threads_repaired", (double)mt_repaired },
		{ "sampler_cpu_ns", mt_proc.cpu_ns },
		{ "sampler_exit_status", (double)mt_proc.exit_status },
	};
	int n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(all) && n < max; i++)
		out[n++] = all[i];
	return n;
}

const struct sampler sampler_mach_task = {
	.name = "mach-task",
	.description = "out-of-process: task_for_pid, thread_suspend, thread_get_state, "
		       "mach_vm_read walk, thread_resume (Darwin)",
	.clock = SB_CLOCK_WALL,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_EXTERNAL,
	.available = mt_available,
	.start = mt_start,
	.stop = mt_stop,
	.stats = mt_stats,
	.thread_start = mt_thread_start,
};
