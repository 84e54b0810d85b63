/* export.h - a run's stacks in formats other profilers' tools read.
 *
 *   folded   Brendan Gregg's collapsed stacks, one "root;...;leaf count" line per unique
 *            stack (flamegraph.pl, speedscope, inferno). Names come from the run's symbols
 *            table, so the binary is not needed.
 *   pprof    profile.proto, gzip-compressed (export_pprof.c): what `go tool pprof`,
 *            pprof's web UI, Pyroscope and Grafana read; one Sample per sample with its
 *            thread id, thread name and timestamp labels.
 *   speedscope  speedscope's JSON file format, one sampled profile per thread, named
 *            after it (export_speedscope.c).
 *   firefox  the Firefox Profiler's processed format, one thread track per thread, named
 *            after it (export_firefox.c).
 *   gperftools  gperftools' legacy CPU profile (sampler/cpuprofile.h): what libprofiler
 *            writes, read by google-pprof and anything that reads libprofiler output.
 *   gperftools with symbols: the same profile behind a "--- symbol" section (pprof's
 *            "symbolized profile"), so `google-pprof --text FILE` prints function names
 *            without the binary of a process that no longer exists.
 * Every sample is counted once; a sample without a stack becomes the frame "[unknown]"
 * (PC EXPORT_UNKNOWN_PC in the binary formats), so totals always equal the run's sample
 * count. */
#ifndef SB_EXPORT_H
#define SB_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/run.h"

#define EXPORT_UNKNOWN_PC 1 /* stands for the stack of a sample that has none */
#define EXPORT_FIREFOX_VERSION 48 /* the processed format written: per-thread tables */

enum export_flags {
	EXPORT_MODULE = 1u << 0, /* folded: name frames module!function */
	EXPORT_LABEL = 1u << 1,  /* folded: a root frame naming the run (several runs in one) */
	EXPORT_THREAD = 1u << 2, /* folded: a root frame "thread-0/TID" (the comm-pid/tid form
				  * of stackcollapse-perf.pl --tid) on samples with a tid */
};

/* The stack of sample i of r, leaf first, at most CPUPROFILE_MAX_DEPTH frames: its frames,
 * or [EXPORT_UNKNOWN_PC] when it has none (no frames, a leaf PC of 0, or an offset outside
 * frames). Points into r or static memory; *depth gets the frame count. */
const uint64_t *export_sample_stack(const struct sb_run *r, size_t i, uint32_t *depth);

/* Writes the name of pc as found in r's symbols table into buf: "function", or
 * "module!function" with EXPORT_MODULE; "0x<pc>" when unknown; kernel frames get the
 * suffix "_[k]" (flamegraph.pl colours them). ';' and control characters become '_'. */
void export_frame_name(const struct sb_run *r, uint64_t pc, unsigned flags, char *buf,
		       size_t len);
/* Writes the name of the inlined frame f of pc (a row of r->inlines) into buf, as
 * export_frame_name writes pc's: "function", or "module!function" with EXPORT_MODULE. Every
 * export but pprof (Lines) and gperftools (addresses) writes a PC in inlined code as its
 * inlined frames, each a frame of its own, innermost nearest the leaf, below the frame of
 * the function holding the PC. */
void export_inline_name(const struct sb_run *r, uint64_t pc, const struct sb_inline_frame *f,
			unsigned flags, char *buf, size_t len);

/* The folded stack of sample i of r, root first, frames joined by ';' (with EXPORT_LABEL
 * and EXPORT_THREAD their root frames first), without the count: malloc'd, the caller
 * frees it. Returns NULL when out of memory. */
char *export_folded_line(const struct sb_run *r, size_t i, unsigned flags);

/* Writes the folded stacks of runs[0..n) to out, unique lines in sorted order. With
 * EXPORT_LABEL each stack starts with a frame naming its run. Returns the number of
 * samples written, or -1 (out of memory or a write error, errno set). */
int64_t export_folded(FILE *out, const struct sb_run *runs, size_t n, unsigned flags);

/* Writes r as a gperftools legacy CPU profile (period 1e6 / hz µs), one record per unique
 * stack, and a synthetic /proc/self/maps naming each module's PC range. With symbols != 0
 * the profile is preceded by pprof's "--- symbol" section mapping every PC to its
 * function. Returns the number of samples written, or -1 with errno. */
