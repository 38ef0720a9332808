#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-options.sh SOCKDIAG PAGE
# Every option that `sockdiag COMMAND --help` lists, for every command, is
# documented in the man page (as \-x or \-\-long).
set -eu
sd=$1
page=$2
opts=$(for c in list kill watch guard exporter; do "$sd" "$c" --help 2>&1; done |
	grep -oE '(^|[ |[])--?[a-zA-Z0-9][a-z0-9-]*' | sed 's/^[ |[]//' | sort -u)
[ -n "$opts" ] || { echo "no options found in --help"; exit 1; }
missing=""
for o in $opts; do
	esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	grep -q -e "$esc\\([^a-z0-9-]\\|\$\\)" "$page" || missing="$missing $o"
done
if [ -n "$missing" ]; then
	echo "$page: options in --help but not in the page:$missing"
	exit 1
fi
echo "$page: all $(echo "$opts" | wc -l) options of --help are documented"
