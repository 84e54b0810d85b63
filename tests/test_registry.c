/* test_registry.c - sampler/registry.c: registration through the pthread_create wrapper,
 * exit by return and by pthread_exit, compaction, freeing one entry, and lock-free snapshots while threads
 * churn (run under SANITIZE=thread and SANITIZE=address,undefined too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "sampler/registry.h"
#include "sampler/threads.h"

#define CHURN_THREADS 8
#define CHURN_CYCLES 10000

static struct reg_snap snap[REG_CAP];

/* Snapshot entry of tid, or NULL. */
static const struct reg_snap *find_tid(int n, pid_t tid)
{
	for (int i = 0; i < n; i++)
		if (snap[i].tid == tid)
			return &snap[i];
	return NULL;
}

struct gate {
	_Atomic pid_t tid;
	_Atomic int release;
	int use_exit;
};

static void *gated(void *arg)
{
	struct gate *g = arg;

	atomic_store(&g->tid, sb_gettid());
	while (!atomic_load(&g->release))
		usleep(1000);
	if (g->use_exit)
		pthread_exit(NULL);
	return NULL;
}

static void check_lifecycle(int use_exit)
{
	struct gate g = { .use_exit = use_exit };
	pthread_t t;
	int n;

	assert_int_equal(pthread_create(&t, NULL, gated, &g), 0);
	while (atomic_load(&g.tid) == 0)
		usleep(100);

	/* Registered by the wrapper, from the thread itself, with its own stack bounds. */
	n = registry_snapshot(snap, REG_CAP);
	const struct reg_snap *e = find_tid(n, atomic_load(&g.tid));
	assert_non_null(e);
	assert_true(e->bounds.lo != 0 && e->bounds.lo < e->bounds.hi);
	assert_true(pthread_equal(e->pthread, t));
	assert_int_equal(e->slot, -1);
	assert_non_null(e->park);
	/* The test thread's own stack is not the new thread's. */
	uintptr_t here = (uintptr_t)&n;
	assert_false(here >= e->bounds.lo && here < e->bounds.hi);

	atomic_store(&g.release, 1);
	assert_int_equal(pthread_join(t, NULL), 0);

	/* Exit marked it dead: gone from snapshots, still there until compaction. */
	n = registry_snapshot(snap, REG_CAP);
	assert_null(find_tid(n, atomic_load(&g.tid)));
	assert_true(registry_dead() >= 1);
	assert_true(registry_compact() >= 1);
	assert_int_equal(registry_dead(), 0);
}

/* registry_free frees one entry, and only a dead one: a sampler that read a thread's exit
 * in the change log frees its entry without scanning them all. */
static void test_free_one(void **state)
{
	(void)state;
	struct gate g = { 0 };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, gated, &g), 0);
	while (atomic_load(&g.tid) == 0)
		usleep(100);
	int n = registry_snapshot(snap, REG_CAP);
	const struct reg_snap *e = find_tid(n, atomic_load(&g.tid));
	assert_non_null(e);
	uint32_t idx = e->idx;
	int live = registry_live(), dead = registry_dead(); /* earlier tests' left */

	assert_int_equal(registry_free(idx), 0); /* live: kept */
	assert_int_equal(registry_live(), live);
	atomic_store(&g.release, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(registry_dead(), dead + 1);
	assert_int_equal(registry_free(idx), 1);
	assert_int_equal(registry_dead(), dead);
	assert_int_equal(registry_free(idx), 0); /* free already */
}

/* 1 when idx[0..n) holds entry i. */
static int logged(const uint32_t *idx, int n, uint32_t i)
{
	for (int k = 0; k < n; k++)
		if (idx[k] == i)
			return 1;
	return 0;
}

/* The change log names a thread's entry when it registers and when it exits, and only
 * then: a sampler that follows it (mach) sees every thread without a snapshot a tick. */
