#!/bin/sh
# findings.sh - docs/findings.md and the README's stops table are what tools/findings.py
# writes from its committed summary (docs/findings.json), so neither drifts from the data.
cd "$(dirname "$0")/.." || exit 2
exec /usr/bin/python3 tools/findings.py check docs/findings.json docs/findings.md README.md
