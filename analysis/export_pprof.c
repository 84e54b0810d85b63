/* export_pprof.c - a run as a gzip-compressed profile.proto (see export.h). The message
 * numbers are those of github.com/google/pprof/proto/profile.proto. */
#include "analysis/export.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/protobuf.h"
#include "analysis/symbolize.h"
#include "sampler/cpuprofile.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6, PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
	LOCATION_ID = 1, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
};

/* The fixed head of the string table; function names follow from STR_FIRST_NAME, then
 * the thread names. */
enum { STR_EMPTY, STR_SAMPLES, STR_COUNT, STR_CPU, STR_NANOSECONDS, STR_THREAD_ID,
       STR_TIMESTAMP, STR_COMMENT, STR_THREAD_NAME, STR_FIRST_NAME };

static void value_type(struct pb_buf *b, uint32_t field, uint64_t type, uint64_t unit)
{
	struct pb_buf m = { 0 };

	pb_uint(&m, VALUE_TYPE_TYPE, type);
	pb_uint(&m, VALUE_TYPE_UNIT, unit);
	pb_message(b, field, &m);
	pb_free(&m);
}

static void num_label(struct pb_buf *b, uint64_t key, int64_t num, uint64_t unit)
{
	struct pb_buf m = { 0 };

	pb_uint(&m, LABEL_KEY, key);
	pb_uint(&m, LABEL_NUM, (uint64_t)num);
	if (unit)
		pb_uint(&m, LABEL_NUM_UNIT, unit);
	pb_message(b, SAMPLE_LABEL, &m);
	pb_free(&m);
}

/* A string label: key and value are string table indices. */
static void str_label(struct pb_buf *b, uint64_t key, uint64_t str)
{
	struct pb_buf m = { 0 };

	pb_uint(&m, LABEL_KEY, key);
	pb_uint(&m, LABEL_STR, str);
	pb_message(b, SAMPLE_LABEL, &m);
	pb_free(&m);
}

/* The distinct thread names of a run's samples, in order of first use. */
struct thread_names {
	char (*name)[SB_THREAD_NAME_LEN];
	size_t n, cap;
};

/* The index of name in t, added when new. Returns -1 when out of memory. */
static long thread_name_index(struct thread_names *t, const char *name)
{
	for (size_t k = 0; k < t->n; k++)
		if (strcmp(t->name[k], name) == 0)
			return (long)k;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char (*p)[SB_THREAD_NAME_LEN] = realloc(t->name, cap * sizeof(*p));
		if (!p)
			return -1;
		t->name = p;
		t->cap = cap;
	}
	memcpy(t->name[t->n], name, SB_THREAD_NAME_LEN);
	return (long)t->n++;
}

/* One Line: function id, and its line when known. */
static void write_line(struct pb_buf *m, struct pb_buf *line, uint64_t func, int32_t lineno)
{
	pb_reset(line);
	pb_uint(line, LINE_FUNCTION_ID, func);
	if (lineno > 0)
		pb_uint(line, LINE_LINE, (uint64_t)lineno);
	pb_message(m, LOCATION_LINE, line);
}

/* Appends Location i + 1 (PC fr->pcs[i]) to p: one Line per inlined frame of its chain,
 * innermost first, then the function that contains them (as Go's runtime writes inlined
 * calls); a Line's line is the call site the frame inside it was inlined at. */
static void write_location(struct pb_buf *p, const struct sb_run *r,
			   const struct export_frames *fr, size_t i, struct pb_buf *m,
			   struct pb_buf *line)
{
	size_t k;
	const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, fr->pcs[i], &k);

	pb_reset(m);
	pb_uint(m, LOCATION_ID, i + 1);
	if (fr->pcs[i] != EXPORT_UNKNOWN_PC)
		pb_uint(m, LOCATION_ADDRESS, fr->pcs[i]);
	for (size_t d = 0; d < k; d++)
		write_line(m, line, fr->inl_func[fr->inl_at[i] + d] + 1, d ? c[d - 1].call_line : 0);
	write_line(m, line, fr->func[i] + 1, k ? c[k - 1].call_line : 0);
	pb_message(p, PROFILE_LOCATION, m);
}

/* Appends one Sample per sample of r to p: its locations, values and labels; the thread
 * names it labels go into names, string first_str + their index. Returns 0, or -1 when
 * out of memory. */
static int write_samples(struct pb_buf *p, const struct sb_run *r, const struct export_frames *fr,
			 struct thread_names *names, uint64_t first_str)
{
	struct pb_buf m = { 0 };
	uint64_t ids[CPUPROFILE_MAX_DEPTH];
	char name[SB_THREAD_NAME_LEN];
	double period_ns = r->hz > 0 ? 1e9 / r->hz : 1e7;
	int ret = -1;

	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sb_sample *s = &r->samples[i];
		uint32_t depth;
		const uint64_t *stack = export_sample_stack(r, i, &depth);
		double w = isfinite(s->weight_ns) && s->weight_ns >= 0 ? s->weight_ns : period_ns;
		uint64_t values[2] = { sample_ticks(s), (uint64_t)llround(w) };

