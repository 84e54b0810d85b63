/* replay.c - runs a libFuzzer target's entry point over files, without libFuzzer: the
 * corpus as a regression test, built by make with the build's compiler and sanitizers
 * (tests/fuzz/replay.sh). Each argument is a file or a directory of files, read in name
 * order. A target aborts on a finding, which fails the replay; so does a file that cannot
 * be read. Names each input on stderr before it runs; prints "N inputs" on stdout and
 * exits 0 when every input went through. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* defined by the targets that set themselves up (fuzz_h5, fuzz_import) */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Runs the target on the bytes of path. Returns 0, or -1 after one line on stderr. */
static int replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;
	int ret = -1;

	if (!fp) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *grown = realloc(buf, cap ? 2 * cap : 4096);
			if (!grown) {
				fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(ENOMEM));
				goto cleanup;
			}
			buf = grown;
			cap = cap ? 2 * cap : 4096;
		}
		got = fread(buf + len, 1, cap - len, fp);
		len += got;
	} while (got > 0);
	if (ferror(fp)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		goto cleanup;
	}
	/* unbuffered, so the input a target aborts on is the last line written */
	fprintf(stderr, "input %s\n", path);
	LLVMFuzzerTestOneInput(buf, len);
	ret = 0;
cleanup:
	free(buf);
	fclose(fp);
	return ret;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replays path, a file or every regular file of a directory; adds to *n. Returns 0 or -1. */
static int replay_path(const char *path, size_t *n)
{
	struct dirent **names;
	struct stat st;
	int count, ret = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		*n += 1;
		return replay_file(path);
	}
	count = scandir(path, &names, NULL, by_name);
	if (count < 0) {
		fprintf(stderr, "replay: cannot list '%s': %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < count; i++) {
		char file[4096];
		if (names[i]->d_name[0] != '.' && ret == 0) {
			snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
			if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
				*n += 1;
				ret = replay_file(file);
			}
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	size_t n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize && LLVMFuzzerInitialize(&argc, &argv) != 0)
		return 1;
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &n) != 0)
			return 1;
	if (n == 0) {
		fprintf(stderr, "replay: no input in the corpus\n");
		return 1;
	}
	printf("%zu inputs\n", n);
	return 0;
}
