/* cpuprofile.c - gperftools' legacy CPU profile format (see cpuprofile.h for the rules). */
#include "sampler/cpuprofile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#define WORD 8u

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Reads word i of p; the caller has checked it lies inside the buffer. memcpy because the
 * buffer may be unaligned (a fuzzer's input, a mapping at an odd offset). */
static uint64_t word_at(const unsigned char *p, size_t i)
{
	uint64_t w;
	memcpy(&w, p + i * WORD, WORD);
	return w;
}

static int check_header(const unsigned char *b, size_t len, char *err, size_t errlen)
{
	if (len < CPUPROFILE_HEADER_BYTES) {
		set_err(err, errlen, "truncated header: %zu bytes, need %u", len,
			CPUPROFILE_HEADER_BYTES);
		return -1;
	}
	uint64_t w0 = word_at(b, 0), w1 = word_at(b, 1), w2 = word_at(b, 2);
	uint64_t period = word_at(b, 3), pad = word_at(b, 4);
	uint32_t h32[2];
	memcpy(h32, b, sizeof(h32));
	/* a 32-bit profile: words 0 3 0 P 0 of 4 bytes each */
	if (h32[0] == 0 && h32[1] == 3) {
		set_err(err, errlen, "bad header: 32-bit profile not supported");
		return -1;
	}
	if (w0 == 0 && w1 == __builtin_bswap64(3)) {
		set_err(err, errlen, "bad header: byte-swapped profile not supported");
		return -1;
	}
	if (w0 != 0 || w1 != 3 || w2 != 0) {
		set_err(err, errlen,
			"bad header: words 0-2 are %" PRIu64 " %" PRIu64 " %" PRIu64
			", want 0 3 0 (not a gperftools cpu profile)",
			w0, w1, w2);
		return -1;
	}
	if (period == 0 || period > UINT32_MAX) {
		set_err(err, errlen, "bad header: sampling period %" PRIu64 " us out of range",
			period);
		return -1;
	}
	if (pad != 0) {
		set_err(err, errlen, "bad header: padding word is %" PRIu64 ", want 0", pad);
		return -1;
	}
	return 0;
}

int cpuprofile_parse(const void *buf, size_t len, struct cpuprofile *out, char *err,
		     size_t errlen)
{
	const unsigned char *b = buf;
	struct cpuprofile p;

	if (!buf && len > 0) {
		set_err(err, errlen, "no buffer");
		return -1;
	}
	if (check_header(b, len, err, errlen) != 0)
		return -1;

	memset(&p, 0, sizeof(p));
	p.period_us = word_at(b, 3);
	p.data = b + CPUPROFILE_HEADER_BYTES;

	/* off only grows and is checked against len before every read, in byte units, so no
	 * word count derived from the file can overflow the arithmetic */
	size_t off = CPUPROFILE_HEADER_BYTES;
	for (;;) {
		size_t left = len - off;
		if (left == 0) {
			set_err(err, errlen, "missing trailer after %" PRIu64 " records at byte %zu",
				p.records, off);
			return -1;
		}
		if (left < 2 * WORD) {
			set_err(err, errlen,
				"truncated record at byte %zu: %zu bytes left, need 16 for count and depth",
				off, left);
			return -1;
		}
		uint64_t count = word_at(b + off, 0), depth = word_at(b + off, 1);
		if (depth == 0) {
			set_err(err, errlen, "record at byte %zu has depth 0", off);
			return -1;
		}
		if (depth > CPUPROFILE_MAX_DEPTH) {
			set_err(err, errlen, "record at byte %zu has depth %" PRIu64 ", limit %d",
				off, depth, CPUPROFILE_MAX_DEPTH);
			return -1;
		}
		size_t need = 2 * WORD + (size_t)depth * WORD;
		if (left < need) {
			set_err(err, errlen,
				"truncated record at byte %zu: depth %" PRIu64
				" needs %zu bytes, %zu left",
				off, depth, need, left);
			return -1;
		}
		uint64_t pc0 = word_at(b + off, 2);
		if (count == 0) {
			if (depth == 1 && pc0 == 0)
				break; /* the trailer */
			set_err(err, errlen,
				"record at byte %zu has count 0 and is not the 0 1 0 trailer", off);
			return -1;
		}
		if (pc0 == 0) {
			set_err(err, errlen,
				"record at byte %zu has a zero leaf pc (pprof reads it as the end of data)",
				off);
			return -1;
		}
		if (count > UINT64_MAX - p.total_count) {
			set_err(err, errlen,
				"count overflow at byte %zu: total of counts exceeds 2^64 - 1", off);
			return -1;
		}
		p.total_count += count;
		p.records++;
		if (depth > p.max_depth)
			p.max_depth = (uint32_t)depth;
		off += need;
	}
	p.data_len = off - CPUPROFILE_HEADER_BYTES;
	off += CPUPROFILE_TRAILER_BYTES;
	p.maps = (const char *)b + off;
	p.maps_len = len - off;
	*out = p;
	return 0;
}

int cpuprofile_foreach(const struct cpuprofile *p, cpuprofile_record_fn fn, void *arg)
{
	uint64_t pcs[CPUPROFILE_MAX_DEPTH];
	size_t off = 0;

	/* The profile was validated by cpuprofile_parse(); the bounds checks stay so that a
	 * hand-filled struct cannot make this read outside data[0..data_len). */
	while (p->data_len - off >= 2 * WORD) {
		struct cpuprofile_record rec;
		uint64_t depth = word_at(p->data + off, 1);
		if (depth == 0 || depth > CPUPROFILE_MAX_DEPTH ||
		    p->data_len - off - 2 * WORD < depth * WORD)
			return -1;
		rec.count = word_at(p->data + off, 0);
		rec.depth = (uint32_t)depth;
		memcpy(pcs, p->data + off + 2 * WORD, depth * WORD);
		rec.pcs = pcs;
		int rc = fn(&rec, arg);
		if (rc != 0)
			return rc;
		off += 2 * WORD + depth * WORD;
	}
	return 0;
}

static int put_words(FILE *f, const uint64_t *w, size_t n)
{
	if (n > 0 && fwrite(w, WORD, n, f) != n)
		return -1;
	return 0;
}

int cpuprofile_write_header(FILE *f, uint64_t period_us)
{
	if (period_us == 0 || period_us > UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	uint64_t h[5] = { 0, 3, 0, period_us, 0 };
	return put_words(f, h, 5);
}

int cpuprofile_write_record(FILE *f, uint64_t count, const uint64_t *pcs, uint32_t depth)
{
	if (count == 0 || depth == 0 || depth > CPUPROFILE_MAX_DEPTH || !pcs || pcs[0] == 0) {
		errno = EINVAL;
		return -1;
	}
	uint64_t h[2] = { count, depth };
	if (put_words(f, h, 2) != 0)
		return -1;
	return put_words(f, pcs, depth);
}

int cpuprofile_write_trailer(FILE *f, const char *maps, size_t maps_len)
{
	uint64_t t[3] = { 0, 1, 0 };
	if (put_words(f, t, 3) != 0)
		return -1;
	if (maps && maps_len > 0 && fwrite(maps, 1, maps_len, f) != maps_len)
		return -1;
	return 0;
}

int cpuprofile_write(FILE *f, uint64_t period_us, const struct cpuprofile_record *recs,
		     size_t n, const char *maps, size_t maps_len)
{
	uint64_t total = 0;

	/* refuse a total the parser would reject before writing anything */
	for (size_t i = 0; i < n; i++) {
		if (recs[i].count > UINT64_MAX - total) {
			errno = EOVERFLOW;
			return -1;
		}
		total += recs[i].count;
	}
	if (cpuprofile_write_header(f, period_us) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (cpuprofile_write_record(f, recs[i].count, recs[i].pcs, recs[i].depth) != 0)
			return -1;
	return cpuprofile_write_trailer(f, maps, maps_len);
}
