/* export.h - a run's stacks in formats other profilers' tools read.
 *
 *   folded   Brendan Gregg's collapsed stacks, one "root;...;leaf count" line per unique
 *            stack (flamegraph.pl, speedscope, inferno). Names come from the run's symbols
 *            table, so the binary is not needed.
 *   pprof    gperftools' legacy CPU profile (sampler/cpuprofile.h): what libprofiler
 *            writes, read by google-pprof and anything that reads libprofiler output.
 *   pprof with symbols: the same profile behind a "--- symbol" section (pprof's
 *            "symbolized profile"), so `google-pprof --text FILE` prints function names
 *            without the binary of a process that no longer exists.
 * Every sample is counted once; a sample without a stack becomes the frame "[unknown]"
 * (PC EXPORT_UNKNOWN_PC in pprof), so totals always equal the run's sample count. */
#ifndef SB_EXPORT_H
#define SB_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/run.h"

#define EXPORT_UNKNOWN_PC 1 /* stands for the stack of a sample that has none */

enum export_flags {
	EXPORT_MODULE = 1u << 0, /* folded: name frames module!function */
	EXPORT_LABEL = 1u << 1,  /* folded: a root frame naming the run (several runs in one) */
};

/* Writes the name of pc as found in r's symbols table into buf: "function", or
 * "module!function" with EXPORT_MODULE; "0x<pc>" when unknown; kernel frames get the
 * suffix "_[k]" (flamegraph.pl colours them). ';' and control characters become '_'. */
void export_frame_name(const struct sb_run *r, uint64_t pc, unsigned flags, char *buf,
		       size_t len);

/* Writes the folded stacks of runs[0..n) to out, unique lines in sorted order. With
 * EXPORT_LABEL each stack starts with a frame naming its run. Returns the number of
 * samples written, or -1 (out of memory or a write error, errno set). */
int64_t export_folded(FILE *out, const struct sb_run *runs, size_t n, unsigned flags);

/* Writes r as a gperftools legacy CPU profile (period 1e6 / hz µs), one record per unique
 * stack, and a synthetic /proc/self/maps naming each module's PC range. With symbols != 0
 * the profile is preceded by pprof's "--- symbol" section mapping every PC to its
 * function. Returns the number of samples written, or -1 with errno. */
int64_t export_pprof(FILE *out, const struct sb_run *r, int symbols);

#endif
