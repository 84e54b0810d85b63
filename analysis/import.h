/* import.h - profiles other tools write, read into a run's samples (struct sb_run):
 *
 *   pprof       profile.proto, gzip-compressed or not (import_pprof.c)
 *   perf-script `perf script` text: comm, pid/tid, time, period, callchain (import_perf_script.c)
 *   folded      collapsed stacks, optionally under a `comm-pid/tid` root frame (import_folded.c)
 *   speedscope  speedscope JSON, sampled and evented profiles (import_speedscope.c)
 *   firefox     the Firefox Profiler's processed format (import_firefox.c)
 *   gperftools  gperftools' legacy CPU profile (sampler/cpuprofile.c's parser)
 *   sysprof     sysprof's capture file, .syscap (import_sysprof.c)
 *
 * Every reader is handed the whole file and must treat it as hostile: it reads only inside
 * it, rejects what it does not understand with one line in err, and stays within the
 * limits below, so memory and time are bounded by the file's size. docs/formats.md.
 *
 * A frame is kept by name: each distinct name gets a PC of its own in a range no real
 * address uses (IMPORT_PC_BASE, non-canonical on x86_64 and arm64) and a row in the run's
 * symbols table, so everything that names frames (export_frame_name, the exports) works on
 * an imported run. A frame named by address ("0x7f12...") keeps that address and has no
 * symbol; "[unknown]" is EXPORT_UNKNOWN_PC. A name ending in "_[k]" is a kernel frame. */
#ifndef SB_IMPORT_H
#define SB_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/run.h"

#define IMPORT_PC_BASE 0xfffe000000000000ull
#define IMPORT_MAX_FILE (256u << 20)    /* bytes of a file, and of a decompressed pprof */
#define IMPORT_MAX_JSON (32u << 20)     /* bytes of a JSON file: its tree costs ~20x */
#define IMPORT_MAX_SAMPLES (1u << 22)   /* samples after expanding counts (64 B each) */
#define IMPORT_MAX_FRAMES (1u << 24)    /* stored frames, all samples together (8 B each) */
#define IMPORT_MAX_DEPTH 1024           /* deeper stacks keep their leaf-most frames */
#define IMPORT_TIME_UNKNOWN UINT64_MAX

/* A run being filled by a reader. */
struct import_run {
	struct sb_run *run;
	struct import_name *names; /* distinct names, in order of first use */
	size_t nnames, names_cap;
	size_t *slots;             /* open addressing over names: index + 1, 0 empty */
	size_t nslots;
	size_t samples_cap, frames_cap, symbols_cap;
	char *err;
	size_t errlen;
};

/* Sets b up to fill r (zeroed here; r's arrays are then owned by r). Returns 0 or -1. */
int import_begin(struct import_run *b, struct sb_run *r, char *err, size_t errlen);
/* The PC standing for the frame named name[0..len) (see above). Returns 0, or -1 with
 * b's err set (out of memory, too many names). */
int import_frame(struct import_run *b, const char *name, size_t len, uint64_t *pc);
/* Appends count samples of the stack pcs[0..depth) (leaf first), of thread tid (-1
 * unknown), taken at time_ns (IMPORT_TIME_UNKNOWN) and standing for weight_ns of CPU in
 * all (NaN unknown). Returns 0, or -1 with err set (a limit, out of memory). */
int import_sample(struct import_run *b, const uint64_t *pcs, uint32_t depth, int32_t tid,
		  uint64_t time_ns, double weight_ns, uint64_t count);
/* Sets err to the message fmt and returns -1, so readers can `return import_fail(...)`. */
int import_fail(struct import_run *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Finishes r: its symbols table, its thread count, its sampler name "import:FORMAT".
 * Frees b's own state. Returns 0 or -1. */
int import_end(struct import_run *b, const char *format);
/* Frees b's own state after a failure (r is freed by the caller with run_free). */
void import_abort(struct import_run *b);

/* A reader: fills b from buf[0..len). Returns 0 or -1 with b's err set. */
typedef int (*import_reader_fn)(struct import_run *b, const unsigned char *buf, size_t len);

int import_pprof(struct import_run *b, const unsigned char *buf, size_t len);
int import_perf_script(struct import_run *b, const unsigned char *buf, size_t len);
int import_folded(struct import_run *b, const unsigned char *buf, size_t len);
int import_speedscope(struct import_run *b, const unsigned char *buf, size_t len);
int import_firefox(struct import_run *b, const unsigned char *buf, size_t len);
int import_gperftools(struct import_run *b, const unsigned char *buf, size_t len);
int import_sysprof(struct import_run *b, const unsigned char *buf, size_t len);
/* The mappings a sysprof capture recorded for the processes import_sysprof keeps, as
 * /proc/PID/maps text ("lo-hi r-xp offset 00:00 inode path" lines), malloc'd with its
 * length in *tlen; NULL when the capture does not read or out of memory. */
char *import_sysprof_maps(const unsigned char *buf, size_t len, size_t *tlen);

/* The formats by name, in the order `sampbench import` lists them. */
struct import_format {
	const char *name;
	import_reader_fn read;
	size_t max_bytes; /* the largest file the reader takes */
};
extern const struct import_format import_formats[];
extern const size_t import_nformats;

/* The format of buf by its first bytes (gzip or protobuf, JSON keys, gperftools header,
 * sysprof's magic, perf script's indented callchains), or NULL when none fits. */
const struct import_format *import_detect(const unsigned char *buf, size_t len);
const struct import_format *import_format_find(const char *name);

/* Reads path whole ("-": standard input), refusing more than max bytes. Returns the
 * malloc'd bytes (the caller frees them) and *len, or NULL with one line in err. */
unsigned char *import_read_file(const char *path, size_t max, size_t *len, char *err,
				size_t errlen);

/* Reads buf[0..len) as fmt into *r (zeroed first). Returns 0, or -1 with one line in err;
 * r is then empty. The caller frees r with run_free. */
int import_buffer(const struct import_format *fmt, const unsigned char *buf, size_t len,
		  struct sb_run *r, char *err, size_t errlen);

#endif
