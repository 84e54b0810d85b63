/* iso_time.c - ISO 8601 UTC timestamps (iso_time.h). */
#include "core/iso_time.h"

void iso_time_utc(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (!gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		buf[0] = '\0'; /* strftime leaves buf undefined when it does not fit */
}

void iso_now(char *buf, size_t len)
{
	iso_time_utc(time(NULL), buf, len);
}
