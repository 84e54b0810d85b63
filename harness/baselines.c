/* baselines.c - baseline file names by machine class. */
#include "harness/baselines.h"

#include <stdio.h>
#include <string.h>

static void sanitize(char *dst, size_t len, const char *prefix, const char *src)
{
	size_t j = 0;

	if (len == 0)
		return;
	for (const char *p = prefix; *p && j + 1 < len; p++)
		dst[j++] = *p;
	for (const char *p = src; *p && j + 1 < len; p++) {
		char c = *p;
		int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		/* a leading dot would hide the file; '/' would leave the directory */
		if (j == 0 && c == '.')
			keep = 0;
		dst[j++] = keep ? c : '-';
	}
	dst[j] = 0;
}

void baseline_name(const struct sb_host *h, char *buf, size_t len)
{
	if (h->fingerprint[0])
		sanitize(buf, len, "", h->fingerprint);
	else
		sanitize(buf, len, "host-", h->host[0] ? h->host : "unknown");
}

int baseline_path(const struct sb_host *h, char *buf, size_t len)
{
	char name[128];

	baseline_name(h, name, sizeof(name));
	int n = snprintf(buf, len, "%s/%s.h5", SB_BASELINES_DIR, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
