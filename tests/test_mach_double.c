/* test_mach_double.c - the Darwin backend's code run on Linux against the Mach double
 * (tests/machdouble): thread_ctl_darwin.c under the `mach` loop, and mach_task_darwin.c
 * (`mach-task`, its sampler process forked from this one), with the seeds' pitfalls
 * injected: calls failing at random or on their Nth use, a thread exiting between the
 * snapshot and the suspend, a failed thread_get_state, a failed mach_vm_read mid-walk, a
 * thread without stack bounds, a sampler process that hangs with a thread suspended.
 * After each, every suspend count is back to 0 and every send right and task_threads
 * array the sampler took is released (the double counts them). Last, `mach` on the
 * double samples balanced and churn at the rate and with the thread attribution of the
 * Linux backend (the sampbench binary, signal rendezvous). docs/darwin.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/run.h"
#include "harness/runner.h"
#include "sampler/registry.h"
#include "sampler/sampler.h"
#include "sampler/thread_ctl.h"
#include "sampler/threads.h"
#include "tests/machdouble/mach_double.h"
#include "tests/support/live_run.h"
#include "tests/support/sbrun.h"
#include "workloads/workload.h"

extern const struct sampler sampler_mach;
extern const struct sampler sampler_mach_task;

#define NW 3

static struct sb_sink *sink;
static _Atomic int stop_work;

struct worker {
	pthread_t t;
	int index;
	_Atomic pid_t tid;
	_Atomic uint64_t units;
	_Atomic int exited; /* left through md_exit_point() */
	struct sb_stack_bounds bounds;
};

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A sampler that leaves the main thread suspended (it is registered and sampled) would
 * hang the test instead of failing it. The rescuer, a thread no hook sees (never
 * sampled), resumes every suspended thread once it has found the main thread suspended
 * at 10 polls in a row, 50 ms apart (a sample holds it for microseconds); the test then
 * fails on `rescues` (counted from its start_workers()). */
static pid_t main_tid;
static _Atomic int rescues;
static _Atomic int rescuer_ready;
static int resume_leftovers(void);

/* Once rescuer_ready is set the rescuer only sleeps and reads the double's table: it
 * allocates nothing, except in a rescue, while the main thread (the only one that forks)
 * is suspended. setup() waits for that, because the runs fork a child that goes on
 * allocating, and ASan's allocator (unlike glibc's malloc) takes no lock around fork():
 * a child forked while the new thread's start-up allocated inherited its lock held and
 * hung in its first calloc. */
static void *rescuer(void *arg)
{
	int seen = 0;

	(void)arg;
	nap_ms(1);
	md_suspend_count(main_tid);
	atomic_store(&rescuer_ready, 1);
	for (;;) {
		nap_ms(50);
		seen = md_suspend_count(main_tid) > 0 ? seen + 1 : 0;
		if (seen >= 10) {
			atomic_fetch_add(&rescues, resume_leftovers());
			seen = 0;
		}
	}
	return NULL;
}

static int setup(void **state)
{
	pthread_t t;

	(void)state;
	sink = sink_create(1 << 16, 1 << 20);
	main_tid = sb_gettid();
	atomic_store(&rescuer_ready, 0);
	if (md_create_unhooked(&t, rescuer, NULL) != 0)
		return -1;
	pthread_detach(t);
	while (!atomic_load(&rescuer_ready))
		nap_ms(1);
	return sink ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sink_destroy(sink);
	return 0;
}

static double stat_of(const struct sampler *s, const char *name)
{
	struct sb_stat st[SB_MAX_STATS];
	int n = s->stats(st, SB_MAX_STATS);

	for (int i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			return st[i].value;
	fail_msg("no stat %s", name);
	return NAN;
}

static void start(const struct sampler *s, double hz)
{
	struct sb_config cfg = {
		.hz = hz, .threads = NW, .duration_s = 1, .max_depth = SB_MAX_FRAMES,
	};
	atomic_store(&sink->nsamples, 0);
	atomic_store(&sink->nframes, 0);
	atomic_store(&sink->dropped, 0);
	sb_active_sampler = s;
	assert_int_equal(s->start(&cfg, sink), 0);
}

static void exit_cleanup(void *arg)
{
	atomic_store(&((struct worker *)arg)->exited, 1);
}

/* A workload thread: announces itself (the sampler's thread_start hook), spins in its
 * slot's own leaf and leaves when the double asks it to (md_exit_before). */
static void *spin(void *arg)
{
	struct worker *w = arg;

	sb_thread_begin(w->index);
	sb_stack_bounds_self(&w->bounds);
	atomic_store(&w->tid, sb_gettid());
	pthread_cleanup_push(exit_cleanup, w);
	while (!atomic_load_explicit(&stop_work, memory_order_relaxed)) {
		wl_slot_work(w->index, 42, 2000);
		atomic_fetch_add_explicit(&w->units, 1, memory_order_relaxed);
		md_exit_point();
	}
	pthread_cleanup_pop(0);
	sb_thread_end();
	return NULL;
}

static void start_workers(struct worker *w, int n)
{
	atomic_store(&stop_work, 0);
	atomic_store(&rescues, 0);
	for (int i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].index = i;
		assert_int_equal(pthread_create(&w[i].t, NULL, spin, &w[i]), 0);
	}
	for (int i = 0; i < n; i++)
		while (atomic_load(&w[i].tid) == 0)
			nap_ms(1);
}

