/* defect_busy_honest.c - test plugin: the same idle-priority busy-polling helper thread as
 * defect_busy_claims_little.c, but its sampler_cpu_ns claims all of the helper's CPU. An
 * honest report of a sampler that burns an idle core must fail too: on the CPU the process
 * measured.
 * gate-plain-only (the CPU rules judge plain builds: a sanitizer build's CPU is its instrumentation's)
 * gate-expects: sampler_cpu_measured_fraction
 * gate-workload: mixed */
#define DEFECT_NAME "defect-busy-honest"
#define DEFECT_DESC "DEFECT: a helper thread spins at idle priority; claims all of its CPU"
#define DEFECT_CAPS SAMPBENCH_CAP_THREAD_IDS | SAMPBENCH_CAP_WEIGHTS | SAMPBENCH_CAP_STACKS | \
		     SAMPBENCH_CAP_TICK_DRIVEN
#define DEFECT_START busy_start
#define DEFECT_STOP busy_stop
#define DEFECT_STATS claim_stats
struct sampbench_stat;
static int claim_stats(struct sampbench_stat *out, int max);
#include "tests/plugins/busy_helper.h"
#include "tests/plugins/defect_base.h"

static int defect_edit(struct sampbench_sample *s, uint64_t *pcs, uint64_t seq)
{
	(void)s;
	(void)pcs;
	(void)seq;
	return 1;
}

/* The helper's whole CPU (read at its end, after stop() joined it). */
static int claim_stats(struct sampbench_stat *out, int max)
{
	if (max < 1)
		return 0;
	out[0] = (struct sampbench_stat){ "sampler_cpu_ns", (double)atomic_load(&busy_cpu_ns) };
	return 1;
}
