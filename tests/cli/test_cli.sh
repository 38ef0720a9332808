#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of the sockdiag CLI (options, exit codes, table, JSON,
# NDJSON), run inside a private network namespace this script creates; the
# checks are in test_cli.py (or SCRIPT, e.g. test_options.py).
# Usage: test_cli.sh PATH-TO-SOCKDIAG [SCRIPT [ARG]] (ARG: a second argument of SCRIPT).
# Exit 0 pass, 1 fail, 77 cannot run here (skip).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
sockdiag=${1:?usage: test_cli.sh SOCKDIAG}

if [ "${SDIAG_CLI_INNER:-}" != 1 ]; then
	for tool in unshare ip python3; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "SKIP(tool:$tool): not installed" >&2
			exit 77
		fi
	done
	if ! unshare -n true 2>/dev/null; then
		echo "SKIP(netns): cannot create a network namespace (need root)" >&2
		exit 77
	fi
	SDIAG_CLI_INNER=1 exec unshare -n "$0" "$@"
fi

# Inside: never create sockets in the host's namespace.
if [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ]; then
	echo "test_cli.sh: not in a private network namespace, refusing" >&2
	exit 1
fi
ip link set lo up
# A third argument that is the built Python package (test_groups.py): in an
# ASan build the interpreter needs the sanitizer runtimes first.
if [ -n "${3:-}" ] && [ -d "$3/sockdiag" ]; then
	. "$here/../python/sanitizers.sh"
	sanitizer_env "$3"
fi
exec python3 "$here/${2:-test_cli.py}" "$sockdiag" ${3+"$3"}
