/* test_core.c - the sampler core on Darwin: `mach` (in-process Mach thread calls) and
 * `mach-task` (out of process) on two spinning threads.
 *
 * `make darwin-check` compiles and LINKS this into a Mach-O executable for aarch64-macos
 * and x86_64-macos on Linux; it is RUN on a Mac (the macos-14 job of
 * .github/workflows/ci.yml, where `make check` runs it) and, on Linux, against the Mach
 * double as build/tests/darwin/test_core_double (make check; docs/darwin.md). Plain C, no cmocka (the cross SDK
 * has none). Exits 0 when every check passes, 1 otherwise; mach-task prints SKIP and
 * counts as passed when task_for_pid is refused (not root, no debugger entitlement).
 *
 * Checks, per sampler: samples were taken; every sample of a spinning thread names its
 * slot and its walk reaches spin_leaf(); no thread of the process is left suspended. */
#include <errno.h>
#include <mach/mach.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sample.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"

/* On Linux the Mach double stops a thread with a signal and reads the context its handler
 * gets. ThreadSanitizer defers that handler to the thread's next interceptor and hands it
 * the context saved when the signal arrived, whose stack has moved on: in a
 * SANITIZE=thread build of the double the walked stacks mean nothing, and the leaf check
 * is left out (the counts are still checked). */
#if defined(__linux__) && defined(__SANITIZE_THREAD__)
#define STOP_STACKS_DEFERRED 1
#else
#define STOP_STACKS_DEFERRED 0
#endif

#define NTHREADS 2
/* 0.8 s at 200 Hz: ~160 samples per thread, >= 10 wanted. On the Mach double (Linux)
 * each stop waits for the target to be scheduled, one thread at a time: with the VM
 * loaded by other processes a 0.3 s run fell to 3 samples a thread. */
#define RUN_NS 800000000ull

static _Atomic int stop_spinning;
static int failures;

#define CHECK(cond, ...)                                        \
	do {                                                    \
		if (!(cond)) {                                  \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);           \
			fputc('\n', stderr);                    \
			failures++;                             \
		}                                               \
	} while (0)

__attribute__((noinline)) static uint64_t spin_leaf(uint64_t x)
{
	while (!atomic_load_explicit(&stop_spinning, memory_order_relaxed))
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *spinner(void *arg)
{
	int slot = (int)(intptr_t)arg;
	volatile uint64_t sink;

	sb_thread_begin(slot);
	sink = spin_leaf((uint64_t)slot);
	(void)sink;
	sb_thread_end();
	return NULL;
}

/* Threads of this process whose Mach suspend count is not zero. */
static int suspended_threads(void)
{
	thread_act_array_t list;
	mach_msg_type_number_t n = 0;
	int bad = 0;

	if (task_threads(mach_task_self(), &list, &n) != KERN_SUCCESS)
		return -1;
	for (mach_msg_type_number_t i = 0; i < n; i++) {
		thread_basic_info_data_t info;
		mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
		if (thread_info(list[i], THREAD_BASIC_INFO, (thread_info_t)&info, &count) ==
			    KERN_SUCCESS &&
		    info.suspend_count > 0)
			bad++;
		mach_port_deallocate(mach_task_self(), list[i]);
	}
	vm_deallocate(mach_task_self(), (vm_address_t)list, n * sizeof(*list));
	return bad;
}

/* Does pc lie in spin_leaf? Its end is unknown: accept the first 512 bytes. */
static int in_spin_leaf(uint64_t pc)
{
	uint64_t lo = (uint64_t)(uintptr_t)&spin_leaf;
	return pc >= lo && pc < lo + 512;
}

/* Runs sampler name on NTHREADS spinners. Returns 0, 77 when the sampler is unavailable
 * or start() was refused with EPERM (mach-task without task_for_pid rights), 1 on
 * failure. */
static int run_one(const char *name)
{
	const struct sampler *s = sampler_find(name);
	struct sb_config cfg = { .hz = 200, .threads = NTHREADS, .duration_s = 0.8,
				 .max_depth = 64, .idle_skip = false };
	pthread_t th[NTHREADS];
	int before = failures;

	CHECK(s != NULL, "sampler %s not in the Darwin table", name);
	if (!s)
		return 1;
	struct sb_sink *sink = sink_create(100000, 1000000);
	CHECK(sink != NULL, "sink_create failed");
	if (!sink)
		return 1;
	char why[256];
	if (s->available && s->available(why, sizeof(why)) != 0) {
		sink_destroy(sink);
		printf("SKIP %s: %s\n", name, why);
		return 77;
	}
	atomic_store(&stop_spinning, 0);
	sb_active_sampler = s;
	if (s->start(&cfg, sink) != 0) {
		int e = errno;
		sink_destroy(sink);
		sb_active_sampler = NULL;
		if (e == EPERM) {
			printf("SKIP %s: start refused (%s)\n", name, strerror(e));
			return 77;
		}
		CHECK(0, "%s: start failed: %s", name, strerror(e));
		return 1;
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, spinner, (void *)(intptr_t)i);
	/* Resumed after EINTR: under the Mach double (Linux) every stop of this thread is a
	 * signal, which interrupts nanosleep; a Mach suspend interrupts nothing. */
	struct timespec ts = { (time_t)(RUN_NS / 1000000000ull), (long)(RUN_NS % 1000000000ull) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	atomic_store(&stop_spinning, 1);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	CHECK(s->stop() == 0, "%s: stop failed: %s", name, strerror(errno));
	sb_active_sampler = NULL;

	size_t n = sink_count(sink), per_slot[NTHREADS] = { 0 }, in_leaf = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sb_sample *x = &sink->samples[i];
		if (x->thread_index < 0 || x->thread_index >= NTHREADS || x->depth == 0)
			continue;
		per_slot[x->thread_index]++;
		for (uint32_t d = 0; d < x->depth; d++)
			if (in_spin_leaf(sink->frames[x->frame_offset + d])) {
				in_leaf++;
				break;
			}
	}
	for (int i = 0; i < NTHREADS; i++)
		CHECK(per_slot[i] >= 10, "%s: slot %d has %zu samples, want >= 10", name, i,
		      per_slot[i]);
	CHECK(STOP_STACKS_DEFERRED || in_leaf * 10 >= (per_slot[0] + per_slot[1]) * 9,
	      "%s: %zu of %zu slot samples reach spin_leaf, want >= 90%%", name, in_leaf,
	      per_slot[0] + per_slot[1]);
	CHECK(suspended_threads() == 0, "%s: a thread was left suspended", name);
	sink_destroy(sink);
	printf("%s %s: %zu samples, %zu + %zu on the spinners, %zu in spin_leaf\n",
	       failures == before ? "ok  " : "FAIL", name, n, per_slot[0], per_slot[1], in_leaf);
	return failures == before ? 0 : 1;
}

int main(void)
{
	int rc_mach = run_one("mach");
	int rc_task = run_one("mach-task");

	return rc_mach == 1 || rc_task == 1 ? 1 : 0;
}
