/* cpuprofile.h - gperftools' legacy CPU profile format: a defensive parser and a writer.
 *
 * The format (cpuprofile-fileformat.html in gperftools' documentation), in native 64-bit little-endian
 * machine words, as libprofiler on x86_64 writes it:
 *   header   0, 3, 0, period_us, 0     (header count, header words, version, period, padding)
 *   records  count, depth, pc[depth]   (leaf PC first, then return addresses)
 *   trailer  0, 1, 0
 *   maps     the text of the profiled process's /proc/self/maps, to the end of the file
 * The same stack may appear in several records (libprofiler evicts from a hash table).
 *
 * The parser reads only inside [buf, buf + len): every malformed input is rejected with
 * -1 and one line in err, never a crash or an out-of-bounds read. It is stricter than
 * pprof, so that whatever it accepts pprof reads the same way:
 *   - the header must be exactly 0 3 0 P 0 with 1 <= P <= 2^32 - 1 microseconds;
 *   - a record needs 1 <= depth <= CPUPROFILE_MAX_DEPTH and count >= 1, and a non-zero
 *     leaf PC (pprof takes any record whose first PC is 0 as the end of the data);
 *   - the only record with count 0 is the trailer 0 1 0; without it the file is rejected;
 *   - the sum of the counts must fit in 64 bits.
 * 32-bit and big-endian profiles are recognised and rejected with their own message. */
#ifndef SB_CPUPROFILE_H
#define SB_CPUPROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deepest record accepted. libprofiler writes at most 64 frames and sampbench keeps at most
 * SB_MAX_FRAMES (256), so 1024 leaves room for other writers while bounding the per-record
 * scratch space (8 KiB) and rejecting garbage depths early. */
#define CPUPROFILE_MAX_DEPTH 1024
#define CPUPROFILE_HEADER_BYTES 40  /* 5 words */
#define CPUPROFILE_TRAILER_BYTES 24 /* 3 words */

/* A parsed profile. Pointers point into the caller's buffer, which must outlive it. */
struct cpuprofile {
	uint64_t period_us;   /* sampling period from the header */
	uint64_t records;     /* records before the trailer */
	uint64_t total_count; /* sum of the record counts: the number of samples */
	uint32_t max_depth;   /* deepest record, 0 when there are none */
	const unsigned char *data; /* first record */
	size_t data_len;      /* bytes of records, up to the trailer */
	const char *maps;     /* text after the trailer, not NUL-terminated; may be empty */
	size_t maps_len;
};

/* One record as handed to a callback. pcs is an aligned copy, valid during the call. */
struct cpuprofile_record {
	uint64_t count;
	uint32_t depth;
	const uint64_t *pcs; /* leaf first */
};

/* Per-record callback: returns 0 to go on, anything else to stop with that value. */
typedef int (*cpuprofile_record_fn)(const struct cpuprofile_record *rec, void *arg);

/* Validates the whole profile in buf[0..len) (any alignment) and fills *out. Returns 0, or
 * -1 with one line describing the first problem (and its byte offset) in err. */
int cpuprofile_parse(const void *buf, size_t len, struct cpuprofile *out, char *err,
		     size_t errlen);

/* Calls fn for each record of a profile cpuprofile_parse() accepted, in file order.
 * Returns 0, or the first non-zero value fn returned. */
int cpuprofile_foreach(const struct cpuprofile *p, cpuprofile_record_fn fn, void *arg);

/* Streaming writer: one header, any number of records, one trailer (which also writes the
 * maps text, if any). Each refuses (errno EINVAL) a header or record the parser would
 * reject; keeping the total of counts below 2^64 is the caller's job (cpuprofile_write
 * checks it). Returns 0, or -1 with errno. The caller owns and closes f. */
int cpuprofile_write_header(FILE *f, uint64_t period_us);
int cpuprofile_write_record(FILE *f, uint64_t count, const uint64_t *pcs, uint32_t depth);
int cpuprofile_write_trailer(FILE *f, const char *maps, size_t maps_len);

/* Writes a whole profile: header, the n records, trailer, maps (maps may be NULL). Returns 0
 * or -1 with errno; f may then hold a partial file. */
int cpuprofile_write(FILE *f, uint64_t period_us, const struct cpuprofile_record *recs,
		     size_t n, const char *maps, size_t maps_len);

#endif
