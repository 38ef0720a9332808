#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-man.sh PAGE [MAPFILE]
# The page renders without a groff warning, with no section twice and every
# option list of a section at one indent; with MAPFILE (libsockdiag.3), every
# exported function of the version script is in its SYNOPSIS.
set -eu
page=$1
out=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
	echo "$page: groff warnings:"
	echo "$out"
	exit 1
fi
# Rendered as a reader sees it: every section heading once, and in each
# section the option tags of its lists ("--x", "-x, --y": a line followed by a
# more indented one) at one indent. A nesting left open (an .RS without its
# .RE, an .IP where a .PP belonged) indents every later option of the section.
text=$(groff -man -Tutf8 -P-cbou "$page" 2>/dev/null)
dup=$(printf '%s\n' "$text" | grep -E '^[A-Z][A-Z ]+$' | sort | uniq -d)
if [ -n "$dup" ]; then
	echo "$page: section heading twice:" $dup
	exit 1
fi
bad=$(printf '%s\n' "$text" | awk '
	{ line[NR] = $0 }
	END {
		for (i = 1; i <= NR; i++) {
			l = line[i]
			if (l ~ /^[^ ]/ || l ~ /^   [^ ]/) { sec = l; continue }
			if (l !~ /^ +-[-a-zA-Z0-9]/)
				continue
			match(l, /^ +/); ind = RLENGTH
			for (j = i + 1; j <= NR && line[j] ~ /^ *$/; j++)
				;
			if (j > NR)
				continue
			match(line[j], /^ +/)
			if (RLENGTH <= ind)
				continue
			if (!(sec in first)) {
				first[sec] = ind
			} else if (first[sec] != ind) {
				name = sec
				sub(/^ +/, "", l); sub(/^ +/, "", name)
				printf "section %s: option %s indented %d, its first option %d " \
				       "(a nesting left open?)\n", name, l, ind, first[sec]
			}
		}
	}')
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | sed "s|^|$page: |"
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
