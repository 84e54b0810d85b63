/* baselines.h - where the gate's baselines live: one file per machine class,
 * results/baselines/<fingerprint>.h5 (docs/bench.md). */
#ifndef SB_BASELINES_H
#define SB_BASELINES_H

#include <stddef.h>

#include "core/run.h"

#define SB_BASELINES_DIR "results/baselines"

/* The file-name stem of h's baselines: its fingerprint with every character outside
 * [A-Za-z0-9._-] replaced by '-', or "host-<hostname>" when h has no fingerprint (files
 * written before the fingerprint existed). Writes at most len bytes into buf. */
void baseline_name(const struct sb_host *h, char *buf, size_t len);

/* SB_BASELINES_DIR "/<baseline_name(h)>.h5" into buf. Returns 0, or -1 when it does not
 * fit. */
int baseline_path(const struct sb_host *h, char *buf, size_t len);

#endif
