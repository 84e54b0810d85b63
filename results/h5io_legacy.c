/* h5io_legacy.c - a results file read by its path (h5_read): one with metadata checksums
 * read at once, a schema 1 file read first whole in a child process (the trial read)
 * before the real read (h5io_read.c) trusts it. */
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


/* The format version of the superblock at offset 0 (8 bytes of signature, then it). */
#define SUPERBLOCK_VERSION_AT 8

/* Is rd->path a file whose metadata carries no checksums (superblock version 0 or 1, or
 * no signature at offset 0), to be read in trial_read() before the caller reads it? Notes
 * its size in rd->file_size. Returns 1, 0, or -1 with one line in rd->err. */
static int unchecked_file(struct rd *rd)
{
	static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
	unsigned char head[SUPERBLOCK_VERSION_AT + 1];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(rd->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		seterr(rd->err, rd->errlen, "cannot open '%s': %s", rd->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	rd->file_size = (uint64_t)st.st_size;
	/* Superblock versions 2 and 3 carry a checksum, and so does all the metadata
	 * written with them (schema 2). A signature elsewhere (after a user block) or none
	 * is the child's to judge too. */
	return n != (ssize_t)sizeof(head) || memcmp(head, sig, sizeof(sig)) != 0 ||
	       head[SUPERBLOCK_VERSION_AT] < 2;
}

/* Schema 1 files have no metadata checksums and keep their string attributes in the
 * global heap, whose damaged addresses libhdf5 1.10 follows unchecked: a damaged one may
 * crash or hang it, or have it read freed memory and carry on. So such a file is read
 * whole in a child first (the caller is a single-threaded command; the child opens its
 * own descriptor, and the parent has the file closed meanwhile), and the caller reads it
 * only when the child read all of it: a refusal in the child is the caller's error, the
 * child's line passed up a pipe, and the file is never opened in the caller. The child's
 * read is the caller's (read_file with the same arguments), so nothing the caller reads
 * went unread there. Returns 0 when the child read the file, -1 with one line in rd->err
 * when it refused it, was killed or ran too long. */
#define TRIAL_REFUSED 3 /* exit status of a child that refused the file cleanly */

static int trial_read(struct rd *rd, int load_samples)
{
	/* 5 s, plus 1 s per MB (results/baselines/legacy-vm-879d8c6.h5, 12 MB, reads in 1 s); sanitizer builds
	 * run several times slower */
	uint64_t limit_ms = (5000 + rd->file_size / 1000) * SANITIZER_SLOWDOWN;
	uint64_t waited_ms = 0;
	int status = 0, fds[2];
	char why[512];
	ssize_t got;
	pid_t pid;

	/* pipe(), not pipe2 (Darwin has none): no other thread execs meanwhile */
	if (pipe(fds) != 0) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(errno));
		return -1;
	}
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		seterr(rd->err, rd->errlen, "cannot read '%s': %s", rd->path, strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		struct rd child = *rd;
		struct h5_run_hosts hosts;
		struct sb_run *runs = NULL;
		size_t n = 0;

		/* a crash must kill the child, whatever handler the caller set (cmocka's
		 * longjmps back into the test runner); glibc's own heap-corruption message
		 * must not become a second line */
		static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS };
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		close(fds[0]);
		for (size_t i = 0; i < ARRAY_SIZE(crash); i++)
			signal(crash[i], SIG_DFL);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		why[0] = 0;
		child.err = why;
		child.errlen = sizeof(why);
		child.hosts = rd->hosts ? &hosts : NULL; /* the run groups' attributes too */
		child.file = open_path(&child);
		if (child.file < 0 || read_file(&child, NULL, &runs, &n, load_samples) < 0) {
			/* one write of at most 512 bytes to an empty pipe: whole, never blocks
			 * (a failed one leaves the parent a refusal without its reason) */
			if (write(fds[1], why, strlen(why)) < 0)
				why[0] = 0;
			_exit(TRIAL_REFUSED);
		}
		_exit(0);
	}
	close(fds[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited_ms >= limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(fds[0]);
			seterr(rd->err, rd->errlen, "'%s' is damaged: reading it did not finish in "
			       "%llu s", rd->path, (unsigned long long)(limit_ms / 1000));
			return -1;
		}
		struct timespec ts = { 0, 5 * 1000000 };
		nanosleep(&ts, NULL);
		waited_ms += 5;
	}
	if (WIFSIGNALED(status)) {
		close(fds[0]);
		seterr(rd->err, rd->errlen, "'%s' is damaged: reading it crashed libhdf5 (SIG%s)",
		       rd->path, sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
								: "?");
		return -1;
	}
	/* the child has exited: its line, if any, is all in the pipe */
	got = read(fds[0], why, sizeof(why) - 1);
	close(fds[0]);
	why[got > 0 ? got : 0] = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == TRIAL_REFUSED) {
		if (why[0])
			seterr(rd->err, rd->errlen, "%s", why);
		else
			seterr(rd->err, rd->errlen, "cannot read '%s'", rd->path);
		return -1;
	}
	/* any other status is a crash a sanitizer caught and exited on */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		seterr(rd->err, rd->errlen, "'%s' is damaged: reading it crashed libhdf5 "
		       "(exit status %d)", rd->path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

/* Reads every run of path (see h5io.h). The caller owns *runs. */
int h5_read(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
	    int load_samples, char *err, size_t errlen)
{
	return h5_read_hosts(path, host, runs, nruns, load_samples, NULL, err, errlen);
}

/* h5_read() and each run's host into *hosts when not NULL (see h5io.h). */
int h5_read_hosts(const char *path, struct sb_host *host, struct sb_run **runs, size_t *nruns,
		  int load_samples, struct h5_run_hosts *hosts, char *err, size_t errlen)
{
	struct rd rd = { .path = path, .file = -1, .err = err, .errlen = errlen, .hosts = hosts };

	*runs = NULL;
	*nruns = 0;
	if (hosts)
		memset(hosts, 0, sizeof(*hosts));
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	/* A file without checksums (schema 1) is not opened here before a child read it
	 * whole (trial_read); one with them is, and is tried too if it is schema 1. */
	int unchecked = unchecked_file(&rd);
	if (unchecked < 0)
		return -1;
	if (!unchecked) {
		rd.file = open_path(&rd);
		if (rd.file < 0)
			return -1;
		if (check_schema(&rd) < 0) {
			close_id(&rd.file);
			return -1;
		}
		if (rd.version >= 2)
			return read_file(&rd, host, runs, nruns, load_samples);
		close_id(&rd.file);
	}
	if (trial_read(&rd, load_samples) < 0)
		return -1;
	rd.file = open_path(&rd);
	if (rd.file < 0)
		return -1;
	return read_file(&rd, host, runs, nruns, load_samples);
}
