#!/bin/sh
# readme.sh - the README's example commands run as written (tests/readme_check.py), and
# docs/findings.md is what tools/findings.py writes from its committed summary.
cd "$(dirname "$0")/.." || exit 2
rc=0
/usr/bin/python3 tools/findings.py check docs/findings.json docs/findings.md || rc=1
/usr/bin/python3 tests/readme_check.py README.md . "${BUILD:-build}" || rc=1
exit $rc
