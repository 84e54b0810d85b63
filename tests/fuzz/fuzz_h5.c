/* fuzz_h5.c - libFuzzer target for the results reader (results/h5io_*.c). The bytes are an
 * HDF5 file image, read from memory by h5_read_image() (HDF5's core driver). Whatever the
 * bytes, the reader must return 0 or -1 without a crash, a hang or a read out of bounds;
 * a refusal is one line naming the file; what it accepts must be self-consistent: every
 * sample's frames inside `frames`, every thread slot in range, every string terminated.
 * Built and run by tests/fuzz/run.sh with -fsanitize=fuzzer,address,undefined. */
#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/h5io.h"
#include "sampler/sampler.h"

/* analysis/metrics.c (linked for the metric table) refers to these; the reader never calls
 * them, so each one aborts: a call would be a finding. */
int wl_slot_of_pc(uint64_t pc);
struct sb_symbolizer *symbolizer_new(void) { abort(); }
void symbolizer_free(struct sb_symbolizer *s) { (void)s; abort(); }
int wl_slot_of_pc(uint64_t pc) { (void)pc; abort(); }
const struct sb_symbol *symbol_find(const struct sb_symbol *syms, size_t n, uint64_t pc)
{
	(void)syms, (void)n, (void)pc;
	abort();
}
int symbolize(struct sb_symbolizer *s, uint64_t pc, struct sb_symbol *out)
{
	(void)s, (void)pc, (void)out;
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return 0;
}

static void check_runs(const struct sb_host *h, const struct sb_run *runs, size_t n)
{
	volatile uint64_t sink = 0;

	if (h->nfacts < 0 || h->nfacts > SB_HOST_MAX_FACTS || h->ncalib < 0 ||
	    h->ncalib > SB_CALIB_MAX || strlen(h->fingerprint) >= sizeof(h->fingerprint))
		abort();
	for (int i = 0; i < h->nfacts; i++)
		sink += strlen(h->facts[i].name);
	for (int i = 0; i < h->ncalib; i++)
		sink += strlen(h->calib[i].name) + strlen(h->calib[i].phase) +
			strlen(h->calib[i].reason);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];

		if (r->threads < 0 || r->threads > SB_MAX_THREADS)
			abort();
		sink += strlen(r->sampler) + strlen(r->workload) + strlen(r->reason) +
			strlen(r->variant);
		for (size_t k = 0; k < r->nsamples; k++) {
			const struct sb_sample *s = &r->samples[k];

			if (s->thread_index < -1 || s->thread_index >= SB_MAX_THREADS)
				abort();
			for (uint32_t d = 0; d < s->depth; d++) /* every frame must be readable */
				sink += r->frames[s->frame_offset + d];
		}
		for (size_t k = 0; k < r->nthread_rows; k++)
			if (r->thread_rows[k].index < 0 || r->thread_rows[k].index >= SB_MAX_THREADS)
				abort();
		for (size_t k = 0; k < r->nstats; k++)
			sink += strlen(r->stats[k].name);
		for (size_t k = 0; k < r->nsymbols; k++)
			sink += strlen(r->symbols[k].module) + strlen(r->symbols[k].function);
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_host *host = malloc(sizeof(*host)); /* ~10 KB */
	struct sb_run *runs = NULL;
	char err[512] = "";
	size_t n = 0;

	if (!host)
		return 0;
	int rc = h5_read_image(data, size, "fuzz.h5", host, &runs, &n, 1, err, sizeof(err));

	/* the reader closes every HDF5 object it opened, on every path (libhdf5's own leaks
	 * on its error paths are suppressed in tests/fuzz/lsan_hdf5.supp, ours are not) */
	if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0)
		abort();
	if (rc != 0) {
		if (!err[0] || strchr(err, '\n') || runs || n)
			abort(); /* every failure explains itself in one line, and owns nothing */
		free(host);
		return 0;
	}
	check_runs(host, runs, n);
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
	free(host);
	return 0;
}
