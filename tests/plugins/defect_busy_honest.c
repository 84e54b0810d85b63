/* defect_busy_honest.c - test plugin: the same idle-priority busy-polling helper thread as
 * defect_busy_claims_little.c, but its sampler_cpu_ns claims all of the helper's CPU. An
 * honest report of a sampler that burns an idle core must fail too: on the CPU the process
 * measured.
 * gate-plain-only (the CPU rules judge plain builds: a sanitizer build's CPU is its instrumentation's)
 * gate-expects: sampler_cpu_measured_fraction
 * gate-workload: mixed */
#define DEFECT_NAME "defect-busy-honest"
#define DEFECT_DESC "DEFECT: a helper thread spins at idle priority; claims all of its CPU"
/* The helper's whole CPU (read at its end, after stop() joined it). */
#define BUSY_CLAIM (double)atomic_load(&busy_cpu_ns)
#include "tests/plugins/busy_helper.h"
