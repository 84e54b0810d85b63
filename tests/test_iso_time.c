/* test_iso_time.c - core/iso_time.c: the timestamp form the run files store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/iso_time.h"

static void test_known_instants(void **state)
{
	(void)state;
	char buf[ISO_TIME_LEN];

	iso_time_utc(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	iso_time_utc(1700000000, buf, sizeof(buf));
	assert_string_equal(buf, "2023-11-14T22:13:20Z");
	/* a leap day, one second before midnight */
	iso_time_utc(951868799, buf, sizeof(buf));
	assert_string_equal(buf, "2000-02-29T23:59:59Z");
}

/* UTC whatever the local zone says. */
static void test_ignores_the_time_zone(void **state)
{
	(void)state;
	char buf[ISO_TIME_LEN];

	setenv("TZ", "Pacific/Kiritimati", 1); /* UTC+14 */
	tzset();
	iso_time_utc(1700000000, buf, sizeof(buf));
	unsetenv("TZ");
	tzset();
	assert_string_equal(buf, "2023-11-14T22:13:20Z");
}

static void test_now_is_now(void **state)
{
	(void)state;
	char buf[ISO_TIME_LEN], before[ISO_TIME_LEN], after[ISO_TIME_LEN];

	time_t t0 = time(NULL);
	iso_now(buf, sizeof(buf));
	time_t t1 = time(NULL);
	iso_time_utc(t0, before, sizeof(before));
	iso_time_utc(t1, after, sizeof(after));
	assert_int_equal(strlen(buf), ISO_TIME_LEN - 1);
	/* the same fixed-width form orders as text */
	assert_true(strcmp(before, buf) <= 0 && strcmp(buf, after) <= 0);
}

static void test_short_buffer_gives_empty_string(void **state)
{
	(void)state;
	char buf[ISO_TIME_LEN - 1];

	memset(buf, 'x', sizeof(buf));
	iso_time_utc(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_instants),
		cmocka_unit_test(test_ignores_the_time_zone),
		cmocka_unit_test(test_now_is_now),
		cmocka_unit_test(test_short_buffer_gives_empty_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
