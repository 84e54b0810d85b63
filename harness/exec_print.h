/* exec_print.h - what `sampbench exec` prints: its runs side by side, and their threads. */
#ifndef SB_EXEC_PRINT_H
#define SB_EXEC_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "core/run.h"

#define EXEC_MAX_SAMPLERS 16 /* runs of one exec, side by side */

/* One line per run: status, exit, samples against expected, accuracy, threads, CPU and
 * wall time, and why a run that was not ok was not. */
void exec_print_runs(FILE *out, const struct sb_run *runs, size_t n);

/* The leaf functions side by side: share of each run's sample weight (or count), the
 * first EXEC_MAX_SAMPLERS runs. The order follows perf when it ran (the reference), else
 * the first run. */
void exec_print_top(FILE *out, const struct sb_run *runs, size_t n);

/* The threads of each run with more than one: slot, the name the thread gave itself ("-"
 * when unknown), tid, its share of the true CPU time and of the run's sample weight; the
 * EXEC_TOP busiest (by true CPU) of each, in slot order. */
void exec_print_threads(FILE *out, const struct sb_run *runs, size_t n);

#endif
