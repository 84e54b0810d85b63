/* import_speedscope.c - speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): shared.frames[].name, and per
 * profile of type "sampled" its stacks (frame indices, root first) and weights. With unit
 * "none" a weight is a sample count; with a time unit each stack is one sample of that
 * weight. The thread is the number after "tid " in the profile's name (as sampbench and
 * several writers name them), else unknown. "evented" profiles are traces, not samples,
 * and are skipped. */
#include "analysis/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/import_json.h"

static int32_t tid_of(const char *name)
{
	const char *t = name ? strstr(name, "tid ") : NULL;
	long v = 0;
	int n = 0;

	if (!t)
		return -1;
	for (t += 4; *t >= '0' && *t <= '9' && n < 10; t++, n++)
		v = v * 10 + (*t - '0');
	return n > 0 && n < 10 ? (int32_t)v : -1;
}

/* ns per unit of a speedscope "unit", 0 for "none" (counts), -1 unknown. */
static double unit_ns(const char *unit)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = { { "none", 0 }, { "nanoseconds", 1 }, { "microseconds", 1e3 },
		      { "milliseconds", 1e6 }, { "seconds", 1e9 } };

	for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i].name) == 0)
			return units[i].ns;
	return -1;
}

static int read_profile(struct import_run *b, const cJSON *prof, const uint64_t *frame_pcs,
			size_t nframes, size_t index)
{
	const cJSON *samples = cJSON_GetObjectItemCaseSensitive(prof, "samples");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(prof, "name");
	const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prof, "unit"));
	double *weights = NULL;
	size_t nweights, i = 0;
	uint64_t pcs[IMPORT_MAX_DEPTH];
	double ns = unit_ns(unit);
	const cJSON *stack;
	int ret = -1;

	if (ns < 0)
		return import_fail(b, "profile %zu: unknown unit '%s'", index, unit ? unit : "(none)");
	if (!cJSON_IsArray(samples) ||
	    json_doubles(cJSON_GetObjectItemCaseSensitive(prof, "weights"), &weights, &nweights) < 0)
		return import_fail(b, "profile %zu: samples and weights must be arrays", index);
	if ((size_t)cJSON_GetArraySize(samples) != nweights) {
		import_fail(b, "profile %zu: %d samples but %zu weights", index,
			    cJSON_GetArraySize(samples), nweights);
		goto cleanup;
	}
	int32_t tid = tid_of(cJSON_GetStringValue(name));
	cJSON_ArrayForEach(stack, samples) {
		double w = weights[i++];
		const cJSON *f;
		if (!cJSON_IsArray(stack) || !(w >= 0) || w > (double)IMPORT_MAX_SAMPLES * 1e9) {
			import_fail(b, "profile %zu sample %zu: a stack must be an array and its "
				    "weight a number >= 0", index, i - 1);
			goto cleanup;
		}
		uint64_t count = ns == 0 ? (uint64_t)llround(w) : 1;
		if (count == 0)
			continue;
		/* root first in the file; keep the leaf-most IMPORT_MAX_DEPTH frames */
		int n = cJSON_GetArraySize(stack);
		int skip = n > IMPORT_MAX_DEPTH ? n - IMPORT_MAX_DEPTH : 0, k = 0;
		uint32_t depth = (uint32_t)(n - skip);
		cJSON_ArrayForEach(f, stack) {
			if (!cJSON_IsNumber(f) || !(f->valuedouble >= 0) ||
			    f->valuedouble >= (double)nframes) {
				import_fail(b, "profile %zu sample %zu: frame index out of range",
					    index, i - 1);
				goto cleanup;
			}
			if (k >= skip)
				pcs[depth - 1 - (uint32_t)(k - skip)] = frame_pcs[(size_t)f->valuedouble];
			k++;
		}
		if (import_sample(b, pcs, depth, tid, IMPORT_TIME_UNKNOWN,
				  ns == 0 ? NAN : w * ns, count) < 0)
			goto cleanup;
	}
	ret = 0;
cleanup:
	free(weights);
	return ret;
}

int import_speedscope(struct import_run *b, const unsigned char *buf, size_t len)
{
	cJSON *root = cJSON_ParseWithLength((const char *)buf, len);
	uint64_t *frame_pcs = NULL;
	size_t nframes = 0, index = 0, sampled = 0;
	const cJSON *f, *prof;
	int ret = -1;

	if (!root)
		return import_fail(b, "not JSON (error near byte %zu)",
				   (size_t)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - (const char *)buf : 0));
	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "shared"), "frames");
	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
	if (!cJSON_IsArray(frames) || !cJSON_IsArray(profiles)) {
		import_fail(b, "not a speedscope file: no shared.frames or profiles array");
		goto cleanup;
	}
	frame_pcs = malloc((size_t)(cJSON_GetArraySize(frames) + 1) * sizeof(*frame_pcs));
	if (!frame_pcs) {
		import_fail(b, "out of memory");
		goto cleanup;
	}
	cJSON_ArrayForEach(f, frames) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
		if (!name) {
			import_fail(b, "frame %zu has no name", nframes);
			goto cleanup;
		}
		if (import_frame(b, name, strlen(name), &frame_pcs[nframes++]) < 0)
			goto cleanup;
	}
	cJSON_ArrayForEach(prof, profiles) {
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prof, "type"));
		if (type && strcmp(type, "sampled") == 0) {
			if (read_profile(b, prof, frame_pcs, nframes, index) < 0)
				goto cleanup;
			sampled++;
		} else if (!type || strcmp(type, "evented") != 0) {
			import_fail(b, "profile %zu: unknown type '%s'", index, type ? type : "(none)");
			goto cleanup;
		}
		index++;
	}
	if (sampled == 0) {
		import_fail(b, "no sampled profile in the file");
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(frame_pcs);
	cJSON_Delete(root);
	return ret;
}
