/* h5io_legacy.c - the trial read of a schema 1 file in a child process, before the real
* read trusts it. */
#include "results/h5io_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* Schema 1 files have no metadata checksums and keep their string attributes in the
 * global heap, whose damaged addresses libhdf5 1.10 follows unchecked: a damaged one may
 * crash or hang it. So such a file is read once in a child first (the caller is a
 * single-threaded command; the child opens its own descriptor, and the parent has the
 * file closed meanwhile). Returns 0 when the child finished (its own refusal is repeated
 * by the real read), -1 with one line in rd->err when it was killed or ran too long. */
#define TRIAL_REFUSED 3 /* exit status of a child that refused the file cleanly */

int trial_read(struct rd *rd, int load_samples)
{
	/* 5 s, plus 1 s per MB (results/baseline.h5, 12 MB, reads in 1 s); sanitizer builds
	 * run several times slower */
	uint64_t limit_ms = (5000 + rd->file_size / 1000) * SANITIZER_SLOWDOWN;
	uint64_t waited_ms = 0;
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		struct rd child = *rd;
		struct h5_run_hosts hosts;
		struct sb_run *runs = NULL;
		char err[8];
		size_t n = 0;

		/* a crash must kill the child, whatever handler the caller set (cmocka's
		 * longjmps back into the test runner); glibc's own heap-corruption message
		 * must not become a second line */
		static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS };
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		for (size_t i = 0; i < ARRAY_SIZE(crash); i++)
			signal(crash[i], SIG_DFL);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		child.err = err;
		child.errlen = sizeof(err);
		child.hosts = rd->hosts ? &hosts : NULL; /* the run groups' attributes too */
		child.file = open_path(&child);
		if (child.file < 0 || read_file(&child, NULL, &runs, &n, load_samples) < 0)
			_exit(TRIAL_REFUSED);
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited_ms >= limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			seterr(rd->err, rd->errlen, "'%s' is damaged: reading it did not finish in "
			       "%llu s", rd->path, (unsigned long long)(limit_ms / 1000));
			return -1;
		}
		struct timespec ts = { 0, 5 * 1000000 };
		nanosleep(&ts, NULL);
		waited_ms += 5;
	}
	if (WIFSIGNALED(status)) {
		seterr(rd->err, rd->errlen, "'%s' is damaged: reading it crashed libhdf5 (SIG%s)",
		       rd->path, sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
								: "?");
		return -1;
	}
	/* any other status is a crash a sanitizer caught and exited on */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 &&
				   WEXITSTATUS(status) != TRIAL_REFUSED)) {
		seterr(rd->err, rd->errlen, "'%s' is damaged: reading it crashed libhdf5 "
		       "(exit status %d)", rd->path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}
