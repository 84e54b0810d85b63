/* import_pprof.c - profile.proto (github.com/google/pprof/proto/profile.proto), gzip-
 * compressed as every pprof writer stores it, or raw. Decoded with analysis/protobuf.c's
 * bounded reader and zlib; see docs/formats.md for why no protobuf library.
 *
 * Samples: the count is the value of the sample type "samples" when there is one, else the
 * first value divided by the period (rounded), else 1; the weight is the value of a type in
 * nanoseconds ("cpu", "wall"), else count × period when the period is in nanoseconds.
 * Labels: numeric "thread id", "tid" or "thread_id" give the thread (a string label of
 * digits too); numeric "timestamp", "timestamp_ns" or "end_timestamp_ns" the time. A
 * Location's lines are frames, the first the innermost (inlined) one; a Location without
 * lines is named by its address. */
#include "analysis/import.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/protobuf.h"

struct str {
	const unsigned char *p;
	size_t len;
};

struct function {
	uint64_t id, name;
};

struct location {
	uint64_t id, address;
	size_t first_line, nlines; /* into profile.lines: function ids, innermost first */
};

/* What the first pass collects; pointers point into the decoded buffer. */
struct profile {
	struct str *strings, *samples;
	size_t nstrings, nsamples, strings_cap, samples_cap;
	struct function *functions;
	size_t nfunctions, functions_cap;
	struct location *locations;
	size_t nlocations, locations_cap;
	uint64_t *lines;
	size_t nlines, lines_cap;
	uint64_t sample_types[16][2]; /* type, unit string indices */
	size_t ntypes;
	uint64_t period, period_type[2];
};

static int push(void **p, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		void *q = realloc(*p, c * size);
		if (!q)
			return -1;
		*p = q;
		*cap = c;
	}
	(*n)++;
	return 0;
}

/* Inflates a gzip member into a new buffer of at most IMPORT_MAX_FILE bytes. */
static int gunzip(struct import_run *b, const unsigned char *in, size_t len,
		  unsigned char **out, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = len * 4 + 4096, n = 0;
	unsigned char *buf = NULL;
	int rc;

	if (cap > IMPORT_MAX_FILE)
		cap = IMPORT_MAX_FILE;
	if (len > UINT32_MAX || inflateInit2(&z, 15 + 16) != Z_OK)
		return import_fail(b, "cannot start gzip decompression");
	if (!(buf = malloc(cap)))
		goto oom;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		if (n == cap) {
			if (cap == IMPORT_MAX_FILE) {
				import_fail(b, "decompresses to more than %u bytes", IMPORT_MAX_FILE);
				goto fail;
			}
			cap = cap * 2 > IMPORT_MAX_FILE ? IMPORT_MAX_FILE : cap * 2;
			unsigned char *q = realloc(buf, cap);
			if (!q)
				goto oom;
			buf = q;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n);
		rc = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
		if (rc == Z_STREAM_END)
			break;
		if (rc == Z_BUF_ERROR && z.avail_in == 0) {
			import_fail(b, "truncated gzip data after %zu bytes", n);
			goto fail;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			import_fail(b, "bad gzip data: %s", z.msg ? z.msg : "inflate failed");
			goto fail;
		}
	}
	inflateEnd(&z);
	*out = buf;
	*outlen = n;
	return 0;
oom:
	import_fail(b, "out of memory");
fail:
	inflateEnd(&z);
	free(buf);
	return -1;
}

/* Reads repeated varint field values, packed or not, calling fn for each. */
static int each_varint(const struct pb_field *f, int (*fn)(uint64_t v, void *arg), void *arg)
{
	if (f->wire == PB_VARINT)
		return fn(f->value, arg);
	if (f->wire != PB_LEN)
		return -1;
	const unsigned char *p = f->data, *end = f->data + f->len;
	while (p < end) {
		uint64_t v;
		if (pb_read_varint(&p, end, &v) < 0 || fn(v, arg) < 0)
			return -1;
	}
	return 0;
}

static int value_type(const struct pb_field *f, uint64_t out[2])
{
	struct pb_reader r = { f->data, f->data + f->len };
	struct pb_field g;
	int rc;

	out[0] = out[1] = 0;
	while ((rc = pb_next(&r, &g)) > 0)
		if (g.wire == PB_VARINT && (g.number == 1 || g.number == 2))
			out[g.number - 1] = g.value;
	return rc;
}


