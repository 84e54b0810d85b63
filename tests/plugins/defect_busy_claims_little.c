/* defect_busy_claims_little.c - test plugin: a helper thread busy-polls between ticks at idle
 * priority (about 40 % of a core on mixed, whose threads leave a CPU idle), and the plugin
 * says its ticks cost 2 us each: its claimed sampler_cpu_ns is a few hundredths of what the
 * process spends on it. The gate must judge the CPU the process measured, not the claim.
 * gate-plain-only (the CPU rules judge plain builds: a sanitizer build's CPU is its instrumentation's)
 * gate-expects: sampler_cpu_unreported_fraction
 * gate-workload: mixed */
#define DEFECT_NAME "defect-busy-claims-little"
#define DEFECT_DESC "DEFECT: a helper thread spins at idle priority; claims 2 us per tick"
/* The under-report: 2 us per sample taken, the helper thread's spinning left out. */
#define BUSY_CLAIM 2000.0 * (double)atomic_load(&n_samples)
#include "tests/plugins/busy_helper.h"
