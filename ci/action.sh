#!/bin/sh
# action.sh STEP - the steps of the sampbench GitHub action (action.yml at the top of this
# repository), kept in one script so that they run, and are tested, outside GitHub too.
#   build  installs the Debian packages (make deps) and builds sampbench in its checkout
#   run    builds the plugin source if one is given, runs the samplers and tools (`run`) or
#          the program (`exec`), gates the file on the budgets, writes the report
# Inputs come from the environment, as action.yml passes them (SB_SAMPLERS, SB_TOOLS,
# SB_PLUGIN_SOURCE, SB_PROGRAM, SB_WORKLOADS, SB_THREADS, SB_HZ, SB_DURATION, SB_REPS,
# SB_BUDGETS, SB_OUT_DIR, SB_REPORT); outputs (results, gate, verdict, report) go to
# $GITHUB_OUTPUT when it is set, and to stdout as NAME=VALUE lines. The gate's verdict is
# an output, not the exit status, so that the results are uploaded before a failing
# verdict fails the job. SB_DRY_RUN=1 prints each command instead of running it.
root=$(cd "$(dirname "$0")/.." && pwd)
sb=$root/build/sampbench

die() { echo "sampbench action: $*" >&2; exit 2; }

# x CMD...: runs CMD (or prints it under SB_DRY_RUN=1)
x() {
	if [ "${SB_DRY_RUN:-0}" = 1 ]; then
		echo "+ $*"
		return 0
	fi
	"$@"
}

# output NAME VALUE: one output of the action
output() {
	echo "$1=$2"
	[ -n "${GITHUB_OUTPUT:-}" ] && echo "$1=$2" >>"$GITHUB_OUTPUT"
	return 0
}

step_build() {
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
		x sudo make -C "$root" deps || exit 1
	else
		x make -C "$root" deps || exit 1
	fi
	x make -C "$root" -j"$(getconf _NPROCESSORS_ONLN)" all
}

# plugin: the plugin source built into $out/plugin.so (its path on stdout)
build_plugin() {
	[ -f "$SB_PLUGIN_SOURCE" ] || die "cannot read plugin source '$SB_PLUGIN_SOURCE'"
	x cc -shared -fPIC -O2 -fno-omit-frame-pointer -I "$root/sampler" "$SB_PLUGIN_SOURCE" \
		-o "$out/plugin.so" -lrt >&2 || exit 1
	echo "$out/plugin.so"
}

step_run() {
	out=${SB_OUT_DIR:-sampbench-results}
	h5=$out/results.h5
	samplers=${SB_SAMPLERS:-}
	[ -n "$samplers$SB_PLUGIN_SOURCE$SB_TOOLS" ] ||
		die "nothing to score: give samplers, plugin-source or tools"
	[ -z "$SB_PROGRAM" ] || [ -z "$SB_TOOLS" ] ||
		die "tools score workloads only: give program or tools, not both"
	mkdir -p "$out" || die "cannot create '$out'"
	if [ -n "$SB_PLUGIN_SOURCE" ]; then
		so=$(build_plugin) || exit 1
		samplers=${samplers:+$samplers,}$so
	fi
	if [ -n "$SB_PROGRAM" ]; then
		# the program's own words, split as a shell would (it is the user's command line)
		eval "set -- $SB_PROGRAM"
		x "$sb" exec --sampler "$samplers" --hz "${SB_HZ:-100}" -o "$h5" -f -- "$@" || exit 1
	else
		# none: the reference the gate measures overhead, memory and pauses against
		x "$sb" run --sampler "none${samplers:+,$samplers}" ${SB_TOOLS:+--tool "$SB_TOOLS"} \
			--workload "${SB_WORKLOADS:-balanced,hotspot}" --threads "${SB_THREADS:-2}" \
			--hz "${SB_HZ:-100}" --duration "${SB_DURATION:-1}" --reps "${SB_REPS:-3}" \
			-o "$h5" -f || exit 1
	fi
	x "$sb" gate --budgets "${SB_BUDGETS:-$root/ci/budgets}" --junit "$out/gate.junit.xml" \
		--json "$out/gate.json" "$h5" >"$out/gate.txt"
	rc=$?
	grep -v "^✓" "$out/gate.txt" # the passed rows: in the file
	case $rc in
	0) verdict=PASS ;;
	1) verdict=FAIL ;;
	*) exit 1 ;;
	esac
	if [ "${SB_REPORT:-true}" = true ]; then
		x "$sb" report "$h5" -o "$out/report" || exit 1
		output report "$out/report/index.html"
	fi
	output results "$h5"
	output gate "$out/gate.txt"
	output verdict "$verdict"
}

case ${1:-} in
build) step_build ;;
run) step_run ;;
*) echo "usage: action.sh build|run (inputs in SB_* variables: see action.yml)" >&2; exit 2 ;;
esac