		/* Location k + 1 is PC k; Function k + 1 is name k, string STR_FIRST_NAME + k */
		for (uint32_t d = 0; d < depth; d++)
			ids[d] = export_frames_pc(fr, stack[d]) + 1;
		pb_reset(&m);
		pb_packed(&m, SAMPLE_LOCATION_ID, ids, depth);
		pb_packed(&m, SAMPLE_VALUE, values, 2);
		if (s->tid >= 0)
			num_label(&m, STR_THREAD_ID, s->tid, 0);
		if (*export_thread_name(r, i, name)) {
			long k = thread_name_index(names, name);
			if (k < 0)
				goto cleanup;
			str_label(&m, STR_THREAD_NAME, first_str + (uint64_t)k);
		}
		if (export_time_known(s))
			num_label(&m, STR_TIMESTAMP, (int64_t)s->time_ns, STR_NANOSECONDS);
		pb_message(p, PROFILE_SAMPLE, &m);
	}
	ret = m.failed ? -1 : 0;
cleanup:
	pb_free(&m);
	return ret;
}

/* Writes buf[0..len) to out as one gzip member. */
static int gzip_write(FILE *out, const unsigned char *buf, size_t len)
{
	unsigned char chunk[1 << 14];
	z_stream z = { 0 };
	int rc;

	/* windowBits 15 + 16: a gzip header and trailer rather than zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len; /* a run's profile is far below 4 GiB */
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = deflate(&z, Z_FINISH);
		size_t n = sizeof(chunk) - z.avail_out;
		if (rc == Z_STREAM_ERROR || (n && fwrite(chunk, 1, n, out) != n)) {
			deflateEnd(&z);
			return -1;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

/* Writes a profile.proto (see export.h). */
int64_t export_pprof(FILE *out, const struct sb_run *r)
{
	struct pb_buf p = { 0 }, m = { 0 }, line = { 0 };
	struct export_frames fr;
	struct thread_names names = { 0 };
	char comment[EXPORT_TITLE_LEN];
	int64_t ret = -1;
	double period_ns = r->hz > 0 ? 1e9 / r->hz : 1e7;

	if (export_frames_build(r, 0, &fr) < 0)
		goto cleanup;
	value_type(&p, PROFILE_SAMPLE_TYPE, STR_SAMPLES, STR_COUNT);
	value_type(&p, PROFILE_SAMPLE_TYPE, STR_CPU, STR_NANOSECONDS);
	if (write_samples(&p, r, &fr, &names, STR_FIRST_NAME + fr.nnames) < 0) {
		errno = ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < fr.npcs; i++)
		write_location(&p, r, &fr, i, &m, &line);
	for (size_t f = 0; f < fr.nnames; f++) {
		pb_reset(&m);
		pb_uint(&m, FUNCTION_ID, f + 1);
		pb_uint(&m, FUNCTION_NAME, STR_FIRST_NAME + f);
		pb_uint(&m, FUNCTION_SYSTEM_NAME, STR_FIRST_NAME + f);
		pb_message(&p, PROFILE_FUNCTION, &m);
	}
	export_run_title(r, comment, sizeof(comment));
	const char *fixed[STR_FIRST_NAME] = { "", "samples", "count", "cpu", "nanoseconds",
					      "thread id", "timestamp", comment, "thread name" };
	for (size_t i = 0; i < STR_FIRST_NAME; i++)
		pb_string(&p, PROFILE_STRING_TABLE, fixed[i]);
	for (size_t f = 0; f < fr.nnames; f++)
		pb_string(&p, PROFILE_STRING_TABLE, fr.names[f]);
	for (size_t k = 0; k < names.n; k++)
		pb_string(&p, PROFILE_STRING_TABLE, names.name[k]);
	if (r->duration_s > 0)
		pb_uint(&p, PROFILE_DURATION_NANOS, (uint64_t)llround(r->duration_s * 1e9));
	value_type(&p, PROFILE_PERIOD_TYPE, STR_CPU, STR_NANOSECONDS);
	pb_uint(&p, PROFILE_PERIOD, (uint64_t)llround(period_ns));
	pb_uint(&p, PROFILE_COMMENT, STR_COMMENT);
	if (p.failed || m.failed || line.failed) {
		errno = ENOMEM;
		goto cleanup;
	}
	if (gzip_write(out, p.p, p.len) < 0)
		goto cleanup;
	ret = (int64_t)r->nsamples;
cleanup:
	export_frames_free(&fr);
	free(names.name);
	pb_free(&p);
	pb_free(&m);
	pb_free(&line);
	return ret;
}