/* Resumes every thread of this process that is still suspended (as mach-task's repair
 * does), so that a failed test leaves no thread stopped. Returns the resumes needed. */
static int resume_leftovers(void)
{
	thread_act_array_t list;
	mach_msg_type_number_t n;
	int fixed = 0;

	if (task_threads(mach_task_self(), &list, &n) != KERN_SUCCESS)
		return -1;
	for (mach_msg_type_number_t i = 0; i < n; i++) {
		thread_basic_info_data_t info;
		mach_msg_type_number_t cnt = THREAD_BASIC_INFO_COUNT;
		if (thread_info(list[i], THREAD_BASIC_INFO, (thread_info_t)&info, &cnt) == KERN_SUCCESS)
			for (integer_t k = 0; k < info.suspend_count; k++)
				fixed += thread_resume(list[i]) == KERN_SUCCESS;
		mach_port_deallocate(mach_task_self(), list[i]);
	}
	mach_vm_deallocate(mach_task_self(), (mach_vm_address_t)(uintptr_t)list, n * sizeof(*list));
	return fixed;
}

/* After the sampler stopped: every live worker still runs (none left suspended), then
 * the workers are stopped and joined. Asserts after the joins, so a failure leaves no
 * thread behind. */
static void finish_workers(struct worker *w, int n)
{
	uint64_t before[NW], after[NW];
	int stuck_running = 0, leftovers;

	for (int i = 0; i < n; i++)
		before[i] = atomic_load(&w[i].units);
	nap_ms(30);
	for (int i = 0; i < n; i++) {
		after[i] = atomic_load(&w[i].units);
		stuck_running += !atomic_load(&w[i].exited) && after[i] == before[i];
	}
	leftovers = resume_leftovers();
	atomic_store(&stop_work, 1);
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_join(w[i].t, NULL), 0);
	sb_active_sampler = NULL;
	assert_int_equal(atomic_load(&rescues), 0);
	assert_int_equal(leftovers, 0);
	assert_int_equal(stuck_running, 0);
}

static uint64_t injected(enum md_call call)
{
	struct md_counts c;
	md_counts(&c);
	return c.injected[call];
}

/* The double itself: suspends nest, a suspended thread does not run, its state is the
 * stopped context (sp on its own stack), resume at count 0 fails, rights are counted. */
static void test_double_semantics(void **state)
{
	(void)state;
	struct worker w[1];
	struct sb_stack_bounds b;
	thread_act_t me = mach_thread_self(), port = MACH_PORT_NULL;
	thread_act_array_t list;
	mach_msg_type_number_t n, cnt;
	x86_thread_state64_t st;

	start_workers(w, 1);
	assert_int_equal(task_threads(mach_task_self(), &list, &n), KERN_SUCCESS);
	for (mach_msg_type_number_t i = 0; i < n; i++) {
		thread_identifier_info_data_t id;
		cnt = THREAD_IDENTIFIER_INFO_COUNT;
		assert_int_equal(thread_info(list[i], THREAD_IDENTIFIER_INFO, (thread_info_t)&id, &cnt),
				 KERN_SUCCESS);
		if ((pid_t)id.thread_id == atomic_load(&w[0].tid))
			port = list[i];
		else
			assert_int_equal(mach_port_deallocate(mach_task_self(), list[i]), KERN_SUCCESS);
	}
	assert_int_equal(mach_vm_deallocate(mach_task_self(), (mach_vm_address_t)(uintptr_t)list,
					    n * sizeof(*list)),
			 KERN_SUCCESS);
	assert_int_not_equal(port, MACH_PORT_NULL);
	b = w[0].bounds;

	cnt = x86_THREAD_STATE64_COUNT;
	assert_int_equal(thread_get_state(port, x86_THREAD_STATE64, (thread_state_t)&st, &cnt),
			 KERN_FAILURE); /* not suspended: refused by the double, counted */
	assert_int_equal(thread_suspend(port), KERN_SUCCESS);
	assert_int_equal(thread_suspend(port), KERN_SUCCESS);
	assert_int_equal(md_suspend_count(atomic_load(&w[0].tid)), 2);
	uint64_t u = atomic_load(&w[0].units);
	nap_ms(20);
	assert_int_equal(atomic_load(&w[0].units), u); /* really stopped */
	cnt = x86_THREAD_STATE64_COUNT;
	assert_int_equal(thread_get_state(port, x86_THREAD_STATE64, (thread_state_t)&st, &cnt),
			 KERN_SUCCESS);
	assert_int_equal(cnt, x86_THREAD_STATE64_COUNT);
	assert_int_equal(thread_resume(port), KERN_SUCCESS);
	nap_ms(20);
	assert_int_equal(atomic_load(&w[0].units), u); /* one suspend left */
	assert_int_equal(thread_resume(port), KERN_SUCCESS);
	assert_int_equal(thread_resume(port), KERN_FAILURE); /* count 0: refused, counted */
	assert_int_equal(md_suspend_count(atomic_load(&w[0].tid)), 0);
	/* Rights on one port add up under one name (the registry holds one too). */
	int64_t held = md_rights_held_here();
	assert_int_equal(mach_port_deallocate(mach_task_self(), port), KERN_SUCCESS);
	assert_int_equal(md_rights_held_here(), held - 1);
	assert_int_equal(mach_port_deallocate(mach_task_self(), me), KERN_SUCCESS);
	/* No sampler ran yet, so the registry holds no right on this (main) thread. */
	assert_int_equal(thread_info(me, THREAD_BASIC_INFO, (thread_info_t)&st, &cnt),
			 MACH_SEND_INVALID_DEST); /* no right left on our own port */
	finish_workers(w, 1);
	/* The stopped context: pc in the worker's slot code or below it, sp on its stack. */
	assert_true(st.__rsp >= b.lo && st.__rsp < b.hi);
	assert_true(st.__rip != 0);

	struct md_counts c;
	md_counts(&c);
	assert_int_equal(c.misuse, 3); /* the state of a running thread, the resume at 0, a
					* name with no right */
	assert_int_equal(c.suspended, 0);
	assert_int_equal(c.rights, md_rights_held_here());
}

