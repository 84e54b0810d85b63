/* iso_time.h - ISO 8601 UTC timestamps ("2026-11-24T01:17:08Z"), the form the run files
 * and run records store. */
#ifndef SB_CORE_ISO_TIME_H
#define SB_CORE_ISO_TIME_H

#include <stddef.h>
#include <time.h>

/* Room for "YYYY-MM-DDTHH:MM:SSZ" and its NUL (years up to 9999). */
#define ISO_TIME_LEN 21

/* Writes t as "YYYY-MM-DDTHH:MM:SSZ" into buf (len bytes, ISO_TIME_LEN is enough). buf is
 * the empty string when it does not fit. */
void iso_time_utc(time_t t, char *buf, size_t len);

/* iso_time_utc of the current time. */
void iso_now(char *buf, size_t len);

#endif