int64_t export_gperftools(FILE *out, const struct sb_run *r, int symbols);

/* Writes r as a gzip-compressed profile.proto: sample types samples/count and
 * cpu/nanoseconds (the sample's weight, else the period), one Sample per sample with the
 * numeric labels "thread id" and "timestamp" (CLOCK_MONOTONIC ns) and the string label
 * "thread name" (export_thread_name) when known, one Location per distinct PC and one
 * Function per distinct name. Returns the number of samples written, or -1 with errno. */
int64_t export_pprof(FILE *out, const struct sb_run *r);

/* Writes r as speedscope JSON: one "sampled" profile per tid, named "NAME (tid N)" when the
 * thread's name is known (export_tid_name), else "tid N" ("tid unknown" for the samples
 * without a tid), weights in samples, frames shared. Returns samples written or -1. */
int64_t export_speedscope(FILE *out, const struct sb_run *r);

/* Writes r in the Firefox Profiler's processed format (preprocessedProfileVersion
 * EXPORT_FIREFOX_VERSION, per-thread tables), one thread per tid with its samples' times in
 * ms from the first (sample index × interval when the sampler has no times), named by the
 * thread's name when known (export_tid_name), else "tid N". Returns samples written or -1. */
int64_t export_firefox(FILE *out, const struct sb_run *r);

/* The frames of a run's stacks, as a format with a frame or function table needs them: the
 * distinct PCs and the distinct names of their functions (sorted). */
struct export_frames {
	uint64_t *pcs;   /* distinct stack PCs, ascending (EXPORT_UNKNOWN_PC included) */
	uint32_t *func;  /* per PC: its name's index in names */
	size_t npcs;
	char **names;    /* distinct export_frame_name()s and export_inline_name()s, sorted */
	size_t nnames;
	/* per PC i: the names of its inlined frames (r->inlines), innermost first:
	 * inl_func[inl_at[i] .. + inl_n[i]) */
	uint32_t *inl_func;
	size_t *inl_at;
	uint32_t *inl_n;
};

/* Fills f from every stack of r (export_sample_stack), names written with flags. Returns 0,
 * or -1 when out of memory. Free with export_frames_free() either way. */
int export_frames_build(const struct sb_run *r, unsigned flags, struct export_frames *f);
/* The index in f->pcs of pc, which must be a PC of one of the stacks f was built from. */
size_t export_frames_pc(const struct export_frames *f, uint64_t pc);
/* The name indices of PC i's frames, root first: its function, then its inlined frames
 * from the outermost to the innermost. Writes at most max; returns how many. */
uint32_t export_frames_funcs(const struct export_frames *f, size_t i, uint32_t *out,
			     uint32_t max);
void export_frames_free(struct export_frames *f);

#define EXPORT_TITLE_LEN 256
/* Writes a line naming r into buf: "sampbench run ID: sampler, workload, N threads, HZ Hz". */
void export_run_title(const struct sb_run *r, char *buf, size_t len);

/* 1 when sample s has a timestamp: samplers that cannot tell leave 0 or UINT64_MAX. */
static inline int export_time_known(const struct sb_sample *s)
{
	return s->time_ns != 0 && s->time_ns != UINT64_MAX;
}

/* Writes s as a JSON string literal, quotes included. */
void export_json_string(FILE *out, const char *s);

/* The distinct tids of r's samples, sorted, -1 standing for every sample whose tid is
 * unknown; malloc'd, *n gets how many. NULL when out of memory. */
int32_t *export_tids(const struct sb_run *r, size_t *n);

/* The name the thread of sample i of r gave itself, written into name (SB_THREAD_NAME_LEN
 * bytes): the name of its slot's row (the row whose index is the sample's thread_index;
 * without one, the row whose tid is the sample's tid), control characters as '_'; "" when
 * unknown (no such row, or a row without a name). Returns name. */
const char *export_thread_name(const struct sb_run *r, size_t i, char *name);

/* The name of the thread whose samples have tid (-1: the samples without one), into name
 * (SB_THREAD_NAME_LEN bytes): export_thread_name of its samples when they all give the same
 * one, else "" (a track of several threads has no one name). Returns name. */
const char *export_tid_name(const struct sb_run *r, int32_t tid, char *name);

#endif
