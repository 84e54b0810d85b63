#!/bin/sh
# coverage.sh OBJDIR TEST MIN SOURCE... - line coverage (gcov) of the Darwin sources under
# the Mach double: clears OBJDIR's counters, runs TEST (test_mach_double built with an
# instrumented copy of SOURCE... in OBJDIR; forked sampler processes flush theirs at
# _exit), prints gcov's line figure per source and fails when thread_ctl_darwin.c or
# mach_task_darwin.c is below MIN percent. `make coverage-darwin`.
set -u
[ $# -ge 4 ] || { echo "usage: coverage.sh OBJDIR TEST MIN SOURCE..." >&2; exit 2; }
objdir=$1 test=$2 min=$3
shift 3
command -v gcov >/dev/null || { echo "coverage: gcov not found" >&2; exit 2; }
find "$objdir" -name '*.gcda' -exec rm -f {} +
"$test" >"$objdir/test.log" 2>&1
rc=$?
[ $rc -eq 0 ] || echo "coverage: $test failed (exit $rc), see $objdir/test.log" >&2
status=$rc
for src in "$@"; do
	pct=$(gcov -n -o "$objdir/$(dirname "$src")" "$src" 2>/dev/null |
		awk -v f="$src" '$0 ~ "^File .*" f "'"'"'" { hit = 1; next }
			hit && /^Lines executed:/ { sub(/^Lines executed:/, ""); print; exit }')
	[ -n "$pct" ] || { echo "coverage: no data for $src" >&2; status=1; continue; }
	printf '  %-32s %s\n' "$src" "$pct"
	case $src in
	*thread_ctl_darwin.c | *mach_task_darwin.c)
		p=${pct%%%*}
		if awk -v p="$p" -v m="$min" 'BEGIN { exit !(p < m) }'; then
			echo "coverage: $src below $min %" >&2
			status=1
		fi ;;
	esac
done
exit $status