/* thread_ctl.h's contract on Darwin, called directly: a synchronous stop (tc_poll parks
 * at once), the state of the thread that parked only, an exited thread TC_GONE, and the
 * rendezvous parts answering "nothing to wait for" without blocking. The registry's
 * introspection hook chains to the one installed before it. */
static void test_thread_ctl_contract(void **state)
{
	(void)state;
	struct worker w[1];
	struct reg_snap snap[REG_CAP];
	struct tc_target t = { 0 };
	struct sb_regs regs;
	struct md_counts c0, c;
	uint64_t parked_ns = 0, ns;

	md_counts(&c0);
	start_workers(w, 1);
	pid_t tid = atomic_load(&w[0].tid);
	int n = registry_snapshot(snap, REG_CAP);
	for (int i = 0; i < n; i++)
		if (snap[i].tid == tid) {
			t.park = snap[i].park;
			t.tid = tid;
			t.ident = snap[i].gen;
		}
	assert_non_null(t.park); /* registered by the hook, from the thread itself */

	assert_int_equal(tc_request(&t), TC_PENDING);
	assert_int_equal(tc_rearm(&t), TC_PENDING);
	assert_int_equal(tc_poll(&t), TC_PARKED);
	assert_int_equal(md_suspend_count(tid), 1);
	assert_int_equal(tc_get_state(&t, &regs, &parked_ns), 0);
	assert_true(parked_ns >= t.req_ns);
	assert_true(regs.sp >= w[0].bounds.lo && regs.sp < w[0].bounds.hi);
	t.ident++; /* the entry now names another thread (tid reused) */
	assert_int_equal(tc_get_state(&t, &regs, &parked_ns), -1);
	t.ident--;
	assert_int_equal(tc_cpu_ns(t.park, tid, &ns), 0);
	assert_int_equal(tc_cpu_after(t.park, t.req, &ns), -1);
	assert_int_equal(tc_park_cpu(t.park), -1);
	assert_int_equal(tc_last_park_ns(), 0);
	tc_resume(&t);
	assert_int_equal(md_suspend_count(tid), 0);
	assert_int_equal(tc_cancel(&t), TC_TIMEOUT);

	/* Nothing is pending on Darwin: the waits return at once. */
	uint64_t t0 = sb_now_ns();
	tc_wait(tc_doorbell(), t0 + 1000000000ull);
	tc_wait_spin(tc_doorbell(), t0 + 1000000000ull, 1);
	assert_true(sb_now_ns() - t0 < 100000000ull);
	tc_set_spin_ns(50000);
	assert_int_equal(tc_spin_ns(), 0);
	assert_int_equal(tc_signo(), 0);
	assert_int_equal(tc_peek_open(tid), -1);
	assert_int_equal(tc_peek(-1, &w[0].bounds, 0, &regs), -1);
	assert_int_equal(tc_pc_at_syscall(regs.pc), 0);

	/* The thread exits: its port is a dead name, the stop says TC_GONE. */
	md_exit_before(MD_THREAD_SUSPEND, tid);
	assert_int_equal(tc_poll(&t), TC_GONE);
	assert_int_equal(tc_cpu_ns(t.park, tid, &ns), -1);
	md_faults_clear();
	finish_workers(w, 1);
	md_counts(&c);
	assert_int_equal(c.exits_injected - c0.exits_injected, 1);
	assert_int_equal(c.hook_starts - c0.hook_starts, 1);
	assert_int_equal(c.hook_terminates - c0.hook_terminates, 1);
}

/* Counts misuse from here on as a failure: the previous test made three on purpose. */
static int64_t misuse_base;
static void misuse_mark(void)
{
	struct md_counts c;
	md_counts(&c);
	misuse_base = c.misuse;
}

/* No thread suspended, no misuse of the API since misuse_mark(), and every send right on
 * our threads held by this process itself: a sampler process released all it took, a
 * task_threads array each, and no port collects rights tick after tick. */
