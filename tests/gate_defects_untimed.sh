#!/bin/sh
# gate_defects_untimed.sh - the defects caught by counts, not timings (tests/gate_defects.sh,
# `gate-untimed:` in a plugin's source): make check runs them beside its other parallel tests.
GATE_DEFECTS_SET=untimed exec sh "$(dirname "$0")/gate_defects.sh"
