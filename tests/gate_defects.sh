#!/bin/sh
# gate_defects.sh - the gate must catch broken samplers under their own names: every
# fault-* sampler of `sampbench list` and every defective plugin of tests/plugins
# (defect_*.c) fails `sampbench gate --budgets ci/budgets` (exit 1, a failed row naming the
# metric it was built to break), and the healthy example plugin passes. One bench file of
# short runs (balanced, 2 threads, 100 Hz, 3 x 0.5 s, with `none` as the reference of overhead
# and pause excess; a defect marked `gate-workload: NAME` on that workload instead, beside its
# own `none` runs; the hanging plugin once, with a 1.5 s watchdog), then one gate per sampler
# (--sampler). docs/gate.md.
# GATE_DEFECTS_SET=untimed judges only the defects marked `gate-untimed: WHY` (caught by
# counts that do not depend on the host's timing: failed runs, integrity, memory, stacks),
# which make check runs beside its other parallel tests; =timed judges the others, the
# faults and the example, alone on the machine; unset: all of them. A set that would judge
# nothing fails (no fault sampler in `list`, no defect_*.c, no example plugin), and the
# last lines say how many samplers were judged.
BUILD=${BUILD:-build}
set_=${GATE_DEFECTS_SET:-all}
case $set_ in all|timed|untimed) ;; *) echo "gate_defects: unknown GATE_DEFECTS_SET '$set_'"; exit 2 ;; esac
# in_set SRC: true when SRC's defect belongs to this invocation's set
in_set() {
	case $set_ in
	all) return 0 ;;
	untimed) grep -q 'gate-untimed:' "$1" ;;
	timed) ! grep -q 'gate-untimed:' "$1" ;;
	esac
}
# Seconds per run, 3 runs per sampler. At 0.5 s, alone on the 2-core VM (the serial lane
# of make check), 4 passes at a14322a: every defect caught, the example's rate
# 0.996-1.006 (budget 0.9), thread_tvd <= 0.004 (0.05), overhead 1.00-1.03 (0.9). A loaded
# host costs a per-thread CPU timer up to 17 % of its samples in runs this short.
duration=${GATE_DEFECTS_DURATION:-0.5}
bin=$BUILD/sampbench
tmp=$(mktemp -d /tmp/sbdefects.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# the metric each built-in fault breaks (a new fault without a line here must still fail)
fault_metric() {
	case $1 in
	fault-misdeliver) echo thread_tvd ;;
	fault-drop) echo rate_accuracy ;;
	fault-slow) echo suspend_window ;;
	fault-stack) echo 'stack_correct_fraction\|misattributed_fraction' ;;
	*) echo '' ;;
	esac
}

# the faults caught whatever the load (their samples' content; fault-drop: 30 % of its
# samples lost in every run, and load only takes more); the others are timed
fault_untimed() {
	case $1 in
	fault-misdeliver|fault-stack|fault-drop) return 0 ;;
	*) return 1 ;;
	esac
}
faults=
for f in $($bin list | awk '/\[fault\]/ { print $1 }'); do
	case $set_ in
	untimed) fault_untimed "$f" && faults="$faults $f" ;;
	timed) fault_untimed "$f" || faults="$faults $f" ;;
	*) faults="$faults $f" ;;
	esac
done
# an empty set judges nothing and must not pass: `list` lost its faults, the glob its files
[ -n "$faults" ] || { echo "gate_defects: no fault sampler of this set ($set_) in \`sampbench list\`"; exit 1; }
plugins=
hang=
others= # "workload:so" pairs
watched= # "workload:watchdog:so" triples
srcs=
for src in tests/plugins/defect_*.c; do
	[ -f "$src" ] && in_set "$src" && srcs="$srcs $src"
done
[ -n "$srcs" ] || { echo "gate_defects: no defective plugin of this set ($set_) in tests/plugins"; exit 1; }
for src in $srcs; do
	so=$BUILD/tests/plugins/$(basename "$src" .c).so
	[ -f "$so" ] || { echo "gate_defects: missing $so (make check builds it)"; exit 1; }
	# a defect only another workload shows says `gate-workload: NAME` (hotspot's function
	# split, syscall's failing calls, ...)
	wl=$(sed -n 's/.*gate-workload: \([a-z0-9_-]*\).*/\1/p' "$src" | head -1)
	# a defect whose runs must hang says `gate-watchdog: SECONDS` (its own block, so the
	# bench does not wait the default 5.5 s for each of its runs)
	wd=$(sed -n 's/.*gate-watchdog: \([0-9.]*\).*/\1/p' "$src" | head -1)
	case $src in
	*hang*) hang="$hang $so" ;;
	*) if [ -n "$wd" ]; then watched="$watched ${wl:-balanced}:$wd:$so"
	   elif [ -n "$wl" ]; then others="$others $wl:$so"
	   else plugins="$plugins $so"; fi ;;
	esac
