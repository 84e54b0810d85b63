#!/bin/sh
# replay.sh - every corpus file of the fuzz targets through the targets themselves, built
# without libFuzzer by make check with its compiler and sanitizers (tests/fuzz/replay.c):
# the corpora are regression inputs (real profiles and results files, hand-made bad ones,
# inputs the fuzzers once found). A finding aborts the target and fails this script.
# `make fuzz` (clang, 30 s a target, .ci/run) is what searches for new ones.
cd "$(dirname "$0")/../.." || exit 2
dir=${BUILD:-build}/tests/fuzz
# libhdf5 1.10's own leaks on its error paths are suppressed, as in tests/fuzz/run.sh
export LSAN_OPTIONS=suppressions=tests/fuzz/lsan_hdf5.supp:print_suppressions=0
rc=0
# replay TARGET FORMAT CORPUS: one line, "replay: TARGET: N inputs, no finding"
replay() {
	out=$(FUZZ_FORMAT=$2 "$dir/replay_$1" "$3" 2>&1)
	st=$?
	if [ $st -ne 0 ]; then
		echo "replay: $1${2:+ $2}: FAILED (exit $st) on $3; its output ends:"
		echo "$out" | tail -20
		rc=1
		return
	fi
	echo "replay: $1${2:+ $2}: $(echo "$out" | tail -1), no finding"
}
replay cpuprofile "" tests/fuzz/corpus
replay h5 "" tests/fuzz/corpus_h5
for f in tests/fuzz/corpus_import/*; do
	replay import "$(basename "$f" | tr _ -)" "$f"
done
exit $rc
