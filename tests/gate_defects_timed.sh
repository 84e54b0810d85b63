#!/bin/sh
# gate_defects_timed.sh - the faults, the defects judged on timings and the healthy example
# (tests/gate_defects.sh): make check runs them alone on the machine.
GATE_DEFECTS_SET=timed exec sh "$(dirname "$0")/gate_defects.sh"
