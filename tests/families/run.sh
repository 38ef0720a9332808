#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One family's live test (live.py) in a private network namespace made here:
#   run.sh PATH-TO-SOCKDIAG FAMILY
# Exit 0 pass, 1 fail, 77 cannot run here (no root/namespaces, or the kernel lacks the
# family's diag module: live.py says which with SKIP(FEATURE)).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
sockdiag=${1:?usage: run.sh SOCKDIAG FAMILY}
family=${2:?usage: run.sh SOCKDIAG FAMILY}

if [ "${SDIAG_FAMILY_INNER:-}" != 1 ]; then
	for tool in unshare ip ss python3; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "SKIP(tool:$tool): not installed"
			exit 77
		fi
	done
	if ! unshare -n true 2>/dev/null; then
		echo "SKIP(netns): cannot create a network namespace (need root)"
		exit 77
	fi
	SDIAG_FAMILY_INNER=1 exec unshare -n "$0" "$@"
fi

# Inside: never make or destroy sockets in the namespace of pid 1 (the host's).
if [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ]; then
	echo "run.sh: not in a private network namespace, refusing" >&2
	exit 1
fi
ip link set lo up
exec python3 "$here/live.py" "$sockdiag" "$family"