static void assert_released_since_mark(void)
{
	struct md_counts c;

	md_counts(&c);
	print_message("double: suspended %lld misuse %lld rights %lld (here %lld, max/port "
		      "%lld) lists %lld dead_suspended %lld exits %llu lost %llu\n",
		      (long long)c.suspended, (long long)(c.misuse - misuse_base),
		      (long long)c.rights, (long long)md_rights_held_here(),
		      (long long)c.max_rights, (long long)c.lists, (long long)c.dead_suspended,
		      (unsigned long long)c.exits_injected, (unsigned long long)c.lost);
	assert_int_equal(c.suspended, 0);
	assert_int_equal(c.dead_suspended, 0);
	assert_int_equal(c.misuse - misuse_base, 0);
	assert_int_equal(c.lists, 0);
	assert_int_equal(c.rights, md_rights_held_here());
	assert_true(c.max_rights <= 1);
	assert_int_equal(c.lost, 0);
}

/* `mach` over thread_ctl_darwin.c with random failures of thread_suspend (a thread gone,
 * a dead name, a plain failure), thread_get_state and thread_info: every failure skips a
 * thread for one tick and the rest is sampled; afterwards nothing is suspended. */
static void test_mach_random_faults(void **state)
{
	(void)state;
	struct worker w[NW];

	misuse_mark();
	start_workers(w, NW);
	md_fail_random(MD_THREAD_SUSPEND, 100000, KERN_TERMINATED, 11);
	md_fail_random(MD_THREAD_GET_STATE, 100000, KERN_FAILURE, 12);
	md_fail_random(MD_THREAD_INFO, 50000, KERN_TERMINATED, 13);
	uint64_t inj0 = injected(MD_THREAD_SUSPEND) + injected(MD_THREAD_GET_STATE) +
			injected(MD_THREAD_INFO);
	start(&sampler_mach, 500);
	nap_ms(300);
	md_fail_random(MD_THREAD_SUSPEND, 100000, MACH_SEND_INVALID_DEST, 14);
	nap_ms(200);
	assert_int_equal(sampler_mach.stop(), 0);
	md_faults_clear();
	uint64_t inj = injected(MD_THREAD_SUSPEND) + injected(MD_THREAD_GET_STATE) +
		       injected(MD_THREAD_INFO) - inj0;
	double skipped = stat_of(&sampler_mach, "threads_skipped");
	double samples = stat_of(&sampler_mach, "samples_captured");
	print_message("mach random faults: injected %llu, skipped %.0f, samples %.0f, ticks %.0f, "
		      "timeouts %.0f\n",
		      (unsigned long long)inj, skipped, samples, stat_of(&sampler_mach, "ticks_done"),
		      stat_of(&sampler_mach, "timeouts"));
	finish_workers(w, NW);
	assert_true(inj >= 10);
	assert_true(skipped >= (double)inj); /* each failure skipped one thread */
	assert_true(samples >= 50);
	assert_int_equal(stat_of(&sampler_mach, "timeouts"), 0);
	/* every thread a tick took on ends as a sample, a drop or a skip */
	assert_true(stat_of(&sampler_mach, "targets") ==
		    samples + stat_of(&sampler_mach, "samples_dropped") + skipped);
	assert_released_since_mark();
}

/* A thread that exits between the snapshot and its thread_suspend: skipped (the call
 * says KERN_TERMINATED), counted, the run goes on sampling the others, nothing hangs. */
static void test_mach_exit_before_suspend(void **state)
{
	(void)state;
	struct worker w[NW];

	misuse_mark();
	start_workers(w, NW);
	start(&sampler_mach, 500);
	nap_ms(100);
	double skipped0 = stat_of(&sampler_mach, "threads_skipped");
	struct md_counts c0;
	md_counts(&c0);
	md_exit_before(MD_THREAD_SUSPEND, atomic_load(&w[1].tid));
	nap_ms(200);
	assert_int_equal(sampler_mach.stop(), 0);
	md_faults_clear();
	struct md_counts c;
	md_counts(&c);
	int exited = 0;
	for (int i = 0; i < NW; i++)
		exited += atomic_load(&w[i].exited);
	double skipped = stat_of(&sampler_mach, "threads_skipped") - skipped0;
	print_message("exit before suspend: exited %d, skipped %.0f, samples %.0f\n", exited,
		      skipped, stat_of(&sampler_mach, "samples_captured"));
	finish_workers(w, NW);
	assert_int_equal(exited, 1);
	assert_int_equal(c.exits_injected - c0.exits_injected, 1);
	assert_true(skipped >= 1);
	assert_int_equal(stat_of(&sampler_mach, "timeouts"), 0);
	assert_released_since_mark();
}

/* A failed thread_get_state: the thread is still resumed (mach: tc_resume after every
 * parked target). */
