#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# abi.sh check|baseline LIBRARY SRCDIR
#
# The library's ABI against the baseline kept in the tree, abi/libsockdiag.abi
# (libabigail, Debian's abigail-tools). abidw describes the built shared
# library from its DWARF (so the build needs debug info, as Meson's default
# debugoptimized has), restricted to what include/sockdiag.h declares: the
# exported symbols with their versions, and every type reachable from them;
# opaque handles stay opaque, source locations are left out (a moved line
# is no change). abidiff compares that with the baseline.
#
#   check     exit 0 when the ABI is the baseline's, 1 with abidiff's report
#             when anything differs: a removed or changed symbol, a struct that
#             grew, a new function (a new function is compatible, but the
#             baseline must say so: regenerate it in the same commit)
#   baseline  rewrite abi/libsockdiag.abi from LIBRARY (`make abi-baseline`)
#
# Exit 77 (skip) when abidw/abidiff are not installed.
set -euo pipefail

mode=$1
lib=$2
src=$3
base=$src/abi/libsockdiag.abi

for t in abidw abidiff; do
	command -v "$t" >/dev/null || { echo "SKIP: $t not installed (apt-get install abigail-tools)"; exit 77; }
done
[ -e "$lib" ] || { echo "FAIL: no library at $lib (build first)" >&2; exit 1; }
if ! readelf -S --wide "$lib" | grep -q '\.debug_info'; then
	echo "FAIL: $lib has no debug info: configure with -Ddebug=true (make abi-check does)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abidw --headers-dir "$src/include" --drop-private-types --no-show-locs --no-corpus-path \
	--no-comp-dir-path --out-file "$tmp/built.abi" "$lib"

case $mode in
baseline)
	cp "$tmp/built.abi" "$base"
	echo "wrote $base ($(grep -c '<elf-symbol ' "$base") symbols); review the diff and commit it"
	;;
check)
	[ -f "$base" ] || { echo "FAIL: no baseline $base (make abi-baseline)" >&2; exit 1; }
	rc=0
	abidiff --no-show-locs "$base" "$tmp/built.abi" >"$tmp/report" || rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok: the ABI of $(basename "$lib") is the baseline's" \
			"($(grep -c '<elf-symbol ' "$base") symbols, abi/libsockdiag.abi)"
		exit 0
	fi
	cat "$tmp/report"
	if [ $((rc & 3)) -ne 0 ]; then
		echo "FAIL: abidiff could not compare (exit $rc)" >&2
	elif [ $((rc & 8)) -ne 0 ]; then
		echo "FAIL: an incompatible ABI change against abi/libsockdiag.abi (above):" \
			"existing programs would break; see libsockdiag(3), STABILITY" >&2
	else
		echo "FAIL: the ABI changed against abi/libsockdiag.abi (above). A public" \
			"struct that changed size or layout breaks programs built with the old" \
			"header (libsockdiag(3), STABILITY). If intended (new calls in a new" \
			"version node, say), regenerate the baseline with 'make abi-baseline'" \
			"and commit it with the change" >&2
	fi
	exit 1
	;;
*)
	echo "usage: abi.sh check|baseline LIBRARY SRCDIR" >&2
	exit 2
	;;
esac
