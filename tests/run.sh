#!/bin/sh
# run.sh TEST... - runs each cmocka test binary, shows its output, and fails when any fails.
# Ends with the plain summary line "programs: N passed, N failed". A program may be a
# script (the fuzz run, the quick budget gate).
# The host calibration (start and end of every run, ~1.2 s) is skipped in the test
# programs that do not look at it; test_calibrate checks a run file holds it, and the
# scripts (the defect gate, the quick gate) keep it: their budgets use its floors.
pass=0
fail=0
failed=
for t in "$@"; do
	name=$(basename "$t")
	echo "== $name"
	start=$(date +%s)
	case $t in
	*.sh) cal=${SB_CALIBRATE-1} ;;
	*) cal=0 ;;
	esac
	if SB_CALIBRATE=$cal "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $name"
	fi
	echo "-- $name: $(($(date +%s) - start)) s"
done
if [ -n "$failed" ]; then
	echo "failed test programs:$failed"
fi
echo "programs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
