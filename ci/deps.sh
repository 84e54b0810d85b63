#!/bin/sh
# deps.sh PKG... - install the Debian packages sampbench needs when they are missing.
# As root: apt-get install (running apt-get update first when the lists are empty or older
# than a day). Otherwise: print the exact command and fail.
# On macOS the Debian names are ignored: Homebrew's formulae are checked and installed
# with `brew install` (no root needed); the report's Python modules are checked and the
# pip line printed (docs/darwin.md).
if [ "$(uname -s)" = Darwin ]; then
	brews="hdf5 cmocka gperftools pkg-config cjson"
	if ! command -v brew >/dev/null 2>&1; then
		echo "sampbench: Homebrew not found; install it, then: brew install $brews" >&2
		exit 1
	fi
	missing=
	for f in $brews; do
		brew list --formula "$f" >/dev/null 2>&1 || missing="$missing $f"
	done
	if [ -n "$missing" ]; then
		echo "  DEPS    brew install$missing"
		brew install$missing >/dev/null || {
			echo "sampbench: brew install failed:$missing" >&2; exit 1; }
	fi
	if ! python3 -c 'import h5py, numpy, matplotlib' >/dev/null 2>&1; then
		echo "sampbench: missing Python modules for the report and its tests" >&2
		echo "run: python3 -m pip install h5py numpy matplotlib" >&2
		exit 1
	fi
	exit 0
fi
missing=
for p in "$@"; do
	# npm from another source (NodeSource's nodejs ships it) conflicts with Debian's
	# package: a working npm command is enough
	[ "$p" = npm ] && command -v npm >/dev/null 2>&1 && continue
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$s" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "sampbench: missing Debian packages:$missing" >&2
	echo "run as root: apt-get update && $cmd" >&2
	exit 1
fi
echo "  DEPS    installing$missing"
lists=/var/lib/apt/lists
if [ -z "$(find $lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
	apt-get update -qq || { echo "sampbench: apt-get update failed" >&2; exit 1; }
fi
DEBIAN_FRONTEND=noninteractive $cmd -qq >/dev/null || {
	echo "sampbench: apt-get install failed:$missing" >&2; exit 1; }
