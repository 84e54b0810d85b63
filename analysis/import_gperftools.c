/* import_gperftools.c - gperftools' legacy CPU profile through the fuzzed parser of
 * sampler/cpuprofile.c. Frames are addresses (the profile carries no names); the period
 * gives the rate and each sample's weight; there are no threads or times. */
#include "analysis/import.h"

#include "sampler/cpuprofile.h"

static int add_record(const struct cpuprofile_record *rec, void *arg)
{
	struct import_run *b = arg;
	double period_ns = 1e9 / b->run->hz;

	return import_sample(b, rec->pcs, rec->depth, -1, IMPORT_TIME_UNKNOWN,
			     (double)rec->count * period_ns, rec->count) < 0 ? -1 : 0;
}

int import_gperftools(struct import_run *b, const unsigned char *buf, size_t len)
{
	struct cpuprofile p;
	char err[256];

	if (cpuprofile_parse(buf, len, &p, err, sizeof(err)) < 0)
		return import_fail(b, "%s", err);
	b->run->hz = 1e6 / (double)p.period_us;
	return cpuprofile_foreach(&p, add_record, b) != 0 ? -1 : 0;
}
