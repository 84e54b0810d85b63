/* atomic_file.h - write a file through a temporary name beside it and rename it into
 * place, so readers see the old file or the whole new one, never half of it, and a failed
 * write leaves the old file as it was.
 *
 *	struct atomic_file af;
 *	FILE *f = atomic_file_open(&af, path);
 *	if (!f) ... "cannot create", errno
 *	fprintf(f, ...);
 *	if (atomic_file_commit(&af) != 0) ... "cannot write" or "cannot rename", errno
 *
 * The temporary file is PATH.tmp.XXXXXX (mkstemp: two writers of one path do not share
 * it), mode 0666 minus the umask like fopen's, in PATH's directory (rename does not
 * cross file systems). */
#ifndef SB_CORE_ATOMIC_FILE_H
#define SB_CORE_ATOMIC_FILE_H

#include <limits.h>
#include <stdio.h>

enum atomic_file_error {
	ATOMIC_FILE_WRITE_FAILED = -1,  /* writing, flushing or closing the temp failed */
	ATOMIC_FILE_RENAME_FAILED = -2, /* the temp was complete but could not be renamed */
};

struct atomic_file {
	FILE *f;                   /* open between open and commit/abort, else NULL */
	const char *path;          /* the caller's; must outlive the atomic_file */
	char tmp[PATH_MAX + 16];   /* the temporary file's name */
};

/* Creates the temporary file for path and returns it open for writing ("wb"). Returns
 * NULL with errno (ENAMETOOLONG, or mkstemp's: ENOENT when path's directory is missing),
 * nothing created. af owns the FILE: finish with atomic_file_commit or _abort. */
FILE *atomic_file_open(struct atomic_file *af, const char *path);

/* Closes the temporary file and renames it to path. Returns 0, or an atomic_file_error
 * with errno set; on failure the temporary file is removed and path is untouched. */
int atomic_file_commit(struct atomic_file *af);

/* Closes and removes the temporary file; path is untouched. Safe to call twice and after
 * a failed open or a commit. */
void atomic_file_abort(struct atomic_file *af);

#endif