static void test_mach_state_failure_resumes(void **state)
{
	(void)state;
	struct worker w[1];

	misuse_mark();
	start_workers(w, 1);
	md_fail_nth(MD_THREAD_GET_STATE, 2, KERN_FAILURE);
	start(&sampler_mach, 200);
	nap_ms(100);
	assert_int_equal(sampler_mach.stop(), 0);
	md_faults_clear();
	print_message("state failure: skipped %.0f, samples %.0f\n",
		      stat_of(&sampler_mach, "threads_skipped"),
		      stat_of(&sampler_mach, "samples_captured"));
	finish_workers(w, 1);
	assert_true(stat_of(&sampler_mach, "threads_skipped") >= 1);
	assert_released_since_mark();
}

/* A thread whose stack bounds are unknown (pthread_get_stackaddr_np NULL): walked safely,
 * its samples hold the pc and no frame read outside a stack. */
static void test_mach_unknown_bounds(void **state)
{
	(void)state;
	struct worker w[NW];

	misuse_mark();
	md_unknown_bounds_next(1);
	start_workers(w, NW); /* worker 0 has no bounds */
	start(&sampler_mach, 200);
	nap_ms(200);
	assert_int_equal(sampler_mach.stop(), 0);
	finish_workers(w, NW);
	size_t n = sink_count(sink), mine = 0, leaf_ok = 0, others = 0, others_deep = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sb_sample *s = &sink->samples[i];
		if (s->thread_index == 0) {
			mine++;
			assert_int_equal(s->depth, 1);
			assert_true(s->flags & SB_SAMPLE_WALK_ERROR);
			/* its pc is its own: mostly in its slot's leaf (else the loop around) */
			leaf_ok += wl_slot_of_pc(sink->frames[s->frame_offset]) == 0;
		} else if (s->thread_index > 0) {
			others++;
			others_deep += s->depth > 1;
		}
	}
	print_message("unknown bounds: %zu samples of it, %zu of others (%zu deeper than 1)\n",
		      mine, others, others_deep);
	assert_true(mine >= 5);
	assert_true(leaf_ok * 2 >= mine);
	assert_true(others_deep * 2 >= others);
	assert_released_since_mark();
}

/* A forked child inherits the registry with its park blocks, whose ports are names of
 * the parent's IPC space: meaningless in the child, or another thread's there. The
 * child's threads must register and be sampled without releasing a right they do not
 * hold (the double counts that as misuse) or losing one (a skipped thread). */
