#!/bin/sh
# run.sh [SECONDS] - builds the cpu profile parser's libFuzzer target with
# -fsanitize=fuzzer,address,undefined and fuzzes it for SECONDS (default 30) from the seed
# corpus in tests/fuzz/corpus (three real libprofiler profiles plus hand-made bad files).
# Prints one result line; exits non-zero on a crash or a build failure, 0 with "skipped"
# when clang is absent. New inputs go to a scratch directory, never into the corpus.
# Run from the repository root (make fuzz does).
set -u
secs=${1:-${FUZZ_SECONDS:-30}}
build=${BUILD:-build}/fuzz
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: skipped: $CLANG not installed"
	exit 0
fi
mkdir -p "$build" || exit 1
bin=$build/fuzz_cpuprofile
log=$build/fuzz_cpuprofile.log
if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -Wall -Wextra -Werror -o "$bin" \
	tests/fuzz/fuzz_cpuprofile.c sampler/cpuprofile.c >"$log" 2>&1; then
	echo "fuzz: build failed (see $log)"
	cat "$log" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/sampbench-fuzz-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# -artifact_prefix keeps a crashing input next to the log for reproduction
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$build/" "$work" tests/fuzz/corpus >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
cov=$(sed -n 's/^#[0-9]*.*cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
if [ "$rc" -ne 0 ]; then
	echo "fuzz: cpuprofile FAILED after ${runs:-?} runs (exit $rc); log $log, input in $build/"
	grep -m 5 -E 'ERROR|runtime error|SUMMARY' "$log" >&2
	exit 1
fi
echo "fuzz: cpuprofile ok: ${runs:-?} runs in ${secs} s, ${cov:-?} coverage points, no crash"
