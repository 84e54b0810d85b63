#!/bin/sh
# action.sh - the GitHub action (action.yml), its example workflow and this repository's
# own workflows pass action-validator (ci/action-lint.sh); the validator rejects a broken
# copy (so a pass means something); ci/action.sh, dry-run, builds the commands the action
# documents (none beside the samplers, the plugin built and appended, the program's words
# under exec, the default budgets) and refuses inputs that score nothing (exit 2).
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d /tmp/sbaction.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "FAIL $*"; bad=1; }

sh ci/action-lint.sh action.yml .github/workflows/*.yml examples/ci/*.yml
case $? in 0) ;; 2) echo "action: skipped: action-validator cannot be installed (npm)"; exit 0 ;; *) bad=1 ;; esac
# a misspelled key in a step must fail the validator
sed 's/^    - name: run, gate and report$/    - nmae: run, gate and report/' action.yml >"$tmp/action.yml"
grep -q nmae "$tmp/action.yml" || fail "the broken copy of action.yml was not made"
sh ci/action-lint.sh "$tmp/action.yml" >/dev/null && fail "action-validator passed a broken action.yml"

# dry_run VAR=VALUE...: ci/action.sh run's commands, one per line
dry_run() { env -i PATH="$PATH" HOME="$HOME" SB_DRY_RUN=1 SB_OUT_DIR="$tmp/out" "$@" sh ci/action.sh run 2>&1; }
out=$(dry_run SB_SAMPLERS=ctimer SB_PLUGIN_SOURCE=examples/ctimer_plugin.c)
echo "$out" | grep -q "^+ cc -shared .* examples/ctimer_plugin.c -o $tmp/out/plugin.so" ||
	fail "plugin not built: $out"
echo "$out" | grep -q "sampbench run --sampler none,ctimer,$tmp/out/plugin.so --workload balanced,hotspot .* --reps 3 " ||
	fail "run line: $out"
echo "$out" | grep -q "sampbench gate --budgets $(pwd)/ci/budgets " || fail "default budgets: $out"
echo "$out" | grep -q "^verdict=PASS$" || fail "no verdict output: $out"
out=$(dry_run SB_SAMPLERS=mach,perf SB_PROGRAM="xz -T2 -c 'in file.txt'")
echo "$out" | grep -q "sampbench exec --sampler mach,perf --hz 100 -o $tmp/out/results.h5 -f -- xz -T2 -c in file.txt$" ||
	fail "exec line: $out"
dry_run >/dev/null; [ $? -eq 2 ] || fail "no samplers, plugin or tools: want exit 2"
dry_run SB_TOOLS=perf-record SB_PROGRAM=true >/dev/null; [ $? -eq 2 ] || fail "tools and program: want exit 2"
[ $bad -eq 0 ] && echo "action: the action and the workflows validate, its commands are the documented ones"
exit $bad