static void test_mach_after_fork(void **state)
{
	(void)state;
	struct worker w[NW];
	int status = -1;

	/* Registry entries with ports in this process first (the earlier tests made some,
	 * this makes sure). */
	start_workers(w, NW);
	start(&sampler_mach, 200);
	nap_ms(30);
	assert_int_equal(sampler_mach.stop(), 0);
	finish_workers(w, NW);
	registry_compact();

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct md_counts c;
		int code = 0;
		start_workers(w, NW);
		start(&sampler_mach, 500);
		nap_ms(200);
		code |= sampler_mach.stop() != 0;
		double skipped = stat_of(&sampler_mach, "threads_skipped");
		atomic_store(&stop_work, 1);
		for (int i = 0; i < NW; i++)
			pthread_join(w[i].t, NULL);
		md_counts(&c);
		fprintf(stderr, "fork child: misuse %lld, skipped %.0f, samples %.0f\n",
			(long long)c.misuse, skipped, stat_of(&sampler_mach, "samples_captured"));
		code |= (c.misuse != 0) << 1;
		code |= (skipped != 0) << 2;
		code |= (c.suspended != 0) << 3;
		_exit(code);
	}
	for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 10) {
		if (waited > 20000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("the forked child hung (a thread left suspended?)");
		}
		nap_ms(10);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- mach-task: the sampler process forked from this one samples our workers ---- */

static void mt_run(struct worker *w, int n, double hz, long ms)
{
	start(&sampler_mach_task, hz);
	start_workers(w, n);
	nap_ms(ms);
}

/* Random failures of every call mach-task makes on our threads, from its own process:
 * no thread left suspended, every right and array it took released. */
static void test_task_random_faults(void **state)
{
	(void)state;
	struct worker w[NW];

	misuse_mark();
	md_fail_random(MD_THREAD_SUSPEND, 80000, KERN_FAILURE, 21);
	md_fail_random(MD_THREAD_GET_STATE, 80000, KERN_FAILURE, 22);
	md_fail_random(MD_THREAD_INFO, 50000, KERN_TERMINATED, 23);
	md_fail_random(MD_VM_READ, 20000, KERN_INVALID_ADDRESS, 24);
	md_fail_random(MD_TASK_THREADS, 50000, KERN_FAILURE, 25);
	mt_run(w, NW, 300, 500);
	assert_int_equal(sampler_mach_task.stop(), 0);
	md_faults_clear();
	struct md_counts c;
	md_counts(&c);
	print_message("mach-task random faults: injected suspend %llu state %llu info %llu read "
		      "%llu threads %llu; samples %.0f suspend_failures %.0f state_failures %.0f "
		      "walk_errors %.0f ticks %.0f\n",
		      (unsigned long long)c.injected[MD_THREAD_SUSPEND],
		      (unsigned long long)c.injected[MD_THREAD_GET_STATE],
		      (unsigned long long)c.injected[MD_THREAD_INFO],
		      (unsigned long long)c.injected[MD_VM_READ],
		      (unsigned long long)c.injected[MD_TASK_THREADS],
		      stat_of(&sampler_mach_task, "samples"),
		      stat_of(&sampler_mach_task, "suspend_failures"),
		      stat_of(&sampler_mach_task, "state_failures"),
		      stat_of(&sampler_mach_task, "walk_errors"), stat_of(&sampler_mach_task, "ticks"));
	finish_workers(w, NW);
	assert_true(stat_of(&sampler_mach_task, "samples") >= 50);
	assert_true(stat_of(&sampler_mach_task, "suspend_failures") >= 1);
	assert_true(stat_of(&sampler_mach_task, "threads_gone") >= 1); /* thread_info failed */
	assert_true(stat_of(&sampler_mach_task, "state_failures") >= 1);
	assert_int_equal(stat_of(&sampler_mach_task, "resume_failures"), 0);
	assert_int_equal(stat_of(&sampler_mach_task, "sampler_exit_status"), 0);
	assert_released_since_mark();
}

/* A thread that exits between the snapshot (task_threads) and a call on it: skipped and
 * counted as gone (threads_gone), not a suspend, state or walk failure; the others are
 * sampled on. before: the call it exits just before. */
static void task_exit_before(enum md_call before)
{
	struct worker w[NW];

	misuse_mark();
	mt_run(w, NW, 300, 100);
	md_exit_before(before, atomic_load(&w[1].tid));
	nap_ms(200);
	double samples_mid = stat_of(&sampler_mach_task, "samples");
	nap_ms(100);
	assert_int_equal(sampler_mach_task.stop(), 0);
	md_faults_clear();
	int exited = 0;
	for (int i = 0; i < NW; i++)
		exited += atomic_load(&w[i].exited);
	print_message("mach-task exit: exited %d, threads_gone %.0f, suspend_failures %.0f, "
		      "samples %.0f -> %.0f\n",
		      exited, stat_of(&sampler_mach_task, "threads_gone"),
		      stat_of(&sampler_mach_task, "suspend_failures"), samples_mid,
		      stat_of(&sampler_mach_task, "samples"));
	finish_workers(w, NW);
	assert_int_equal(exited, 1);
	assert_int_equal(stat_of(&sampler_mach_task, "threads_gone"), 1);
	assert_int_equal(stat_of(&sampler_mach_task, "suspend_failures"), 0);
	assert_int_equal(stat_of(&sampler_mach_task, "state_failures"), 0);
	assert_int_equal(stat_of(&sampler_mach_task, "walk_errors"), 0);
	assert_true(stat_of(&sampler_mach_task, "samples") > samples_mid);
	assert_released_since_mark();
}

static void test_task_exit_before_suspend(void **state)
{
	(void)state;
	task_exit_before(MD_THREAD_SUSPEND);
}

/* thread_info is the first call on a listed thread (its id, then its CPU time). */
static void test_task_exit_before_info(void **state)
{
	(void)state;
	task_exit_before(MD_THREAD_INFO);
}

/* A failed thread_get_state: counted, and the thread is resumed all the same. */
static void test_task_state_failure_resumes(void **state)
{
	(void)state;
	struct worker w[1];

	misuse_mark();
	mt_run(w, 1, 200, 50);
	md_fail_nth(MD_THREAD_GET_STATE, 2, KERN_FAILURE);
	nap_ms(100);
	assert_int_equal(sampler_mach_task.stop(), 0);
	md_faults_clear();
	finish_workers(w, 1);
	assert_int_equal(stat_of(&sampler_mach_task, "state_failures"), 1);
	assert_true(stat_of(&sampler_mach_task, "samples") >= 5);
	assert_released_since_mark();
}

/* mach_vm_read failing mid-walk ends that walk: one sample flagged WALK_ERROR, its frames
 * those read before the failure; the thread is resumed. */
static void test_task_read_failure_ends_walk(void **state)
{
	(void)state;
	struct worker w[1];

	misuse_mark();
	mt_run(w, 1, 200, 100);
	double errors0 = stat_of(&sampler_mach_task, "walk_errors");
	md_fail_nth(MD_VM_READ, 2, KERN_INVALID_ADDRESS);
	nap_ms(100);
	assert_int_equal(sampler_mach_task.stop(), 0);
	md_faults_clear();
	finish_workers(w, 1);
	size_t n = sink_count(sink), flagged = 0, depth = 0;
	for (size_t i = 0; i < n; i++)
		if (sink->samples[i].flags & SB_SAMPLE_WALK_ERROR) {
			flagged++;
			depth = sink->samples[i].depth;
		}
	print_message("read failure: walk_errors %.0f -> %.0f, flagged %zu (depth %zu) of %zu\n",
		      errors0, stat_of(&sampler_mach_task, "walk_errors"), flagged, depth, n);
	assert_int_equal(errors0, 0);
	assert_int_equal(stat_of(&sampler_mach_task, "walk_errors"), 1);
	assert_int_equal(flagged, 1);
	assert_true(depth >= 1 && depth <= 2); /* the pc, and at most the frame read before */
	assert_released_since_mark();
}

/* mach-task with a thread of unknown stack bounds: its walk stops at the first frame. */
static void test_task_unknown_bounds(void **state)
{
	(void)state;
	struct worker w[2];

	misuse_mark();
	md_unknown_bounds_next(1);
	mt_run(w, 2, 200, 200);
	assert_int_equal(sampler_mach_task.stop(), 0);
	finish_workers(w, 2);
	size_t n = sink_count(sink), mine = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sb_sample *s = &sink->samples[i];
		if (s->thread_index != 0)
			continue;
		mine++;
		assert_int_equal(s->depth, 1);
		assert_true(s->flags & SB_SAMPLE_WALK_ERROR);
	}
	assert_true(mine >= 5);
	assert_released_since_mark();
}

