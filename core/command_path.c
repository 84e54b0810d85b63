/* command_path.c - $PATH lookup (command_path.h). */
#include "core/command_path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int command_runnable(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", cmd);
		struct stat st;
		if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return 1;
		p += len + (e ? 1 : 0);
		if (!e)
			break;
	}
	return 0;
}
