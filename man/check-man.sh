#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-man.sh PAGE [MAPFILE]
# The page renders without a groff warning; with MAPFILE (libsockdiag.3), every
# exported function of the version script is in its SYNOPSIS.
set -eu
page=$1
out=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
	echo "$page: groff warnings:"
	echo "$out"
	exit 1
fi
if [ $# -ge 2 ]; then
	missing=""
	for sym in $(sed -n 's/^[[:space:]]*\(sdiag_[a-z0-9_]*\);/\1/p' "$2"); do
		grep -q "^\.BI\{0,1\} \".*[ *]$sym(" "$page" || missing="$missing $sym"
	done
	if [ -n "$missing" ]; then
		echo "$page: not in the SYNOPSIS:$missing"
		exit 1
	fi
fi
echo "$page: ok"
