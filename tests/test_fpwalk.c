/* test_fpwalk.c - the frame-pointer walker on synthetic stacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sampler/fpwalk.h"
#include "sampler/threads.h"

/* A fake stack: frame records of (saved fp, return address) at chosen slots. */
static uintptr_t stk[64] __attribute__((aligned(16)));

static struct sb_stack_bounds bounds(void)
{
	return (struct sb_stack_bounds){ (uintptr_t)&stk[0], (uintptr_t)&stk[64] };
}

static uintptr_t at(int i)
{
	return (uintptr_t)&stk[i];
}

/* Links frames at slots s[0] < s[1] < ... with return addresses 0x1000 + k. */
static void chain(const int *s, int n)
{
	memset(stk, 0, sizeof(stk));
	for (int k = 0; k < n; k++) {
		stk[s[k]] = k + 1 < n ? at(s[k + 1]) : 0;
		stk[s[k] + 1] = 0x1000 + (uintptr_t)k;
	}
}

static void test_validate_seed_cases(void **state)
{
	(void)state;
	/* the seed's numbers: base 0x7fff00010000, limit 0x7fff00000000 */
	struct sb_stack_bounds b = { 0x7fff00000000, 0x7fff00010000 };
	assert_int_equal(fp_validate(0x7fff00008000, &b), 1);
	assert_int_equal(fp_validate(0x7fff00020000, &b), 0);
	assert_int_equal(fp_validate(0x7ffefffff000, &b), 0);
	assert_int_equal(fp_validate(0x7fff00008001, &b), 0);
	assert_int_equal(fp_validate(0x7fff00008004, &b), 0);
	/* room for the 16-byte record */
	assert_int_equal(fp_validate(0x7fff00010000 - 16, &b), 1);
	assert_int_equal(fp_validate(0x7fff00010000 - 8, &b), 0);
	assert_int_equal(fp_validate(0x7fff00000000, &b), 1);
	struct sb_stack_bounds none = { 0, 0 };
	assert_int_equal(fp_validate(0x1000, &none), 0);
}

static void test_walk_good_chain(void **state)
{
	(void)state;
	int s[] = { 4, 10, 20, 40 };
	chain(s, 4);
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 0xabc, .fp = at(4) };
	uint64_t pcs[16];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_OK);
	assert_int_equal(d, 5);
	assert_int_equal(pcs[0], 0xabc);
	for (int k = 0; k < 4; k++)
		assert_int_equal(pcs[k + 1], 0x1000 + k);
}

static void test_walk_zero_return_ends(void **state)
{
	(void)state;
	int s[] = { 4, 10, 20 };
	chain(s, 3);
	stk[10 + 1] = 0; /* second record's return address */
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(4) };
	uint64_t pcs[16];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_OK);
	assert_int_equal(d, 2);
}

static void test_walk_cycle(void **state)
{
	(void)state;
	int s[] = { 4, 10 };
	chain(s, 2);
	stk[10] = at(4); /* points back down: a cycle */
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(4) };
	uint64_t pcs[64];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 64, &d, NULL, NULL), SB_WALK_NOT_INCREASING);
	assert_int_equal(d, 3);
	stk[4] = at(4); /* a record pointing at itself */
	assert_int_equal(fp_walk(&r, &b, pcs, 64, &d, NULL, NULL), SB_WALK_NOT_INCREASING);
	assert_int_equal(d, 2);
}

static void test_walk_misaligned(void **state)
{
	(void)state;
	int s[] = { 4, 10 };
	chain(s, 2);
	stk[4] = at(10) + 4;
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(4) };
	uint64_t pcs[16];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_MISALIGNED);
	assert_int_equal(d, 2);
	r.fp = at(4) + 1;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_MISALIGNED);
	assert_int_equal(d, 1);
}

