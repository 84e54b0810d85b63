#!/bin/sh
# run.sh [-j N TEST... --] TEST... - runs each cmocka test binary, shows its output, and
# fails when any fails. Ends with the plain summary line "programs: N passed, N failed,
# N tests skipped", the skipped tests named above it (cmocka's `[  SKIPPED ] test_x`, a
# script's `NAME: skipped: WHY` line). A program may be a script (the corpus replay, the quick
# budget gate).
# The tests before "--" run N at a time (each one's output is shown whole once it ends):
# only tests whose assertions hold on a loaded CPU belong there (Makefile CHECK_PARALLEL).
# The tests after "--" run one at a time, alone on the machine: they time things or judge
# samplers. 2 x 2 cores made `make check` fit its 3 minutes.
# The host calibration (start and end of every run, ~1.2 s) is skipped in the test
# programs that do not look at it; test_calibrate checks a run file holds it, and the
# scripts (the defect gate, the quick gate) keep it: their budgets use its floors.
pass=0
fail=0
failed=
skipped=
tmp=$(mktemp -d /tmp/sbcheck.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# run_one TEST: its output, then its time; returns its status
run_one() {
	name=$(basename "$1")
	echo "== $name"
	start=$(date +%s)
	case $1 in
	*.sh) cal=${SB_CALIBRATE-1} ;;
	*) cal=0 ;;
	esac
	SB_CALIBRATE=$cal "$1"
	rc=$?
	echo "-- $name: $(($(date +%s) - start)) s"
	return $rc
}

# skips PROGRAM OUTPUT: adds the tests OUTPUT says were skipped to $skipped
skips() {
	prog=$(basename "$1")
	for t in $(sed -n 's/^\[  SKIPPED \] \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' "$2" | sort -u); do
		skipped="$skipped $prog:$t"
	done
	case $1 in # a script says it with one line; a cmocka program by its SKIPPED lines
	*.sh) if grep -q '^[A-Za-z0-9_. -]*: skipped: ' "$2"; then skipped="$skipped $prog"; fi ;;
	esac
}

tally() {
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$1")"
	fi
}

# lane: takes the next unclaimed parallel test (mkdir is atomic) until none is left
lane() {
	i=0
	for t in $par; do
		i=$((i + 1))
		mkdir "$tmp/claim.$i" 2>/dev/null || continue
		run_one "$t" >"$tmp/out.$i" 2>&1
		echo $? >"$tmp/rc.$i"
	done
}

par=
jobs=1
if [ "$1" = -j ]; then
	jobs=$2
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		par="$par $1"
		shift
	done
	[ "$1" = -- ] && shift
fi
if [ -n "$par" ]; then
	echo "== $(echo $par | wc -w) programs, $jobs at a time"
	start_par=$(date +%s)
	n=0
	while [ $n -lt "$jobs" ]; do
		lane &
		n=$((n + 1))
	done
	wait
	i=0
	for t in $par; do
		i=$((i + 1))
		cat "$tmp/out.$i"
		skips "$t" "$tmp/out.$i"
		tally "$t" "$(cat "$tmp/rc.$i" 2>/dev/null || echo 1)"
	done
	echo "-- $(echo $par | wc -w) programs, $jobs at a time: $(($(date +%s) - start_par)) s"
fi
for t in "$@"; do
	{ run_one "$t"; echo $? >"$tmp/serial.rc"; } 2>&1 | tee "$tmp/serial.out"
	skips "$t" "$tmp/serial.out"
	tally "$t" "$(cat "$tmp/serial.rc")"
done
if [ -n "$failed" ]; then
	echo "failed test programs:$failed"
fi
if [ -n "$skipped" ]; then
	echo "skipped tests:$skipped"
fi
echo "programs: $pass passed, $fail failed, $(echo $skipped | wc -w) tests skipped"
[ "$fail" -eq 0 ]
