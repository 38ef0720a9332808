#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Differential test of `sockdiag list` against iproute2's `ss`, in a private
# network namespace: usage diff_ss.sh PATH-TO-SOCKDIAG [SCRIPT.py]. The
# comparison and the socket population are in diff_ss.py (the ss quirks it
# normalises are listed there); another script of this directory, such as
# json_names.py, runs the same way. Exit 0 pass, 1 fail, 77 cannot run here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
sockdiag=${1:?usage: diff_ss.sh SOCKDIAG [SCRIPT.py]}
script=${2:-diff_ss.py}

if [ "${SDIAG_DIFF_INNER:-}" != 1 ]; then
	for tool in unshare ip ss python3; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "SKIP(tool:$tool): not installed" >&2
			exit 77
		fi
	done
	if ! unshare -n true 2>/dev/null; then
		echo "SKIP(netns): cannot create a network namespace (need root)" >&2
		exit 77
	fi
	SDIAG_DIFF_INNER=1 exec unshare -n "$0" "$@"
fi

# Inside: refuse to run in the namespace of pid 1 (the host's).
if [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ]; then
	echo "diff_ss.sh: not in a private network namespace, refusing" >&2
	exit 1
fi
ip link set lo up
exec python3 "$here/$script" "$sockdiag"
