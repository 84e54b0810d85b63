#!/bin/sh
# action-lint.sh FILE... - validates GitHub workflow and action files against their
# schemas with action-validator (npm's @action-validator/cli), installed by npm into a cache
# outside the tree (SB_NPM_CACHE, default ~/.cache/sampbench/npm) when missing. Prints
# "ok FILE" or the validator's errors for each file; exit 1 when one is invalid, 2 when
# the validator cannot be installed.
ver=0.6.0
dir=${SB_NPM_CACHE:-$HOME/.cache/sampbench/npm}
bin=$dir/node_modules/.bin/action-validator

if ! [ -x "$bin" ] || ! grep -q "\"version\": \"$ver\"" \
	"$dir/node_modules/@action-validator/cli/package.json" 2>/dev/null; then
	command -v npm >/dev/null 2>&1 ||
		{ echo "action-lint: cannot install action-validator: no npm (apt-get install npm)" >&2; exit 2; }
	mkdir -p "$dir" && npm install --prefix "$dir" --no-audit --no-fund --no-save \
		--loglevel=error "@action-validator/cli@$ver" "@action-validator/core@$ver" >/dev/null 2>&1
	[ -x "$bin" ] ||
		{ echo "action-lint: cannot install @action-validator/cli@$ver with npm into $dir" >&2; exit 2; }
fi
rc=0
for f in "$@"; do
	if out=$("$bin" "$f" 2>&1); then
		echo "ok   $f"
	else
		echo "FAIL $f"
		echo "$out" | grep '"detail"\|"title"\|"path"' | head -8
		rc=1
	fi
done
exit $rc
