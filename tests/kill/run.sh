#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of `sockdiag kill`, in a private network namespace made
# here: usage run.sh PATH-TO-SOCKDIAG SCRIPT.py [ARGS...]. The script (cli.py,
# diff.py) creates its sockets and any further namespaces itself; ARGS go to
# it (diff.py takes a seed).
# Exit 0 pass, 1 fail, 77 cannot run here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
sockdiag=${1:?usage: run.sh SOCKDIAG SCRIPT.py}
script=${2:?usage: run.sh SOCKDIAG SCRIPT.py}

if [ "${SDIAG_KILL_INNER:-}" != 1 ]; then
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
	SDIAG_KILL_INNER=1 exec unshare -n "$0" "$@"
fi

# Inside: never destroy sockets in the namespace of pid 1 (the host's).
if [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ]; then
	echo "run.sh: not in a private network namespace, refusing" >&2
	exit 1
fi
ip link set lo up
shift 2
exec python3 "$here/$script" "$sockdiag" "$@"
