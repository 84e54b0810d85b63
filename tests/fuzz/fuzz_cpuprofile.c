/* fuzz_cpuprofile.c - libFuzzer target for the gperftools cpu profile parser. Whatever the
 * bytes, cpuprofile_parse() must return 0 or -1 without reading outside them; what it
 * accepts must walk cleanly and agree with what the parse reported. Built and run by
 * tests/fuzz/run.sh with -fsanitize=fuzzer,address,undefined. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/cpuprofile.h"

struct tally {
	uint64_t records, total;
	uint32_t max_depth;
};

static int count_record(const struct cpuprofile_record *rec, void *arg)
{
	struct tally *t = arg;
	volatile uint64_t sink = 0;
	t->records++;
	t->total += rec->count;
	if (rec->depth > t->max_depth)
		t->max_depth = rec->depth;
	for (uint32_t i = 0; i < rec->depth; i++) /* every pc must be readable */
		sink += rec->pcs[i];
	(void)sink;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpuprofile p;
	struct tally t = { 0, 0, 0 };
	char err[256];

	/* a copy of exactly size bytes, so ASan catches a read one past the end */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (cpuprofile_parse(buf, size, &p, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || strchr(err, '\n'))
			abort(); /* every failure explains itself in one line */
		free(buf);
		return 0;
	}
	if (cpuprofile_foreach(&p, count_record, &t) != 0 || t.records != p.records ||
	    t.total != p.total_count || t.max_depth != p.max_depth ||
	    p.maps + p.maps_len != (const char *)buf + size)
		abort();
	free(buf);
	return 0;
}
