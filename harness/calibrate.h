/* calibrate.h - this host's floor for every mechanism sampbench times.
 *
 * A suspend window of 300 us is slow on a host where a system call costs 0.2 us and
 * normal on one where it costs 1 us and every wake-up crosses a hypervisor. So every
 * run/bench/exec measures, at its start and its end, what the primitives the samplers
 * are built from cost here, with those same primitives, and stores it in the results
 * file: the `calibration` table (one row per mechanism and phase) and, from the start
 * phase, the host facts `<name>_p50_ns`, `<name>_p99_ns`, `<name>_max_ns` that budgets
 * and floor-relative metrics use (docs/metrics.md, "Host calibration"). */
#ifndef SB_CALIBRATE_H
#define SB_CALIBRATE_H

#include <stdint.h>

#include "core/run.h"

/* Measures every floor (about 0.3 s of wall time, most of it asleep) and appends one
 * calib row per mechanism to h, named by phase ("start" or "end"). Mechanisms the host
 * does not permit (ptrace under a restrictive ptrace_scope, a second CPU) get a row with
 * n = 0 and the reason. At phase "start" it also sets the host facts. Returns the number
 * of rows added. Call with no sampler running: it installs and removes the rendezvous
 * handler, and pins two helper threads for a moment. */
int calibrate_host(struct sb_host *h, const char *phase);

/* A spin budget for the rendezvous (thread_ctl.h) derived from h's facts: spin about as
 * long as a cross-CPU sleep and wake-up costs here (2 x futex_cross p50), within
 * [10 us, 150 us]; TC_SPIN_DEFAULT_NS (50 us) when h has no calibration. calibrate_host()
 * sets it at its start phase, unless SB_MACH_SPIN_NS is set; the host fact spin_ns is the
 * budget in force, spin_budget_ns this function's value. */
uint64_t calibrate_spin_budget(const struct sb_host *h);

#endif
