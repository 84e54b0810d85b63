/* import_json.c - cJSON arrays into C arrays (see import_json.h). */
#include "analysis/import_json.h"

#include <math.h>
#include <stdlib.h>

/* Copies the items of array item (NULL: empty) into a new array of size-byte slots, put
 * converting each; returns 0, or -1 when item is no array, put refuses an item or memory
 * runs out (*out is then NULL). */
static int json_array(const cJSON *item, size_t size, int (*put)(const cJSON *e, void *slot),
		      void **out, size_t *n)
{
	int cnt = item ? cJSON_GetArraySize(item) : 0;
	size_t i = 0;
	const cJSON *e;
	char *v;

	*out = NULL;
	*n = 0;
	if ((item && !cJSON_IsArray(item)) || !(v = malloc((size_t)(cnt ? cnt : 1) * size)))
		return -1;
	cJSON_ArrayForEach(e, item) {
		if (put(e, v + i++ * size) < 0) {
			free(v);
			return -1;
		}
	}
	*out = v;
	*n = i;
	return 0;
}

static int put_int(const cJSON *e, void *slot)
{
	double d = cJSON_IsNumber(e) ? e->valuedouble : -1;

	if ((!cJSON_IsNumber(e) && !cJSON_IsNull(e)) || !(d >= -1 && d <= 9007199254740992.0) ||
	    d != floor(d))
		return -1;
	*(int64_t *)slot = (int64_t)d;
	return 0;
}

static int put_double(const cJSON *e, void *slot)
{
	if (!cJSON_IsNumber(e) && !cJSON_IsNull(e))
		return -1;
	*(double *)slot = cJSON_IsNumber(e) ? e->valuedouble : NAN;
	return 0;
}

static int put_string(const cJSON *e, void *slot)
{
	if (!cJSON_IsString(e))
		return -1;
	*(const char **)slot = e->valuestring;
	return 0;
}

int json_ints(const cJSON *item, struct json_ints *out)
{
	return json_array(item, sizeof(*out->v), put_int, (void **)&out->v, &out->n);
}

int json_doubles(const cJSON *item, double **v, size_t *n)
{
	return json_array(item, sizeof(**v), put_double, (void **)v, n);
}

int json_strings(const cJSON *item, const char ***v, size_t *n)
{
	return json_array(item, sizeof(**v), put_string, (void **)v, n);
}
