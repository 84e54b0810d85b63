/* protobuf.h - the protocol buffers wire format, by hand: a writer into a growable buffer
 * and a bounded reader. profile.proto needs only varints and length-delimited fields
 * (docs/formats.md says why this is simpler than protobuf-c: no generated code, no schema
 * compiler in the build, and the reader's bounds are ours to check). */
#ifndef SB_PROTOBUF_H
#define SB_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* A message being written. Appending never fails on the spot: an allocation failure sets
 * failed and later appends do nothing, so a writer checks once at the end. */
struct pb_buf {
	unsigned char *p;
	size_t len, cap;
	int failed;
};

/* Appends field `field` as a varint (int64 values are written as their two's complement). */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
/* Appends a length-delimited field: bytes, a string (without its NUL), or a message. */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
void pb_string(struct pb_buf *b, uint32_t field, const char *s);
void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);
/* Appends v[0..n) as one packed repeated varint field (nothing when n is 0). */
void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
/* Empties b for reuse, keeping its memory. */
void pb_reset(struct pb_buf *b);
void pb_free(struct pb_buf *b);

/* One field read from a message. */
struct pb_field {
	uint32_t number;
	enum pb_wire wire;
	uint64_t value;            /* PB_VARINT, PB_I64, PB_I32 */
	const unsigned char *data; /* PB_LEN: inside the reader's buffer */
	size_t len;
};

/* Reads the fields of buf[0..len); never reads outside it. */
struct pb_reader {
	const unsigned char *p, *end;
};

/* Reads the next field into *f. Returns 1, 0 at the end of the message, or -1 when the
 * bytes are not a well-formed message (a varint over 10 bytes, a length past the end,
 * field number 0, a group or an unknown wire type). */
int pb_next(struct pb_reader *r, struct pb_field *f);

/* Reads a varint from [*p, end), advancing *p. Returns 0, or -1 when malformed. */
int pb_read_varint(const unsigned char **p, const unsigned char *end, uint64_t *v);

#endif
