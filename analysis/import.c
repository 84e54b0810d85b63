/* import.c - what every importer shares: the run being filled, frame names, limits, the
 * format table and detection (see import.h). */
#include "analysis/import.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export.h"

struct import_name {
	char *name;
	size_t len;
	uint64_t pc;
};

/* The formats: a new importer is its reader and a line here. */
const struct import_format import_formats[] = {
	{ "pprof", import_pprof, IMPORT_MAX_FILE },
	{ "perf-script", import_perf_script, IMPORT_MAX_FILE },
	{ "folded", import_folded, IMPORT_MAX_FILE },
	{ "speedscope", import_speedscope, IMPORT_MAX_JSON },
	{ "firefox", import_firefox, IMPORT_MAX_JSON },
	{ "gperftools", import_gperftools, IMPORT_MAX_FILE },
	{ "sysprof", import_sysprof, IMPORT_MAX_FILE },
};
const size_t import_nformats = sizeof(import_formats) / sizeof(import_formats[0]);

int import_fail(struct import_run *b, const char *fmt, ...)
{
	va_list ap;

	if (b->err && b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->errlen, fmt, ap);
		va_end(ap);
		/* messages quote the file: keep them one printable line */
		for (char *c = b->err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	}
	return -1;
}

int import_begin(struct import_run *b, struct sb_run *r, char *err, size_t errlen)
{
	*b = (struct import_run){ .run = r, .err = err, .errlen = errlen };
	memset(r, 0, sizeof(*r));
	r->hz = NAN;
	r->duration_s = NAN;
	if (err && errlen)
		err[0] = 0;
	return 0;
}

