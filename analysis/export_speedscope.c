/* export_speedscope.c - a run as speedscope JSON (see export.h): the file format of
 * https://www.speedscope.app/file-format-schema.json, one "sampled" profile per thread
 * ("NAME (tid N)", or "tid N" when its name is unknown), stacks root first as indices into
 * the shared frame list (a PC in inlined code: its function, then its inlined frames), one
 * weight (1) per sample. */
#include "analysis/export.h"

#include <inttypes.h>
#include <stdlib.h>

/* Writes speedscope JSON (see export.h). */
int64_t export_speedscope(FILE *out, const struct sb_run *r)
{
	struct export_frames fr;
	int32_t *tids = NULL;
	size_t ntids = 0;
	char name[EXPORT_TITLE_LEN];
	int64_t ret = -1;

	if (export_frames_build(r, 0, &fr) < 0 || !(tids = export_tids(r, &ntids)))
		goto cleanup;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
	export_run_title(r, name, sizeof(name));
	fputs("\"name\":", out);
	export_json_string(out, name);
	fputs(",\"exporter\":\"sampbench\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	for (size_t f = 0; f < fr.nnames; f++) {
		fputs(f ? ",{\"name\":" : "{\"name\":", out);
		export_json_string(out, fr.names[f]);
		fputc('}', out);
	}
	fputs("]},\"profiles\":[", out);
	for (size_t t = 0; t < ntids; t++) {
		size_t n = 0;
		char tname[SB_THREAD_NAME_LEN], tid[24];
		/* "tid N" stays in the name: it is where a speedscope reader finds the thread */
		if (tids[t] >= 0)
			snprintf(tid, sizeof(tid), "tid %" PRId32, tids[t]);
		else
			snprintf(tid, sizeof(tid), "tid unknown");
		if (*export_tid_name(r, tids[t], tname))
			snprintf(name, sizeof(name), "%s (%s)", tname, tid);
		else
			snprintf(name, sizeof(name), "%s", tid);
		fputs(t ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", out);
		export_json_string(out, name);
		fputs(",\"unit\":\"none\",\"startValue\":0,\"samples\":[", out);
		for (size_t i = 0; i < r->nsamples; i++) {
			int32_t tid = r->samples[i].tid >= 0 ? r->samples[i].tid : -1;
			uint32_t depth;
			const uint64_t *stack;
			if (tid != tids[t])
				continue;
			stack = export_sample_stack(r, i, &depth);
			fputs(n++ ? ",[" : "[", out);
			for (uint32_t d = depth; d-- > 0;) { /* inlined frames: frames of their own */
				uint32_t ids[1 + SB_INLINE_MAX_DEPTH];
				uint32_t m = export_frames_funcs(&fr, export_frames_pc(&fr, stack[d]),
								 ids, 1 + SB_INLINE_MAX_DEPTH);
				for (uint32_t j = 0; j < m; j++)
					fprintf(out, d + 1 < depth || j ? ",%" PRIu32 : "%" PRIu32,
						ids[j]);
			}
			fputc(']', out);
		}
		fputs("],\"weights\":[", out);
		uint64_t total = 0;
		for (size_t i = 0, k = 0; i < r->nsamples; i++) {
			if ((r->samples[i].tid >= 0 ? r->samples[i].tid : -1) != tids[t])
				continue;
			uint32_t w = sample_ticks(&r->samples[i]); /* a reused stack's ticks */
			fprintf(out, k++ ? ",%" PRIu32 : "%" PRIu32, w);
			total += w;
		}
		fprintf(out, "],\"endValue\":%" PRIu64 "}", total);
	}
	if (fputs("]}\n", out) < 0)
		goto cleanup;
	ret = (int64_t)r->nsamples;
cleanup:
	free(tids);
	export_frames_free(&fr);
	return ret;
}
