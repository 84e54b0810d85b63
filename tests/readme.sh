#!/bin/sh
# readme.sh - the README's example commands run as written (tests/readme_check.py), and
# docs/findings.md and the README's stops table are what tools/findings.py writes from its
# committed summary. The host calibration (~2.4 s a command, start and end) is skipped:
# no README output shown here depends on it, and tests/test_calibrate checks that a run
# file holds it.
cd "$(dirname "$0")/.." || exit 2
rc=0
/usr/bin/python3 tools/findings.py check docs/findings.json docs/findings.md README.md || rc=1
SB_CALIBRATE=0 /usr/bin/python3 tests/readme_check.py README.md . "${BUILD:-build}" || rc=1
exit $rc
