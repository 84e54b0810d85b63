#!/bin/sh
# findings.sh - docs/findings.md is what tools/findings.py writes from its committed
# summary (docs/findings.json), so it does not drift from the data.
cd "$(dirname "$0")/.." || exit 2
exec /usr/bin/python3 tools/findings.py check docs/findings.json docs/findings.md