static void test_change_log(void **state)
{
	static uint32_t idx[REG_LOG];
	struct gate g = { 0 };
	pthread_t t;
	uint64_t cursor = registry_epoch();
	struct reg_snap e;

	(void)state;
	assert_int_equal(registry_changes(&cursor, idx, REG_LOG), 0);
	assert_int_equal(pthread_create(&t, NULL, gated, &g), 0);
	while (atomic_load(&g.tid) == 0)
		usleep(100);
	int n = registry_changes(&cursor, idx, REG_LOG);
	assert_true(n >= 1);
	int k = n - 1; /* its registration, the latest change */
	assert_int_equal(registry_read(idx[k], &e), 1);
	assert_int_equal(e.tid, atomic_load(&g.tid));
	uint32_t mine = idx[k];
	assert_int_equal(registry_changes(&cursor, idx, REG_LOG), 0); /* nothing new */

	atomic_store(&g.release, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	n = registry_changes(&cursor, idx, REG_LOG);
	assert_true(logged(idx, n, mine)); /* its exit */
	assert_int_equal(registry_read(mine, &e), 0);

	/* More changes than the log keeps: the reader is told to take a snapshot. */
	assert_int_equal(registry_add_self(), 0);
	uint64_t old = registry_epoch();
	for (int i = 0; i < REG_LOG + 1; i++)
		registry_set_self_slot(i % 3);
	assert_int_equal(registry_changes(&old, idx, REG_LOG), -1);
	registry_set_self_slot(-1);
}

static void test_lifecycle_return(void **state)
{
	(void)state;
	check_lifecycle(0);
}

static void test_lifecycle_pthread_exit(void **state)
{
	(void)state;
	check_lifecycle(1);
}

static void test_add_remove_self(void **state)
{
	(void)state;
	assert_int_equal(registry_add_self(), 0);
	int live = registry_live();
	assert_int_equal(registry_add_self(), 0); /* idempotent */
	assert_int_equal(registry_live(), live);
	int n = registry_snapshot(snap, REG_CAP);
	const struct reg_snap *e = find_tid(n, sb_gettid());
	assert_non_null(e);
	registry_set_self_slot(7);
	n = registry_snapshot(snap, REG_CAP);
	e = find_tid(n, sb_gettid());
	assert_non_null(e);
	assert_int_equal(e->slot, 7);
	uintptr_t here = (uintptr_t)&n;
	assert_true(here >= e->bounds.lo && here < e->bounds.hi);

	uint32_t gen = e->gen;
	registry_remove_self();
	n = registry_snapshot(snap, REG_CAP);
	assert_null(find_tid(n, sb_gettid()));
	assert_true(registry_compact() >= 1);

	/* Registering again gives a new generation: a stale (idx, gen) never matches. */
	assert_int_equal(registry_add_self(), 0);
	n = registry_snapshot(snap, REG_CAP);
	e = find_tid(n, sb_gettid());
	assert_non_null(e);
	assert_true(e->gen != gen);
	assert_int_equal(e->slot, -1);
}

static _Atomic int churn_left = CHURN_CYCLES;
static _Atomic int churn_done;

static void *tiny(void *arg)
{
	(void)arg;
	if (sb_gettid() & 1)
		pthread_exit(NULL);
	return NULL;
}

static void *churner(void *arg)
{
	(void)arg;
	while (atomic_fetch_sub(&churn_left, 1) > 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, tiny, NULL) != 0)
			abort();
		pthread_join(t, NULL);
	}
	atomic_fetch_add(&churn_done, 1);
	return NULL;
}

/* 8 threads churn through 10,000 create/exit cycles while this thread snapshots and
 * compacts: every snapshot must hold only consistent, live-looking entries, and the
 * churners must show up in them. */
static void test_snapshot_during_churn(void **state)
{
	(void)state;
	pthread_t t[CHURN_THREADS];
	long snaps = 0;
	int most = 0;

	registry_compact();
	int base = registry_live();
	for (int i = 0; i < CHURN_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churner, NULL), 0);
	while (atomic_load(&churn_done) < CHURN_THREADS) {
		int n = registry_snapshot(snap, REG_CAP);
		assert_true(n <= REG_CAP);
		for (int i = 0; i < n; i++) {
			assert_true(snap[i].idx < REG_CAP);
			assert_true(snap[i].gen != 0);
			assert_true(snap[i].tid > 0);
			assert_true(snap[i].bounds.lo < snap[i].bounds.hi);
			for (int j = i + 1; j < n; j++)
				assert_true(snap[i].tid != snap[j].tid || snap[i].gen != snap[j].gen);
		}
		if (n > most)
			most = n;
		snaps++;
		if (snaps % 4 == 0)
			registry_compact();
	}
	for (int i = 0; i < CHURN_THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	registry_compact();
	assert_true(snaps > 0);
	/* A churner is registered until after it counts itself done, and the loop snapshots
	 * until every churner is done: the largest snapshot holds the base and at least one
	 * churner. A registry that never adds created threads leaves every snapshot at base.
	 * Measured: 11-12 entries over a base of 1 in 5 runs (8 churners and the short-lived
	 * threads they create). */
	print_message("churn: %ld snapshots, largest %d entries, base %d\n", snaps, most, base);
	assert_true(most > base);
	assert_int_equal(registry_live(), base);
	assert_int_equal(registry_dead(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle_return),
		cmocka_unit_test(test_lifecycle_pthread_exit),
		cmocka_unit_test(test_add_remove_self),
		cmocka_unit_test(test_change_log),
		cmocka_unit_test(test_free_one),
		cmocka_unit_test(test_snapshot_during_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