/* The sampler process hangs with a thread suspended (samply #869): stop() kills it after
 * its timeout and resumes the thread itself (threads_repaired). */
static void test_task_hung_sampler_repaired(void **state)
{
	(void)state;
	struct worker w[1];

	misuse_mark();
	mt_run(w, 1, 200, 50);
	md_hang_nth(MD_THREAD_GET_STATE, 2);
	nap_ms(100);
	assert_int_equal(md_suspend_count(atomic_load(&w[0].tid)), 1);
	assert_int_equal(sampler_mach_task.stop(), -1);
	assert_int_equal(errno, ETIMEDOUT);
	md_faults_clear();
	print_message("hung sampler: repaired %.0f, exit status %.0f\n",
		      stat_of(&sampler_mach_task, "threads_repaired"),
		      stat_of(&sampler_mach_task, "sampler_exit_status"));
	finish_workers(w, 1);
	assert_int_equal(stat_of(&sampler_mach_task, "threads_repaired"), 1);
	struct md_counts c;
	md_counts(&c);
	assert_int_equal(c.suspended, 0);
	assert_int_equal(c.misuse - misuse_base, 0);
}

/* task_for_pid refused: available() says why, start() fails with EPERM. */
static void test_task_refused(void **state)
{
	(void)state;
	char why[128] = "";
	struct sb_config cfg = { .hz = 100, .threads = 1, .duration_s = 1 };

	md_fail_nth(MD_TASK_FOR_PID, 1, KERN_FAILURE);
	assert_int_equal(sampler_mach_task.available(why, sizeof(why)), -1);
	assert_non_null(strstr(why, "task_for_pid refused"));
	assert_int_equal(sampler_mach_task.available(why, sizeof(why)), 0);
	md_fail_nth(MD_TASK_FOR_PID, 1, KERN_FAILURE);
	assert_int_equal(sampler_mach_task.start(&cfg, sink), -1);
	assert_int_equal(errno, EPERM);
	cfg.hz = 0;
	assert_int_equal(sampler_mach_task.start(&cfg, sink), -1);
	assert_int_equal(errno, EINVAL);
	md_faults_clear();
}

/* ---- `mach` on the double against `mach` on Linux, through the runner ---- */

struct rates {
	double rate, tvd;
};

/* The Linux backend: the sampbench binary (signal rendezvous), its per-run line. */
static struct rates linux_run(const char *workload)
{
	char bin[512], out[4096], path[] = "/tmp/sb_mach_double_XXXXXX";
	const char *b = getenv("BUILD");
	struct rates r = { NAN, NAN };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	int rc = sbrun(bin, ARGS("run", "-s", "mach", "-w", workload, "-t", "2", "-z", "100", "-d",
				 "1", "--no-rt", "-f", "-o", path),
		       out, sizeof(out), NULL, 0);
	unlink(path);
	assert_int_equal(rc, 0);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char status[16];
		if (sscanf(line, "mach %*s %*d %*f %*d %15s %*u %lf %lf", status, &r.rate, &r.tvd) == 3)
			assert_true(!strcmp(status, "ok") || !strcmp(status, "lossy"));
	}
	return r;
}

static struct rates double_run(const char *workload)
{
	struct run_spec spec = {
		.sampler = &sampler_mach,
		.workload = workload_find(workload),
		.threads = 2,
		.hz = 100,
		.duration_s = 1,
		.seed = 1,
	};
	static struct sb_run run; /* static: free_live_run() frees its contents if an assert fails */

	assert_non_null(spec.workload);
	memset(&run, 0, sizeof(run));
	live_run = &run;
	assert_int_equal(runner_run(&spec, 0, live_run), 0);
	if (live_run->status != SB_RUN_OK)
		print_message("run not ok: %s\n", live_run->reason);
	assert_true(run_scored(live_run->status)); /* lossy on a loaded host: rates compared */
	struct rates r = { live_run->metrics.rate_accuracy, live_run->metrics.thread_tvd };
	print_message("  double %s: misattributed %.3f, stack_correct %.3f, skipped %.0f, ticks "
		      "%.0f/%.0f, suspend window p50 %.0f us p99 %.0f us\n",
		      workload, live_run->metrics.misattributed_fraction,
		      live_run->metrics.stack_correct_fraction,
		      run_stat(live_run, "threads_skipped"), run_stat(live_run, "ticks_done"),
		      run_stat(live_run, "ticks_planned"),
		      live_run->metrics.suspend_window_p50_ns / 1e3,
		      live_run->metrics.suspend_window_p99_ns / 1e3);
	assert_true(live_run->metrics.misattributed_fraction < 0.05);
	run_free(live_run);
	live_run = NULL;
	return r;
}

