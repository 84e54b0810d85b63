/* fuzz_import.c - libFuzzer target for one importer (analysis/import.h), chosen by the
 * environment variable FUZZ_FORMAT (pprof, perf-script, folded, speedscope, firefox,
 * sysprof):
 * tests/fuzz/run.sh builds the binary once and runs it once per format.
 * Whatever the bytes, import_buffer() must return 0 or -1 with one line, reading only
 * inside them and within its limits (-rss_limit_mb catches a bound that does not hold);
 * what it accepts must be a consistent run: every sample's frames inside the frame array,
 * every PC at or above IMPORT_PC_BASE in the symbols table, which is sorted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/import.h"

static const struct import_format *fmt;

/* The format named by FUZZ_FORMAT; aborts without one (no input is fuzzed as nothing). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *name = getenv("FUZZ_FORMAT");

	(void)argc;
	(void)argv;
	fmt = name ? import_format_find(name) : NULL;
	if (!fmt)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_run r;
	char err[256];

	/* a copy of exactly size bytes, so ASan catches a read one past the end */
	uint8_t *buf = malloc(size ? size : 1);
	if (!fmt || !buf)
		abort();
	memcpy(buf, data, size);
	if (import_buffer(fmt, buf, size, &r, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || strchr(err, '\n') || r.samples || r.nsamples)
			abort(); /* every failure explains itself in one line, leaves nothing */
		free(buf);
		return 0;
	}
	for (size_t i = 0; i < r.nsamples; i++) {
		const struct sb_sample *s = &r.samples[i];
		if (s->depth > IMPORT_MAX_DEPTH || s->frame_offset > r.nframes ||
		    s->depth > r.nframes - s->frame_offset)
			abort();
	}
	for (size_t i = 1; i < r.nsymbols; i++)
		if (r.symbols[i - 1].pc >= r.symbols[i].pc)
			abort();
	if (r.nsamples > IMPORT_MAX_SAMPLES || r.nframes > IMPORT_MAX_FRAMES)
		abort();
	run_free(&r);
	free(buf);
	return 0;
}
