#!/bin/sh
# readme.sh - the README's example commands run as written (tests/readme_check.py): each
# exits as the README says and prints what the README shows, numbers aside. `make
# check-readme`, in .ci/run after make check (the commands profile for ~35 s on 2 cores).
# The host calibration (~2.4 s a command, start and end) is skipped: no README output
# shown here depends on it, and tests/test_calibrate checks that a run file holds it.
cd "$(dirname "$0")/.." || exit 2
SB_CALIBRATE=0 exec /usr/bin/python3 tests/readme_check.py README.md . "${BUILD:-build}"