static void test_walk_out_of_bounds(void **state)
{
	(void)state;
	int s[] = { 4, 10 };
	chain(s, 2);
	stk[10] = at(64) + 64; /* above the stack */
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(4) };
	uint64_t pcs[16];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_OUT_OF_BOUNDS);
	assert_int_equal(d, 3);
	r.fp = at(0) - 16; /* below */
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_OUT_OF_BOUNDS);
	assert_int_equal(d, 1);
	/* unknown bounds: only the PC */
	struct sb_stack_bounds none = { 0, 0 };
	r.fp = at(4);
	assert_int_equal(fp_walk(&r, &none, pcs, 16, &d, NULL, NULL), SB_WALK_OUT_OF_BOUNDS);
	assert_int_equal(d, 1);
}

static void test_walk_downward(void **state)
{
	(void)state;
	int s[] = { 20, 30 };
	chain(s, 2);
	stk[20] = at(8); /* next frame lower on the stack */
	stk[8] = 0;
	stk[9] = 0x2000;
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(20) };
	uint64_t pcs[16];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, NULL, NULL), SB_WALK_NOT_INCREASING);
	assert_int_equal(d, 2);
}

static void test_walk_truncation(void **state)
{
	(void)state;
	int s[] = { 2, 6, 10, 14, 18, 22, 26, 30 };
	chain(s, 8);
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(2) };
	uint64_t pcs[4];
	uint32_t d = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 4, &d, NULL, NULL), SB_WALK_TRUNCATED);
	assert_int_equal(d, 4);
	uint64_t all[9];
	assert_int_equal(fp_walk(&r, &b, all, 9, &d, NULL, NULL), SB_WALK_OK);
	assert_int_equal(d, 9);
}

static int failing_read(void *ctx, uintptr_t addr, uintptr_t out[2])
{
	(void)addr;
	(void)out;
	int *calls = ctx;
	return ++*calls > 1 ? -1 : (out[0] = at(10), out[1] = 0x3000, 0);
}

static void test_walk_reader(void **state)
{
	(void)state;
	memset(stk, 0, sizeof(stk));
	struct sb_stack_bounds b = bounds();
	struct sb_regs r = { .pc = 1, .fp = at(4) };
	uint64_t pcs[16];
	uint32_t d = 0;
	int calls = 0;
	assert_int_equal(fp_walk(&r, &b, pcs, 16, &d, failing_read, &calls), SB_WALK_READ_FAILED);
	assert_int_equal(d, 2);
	assert_int_equal(pcs[1], 0x3000);
}

/* The real thing: a walk from this very function reaches the test's callers. */
static __attribute__((noinline)) uint32_t walk_here(uint64_t *pcs, uint32_t max)
{
	struct sb_stack_bounds b;
	if (sb_stack_bounds_self(&b) != 0)
		return 0;
	struct sb_regs r = { .pc = (uintptr_t)&walk_here,
			     .fp = (uintptr_t)__builtin_frame_address(0) };
	uint32_t d = 0;
	fp_walk(&r, &b, pcs, max, &d, NULL, NULL);
	return d;
}

static void test_walk_live_stack(void **state)
{
	(void)state;
	uint64_t pcs[64];
	uint32_t d = walk_here(pcs, 64);
	assert_true(d >= 3);
	/* the second frame is a return address into this function */
	assert_true(pcs[1] > (uint64_t)(uintptr_t)&test_walk_live_stack);
	assert_true(pcs[1] < (uint64_t)(uintptr_t)&test_walk_live_stack + 512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_seed_cases),
		cmocka_unit_test(test_walk_good_chain),
		cmocka_unit_test(test_walk_zero_return_ends),
		cmocka_unit_test(test_walk_cycle),
		cmocka_unit_test(test_walk_misaligned),
		cmocka_unit_test(test_walk_out_of_bounds),
		cmocka_unit_test(test_walk_downward),
		cmocka_unit_test(test_walk_truncation),
		cmocka_unit_test(test_walk_reader),
		cmocka_unit_test(test_walk_live_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
