#!/bin/sh
# ab_hold.sh - the same-run A/B must catch a known regression: commit X is HEAD plus
# tests/fixtures/mach_hold_30us.patch (mach holds every stopped thread 30 us longer),
# `make bench PROFILE=quick AB=X` must fail its gate with a failed regression row of mach naming
# a suspend-window or stop metric, and every other regressed row is listed. Run by .ci/run
# (a benchmark: ~4 min with the build of X), not by make check. docs/bench.md.
set -u
cd "$(dirname "$0")/.." || exit 2
x=$(sh tests/fixtures/make_mach_hold_commit.sh) || { echo "ab_hold: cannot make the fixture commit"; exit 1; }
log=$(mktemp /tmp/sbabhold.XXXXXX)
trap 'rm -f "$log"' EXIT
make bench PROFILE=quick AB="$x" >"$log" 2>&1
rc=$? # make's 2 for a failed recipe: the gate's verdict is read from its file
gate=$(sed -n 's/^every check: //p' "$log" | tail -1)
if [ "$rc" -eq 0 ] || [ -z "$gate" ] || [ ! -f "$gate" ] || ! grep -q '^gate: FAIL' "$gate"; then
	cat "$log"
	echo "ab_hold: make bench AB=<hold fixture> exited $rc without a failing gate: the regression was missed"
	exit 1
fi
rows=$(grep '^✗ mach/' "$gate" | grep -E 'suspend_window|stop_latency|window_observed')
if [ -z "$rows" ]; then
	grep '^✗' "$gate"
	echo "ab_hold: the gate failed, but no row of mach names its suspend window"
	exit 1
fi
echo "ab_hold: caught the 30 us hold:"
echo "$rows" | awk '{ print "  " $2, $3, $4, $5, $6 }'
