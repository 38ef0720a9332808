#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-spdx.sh SRCDIR
# Every source file (C, shell, Python, Meson, the completions) names its licence in an
# SPDX-License-Identifier line, and the right one (see LICENSE): LGPL-2.1-or-later under
# lib/ and include/, GPL-2.0-or-later everywhere else.
set -eu
cd "$1"
for f in COPYING COPYING.LIB LICENSE NEWS; do
	[ -s "$f" ] || { echo "missing: $f"; exit 1; }
done
files=$(find . -path ./build\* -prune -o -path ./.git -prune -o -type f \
	\( -name '*.[ch]' -o -name '*.sh' -o -name '*.py' -o -name meson.build \
	-o -name '*.map' -o -name '*.bash' -o -name '*.fish' -o -name '_sockdiag' \) -print)
n=$(echo "$files" | wc -l)
# One awk for every file: the first three lines of each must name the right licence.
# shellcheck disable=SC2086
bad=$(awk 'FNR == 1 { if (f != "" && !ok) print f; f = FILENAME; ok = 0
		want = (f ~ /^\.\/(lib|include)\//) ? "LGPL-2.1-or-later" : "GPL-2.0-or-later" }
	FNR <= 3 && index($0, "SPDX-License-Identifier:") && index($0, want) { ok = 1 }
	END { if (f != "" && !ok) print f }' $files | tr '\n' ' ')
if [ -n "$bad" ]; then
	echo "no SPDX-License-Identifier line, or the wrong licence, in: $bad"
	exit 1
fi
echo "all $n source files carry the right SPDX-License-Identifier"
