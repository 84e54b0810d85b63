/* atomic_file.c - temp file + rename (atomic_file.h). */
#include "core/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *atomic_file_open(struct atomic_file *af, const char *path)
{
	int fd;

	af->f = NULL;
	af->path = path;
	af->tmp[0] = '\0';
	if ((size_t)snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.XXXXXX", path) >= sizeof(af->tmp)) {
		af->tmp[0] = '\0';
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = mkstemp(af->tmp);
	if (fd < 0) {
		af->tmp[0] = '\0';
		return NULL;
	}
	/* mkstemp makes 0600; the file replaces one the user will read like any other */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	af->f = fdopen(fd, "wb");
	if (!af->f) {
		int e = errno;
		close(fd);
		unlink(af->tmp);
		af->tmp[0] = '\0';
		errno = e;
	}
	return af->f;
}

int atomic_file_commit(struct atomic_file *af)
{
	int bad = !af->f || ferror(af->f);
	int e = bad ? EIO : 0;

	if (af->f && fclose(af->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	af->f = NULL;
	if (bad) {
		atomic_file_abort(af);
		errno = e;
		return ATOMIC_FILE_WRITE_FAILED;
	}
	if (rename(af->tmp, af->path) != 0) {
		e = errno;
		atomic_file_abort(af);
		errno = e;
		return ATOMIC_FILE_RENAME_FAILED;
	}
	af->tmp[0] = '\0';
	return 0;
}

void atomic_file_abort(struct atomic_file *af)
{
	if (af->f)
		fclose(af->f);
	af->f = NULL;
	if (af->tmp[0])
		unlink(af->tmp);
	af->tmp[0] = '\0';
}
