/* sbrun.c - running the sampbench binary from tests (sbrun.h). */
#include "tests/support/sbrun.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/h5io.h"

#define SBRUN_MAX_ARGS 62

/* An unlinked temporary file, or -1. */
static int scratch_fd(void)
{
	char path[] = "/tmp/sbrun.XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Reads fd from its start into buf (NUL-terminated, at most len - 1 bytes). */
static void slurp(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t k;

	if (!buf || len == 0)
		return;
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0)
		while (n + 1 < len && (k = read(fd, buf + n, len - 1 - n)) > 0)
			n += (size_t)k;
	buf[n] = 0;
}

/* In the child: fd 1 and 2 from out_fd and err_fd (-1: /dev/null), then exec. */
static void exec_child(const char *bin, const char *const *args, int out_fd, int err_fd)
{
	const char *argv[SBRUN_MAX_ARGS + 2] = { bin };
	int nul = open("/dev/null", O_WRONLY);

	dup2(out_fd >= 0 ? out_fd : nul, 1);
	dup2(err_fd >= 0 ? err_fd : nul, 2);
	for (int i = 0; args[i] && i < SBRUN_MAX_ARGS; i++)
		argv[i + 1] = args[i];
	execv(bin, (char *const *)argv);
	_exit(127);
}

int sbrun_wait(pid_t pid)
{
	int st;

	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t sbrun_start(const char *bin, const char *const *args)
{
	pid_t pid = fork();

	if (pid == 0)
		exec_child(bin, args, -1, -1);
	return pid;
}

int sbrun(const char *bin, const char *const *args, char *out, size_t outlen, char *err,
	  size_t errlen)
{
	int merged = err && err == out;
	int out_fd = out ? scratch_fd() : -1;
	int err_fd = err && !merged ? scratch_fd() : -1;

	pid_t pid = fork();
	if (pid == 0)
		exec_child(bin, args, out_fd, merged ? out_fd : err_fd);
	int rc = sbrun_wait(pid);
	slurp(out_fd, out, outlen);
	if (!merged)
		slurp(err_fd, err, errlen);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	return rc;
}

int sbrun_runs(const char *bin, const char *const *args, const char *h5,
	       struct sb_run **runs, size_t *n)
{
	char err[4096], msg[512];
	struct sb_host host;
	int rc = sbrun(bin, args, NULL, 0, err, sizeof(err));

	if (rc != 0) {
		fprintf(stderr, "sampbench %s failed (%d): %s", args[0], rc, err);
		return -1;
	}
	if (h5_read(h5, &host, runs, n, 1, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s\n", msg);
		return -1;
	}
	return 0;
}

void sbrun_free_runs(struct sb_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
}

char sbrun_binary[512];
char sbrun_dir[64];

int sbrun_group_setup(void **state)
{
	const char *b = getenv("BUILD");

	(void)state;
	snprintf(sbrun_binary, sizeof(sbrun_binary), "%s/sampbench", b && *b ? b : "build");
	snprintf(sbrun_dir, sizeof(sbrun_dir), "/tmp/sbtest.XXXXXX");
	return mkdtemp(sbrun_dir) ? 0 : -1;
}

int sbrun_group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sbrun_dir);
	return system(cmd) == 0 ? 0 : -1;
}
