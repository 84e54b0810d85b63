#!/bin/sh
# run.sh [SECONDS] - builds the libFuzzer targets with -fsanitize=fuzzer,address,undefined
# and fuzzes each for SECONDS (default 30) from its seed corpus:
#   cpuprofile  the gperftools cpu profile parser; tests/fuzz/corpus (three real libprofiler
#               profiles plus hand-made bad files)
#   h5          the results reader on in-memory HDF5 file images; tests/fuzz/corpus_h5
#               (small real results files written by `sampbench run`)
#   pprof perf_script folded speedscope firefox sysprof
#               the importers (analysis/import.h), one binary (fuzz_import.c) run per format;
#               tests/fuzz/corpus_import/FORMAT (sampbench's own exports of a small run,
#               a real `perf script` excerpt, a cut real sysprof capture, hand-made variants)
# Builds every target first, then fuzzes FUZZ_JOBS of them at once (default: the CPUs,
# each fuzzer being one process on one CPU, so a target gets the same executions as
# alone). Prints one result line per target, in order; exits non-zero on a crash, a build
# failure or without clang (make deps installs it). make check replays the corpora without libFuzzer
# (tests/fuzz/replay.sh). New inputs go to a scratch directory, never into the
# corpus. FUZZ_TARGETS="h5" runs one target; FUZZ_RUNS=N stops each after N executions
# instead (the long run: FUZZ_TARGETS=h5 FUZZ_RUNS=1000000). Run from the repository root
# (make fuzz does).
set -u
secs=${1:-${FUZZ_SECONDS:-30}}
targets=${FUZZ_TARGETS:-cpuprofile h5 pprof perf_script folded speedscope firefox sysprof}
build=${BUILD:-build}/fuzz
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: $CLANG not installed (make deps installs it)"
	exit 1
fi
mkdir -p "$build" || exit 1
HDF5_CFLAGS=$(pkg-config --cflags hdf5 2>/dev/null || echo -I/usr/include/hdf5/serial)
HDF5_LIBS=$(pkg-config --libs hdf5 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5)
jobs=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
rc_all=0
built=" " # binaries built by this run, each once
plan=$(mktemp "${TMPDIR:-/tmp}/sampbench-fuzz-plan-XXXXXX") || exit 1
trap 'rm -f "$plan" "$plan".*' EXIT

# build phase: one line per target in $plan: NAME BINARY FORMAT CORPUS EXTRA
for t in $targets; do
	bin=$build/fuzz_$t
	fmt=
	case $t in
	cpuprofile)
		srcs="tests/fuzz/fuzz_cpuprofile.c sampler/cpuprofile.c"
		libs=
		extra=
		corpus=tests/fuzz/corpus
		;;
	h5)
		# the reader, the run record, the metric table and the timestamp; nothing else is reached
		srcs="tests/fuzz/fuzz_h5.c results/h5io_*.c core/run.c core/metrics.c core/iso_time.c"
		libs="$HDF5_LIBS -lm"
		extra=
		corpus=tests/fuzz/corpus_h5
		;;
	pprof | perf_script | folded | speedscope | firefox | sysprof)
		# the importers and what they reach: the run record, protobuf, zlib, cJSON; one
		# binary for the six, told its format by FUZZ_FORMAT
		srcs="tests/fuzz/fuzz_import.c analysis/import.c analysis/import_pprof.c
		      analysis/import_perf_script.c analysis/import_folded.c analysis/import_json.c
		      analysis/import_speedscope.c analysis/import_firefox.c
		      analysis/import_gperftools.c analysis/import_sysprof.c analysis/protobuf.c
		      sampler/cpuprofile.c
		      core/run.c core/metrics.c"
		libs="-lz -lcjson -lm"
		extra=
		corpus=tests/fuzz/corpus_import/$t
		fmt=$(echo "$t" | tr _ -)
		bin=$build/fuzz_import
		;;
	*)
		echo "fuzz: unknown target '$t'"
		exit 2
		;;
	esac
	log=$build/fuzz_$t.log
	# shellcheck disable=SC2086 # word splitting of the lists is wanted
	if [ "$built" = "${built#* $bin }" ] && ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. $HDF5_CFLAGS -o "$bin" \
		$srcs $libs >"$log" 2>&1; then
		echo "fuzz: $t: build failed (see $log)"
		cat "$log" >&2
		exit 1
	fi
	built="$built $bin "
	echo "$t $bin ${fmt:--} $corpus $extra" >>"$plan"
done

# fuzz_one NAME BINARY FORMAT CORPUS [EXTRA...]: fuzzes one target; prints its result line
# and returns non-zero on a crash
fuzz_one() {
	t=$1 bin=$2 fmt=$3 corpus=$4
	shift 4
	[ "$fmt" = - ] && fmt=
	log=$build/fuzz_$t.log
	work=$(mktemp -d "${TMPDIR:-/tmp}/sampbench-fuzz-XXXXXX") || return 1
	if [ -n "${FUZZ_RUNS:-}" ]; then
		limit="-runs=$FUZZ_RUNS"
	else
		limit="-max_total_time=$secs"
	fi
	# -artifact_prefix keeps a crashing input next to the log for reproduction
	# libhdf5 1.10 leaks on some of its own error paths (not ours): suppressed by library,
	# so a leak from our code still fails; the target also checks no HDF5 object is left open
	FUZZ_FORMAT=$fmt LSAN_OPTIONS=suppressions=tests/fuzz/lsan_hdf5.supp:print_suppressions=0 \
	"$bin" "$limit" "$@" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/$t-" "$work" "$corpus" >"$log" 2>&1
	rc=$?
	rm -rf "$work"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(sed -n 's/^#[0-9]*.*cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
	if [ "$rc" -ne 0 ]; then
		echo "fuzz: $t FAILED after ${runs:-?} runs (exit $rc); log $log, input in $build/"
		grep -m 5 -E 'ERROR|runtime error|SUMMARY' "$log"
		return 1
	fi
	echo "fuzz: $t ok: ${runs:-?} runs, ${cov:-?} coverage points, no crash"
}

# fuzz phase: lane L of $jobs takes targets L, L + jobs, ...; each target's result goes to
# $plan.N and its status to $plan.N.rc, shown in order once every lane is done
lane=0
while [ "$lane" -lt "$jobs" ]; do
	(
		i=0
		while read -r line; do
			if [ $((i % jobs)) -eq "$lane" ]; then
				# shellcheck disable=SC2086 # the plan line's words are the arguments
				fuzz_one $line >"$plan.$i" 2>&1
				echo $? >"$plan.$i.rc"
			fi
			i=$((i + 1))
		done <"$plan"
	) &
	lane=$((lane + 1))
done
wait
i=0
while read -r line; do
	cat "$plan.$i" 2>/dev/null
	rc=$(cat "$plan.$i.rc" 2>/dev/null || echo 1)
	[ "$rc" -eq 0 ] || rc_all=1
	i=$((i + 1))
done <"$plan"
exit $rc_all
