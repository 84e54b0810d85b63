#!/bin/sh
# paths.sh - every repository path, section and anchor a doc or a comment names exists
# (tests/paths.py; ~0.3 s). make check runs it in its parallel lane.
cd "$(dirname "$0")/.." || exit 2
exec /usr/bin/python3 tests/paths.py .