done
example=$BUILD/examples/ctimer_plugin.so
[ "$set_" = untimed ] || [ -f "$example" ] || { echo "gate_defects: missing $example (make check builds it)"; exit 1; }
# 3 runs a sampler, where timings need a median and the example must pass; the untimed
# defects' counts are wrong in every run: one is enough
# GATE_DEFECTS_REPS=3..5 judges them in adaptive benches, as the default profile runs
reps=${GATE_DEFECTS_REPS:-3}
[ "$set_" = untimed ] && example= && reps=1
{
	printf '[defects]\nsamplers = none %s %s %s\n' "$example" "$(echo $faults)" "$plugins"
	printf 'workloads = balanced\nthreads = 2\nhz = 100\nreps = %s\nduration = %s\n' "$reps" "$duration"
	for wl in $(for p in $others; do echo "${p%%:*}"; done | sort -u); do
		sos=$(for p in $others; do [ "${p%%:*}" = "$wl" ] && echo "${p#*:}"; done)
		printf '[defects]\nsamplers = none %s\nworkloads = %s\nthreads = 2\n' "$(echo $sos)" "$wl"
		printf 'hz = 100\nreps = %s\nduration = %s\n' "$reps" "$duration"
	done
	for t in $watched; do
		printf '[defects]\nsamplers = %s\nworkloads = %s\nthreads = 2\n' "${t##*:}" "${t%%:*}"
		w=${t#*:}
		printf 'hz = 100\nreps = 1\nduration = %s\nwatchdog = %s\n' "$duration" "${w%%:*}"
	done
	if [ -n "$hang" ]; then
		printf '[defects]\nsamplers = %s\nworkloads = balanced\nthreads = 2\n' "$hang"
		printf 'hz = 100\nreps = 1\nduration = 0.5\nwatchdog = 1.5\n'
	fi
} >"$tmp/matrix"
$bin bench --matrix "$tmp/matrix" --profile defects -o "$tmp/d.h5" -f >"$tmp/bench.log" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$tmp/bench.log"; echo "gate_defects: bench exit $rc"; exit 1; }

bad=0
judged=0 # samplers judged by the gate: the summary says how many
# judge NAME WANT_EXIT METRIC_REGEX [SPEC WORKLOAD]
# With SPEC (what `run -s` takes) and WORKLOAD, a defect that passed, or failed without its
# metric, where the host was busy in its cell (its calm-only rules "not applicable": a
# `none` run lost over 10 % of its time, as in 1 of 10 ASan/UBSan make checks of c010856,
# 12.5 %) has no verdict: it is measured again beside its own `none` runs, at most twice.
judge() {
	judged=$((judged + 1))
	file=$tmp/d.h5
	for attempt in 1 2 3; do
		$bin gate -q --budgets ci/budgets --sampler "$1" "$file" >"$tmp/gate.out" 2>&1
		got=$?
		[ "$2" -eq 1 ] && [ -n "${4:-}" ] && [ $attempt -lt 3 ] &&
			grep -q 'not applicable: the host was busy' "$tmp/gate.out" &&
			{ [ "$got" -eq 0 ] || ! grep "^✗ $1/" "$tmp/gate.out" | grep -q "$3"; } || break
		echo "again $1: the host was busy in its cell ($(grep -o 'a none run lost [0-9.]*%' \
			"$tmp/gate.out" | head -1)), measured again"
		file=$tmp/again.h5
		$bin run -q -f -s "none,$4" -w "$5" -t 2 -z 100 -d "$duration" -r "${reps##*..}" \
			-o "$file" >/dev/null 2>&1
	done
	rows=$(grep "^✗ $1/" "$tmp/gate.out")
	if [ "$got" -ne "$2" ]; then
		echo "FAIL $1: gate exit $got, want $2"; cat "$tmp/gate.out"; bad=1; return
	fi
	if [ "$2" -eq 1 ] && [ -n "$3" ] && ! echo "$rows" | grep -q "$3"; then
		echo "FAIL $1: exit 1 but no failed row names $3"; cat "$tmp/gate.out"; bad=1; return
	fi
	if [ "$2" -eq 1 ]; then
		echo "caught $1: $(echo "$rows" | awk '{ print $3 }' | sort -u | tr '\n' ' ')"
	else
		echo "passed $1"
	fi
}
# plain_only SRC NAME: true (and says so) when SRC is marked `gate-plain-only` and this is a
# sanitizer build: a defect that relies on glibc's allocator (the sanitizers bring their own)
plain_only() {
	grep -q 'gate-plain-only' "$1" && [ -n "${SANITIZE:-}" ] || return 1
	echo "skipped $2: gate-plain-only, and this build has SANITIZE=$SANITIZE"
}
# ThreadSanitizer (SANITIZE=thread) defers a timer's signal to the thread's next
# interceptor and hands the handler the context saved when it arrived: signal-walked
# stacks are meaningless in that build, and the gate fails every signal sampler on them,
# the healthy example too. There the bench still runs every sampler (a race report or a
# crash fails its runs), only the defects built to fail runs may have failed ones, and
# those are judged; the rest of the gate is not.
case ${SANITIZE:-} in
*thread*)
	failed=$($bin show "$tmp/d.h5" | awk '$7 == "failed" { print $2 }' | sort -u)
	for src in $srcs; do
		name=$(sed -n 's/^#define DEFECT_NAME "\(.*\)"/\1/p' "$src")
		metric=$(sed -n 's/.*gate-expects: \([a-z_]*\).*/\1/p' "$src")
		[ "$metric" = failed_runs ] || continue
		failed=$(echo "$failed" | grep -vx -- "$name")
		plain_only "$src" "$name" && continue
		judge "$name" 1 "$metric"
	done
	# a defect ThreadSanitizer reports itself (`tsan-fails: WHY` in its source: a handler
	# that spoils errno) fails its runs there, as it should
	for src in $srcs; do
		grep -q 'tsan-fails:' "$src" || continue
		name=$(sed -n 's/^#define DEFECT_NAME "\(.*\)"/\1/p' "$src")
		echo "$failed" | grep -qx -- "$name" && echo "caught $name: ThreadSanitizer's own report"
		failed=$(echo "$failed" | grep -vx -- "$name")
	done
	if [ -n "$failed" ]; then
		echo "FAIL runs failed under ThreadSanitizer:" $failed; bad=1
		grep -i 'failed\|status' "$tmp/bench.log"
	fi
	echo "gate_defects ($set_, ThreadSanitizer): judged $judged samplers by the gate"
	[ $bad -eq 0 ] && echo "gate_defects: skipped: the gate's other judgments (signal-walked" \
		"stacks are meaningless under ThreadSanitizer); every run but the failing defects' ran"
	exit $bad ;;