static int add_line(const struct pb_field *f, struct profile *pr)
{
	struct pb_reader r = { f->data, f->data + f->len };
	struct pb_field g;
	uint64_t function_id = 0;
	int rc;

	while ((rc = pb_next(&r, &g)) > 0)
		if (g.number == 1 && g.wire == PB_VARINT)
			function_id = g.value;
	if (rc < 0 || push((void **)&pr->lines, &pr->nlines, &pr->lines_cap, sizeof(*pr->lines)) < 0)
		return -1;
	pr->lines[pr->nlines - 1] = function_id;
	return 0;
}

/* First pass: every top-level field but the samples' contents. */
static int read_profile(struct import_run *b, const unsigned char *buf, size_t len,
			struct profile *pr)
{
	struct pb_reader r = { buf, buf + len };
	struct pb_field f;
	int rc;

	while ((rc = pb_next(&r, &f)) > 0) {
		if (f.number == 6 && f.wire == PB_LEN) {
			if (push((void **)&pr->strings, &pr->nstrings, &pr->strings_cap,
				 sizeof(*pr->strings)) < 0)
				return import_fail(b, "out of memory");
			pr->strings[pr->nstrings - 1] = (struct str){ f.data, f.len };
		} else if (f.number == 2 && f.wire == PB_LEN) {
			if (push((void **)&pr->samples, &pr->nsamples, &pr->samples_cap,
				 sizeof(*pr->samples)) < 0)
				return import_fail(b, "out of memory");
			pr->samples[pr->nsamples - 1] = (struct str){ f.data, f.len };
		} else if (f.number == 1 && f.wire == PB_LEN) {
			if (pr->ntypes == 16)
				return import_fail(b, "more than 16 sample types");
			if (value_type(&f, pr->sample_types[pr->ntypes++]) < 0)
				return import_fail(b, "malformed sample type");
		} else if (f.number == 11 && f.wire == PB_LEN) {
			if (value_type(&f, pr->period_type) < 0)
				return import_fail(b, "malformed period type");
		} else if (f.number == 12 && f.wire == PB_VARINT) {
			pr->period = f.value;
		} else if (f.number == 5 && f.wire == PB_LEN) {
			struct pb_reader m = { f.data, f.data + f.len };
			struct pb_field g;
			struct function fn = { 0, 0 };
			while ((rc = pb_next(&m, &g)) > 0)
				if (g.wire == PB_VARINT && g.number == 1)
					fn.id = g.value;
				else if (g.wire == PB_VARINT && g.number == 2)
					fn.name = g.value;
			if (rc < 0)
				return import_fail(b, "malformed function at byte %zu",
						   (size_t)(f.data - buf));
			if (push((void **)&pr->functions, &pr->nfunctions, &pr->functions_cap,
				 sizeof(*pr->functions)) < 0)
				return import_fail(b, "out of memory");
			pr->functions[pr->nfunctions - 1] = fn;
		} else if (f.number == 4 && f.wire == PB_LEN) {
			struct pb_reader m = { f.data, f.data + f.len };
			struct pb_field g;
			struct location loc = { .first_line = pr->nlines };
			while ((rc = pb_next(&m, &g)) > 0) {
				if (g.wire == PB_VARINT && g.number == 1)
					loc.id = g.value;
				else if (g.wire == PB_VARINT && g.number == 3)
					loc.address = g.value;
				else if (g.wire == PB_LEN && g.number == 4 && add_line(&g, pr) < 0)
					return import_fail(b, "malformed or too many location lines");
			}
			if (rc < 0)
				return import_fail(b, "malformed location at byte %zu",
						   (size_t)(f.data - buf));
			loc.nlines = pr->nlines - loc.first_line;
			if (push((void **)&pr->locations, &pr->nlocations, &pr->locations_cap,
				 sizeof(*pr->locations)) < 0)
				return import_fail(b, "out of memory");
			pr->locations[pr->nlocations - 1] = loc;
		}
	}
	if (rc < 0)
		return import_fail(b, "not a profile.proto: malformed protobuf at byte %zu",
				   (size_t)(r.p - buf));
	return 0;
}

static int cmp_function(const void *a, const void *b)
{
	uint64_t x = ((const struct function *)a)->id, y = ((const struct function *)b)->id;
	return (x > y) - (x < y);
}

static int cmp_location(const void *a, const void *b)
{
	uint64_t x = ((const struct location *)a)->id, y = ((const struct location *)b)->id;
	return (x > y) - (x < y);
}

