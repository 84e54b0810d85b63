#!/bin/sh
# gate_confirm.sh - ci/gate-confirm.sh must keep a defect failing: a bench of `none` and
# fault-slow (mach holding every stopped thread 2 ms longer) fails the first pass, and the
# cell measured again fails too (exit 1, "gate-confirm: FAIL"); a bench of `none` and mach
# exits 0. Run by .ci/run (two short benches, ~40 s), not by make check. docs/gate.md.
set -u
cd "$(dirname "$0")/.." || exit 2
bin=${BUILD:-build}/sampbench
tmp=$(mktemp -d /tmp/sbconfirm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/matrix" <<'M'
[defect]
samplers  = none fault-slow
workloads = balanced
threads   = 2
reps      = 5
duration  = 0.5
[healthy]
samplers  = none mach
workloads = balanced
threads   = 2
reps      = 5
duration  = 0.5
M
fail=0
for p in defect healthy; do
	"$bin" bench --matrix "$tmp/matrix" --profile $p -o "$tmp/$p.h5" >/dev/null 2>&1
	[ $? -le 1 ] || { echo "gate_confirm: the $p bench did not run"; exit 1; }
	sh ci/gate-confirm.sh "$bin" "$tmp/matrix" $p "$tmp/$p.h5" >"$tmp/$p.out" 2>&1
	echo "$p $?" >>"$tmp/rc"
done
if ! grep -qx 'defect 1' "$tmp/rc" || ! grep -q '^gate-confirm: FAIL' "$tmp/defect.out" ||
   ! grep -q '^== confirm balanced' "$tmp/defect.out"; then
	cat "$tmp/defect.out"
	echo "gate_confirm: fault-slow was not failed by the first pass and its confirmation"
	fail=1
fi
if ! grep -qx 'healthy 0' "$tmp/rc"; then
	cat "$tmp/healthy.out"
	echo "gate_confirm: healthy mach failed the gate and its confirmation"
	fail=1
fi
[ $fail -eq 0 ] && echo "gate_confirm: fault-slow failed twice, mach passed"
exit $fail
