/* import_json.h - what the JSON importers (speedscope, Firefox) share: cJSON's tree, read
 * into C arrays in one pass each (cJSON's arrays are linked lists, and indexing one per
 * element would be quadratic in a hostile file). */
#ifndef SB_IMPORT_JSON_H
#define SB_IMPORT_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* An array of numbers or nulls as int64 (null and non-integers: -1) or double. */
struct json_ints {
	int64_t *v;
	size_t n;
};

/* Reads the array item (NULL: empty) of integers, null items as -1, into *out.
 * Returns 0, or -1 when item is not such an array or memory runs out. Free out->v. */
int json_ints(const cJSON *item, struct json_ints *out);
/* The same for numbers as doubles (NaN for null). */
int json_doubles(const cJSON *item, double **v, size_t *n);
/* The strings of an array, pointing into the tree. NULL items are refused. */
int json_strings(const cJSON *item, const char ***v, size_t *n);

#endif