/* 1 when string s equals lit. */
static int str_is(const struct profile *pr, uint64_t s, const char *lit)
{
	size_t n = strlen(lit);
	return s < pr->nstrings && pr->strings[s].len == n && memcmp(pr->strings[s].p, lit, n) == 0;
}

/* A sample being decoded. */
struct sample {
	uint64_t *locs;
	size_t nlocs, locs_cap;
	uint64_t values[16];
	size_t nvalues;
	int32_t tid;
	uint64_t time_ns;
};

static int add_loc(uint64_t v, void *arg)
{
	struct sample *s = arg;
	if (s->nlocs >= IMPORT_MAX_DEPTH * 4)
		return 0; /* deeper than any kept stack: the rest is cut anyway */
	if (push((void **)&s->locs, &s->nlocs, &s->locs_cap, sizeof(*s->locs)) < 0)
		return -1;
	s->locs[s->nlocs - 1] = v;
	return 0;
}

static int add_value(uint64_t v, void *arg)
{
	struct sample *s = arg;
	if (s->nvalues < 16)
		s->values[s->nvalues++] = v;
	return 0;
}

static int read_label(const struct pb_field *f, const struct profile *pr, struct sample *s)
{
	struct pb_reader r = { f->data, f->data + f->len };
	struct pb_field g;
	uint64_t key = 0, str = 0, num = 0;
	int rc, has_num = 0;

	while ((rc = pb_next(&r, &g)) > 0) {
		if (g.wire != PB_VARINT)
			continue;
		if (g.number == 1)
			key = g.value;
		else if (g.number == 2)
			str = g.value;
		else if (g.number == 3) {
			num = g.value;
			has_num = 1;
		}
	}
	if (rc < 0)
		return -1;
	if (str_is(pr, key, "thread id") || str_is(pr, key, "tid") || str_is(pr, key, "thread_id")) {
		if (!has_num && str && str < pr->nstrings && pr->strings[str].len < 11) {
			char d[12];
			memcpy(d, pr->strings[str].p, pr->strings[str].len);
			d[pr->strings[str].len] = 0;
			char *e;
			num = strtoull(d, &e, 10);
			has_num = *d && !*e;
		}
		if (has_num && num <= INT32_MAX)
			s->tid = (int32_t)num;
	} else if (has_num && (str_is(pr, key, "timestamp") || str_is(pr, key, "timestamp_ns") ||
			       str_is(pr, key, "end_timestamp_ns"))) {
		s->time_ns = num;
	}
	return 0;
}

/* Decodes sample i of pr into s (its locations, values, thread and time). Returns 0, or
 * -1 after import_fail. */
static int decode_sample(struct import_run *b, const struct profile *pr, size_t i,
			 struct sample *s)
{
	struct pb_reader r = { pr->samples[i].p, pr->samples[i].p + pr->samples[i].len };
	struct pb_field f;
	int rc;

