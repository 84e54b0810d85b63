#!/bin/sh
# gate_defects_untimed.sh - the defects caught by counts, not timings (tests/gate_defects.sh,
# `gate-untimed:` in a plugin's source): make check runs them beside its other parallel tests.
# No host calibration: no rule that judges these defects uses its floors.
SB_CALIBRATE=0 GATE_DEFECTS_SET=untimed exec sh "$(dirname "$0")/gate_defects.sh"