/* Within bounds that are wide for a shared 2-core VM: a Darwin thread_ctl that skipped
 * threads or charged samples to the wrong thread moves these by far more. */
static int alike(struct rates d, struct rates l)
{
	return fabs(d.rate - l.rate) <= 0.25 && d.rate >= 0.6 && d.rate <= 1.3 &&
	       fabs(d.tvd - l.tvd) <= 0.1;
}

/* Two tries: the other processes on this VM can starve one run of either backend (seen:
 * a Linux churn run at rate 0.20 between runs at 0.90). */
static void compare(const char *workload)
{
	int ok = 0;

	for (int attempt = 0; attempt < 2 && !ok; attempt++) {
		struct rates d = double_run(workload), l = linux_run(workload);
		print_message("%s: rate_accuracy double %.3f linux %.3f, thread_tvd double %.3f "
			      "linux %.3f\n",
			      workload, d.rate, l.rate, d.tvd, l.tvd);
		ok = alike(d, l);
	}
	assert_true(ok);
}

static void test_balanced_like_linux(void **state)
{
	(void)state;
	compare("balanced");
}

static void test_churn_like_linux(void **state)
{
	(void)state;
	compare("churn");
}

/* ThreadSanitizer cannot run the double: it refuses to start threads in a child forked
 * from a threaded process (die_after_fork: the fork tests, and the Linux comparison's
 * runs), it hands a signal handler a stale context (the double suspends threads with a
 * signal, so their walks end in errors), and the double's emulated Mach calls share state
 * without the happens-before a kernel gives. The plain and ASan/UBSan builds run every
 * test; under TSan each one is skipped, named, with this reason. */
#ifdef __SANITIZE_THREAD__
#define UNDER_TSAN 1
#else
#define UNDER_TSAN 0
#endif
#define OR_SKIP(f)                                                                        \
	static void f##_or_skip(void **state)                                             \
	{                                                                                 \
		if (UNDER_TSAN) {                                                         \
			print_message("skipped under ThreadSanitizer: the Mach double forks " \
				      "with threads and suspends with signals\n");         \
			skip();                                                           \
		}                                                                         \
		f(state);                                                                 \
	}
OR_SKIP(test_double_semantics)
OR_SKIP(test_thread_ctl_contract)
OR_SKIP(test_mach_random_faults)
OR_SKIP(test_mach_exit_before_suspend)
OR_SKIP(test_mach_state_failure_resumes)
OR_SKIP(test_mach_unknown_bounds)
OR_SKIP(test_mach_after_fork)
OR_SKIP(test_task_random_faults)
OR_SKIP(test_task_exit_before_suspend)
OR_SKIP(test_task_exit_before_info)
OR_SKIP(test_task_state_failure_resumes)
OR_SKIP(test_task_read_failure_ends_walk)
OR_SKIP(test_task_unknown_bounds)
OR_SKIP(test_task_hung_sampler_repaired)
OR_SKIP(test_task_refused)
OR_SKIP(test_balanced_like_linux)
OR_SKIP(test_churn_like_linux)

/* A test entry under its own name, its body the skip-aware wrapper. */
#define T(f, teardown) { #f, f##_or_skip, NULL, teardown, NULL }

/* SB_MACHDOUBLE_PART=semantics runs the tests whose assertions hold on a loaded CPU (make
 * check's parallel lane, tests/machdouble/semantics.sh), =rates the two that compare rates
 * with Linux's mach and must run alone (tests/machdouble/rates.sh); unset, both. */
int main(void)
{
	const struct CMUnitTest semantics[] = {
		T(test_double_semantics, NULL),
		T(test_thread_ctl_contract, NULL),
		T(test_mach_random_faults, NULL),
		T(test_mach_exit_before_suspend, NULL),
		T(test_mach_state_failure_resumes, NULL),
		T(test_mach_unknown_bounds, NULL),
		T(test_mach_after_fork, NULL),
		T(test_task_random_faults, NULL),
		T(test_task_exit_before_suspend, NULL),
		T(test_task_exit_before_info, NULL),
		T(test_task_state_failure_resumes, NULL),
		T(test_task_read_failure_ends_walk, NULL),
		T(test_task_unknown_bounds, NULL),
		T(test_task_hung_sampler_repaired, NULL),
		T(test_task_refused, NULL),
	};
	const struct CMUnitTest rates[] = {
		T(test_balanced_like_linux, free_live_run),
		T(test_churn_like_linux, free_live_run),
	};
	const char *part = getenv("SB_MACHDOUBLE_PART");
	int failed = 0;

	if (!part || strcmp(part, "rates"))
		failed += cmocka_run_group_tests_name("semantics", semantics, setup, teardown);
	if (!part || strcmp(part, "semantics"))
		failed += cmocka_run_group_tests_name("rates", rates, setup, teardown);
	return failed;
}
