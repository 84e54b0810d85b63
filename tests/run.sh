#!/bin/sh
# run.sh TEST... - runs each cmocka test binary, shows its output, and fails when any fails.
# Ends with the plain summary line "programs: N passed, N failed". A program may be a
# script (the fuzz run, the quick budget gate).
pass=0
fail=0
failed=
for t in "$@"; do
	name=$(basename "$t")
	echo "== $name"
	start=$(date +%s)
	if "$t"; then
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
