#!/bin/sh
# rates.sh - test_mach_double's comparisons of the Darwin backend's rates on the Mach double
# with Linux's mach: make check's serial lane, alone on the machine. The rest: semantics.sh.
SB_CALIBRATE=0 SB_MACHDOUBLE_PART=rates exec "${BUILD:-build}/tests/test_mach_double"
