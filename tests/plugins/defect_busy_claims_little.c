/* defect_busy_claims_little.c - test plugin: a helper thread busy-polls between ticks at idle
 * priority (about 40 % of a core on mixed, whose threads leave a CPU idle), and the plugin
 * says its ticks cost 2 us each: its claimed sampler_cpu_ns is a few hundredths of what the
 * process spends on it. The gate must judge the CPU the process measured, not the claim.
 * gate-plain-only (the CPU rules judge plain builds: a sanitizer build's CPU is its instrumentation's)
 * gate-expects: sampler_cpu_unreported_fraction
 * gate-workload: mixed */
#define DEFECT_NAME "defect-busy-claims-little"
#define DEFECT_DESC "DEFECT: a helper thread spins at idle priority; claims 2 us per tick"
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

/* The under-report: 2 us per sample taken, the helper thread's spinning left out. */
static int claim_stats(struct sampbench_stat *out, int max)
{
	if (max < 1)
		return 0;
	out[0] = (struct sampbench_stat){ "sampler_cpu_ns", 2000.0 * (double)atomic_load(&n_samples) };
	return 1;
}