esac
for f in $faults; do
	judge "$f" 1 "$(fault_metric "$f")" "$f" balanced
done
for src in $srcs; do
	name=$(sed -n 's/^#define DEFECT_NAME "\(.*\)"/\1/p' "$src")
	metric=$(sed -n 's/.*gate-expects: \([a-z_]*\).*/\1/p' "$src")
	wl=$(sed -n 's/.*gate-workload: \([a-z0-9_-]*\).*/\1/p' "$src" | head -1)
	plain_only "$src" "$name" && continue
	judge "$name" 1 "$metric" "$BUILD/tests/plugins/$(basename "$src" .c).so" "${wl:-balanced}"
done
[ "$set_" = untimed ] || judge ctimer-plugin 0 ''
# On 64 KiB thread stacks (run --stack-kb, as musl and thread pools give) a handler that
# puts 200 KiB on the interrupted thread's stack crashes the run (a failed run, never a
# pass); the healthy example still runs.
if [ "$set_" != timed ]; then
	$bin run -q --sampler "$BUILD/tests/plugins/defect_stack_hog.so,$BUILD/examples/ctimer_plugin.so" \
		--workload balanced --threads 2 --duration 0.3 --stack-kb 64 -o "$tmp/small.h5" -f >/dev/null 2>&1
	small=$($bin show "$tmp/small.h5" | awk '$2 == "defect-stack-hog" || $2 == "ctimer-plugin" { print $2 "=" $7 }')
	case $small in
	*defect-stack-hog=failed*ctimer-plugin=ok*) echo "caught defect-stack-hog on 64 KiB stacks: failed run" ;;
	*) echo "FAIL 64 KiB stacks: want defect-stack-hog failed, ctimer-plugin ok, got:" $small; bad=1 ;;
	esac
fi
nfaults=$(echo $faults | wc -w)
nsrcs=$(echo $srcs | wc -w)
echo "gate_defects ($set_): judged $judged samplers: $nfaults faults, $nsrcs defective plugins$(
	[ "$set_" = untimed ] || echo ", the example")"
if [ $bad -eq 0 ] && [ "$set_" = untimed ]; then
	echo "gate_defects (untimed): every fault and defective plugin of the set failed the gate"
elif [ $bad -eq 0 ]; then
	echo "gate_defects ($set_): every fault and defective plugin failed the gate, the example passed"
fi
exit $bad
