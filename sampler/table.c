/* table.c - lookups in the table of samplers under test. The table itself is per platform
 * (table_linux.c, table_darwin.c: the build compiles one); a new sampler is one file plus
 * one line there. */
#include <string.h>

#include "sampler/sampler.h"

const struct sampler *sb_active_sampler;

/* Number of entries of sb_sampler_table, its NULL terminator included. */
static size_t table_len(void)
{
	size_t n = 0;

	while (sb_sampler_table[n])
		n++;
	return n + 1;
}

const struct sampler *sampler_at(size_t i)
{
	return i < table_len() ? sb_sampler_table[i] : NULL;
}

const struct sampler *sampler_find(const char *name)
{
	for (size_t i = 0; sb_sampler_table[i]; i++)
		if (strcmp(sb_sampler_table[i]->name, name) == 0)
			return sb_sampler_table[i];
	return NULL;
}

int sampler_in_process(const struct sampler *s)
{
	return s && (s->flags & SB_SAMPLER_IN_PROCESS) != 0;
}