	s->nlocs = s->nvalues = 0;
	s->tid = -1;
	s->time_ns = IMPORT_TIME_UNKNOWN;
	while ((rc = pb_next(&r, &f)) > 0) {
		if (f.number == 1)
			rc = each_varint(&f, add_loc, s);
		else if (f.number == 2)
			rc = each_varint(&f, add_value, s);
		else if (f.number == 3 && f.wire == PB_LEN)
			rc = read_label(&f, pr, s);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		return import_fail(b, "malformed sample %zu", i);
	if (s->nvalues != pr->ntypes)
		return import_fail(b, "sample %zu has %zu values for %zu sample types", i,
				   s->nvalues, pr->ntypes);
	return 0;
}

/* Sample i's frames into (*pcs)[0..*depth) (grown as needed, *cap its room): each
 * location's lines, innermost first, leaf location first; the stored-frames limit bounds
 * the work of resolving them. Returns 0, or -1 after import_fail. */
static int sample_frames(struct import_run *b, const struct profile *pr, size_t i,
			 const struct sample *s, uint64_t **pcs, size_t *cap, size_t *depth)
{
	*depth = 0;
	for (size_t k = 0; k < s->nlocs && *depth < IMPORT_MAX_DEPTH; k++) {
		struct location key = { .id = s->locs[k] };
		const struct location *loc =
			pr->nlocations ? bsearch(&key, pr->locations, pr->nlocations, sizeof(key),
						 cmp_location) : NULL;
		if (!loc)
			return import_fail(b, "sample %zu refers to location %" PRIu64
					   ", which is not in the profile", i, s->locs[k]);
		size_t nl = loc->nlines ? loc->nlines : 1;
		if (nl > IMPORT_MAX_DEPTH - *depth)
			nl = IMPORT_MAX_DEPTH - *depth;
		if (*depth + nl > *cap) {
			size_t c = *depth + nl + IMPORT_MAX_DEPTH;
			uint64_t *q = realloc(*pcs, c * sizeof(**pcs));
			if (!q)
				return import_fail(b, "out of memory");
			*pcs = q;
			*cap = c;
		}
		if (!loc->nlines) {
			char name[24];
			int n = snprintf(name, sizeof(name), "0x%" PRIx64, loc->address);
			if (import_frame(b, name, (size_t)n, &(*pcs)[(*depth)++]) < 0)
				return -1;
			continue;
		}
		for (size_t l = 0; l < nl; l++) {
			struct function fkey = { .id = pr->lines[loc->first_line + l] };
			const struct function *fn =
				pr->nfunctions ? bsearch(&fkey, pr->functions, pr->nfunctions,
							 sizeof(fkey), cmp_function) : NULL;
			if (!fn || fn->name >= pr->nstrings)
				return import_fail(b, "location %" PRIu64 " names a missing function"
						   " or string", loc->id);
			const struct str *nm = &pr->strings[fn->name];
			if (import_frame(b, (const char *)nm->p, nm->len, &(*pcs)[(*depth)++]) < 0)
				return -1;
		}
	}
	return 0;
}

int import_pprof(struct import_run *b, const unsigned char *buf, size_t len)
{
	struct profile pr = { 0 };
	struct sample s = { 0 };
	unsigned char *raw = NULL;
	uint64_t *pcs = NULL;
	size_t pcs_cap = 0;
	int ret = -1, count_type = -1, weight_type = -1;

	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		if (gunzip(b, buf, len, &raw, &len) < 0)
			return -1;
		buf = raw;
	}
	if (read_profile(b, buf, len, &pr) < 0)
		goto cleanup;
	if (pr.nstrings == 0 || pr.strings[0].len != 0) {
		import_fail(b, "not a profile.proto: the string table must start with \"\"");
		goto cleanup;
	}
	for (size_t t = 0; t < pr.ntypes; t++) {
		if (count_type < 0 && str_is(&pr, pr.sample_types[t][0], "samples"))
			count_type = (int)t;
		if (weight_type < 0 && str_is(&pr, pr.sample_types[t][1], "nanoseconds"))
			weight_type = (int)t;
	}
	int period_ns = str_is(&pr, pr.period_type[1], "nanoseconds") && pr.period > 0;
	if (period_ns && pr.period < UINT64_MAX / 2)
		b->run->hz = 1e9 / (double)pr.period;
	if (pr.nfunctions)
		qsort(pr.functions, pr.nfunctions, sizeof(*pr.functions), cmp_function);
	if (pr.nlocations)
		qsort(pr.locations, pr.nlocations, sizeof(*pr.locations), cmp_location);

	for (size_t i = 0; i < pr.nsamples; i++) {
		if (decode_sample(b, &pr, i, &s) < 0)
			goto cleanup;
		uint64_t count = 1;
		if (count_type >= 0)
			count = s.values[count_type];
		else if (s.nvalues && pr.period > 0)
			count = (s.values[0] + pr.period / 2) / pr.period;
		double weight = weight_type >= 0 ? (double)(int64_t)s.values[weight_type]
			      : period_ns ? (double)count * (double)pr.period : NAN;
		if ((int64_t)count < 0) {
			import_fail(b, "sample %zu has a negative count", i);
			goto cleanup;
		}
		if (count == 0)
			continue; /* nothing to resolve: so every resolved frame is a stored one */
		size_t depth = 0;
		if (sample_frames(b, &pr, i, &s, &pcs, &pcs_cap, &depth) < 0)
			goto cleanup;
		if (import_sample(b, pcs, (uint32_t)depth, s.tid, s.time_ns, weight, count) < 0)
			goto cleanup;
	}
	ret = 0;
cleanup:
	free(pcs);
	free(s.locs);
	free(pr.strings);
	free(pr.samples);
	free(pr.functions);
	free(pr.locations);
	free(pr.lines);
	free(raw);
	return ret;
}
