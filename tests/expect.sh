#!/bin/sh
# expect.sh - expectation files end to end (docs/expect.md): examples/expect/split (75 %
# of its workers' CPU in parse_request) under `exec --expect` passes with ctimer, fails
# naming the entry with a sampler that loses the callers (tests/plugins/defect_leaf_only)
# and with a wrong expectation; `run --expect` on hotspot fails the fault sampler that
# sends every signal to the main thread, naming each entry; `import --expect` judges an
# exported profile; `margins` gives a row per entry; a bad file is one line and exit 2
# before anything runs. examples/expect/named (threads that name themselves: encoder,
# decoder, mux at 6:3:1 of the CPU) passes its thread_name entries with ctimer and fails
# them naming the entry with a wrong expectation and with the plugin whose one process
# timer signals only the main thread (tests/plugins/defect_one_thread); a run whose
# samples carry none of its names fails. Each check is judged on its exit status and the
# rows it names.
# make check runs it alone: split works by its threads' CPU clocks, but beside 4 busy
# loops ctimer merged its expiries (245-390 samples of 400, heavier weights) and a share
# of 0.5 came once in 6 runs.
BUILD=${BUILD:-build}
bin=$BUILD/sampbench
split=$BUILD/examples/expect/split
named=$BUILD/examples/expect/named
tmp=$(mktemp -d /tmp/sbexpect.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "FAIL $*"; bad=1; }
# expect_rc WANT OUT: the last command's status was WANT, else a failure showing OUT
want_rc() { [ "$1" -eq "$2" ] || fail "exit $1, want $2: $(cat "$3")"; }

# 2 s of CPU a worker: ~400 ctimer samples whatever the load, so the example's margin 0.08
# is 3.7 binomial standard deviations of a 0.75 share (at 1 s, 2.6: 1 run in ~100 failed)
$bin exec -q --sampler ctimer -o "$tmp/split.h5" --expect examples/expect/split.json \
	-- "$split" 2 2 >"$tmp/ok.out" 2>&1
want_rc $? 0 "$tmp/ok.out"
grep -q '^expect: PASS: 4 checks, 0 failed' "$tmp/ok.out" || fail "ctimer: $(cat "$tmp/ok.out")"

sed 's/"share": 0.75/"share": 0.5/' examples/expect/split.json >"$tmp/wrong.json"
$bin expect --expect "$tmp/wrong.json" "$tmp/split.h5" >"$tmp/wrong.out" 2>&1
want_rc $? 1 "$tmp/wrong.out"
grep -q '^x .* ctimer .* parse_request is 75 % .* FAIL' "$tmp/wrong.out" ||
	fail "wrong expectation not named: $(cat "$tmp/wrong.out")"

$bin exec -q --sampler "$BUILD/tests/plugins/defect_leaf_only.so" --expect \
	examples/expect/split.json -- "$split" 1 2 >"$tmp/leaf.out" 2>&1
want_rc $? 1 "$tmp/leaf.out"
grep -q '^x .* defect-leaf-only .* parse_request is 75 %' "$tmp/leaf.out" ||
	fail "defect-leaf-only not named: $(cat "$tmp/leaf.out")"

$bin export --format pprof "$tmp/split.h5" -o "$tmp/split.pb.gz" &&
	$bin import --expect examples/expect/split.json "$tmp/split.pb.gz" >"$tmp/import.out" 2>&1
want_rc $? 0 "$tmp/import.out"

# named: 2 s of the encoder's CPU, ~330 ctimer samples. A probe first: does any sample carry
# one of the program's thread names? (absent with margin 0 fails when one does)
$bin exec -q --sampler ctimer -o "$tmp/named.h5" --expect examples/expect/named.json \
	-- "$named" 2 >"$tmp/named.out" 2>&1
named_rc=$?
printf '{"expectations": [{"name": "names", "thread_name": "^(encoder|decoder|mux)$", "absent": true}]}\n' \
	>"$tmp/names.json"
$bin expect --expect "$tmp/names.json" "$tmp/named.h5" >"$tmp/names.out" 2>&1
if [ $? -eq 0 ]; then
	fail "named: no sample carries a thread name: $(cat "$tmp/named.out")"
else
	want_rc $named_rc 0 "$tmp/named.out"
	grep -q '^expect: PASS: 6 checks, 0 failed' "$tmp/named.out" ||
		fail "named, ctimer: $(cat "$tmp/named.out")"
	sed 's/"share": 0.6,/"share": 0.3,/' examples/expect/named.json >"$tmp/named-wrong.json"
	$bin expect --expect "$tmp/named-wrong.json" "$tmp/named.h5" >"$tmp/named-wrong.out" 2>&1
	want_rc $? 1 "$tmp/named-wrong.out"
	grep -q '^x .* ctimer .* encoder is 60 % .* FAIL' "$tmp/named-wrong.out" ||
		fail "named: wrong expectation not named: $(cat "$tmp/named-wrong.out")"
	$bin exec -q --sampler "$BUILD/tests/plugins/defect_one_thread.so" --expect \
		examples/expect/named.json -- "$named" 1 >"$tmp/one.out" 2>&1
	want_rc $? 1 "$tmp/one.out"
	grep -q '^x .* defect-one-thr[a-z]* .* encoder is 60 %' "$tmp/one.out" ||
		fail "named: defect-one-thread not named: $(cat "$tmp/one.out")"
fi

SB_CALIBRATE=0 $bin run -q -s ctimer,fault-misdeliver -w hotspot -t 2 -d 0.5 -r 2 \
	-o "$tmp/hot.h5" --expect examples/expect/hotspot.json >"$tmp/hot.out" 2>&1
want_rc $? 1 "$tmp/hot.out"
n=$(grep -c '^x .* fault-misdeliver ' "$tmp/hot.out")
[ "$n" -eq 6 ] || fail "fault-misdeliver: $n of 6 checks failed: $(cat "$tmp/hot.out")"

$bin margins --expect examples/expect/hotspot.json "$tmp/hot.h5" >"$tmp/margins.out" 2>&1
want_rc $? 0 "$tmp/margins.out"
n=$(grep -c '^  ctimer .* share  *2 ' "$tmp/margins.out")
[ "$n" -eq 3 ] || fail "margins: $n ctimer rows of 2 runs, want 3: $(cat "$tmp/margins.out")"

printf '{"expectations": [{"name": "a", "stack": "x", "share": 0.5}]}\n' >"$tmp/bad.json"
$bin run -q -s ctimer -w hotspot -o "$tmp/never.h5" --expect "$tmp/bad.json" >"$tmp/bad.out" 2>&1
want_rc $? 2 "$tmp/bad.out"
[ "$(wc -l <"$tmp/bad.out")" -eq 1 ] && grep -q "expectation 1 ('a'): needs a margin" "$tmp/bad.out" ||
	fail "bad file: $(cat "$tmp/bad.out")"
[ -e "$tmp/never.h5" ] && fail "run wrote a file before refusing a bad expectation file"
[ $bad -eq 0 ] && echo "expect: exec, run, import, expect and margins judge expectation files"
exit $bad
