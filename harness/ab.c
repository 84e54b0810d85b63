/* ab.c - the candidate build of an A/B bench. */
#include "harness/ab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/child.h"
#include "harness/cli.h"
#include "harness/tool.h"
#include "results/h5io.h"
#include "sampler/thread_ctl.h"

struct spawn_args {
	char *const *argv;
	int out_fd, err_fd;
};

/* The candidate's process (child.c's body): the session's calibration holds for A and B
 * alike, so B's build skips its own (0.8 s a run) and spins with the budget A's runs use:
 * the two builds run the same policy on the same measured host. */
static void spawn_body(void *arg)
{
	const struct spawn_args *a = arg;
	char spin[32];

	snprintf(spin, sizeof(spin), "%llu", (unsigned long long)tc_spin_ns());
	setenv("SB_CALIBRATE", "0", 1);
	setenv("SB_MACH_SPIN_NS", spin, 1);
	if (a->out_fd >= 0)
		dup2(a->out_fd, 1);
	if (a->err_fd >= 0)
		dup2(a->err_fd, 2);
	execvp(a->argv[0], a->argv);
	_exit(127);
}

/* Runs argv (no shell) with stdout to out_fd (-1: inherited) and stderr to err_fd (-1:
 * inherited), on child.c's driver: a killed bench takes its candidate with it (whose own
 * run child has its death signal too). Returns the exit status, 128+signal, or -1 when it
 * could not start. */
static int spawn(char *const argv[], int out_fd, int err_fd)
{
	struct spawn_args a = { argv, out_fd, err_fd };
	struct child c;
	const struct child_wait_opts wopts = { .poll_ns = 10000000u };
	struct child_exit e;

	if (child_start(&c, 0, spawn_body, &a) != 0 || child_wait(&c, &wopts, &e) != 0)
		return -1;
	return WIFEXITED(e.status) ? WEXITSTATUS(e.status) : 128 + WTERMSIG(e.status);
}

/* Runs argv and reads the first line of its stdout into buf. Returns its exit status. */
static int capture_line(char *const argv[], char *buf, size_t len)
{
	char path[] = "/tmp/sampbench-ab-out.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int rc = spawn(argv, fd, nul);
	if (nul >= 0)
		close(nul);
	ssize_t n = pread(fd, buf, len - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return rc;
}

int ab_prepare(const char *rev, struct ab_build *b, char *err, size_t errlen)
{
	char spec[256], log[300];
	int fd = -1, added = 0, ret = -1;

	memset(b, 0, sizeof(*b));
	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	char *parse[] = { "git", "rev-parse", "--verify", "--quiet", spec, NULL };
	if (capture_line(parse, b->rev, sizeof(b->rev)) != 0 || !b->rev[0]) {
		snprintf(err, errlen, "unknown revision '%s' (not a commit of this repository)", rev);
		return -1;
	}
	snprintf(b->dir, sizeof(b->dir), "/tmp/sampbench-ab.XXXXXX");
	if (!mkdtemp(b->dir)) {
		snprintf(err, errlen, "cannot create a directory in /tmp: %s", strerror(errno));
		return -1;
	}
	rmdir(b->dir); /* git worktree add wants to create it */
	snprintf(log, sizeof(log), "%s.log", b->dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", log, strerror(errno));
		return -1;
	}
	char *add[] = { "git", "worktree", "add", "--detach", "--quiet", b->dir, b->rev, NULL };
	if (spawn(add, fd, fd) != 0) {
		snprintf(err, errlen, "cannot check out '%s' into '%s' (git worktree add; see %s)",
			 rev, b->dir, log);
		goto cleanup;
	}
	added = 1;
	fprintf(stderr, "bench: building candidate %s (%.12s) in %s (log %s)\n", rev, b->rev,
		b->dir, log);
	char *make[] = { "make", "-C", b->dir, "-j2", "--no-print-directory", "BUILD=build",
			 "build/sampbench", NULL };
	if (spawn(make, fd, fd) != 0) {
		snprintf(err, errlen, "cannot build '%s' (see %s)", rev, log);
		goto cleanup;
	}
	snprintf(b->bin, sizeof(b->bin), "%s/build/sampbench", b->dir);
	snprintf(b->out, sizeof(b->out), "%s/run.h5", b->dir);
	ret = 0;
cleanup:
	close(fd);
	if (ret != 0 && added)
		ab_cleanup(b);
	return ret;
}

void ab_cleanup(struct ab_build *b)
{
	if (!b->dir[0])
		return;
	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char *rm[] = { "git", "worktree", "remove", "--force", b->dir, NULL };
	if (spawn(rm, nul, nul) != 0)
		fprintf(stderr, "sampbench: warning: cannot remove worktree '%s' "
			"(git worktree remove --force %s)\n", b->dir, b->dir);
	if (nul >= 0)
		close(nul);
	b->dir[0] = 0;
}

/* A candidate run that produced no record: failed, with why. */
static void failed_run(const struct run_spec *spec, int64_t id, struct sb_run *r,
		       const char *why)
{
	run_init(r, spec, id);
	r->status = SB_RUN_FAILED;
	snprintf(r->reason, sizeof(r->reason), "%s", why);
	snprintf(r->variant, sizeof(r->variant), "B");
}

int ab_run_candidate(const struct ab_build *b, const struct run_spec *spec, int64_t id,
		     struct sb_run *r)
{
	char threads[16], hz[32], dur[32], param[16], seed[32], err[512], why[SB_REASON_LEN];
	struct sb_run *runs = NULL;
	size_t n = 0;

	snprintf(threads, sizeof(threads), "%d", spec->threads);
	snprintf(hz, sizeof(hz), "%.17g", spec->hz);
	snprintf(dur, sizeof(dur), "%.17g", spec->duration_s);
	snprintf(param, sizeof(param), "%u", (unsigned)spec->param);
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)spec->seed);
	/* a tool by its name: the candidate's built-in recipe of that name */
	char *argv[32] = { (char *)b->bin, "run", tool_of(spec->sampler) ? "--tool" : "-s",
			   (char *)spec->sampler->name, "-w",
			   (char *)spec->workload->name, "-t", threads, "-z", hz, "-d", dur,
			   "--param", param, "--seed", seed, "-q", "--force", "-o",
			   (char *)b->out };
	int argc = 20;
	if (!spec->rt_priority)
		argv[argc++] = "--no-rt";
	if (spec->idle_skip)
		argv[argc++] = "--idle-skip";
	argv[argc] = NULL;

	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	unlink(b->out);
	int rc = spawn(argv, nul, -1);
	if (nul >= 0)
		close(nul);
	if (rc < 0)
		return -1;
	if (rc > 1) {
		snprintf(why, sizeof(why), "candidate build %.12s: 'sampbench run' exited %d", b->rev,
			 rc);
		failed_run(spec, id, r, why);
		return 0;
	}
	if (h5_read(b->out, NULL, &runs, &n, 1, err, sizeof(err)) != 0 || n != 1) {
		snprintf(why, sizeof(why), "candidate build %.12s: %.150s", b->rev,
			 n != 1 && !runs ? err : "not exactly one run");
		for (size_t i = 0; i < n; i++)
			run_free(&runs[i]);
		free(runs);
		failed_run(spec, id, r, why);
		return 0;
	}
	*r = runs[0];
	free(runs);
	r->run_id = id;
	r->repetition = spec->repetition;
	snprintf(r->variant, sizeof(r->variant), "B");
	return 0;
}
