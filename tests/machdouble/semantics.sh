#!/bin/sh
# semantics.sh - test_mach_double's tests whose assertions hold on a loaded CPU (the Darwin
# backend's calls, faults, exits and repairs against the Mach double): make check's
# parallel lane. The rate comparisons with Linux run alone: rates.sh.
SB_CALIBRATE=0 SB_MACHDOUBLE_PART=semantics exec "${BUILD:-build}/tests/test_mach_double"
