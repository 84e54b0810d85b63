/* import_json.c - cJSON arrays into C arrays (see import_json.h). */
#include "analysis/import_json.h"

#include <math.h>
#include <stdlib.h>

int json_ints(const cJSON *item, struct json_ints *out)
{
	int n = item ? cJSON_GetArraySize(item) : 0, i = 0;
	const cJSON *e;

	out->v = NULL;
	out->n = 0;
	if (item && !cJSON_IsArray(item))
		return -1;
	if (!(out->v = malloc((size_t)(n ? n : 1) * sizeof(*out->v))))
		return -1;
	cJSON_ArrayForEach(e, item) {
		double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
		if (!cJSON_IsNumber(e) && !cJSON_IsNull(e))
			goto fail;
		if (!(d >= -1 && d <= 9007199254740992.0) || d != floor(d))
			goto fail;
		out->v[i++] = (int64_t)d;
	}
	out->n = (size_t)i;
	return 0;
fail:
	free(out->v);
	out->v = NULL;
	return -1;
}

int json_doubles(const cJSON *item, double **v, size_t *n)
{
	int cnt = item ? cJSON_GetArraySize(item) : 0, i = 0;
	const cJSON *e;

	*v = NULL;
	*n = 0;
	if (item && !cJSON_IsArray(item))
		return -1;
	if (!(*v = malloc((size_t)(cnt ? cnt : 1) * sizeof(**v))))
		return -1;
	cJSON_ArrayForEach(e, item) {
		if (!cJSON_IsNumber(e) && !cJSON_IsNull(e)) {
			free(*v);
			*v = NULL;
			return -1;
		}
		(*v)[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
	}
	*n = (size_t)i;
	return 0;
}

int json_strings(const cJSON *item, const char ***v, size_t *n)
{
	int cnt = item ? cJSON_GetArraySize(item) : 0, i = 0;
	const cJSON *e;

	*v = NULL;
	*n = 0;
	if (item && !cJSON_IsArray(item))
		return -1;
	if (!(*v = malloc((size_t)(cnt ? cnt : 1) * sizeof(**v))))
		return -1;
	cJSON_ArrayForEach(e, item) {
		if (!cJSON_IsString(e)) {
			free(*v);
			*v = NULL;
			return -1;
		}
		(*v)[i++] = e->valuestring;
	}
	*n = (size_t)i;
	return 0;
}