static uint64_t hash_name(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* An address written as export_frame_name writes one ("0x" and lowercase hex, no zeros in
 * front), so that a frame without a symbol comes back as the same PC. */
static int parse_address(const char *s, size_t len, uint64_t *pc)
{
	uint64_t v = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x' || (s[2] == '0' && len > 3))
		return 0;
	for (size_t i = 2; i < len; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return 0;
	}
	*pc = v;
	return v != 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int rehash(struct import_run *b)
{
	size_t nslots = b->nslots ? 2 * b->nslots : 1024;
	size_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < b->nnames; i++) {
		size_t s = hash_name(b->names[i].name, b->names[i].len) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = i + 1;
	}
	free(b->slots);
	b->slots = slots;
	b->nslots = nslots;
	return 0;
}

int import_frame(struct import_run *b, const char *name, size_t len, uint64_t *pc)
{
	if (len == 9 && memcmp(name, "[unknown]", 9) == 0) {
		*pc = EXPORT_UNKNOWN_PC;
		return 0;
	}
	if (parse_address(name, len, pc) && *pc < IMPORT_PC_BASE)
		return 0;
	if (2 * (b->nnames + 1) > b->nslots && rehash(b) < 0)
		return import_fail(b, "out of memory");
	size_t s = hash_name(name, len) & (b->nslots - 1);
	for (; b->slots[s]; s = (s + 1) & (b->nslots - 1)) {
		struct import_name *n = &b->names[b->slots[s] - 1];
		if (n->len == len && memcmp(n->name, name, len) == 0) {
			*pc = n->pc;
			return 0;
		}
	}
	if (b->nnames >= IMPORT_MAX_SAMPLES)
		return import_fail(b, "more than %u distinct frame names", IMPORT_MAX_SAMPLES);
	if (grow((void **)&b->names, &b->names_cap, b->nnames + 1, sizeof(*b->names)) < 0)
		return import_fail(b, "out of memory");
	struct import_name *n = &b->names[b->nnames];
	if (!(n->name = malloc(len + 1)))
		return import_fail(b, "out of memory");
	memcpy(n->name, name, len);
	n->name[len] = 0;
	n->len = len;
	n->pc = IMPORT_PC_BASE + 16 * (uint64_t)b->nnames;
	b->slots[s] = ++b->nnames;
	*pc = n->pc;
	return 0;
}

int import_sample(struct import_run *b, const uint64_t *pcs, uint32_t depth, int32_t tid,
		  uint64_t time_ns, double weight_ns, uint64_t count)
{
	struct sb_run *r = b->run;
	uint32_t flags = 0;

	if (count == 0)
		return 0;
	if (depth > IMPORT_MAX_DEPTH) {
		depth = IMPORT_MAX_DEPTH; /* leaf first: the leaf-most frames stay */
		flags |= SB_SAMPLE_TRUNCATED;
	}
	if (count > IMPORT_MAX_SAMPLES - r->nsamples)
		return import_fail(b, "more than %u samples", IMPORT_MAX_SAMPLES);
	if (depth > IMPORT_MAX_FRAMES - r->nframes)
		return import_fail(b, "more than %u frames", IMPORT_MAX_FRAMES);
	/* equal samples share their frames: the count costs a sample row each, not a stack */
	if (grow((void **)&r->samples, &b->samples_cap, r->nsamples + count, sizeof(*r->samples)) < 0 ||
	    grow((void **)&r->frames, &b->frames_cap, r->nframes + depth, sizeof(*r->frames)) < 0)
		return import_fail(b, "out of memory");
	if (depth)
		memcpy(r->frames + r->nframes, pcs, depth * sizeof(*pcs));
	for (uint64_t k = 0; k < count; k++) {
		struct sb_sample *s = &r->samples[r->nsamples++];
		*s = (struct sb_sample){
			.time_ns = time_ns, .tid = tid, .thread_index = -1,
			.weight_ns = weight_ns / (double)count, .stop_latency_ns = NAN,
			.suspend_window_ns = NAN, .depth = depth, .flags = flags,
			.frame_offset = r->nframes,
		};
	}
	r->nframes += depth;
	return 0;
}

static void free_names(struct import_run *b)
{
	for (size_t i = 0; i < b->nnames; i++)
		free(b->names[i].name);
	free(b->names);
	free(b->slots);
	b->names = NULL;
	b->slots = NULL;
	b->nnames = 0;
}

void import_abort(struct import_run *b)
{
	free_names(b);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int import_end(struct import_run *b, const char *format)
{
	struct sb_run *r = b->run;
	int32_t *tids = NULL;
	int ret = -1;

	/* names were given PCs in order, so the table is sorted by PC as symbol_find needs */
	r->symbols = calloc(b->nnames ? b->nnames : 1, sizeof(*r->symbols));
	tids = malloc((r->nsamples ? r->nsamples : 1) * sizeof(*tids));
	if (!r->symbols || !tids) {
		import_fail(b, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < b->nnames; i++) {
		struct sb_symbol *s = &r->symbols[i];
		const char *name = b->names[i].name;
		size_t len = b->names[i].len;
		int kernel = len > 4 && strcmp(name + len - 4, "_[k]") == 0;
		s->pc = b->names[i].pc;
		snprintf(s->module, sizeof(s->module), "%s",
			 kernel ? SB_SYM_MODULE_KERNEL : SB_SYM_MODULE_UNKNOWN);
		snprintf(s->function, sizeof(s->function), "%.*s", (int)(kernel ? len - 4 : len),
			 name);
	}
	r->nsymbols = b->nnames;
	size_t n = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		tids[i] = r->samples[i].tid;
	qsort(tids, r->nsamples, sizeof(*tids), cmp_i32);
	for (size_t i = 0; i < r->nsamples; i++)
		n += tids[i] >= 0 && (i == 0 || tids[i] != tids[i - 1]);
	r->threads = (int32_t)n;
	snprintf(r->sampler, sizeof(r->sampler), "import:%s", format);
	ret = 0;
cleanup:
	free(tids);
	free_names(b);
	return ret;
}

const struct import_format *import_format_find(const char *name)
{
	for (size_t i = 0; i < import_nformats; i++)
		if (strcmp(import_formats[i].name, name) == 0)
			return &import_formats[i];
	return NULL;
}

/* 1 when buf's first KiB holds the JSON key "key" (quotes included). */
static int json_has_key(const unsigned char *buf, size_t len, const char *key)
{
	return memmem(buf, len < 4096 ? len : 4096, key, strlen(key)) != NULL;
}

const struct import_format *import_detect(const unsigned char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		return import_format_find("pprof");
	if (len >= 24 && memcmp(buf, "\0\0\0\0\0\0\0\0\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24) == 0)
		return import_format_find("gperftools");
	if (len >= 4 && memcmp(buf, "\x5e\x97\xca\xfd", 4) == 0)
		return import_format_find("sysprof");
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	if (i < len && buf[i] == '{') {
		if (json_has_key(buf, len, "\"preprocessedProfileVersion\""))
			return import_format_find("firefox");
		if (json_has_key(buf, len, "\"shared\"") || json_has_key(buf, len, "speedscope"))
			return import_format_find("speedscope");
		return NULL;
	}
	/* perf script: a header line, then an indented callchain line */
	const unsigned char *nl = memchr(buf, '\n', len);
	if (nl && nl + 1 < buf + len && (nl[1] == '\t' || nl[1] == ' ') && buf[0] != ' ')
		return import_format_find("perf-script");
	if (len && (buf[0] == 0x0a || buf[0] == 0x12))
		return import_format_find("pprof"); /* an uncompressed profile's first field */
	if (len)
		return import_format_find("folded");
	return NULL;
}

int import_buffer(const struct import_format *fmt, const unsigned char *buf, size_t len,
		  struct sb_run *r, char *err, size_t errlen)
{
	struct import_run b;

	import_begin(&b, r, err, errlen);
	if (len > fmt->max_bytes) {
		import_fail(&b, "%zu bytes, more than the %zu a %s file may have", len,
			    fmt->max_bytes, fmt->name);
		goto fail;
	}
	if (fmt->read(&b, buf, len) < 0 || import_end(&b, fmt->name) < 0)
		goto fail;
	return 0;
fail:
	import_abort(&b);
	run_free(r);
	memset(r, 0, sizeof(*r));
	return -1;
}

unsigned char *import_read_file(const char *path, size_t max, size_t *len, char *err,
				size_t errlen)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				snprintf(err, errlen, "'%s' is larger than %zu bytes", path, max);
				goto fail;
			}
			cap = cap ? 2 * cap : 1 << 16;
			unsigned char *q = realloc(buf, cap + 1);
			if (!q) {
				snprintf(err, errlen, "out of memory reading '%s'", path);
				goto fail;
			}
			buf = q;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (k == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (n > max) {
		snprintf(err, errlen, "'%s' is larger than %zu bytes", path, max);
		goto fail;
	}
	if (!is_stdin)
		fclose(f);
	*len = n;
	return buf;
fail:
	if (!is_stdin)
		fclose(f);
	free(buf);
	return NULL;
}
