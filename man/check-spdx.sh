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
bad=""
n=0
for f in $(find . -path ./build\* -prune -o -path ./.git -prune -o -type f \
	\( -name '*.[ch]' -o -name '*.sh' -o -name '*.py' -o -name meson.build \
	-o -name '*.map' -o -name '*.bash' -o -name '*.fish' -o -name '_sockdiag' \) -print); do
	case $f in
	./lib/* | ./include/*) want=LGPL-2.1-or-later ;;
	*) want=GPL-2.0-or-later ;;
	esac
	n=$((n + 1))
	head -n 3 "$f" | grep -q "SPDX-License-Identifier: .*\\b$want\\b" || bad="$bad $f"
done
if [ -n "$bad" ]; then
	echo "no SPDX-License-Identifier line, or the wrong licence, in:$bad"
	exit 1
fi
echo "all $n source files carry the right SPDX-License-Identifier"
