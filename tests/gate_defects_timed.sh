#!/bin/sh
# gate_defects_timed.sh - the faults, the defects judged on timings and the healthy example
# (tests/gate_defects.sh): make check runs them alone on the machine, in an adaptive bench
# of 2..3 runs a sampler (docs/gate.md "Adaptive repetitions"): a verdict the third run
# cannot change is not run for (22 s against 30 s for 3 runs each, every defect caught).
GATE_DEFECTS_SET=timed GATE_DEFECTS_REPS=${GATE_DEFECTS_REPS:-2..3} \
	exec sh "$(dirname "$0")/gate_defects.sh"
