/* runner.h - one run in a fresh child process under a watchdog. */
#ifndef SB_RUNNER_H
#define SB_RUNNER_H

#include <stdbool.h>

#include "core/run.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

struct run_spec {
	const struct sampler *sampler;
	const struct workload *workload;
	int threads;
	double hz;
	double duration_s;
	int repetition;
	uint32_t param;     /* workload knob, 0: default */
	uint64_t seed;
	bool idle_skip;
	bool rt_priority;
	uint32_t max_depth; /* 0: SB_MAX_FRAMES */
	uint32_t stack_kb;  /* workload threads' stack size in KiB, 0: the default (`--stack-kb`) */
	size_t sink_samples; /* the sink's room in samples, 0: sized for the run (tests set it) */
	double watchdog_s;  /* kill the child after this long; 0: duration + max(5 s, duration)
			     * (ci/matrix's `watchdog` key sets it) */
	/* adaptive repetitions (ci/matrix `reps = MIN..MAX`): the cell's range; 0, 0 for a
	 * fixed count. The bench runs the repetitions from reps_min on only while the cell's
	 * budget checks are undecided (docs/gate.md "Adaptive repetitions"). */
	int reps_min, reps_max;
};

/* Starts the record of one run of spec: identity from spec, every metric NaN, no arrays,
 * start_time now. r is overwritten; it owns nothing yet. */
void run_init(struct sb_run *r, const struct run_spec *spec, int64_t run_id);

/* Runs spec in a forked child and fills r (r's arrays are malloc'd and owned by r). The
 * harness survives whatever the child does: a crash, a hang (killed by the watchdog and
 * recorded as failed) or a skip. Returns 0 when r holds a record (ok, failed or skipped),
 * -1 when the harness itself failed (out of memory, fork failed). */
int runner_run(const struct run_spec *spec, int64_t run_id, struct sb_run *r);

/* Set from a SIGINT handler: the current child is killed and recorded as interrupted. */
extern volatile int runner_interrupted;

#endif
