/* protobuf.c - the protocol buffers wire format (see protobuf.h). */
#include "analysis/protobuf.h"

#include <stdlib.h>
#include <string.h>

static int reserve(struct pb_buf *b, size_t n)
{
	if (b->failed)
		return -1;
	if (b->len + n <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	unsigned char *p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put_varint(struct pb_buf *b, uint64_t v)
{
	if (reserve(b, 10) < 0)
		return;
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		b->p[b->len++] = c | (v ? 0x80 : 0);
	} while (v);
}

static void put_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	put_tag(b, field, PB_VARINT);
	put_varint(b, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	put_tag(b, field, PB_LEN);
	put_varint(b, len);
	if (len && reserve(b, len) == 0) {
		memcpy(b->p + b->len, data, len);
		b->len += len;
	}
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
	if (msg->failed)
		b->failed = 1;
	pb_bytes(b, field, msg->p, msg->len);
}

void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		do {
			len++;
			x >>= 7;
		} while (x);
	}
	put_tag(b, field, PB_LEN);
	put_varint(b, len);
	for (size_t i = 0; i < n; i++)
		put_varint(b, v[i]);
}

void pb_reset(struct pb_buf *b)
{
	b->len = 0;
	b->failed = 0;
}

void pb_free(struct pb_buf *b)
{
	free(b->p);
	*b = (struct pb_buf){ 0 };
}

int pb_read_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*p >= end)
			return -1;
		unsigned char c = *(*p)++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1; /* more than 10 bytes */
}

int pb_next(struct pb_reader *r, struct pb_field *f)
{
	uint64_t key;

	if (r->p >= r->end)
		return 0;
	if (pb_read_varint(&r->p, r->end, &key) < 0 || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return -1;
	f->number = (uint32_t)(key >> 3);
	f->wire = (enum pb_wire)(key & 7);
	f->data = NULL;
	f->len = 0;
	f->value = 0;
	switch (f->wire) {
	case PB_VARINT:
		return pb_read_varint(&r->p, r->end, &f->value) < 0 ? -1 : 1;
	case PB_I64:
	case PB_I32: {
		size_t n = f->wire == PB_I64 ? 8 : 4;
		if ((size_t)(r->end - r->p) < n)
			return -1;
		memcpy(&f->value, r->p, n); /* little-endian host */
		r->p += n;
		return 1;
	}
	case PB_LEN: {
		uint64_t len;
		if (pb_read_varint(&r->p, r->end, &len) < 0 || len > (uint64_t)(r->end - r->p))
			return -1;
		f->data = r->p;
		f->len = (size_t)len;
		r->p += len;
		return 1;
	}
	default:
		return -1;
	}
}
