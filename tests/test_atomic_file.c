/* test_atomic_file.c - core/atomic_file.c: the new file appears whole or not at all, and
 * every failure leaves the old file as it was and no temporary file behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sb_test_atomic_XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The whole content of path, or "" when it cannot be read. */
static const char *read_text(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* Entries of dir whose name contains ".tmp". */
static int temp_files(const char *d)
{
	DIR *dh = opendir(d);
	struct dirent *e;
	int n = 0;

	while (dh && (e = readdir(dh)))
		n += strstr(e->d_name, ".tmp") != NULL;
	if (dh)
		closedir(dh);
	return n;
}

/* path holds old; an atomic file opened over it has had replacement written to it. */
static FILE *open_over(struct atomic_file *af, const char *path, const char *old,
		       const char *replacement)
{
	write_text(path, old);
	FILE *f = atomic_file_open(af, path);
	assert_non_null(f);
	fputs(replacement, f);
	return f;
}

static void test_commit_replaces_the_file(void **state)
{
	(void)state;
	char path[128];
	struct atomic_file af;
	struct stat st;

	snprintf(path, sizeof(path), "%s/out.txt", dir);
	open_over(&af, path, "old\n", "new\n");
	/* until the commit, readers still see the old file */
	assert_string_equal(read_text(path), "old\n");
	assert_int_equal(temp_files(dir), 1);
	assert_int_equal(atomic_file_commit(&af), 0);
	assert_string_equal(read_text(path), "new\n");
	assert_int_equal(temp_files(dir), 0);
	/* readable like a file fopen created, not mkstemp's 0600 */
	mode_t mask = umask(022);
	umask(mask);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
}

static void test_missing_directory_creates_nothing(void **state)
{
	(void)state;
	char missing[128], path[160];
	struct atomic_file af;

	snprintf(missing, sizeof(missing), "%s/no-such-dir", dir);
	snprintf(path, sizeof(path), "%s/out.txt", missing);
	errno = 0;
	assert_null(atomic_file_open(&af, path));
	assert_int_equal(errno, ENOENT);
	assert_int_not_equal(access(missing, F_OK), 0);
	assert_int_equal(temp_files(dir), 0);
	atomic_file_abort(&af); /* harmless after a failed open */
}

static void test_failed_rename_keeps_the_original(void **state)
{
	(void)state;
	char path[128], inside[160];
	struct atomic_file af;

	/* the target is a non-empty directory: rename(2) refuses to replace it */
	snprintf(path, sizeof(path), "%s/target", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(inside, sizeof(inside), "%s/keep.txt", path);
	write_text(inside, "original\n");
	FILE *f = atomic_file_open(&af, path);
	assert_non_null(f);
	fputs("replacement\n", f);
	errno = 0;
	assert_int_equal(atomic_file_commit(&af), ATOMIC_FILE_RENAME_FAILED);
	assert_int_not_equal(errno, 0);
	assert_string_equal(read_text(inside), "original\n");
	assert_int_equal(temp_files(dir), 0);
}

static void test_abort_keeps_the_original(void **state)
{
	(void)state;
	char path[128];
	struct atomic_file af;

	snprintf(path, sizeof(path), "%s/kept.txt", dir);
	open_over(&af, path, "old\n", "half of a new fi");
	atomic_file_abort(&af);
	atomic_file_abort(&af);
	assert_string_equal(read_text(path), "old\n");
	assert_int_equal(temp_files(dir), 0);
}

static void test_too_long_path_is_refused(void **state)
{
	(void)state;
	char path[PATH_MAX + 64];
	struct atomic_file af;

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	errno = 0;
	assert_null(atomic_file_open(&af, path));
	assert_int_equal(errno, ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commit_replaces_the_file),
		cmocka_unit_test(test_missing_directory_creates_nothing),
		cmocka_unit_test(test_failed_rename_keeps_the_original),
		cmocka_unit_test(test_abort_keeps_the_original),
		cmocka_unit_test(test_too_long_path_is_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
