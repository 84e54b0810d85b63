#!/bin/sh
# layers.sh - fails, with one line per violation, when an #include breaks the layering:
#   - "../" in an include: includes are written from the repository root (-I.);
#   - a bare name of a file next to the includer ("run.h"): write it "core/run.h";
#   - a folder including a folder on its own line or above (the order below);
#   - a folder of sources that is in no layer.
# Run from the repository root (make check runs it through tests/run.sh). README.md
# "How it works" names the same layers.

# Bottom to top. A folder may include its own and those on lower lines, never one on its
# line or above: folders on one line are peers and stay independent of each other.
LAYERS='
core
platform
sampler
workloads
analysis results
harness agent
'
# Above every layer, free to include any of them: tests and tools of the whole tree, and
# plugins outside it (examples/ builds with -Isampler only, as a plugin's author does).
TOP='tests tools examples'

files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null) ||
	files=$(find . -name 'build*' -prune -o \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||')
if [ -z "$files" ]; then
	echo "layers: no C sources found (run from the repository root)" >&2
	exit 2
fi

# Python reads results files through analysis/sbfile.py alone: no other file imports h5py.
pyfiles=$(git ls-files --cached --others --exclude-standard '*.py' 2>/dev/null) ||
	pyfiles=$(find . -name 'build*' -prune -o -name '*.py' -print | sed 's|^\./||')
for f in $pyfiles; do
	[ "$f" = analysis/sbfile.py ] && continue
	if grep -qE '^[[:space:]]*(import|from)[[:space:]]+h5py' "$f"; then
		echo "layers: $f imports h5py (read results files through analysis/sbfile.py)"
		exit 1
	fi
done

# shellcheck disable=SC2086 # the file list is one name per word
printf '%s\n' $files | awk -v layers="$LAYERS" -v top="$TOP" '
BEGIN {
	n = split(layers, lines, "\n")
	level = 0
	for (i = 1; i <= n; i++) {
		if (lines[i] == "")
			continue
		level++
		m = split(lines[i], names, " ")
		for (j = 1; j <= m; j++)
			rank[names[j]] = level
	}
	m = split(top, names, " ")
	for (j = 1; j <= m; j++)
		rank[names[j]] = level + 1
	bad = 0
}
function folder(path) { return index(path, "/") ? substr(path, 1, index(path, "/") - 1) : "" }
function dir(path) { sub(/\/[^\/]*$/, "", path); return path }
function report(msg) { print msg; bad++ }
{ list[++nfiles] = $0; exists[$0] = 1 }
END {
	for (k = 1; k <= nfiles; k++) {
		f = list[k]
		from = folder(f)
		if (from != "" && !(from in rank) && !(from in unplaced)) {
			unplaced[from] = 1
			report(from "/: in no layer (add it to LAYERS in tests/layers.sh)")
		}
		ln = 0
		while ((getline line < f) > 0) {
			ln++
			if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/)
				continue
			inc = line
			sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
			sub(/".*/, "", inc)
			where = f ":" ln ": #include \"" inc "\": "
			if (inc ~ /(^|\/)\.\.\//) {
				report(where "\"../\" in an include (write it from the repository root)")
				continue
			}
			if (inc !~ /\// && (dir(f) "/" inc) in exists) {
				report(where "a bare name (write it from the repository root: \"" dir(f) "/" inc "\")")
				continue
			}
			to = folder(inc)
			if (!(to in rank) || !(from in rank) || to == from)
				continue
			if (rank[to] >= rank[from])
				report(where to "/ is " (rank[to] == rank[from] ? "a peer of" : "above") " " from "/ (tests/layers.sh)")
		}
		close(f)
	}
	if (bad)
		print "layers: " bad " violation(s) in " nfiles " files"
	else
		print "layers: " nfiles " files, every include points down"
	exit bad ? 1 : 0
}'
