#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The Python module's tests (pytest), in private network, pid and mount
# namespaces made here: usage run.sh PYTHON BUILD_PYTHON_DIR [PYTEST ARGS...].
# PYTHON is the interpreter meson built the module for; BUILD_PYTHON_DIR holds
# the built package (build/python). In an ASan build the module needs the
# sanitizer runtimes preloaded into the (uninstrumented) interpreter.
# Exit 0 pass, 1 fail, 77 cannot run here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
py=${1:?usage: run.sh PYTHON BUILD_PYTHON_DIR}
pydir=$(cd "${2:?usage: run.sh PYTHON BUILD_PYTHON_DIR}" && pwd)

# TCP (and UDP) dumps walk the kernel's hash table of every namespace that shares it: the
# host's, where other programs may hold 100k sockets. A namespace made from one with
# tcp_child_ehash_entries set gets a table of its own: the tests run in such a one.
private_tables() {
	sysctl -qw net.ipv4.tcp_child_ehash_entries=4096 2>/dev/null || true
	sysctl -qw net.ipv4.udp_child_hash_entries=4096 2>/dev/null || true
}

case ${SDIAG_PY_INNER:-} in
"")
	for tool in unshare ip setpriv sysctl; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "SKIP(tool:$tool): not installed" >&2
			exit 77
		fi
	done
	for mod in pytest psutil pyroute2; do
		if ! "$py" -c "import $mod" 2>/dev/null; then
			echo "SKIP(pymod:$mod): $py cannot import $mod (Debian: python3-$mod)" >&2
			exit 77
		fi
	done
	if ! unshare -n -p -f --mount-proc true 2>/dev/null; then
		echo "SKIP(netns): cannot create network and pid namespaces (need root)" >&2
		exit 77
	fi
	SDIAG_PY_HOSTNS=$(readlink /proc/self/ns/net) SDIAG_PY_INNER=1 \
		exec unshare -n -p -f --mount-proc "$0" "$@"
	;;
1)
	private_tables
	SDIAG_PY_INNER=2 exec unshare -n "$0" "$@"
	;;
esac

# Inside: never destroy sockets in the host's namespace.
if [ "$(readlink /proc/self/ns/net)" = "${SDIAG_PY_HOSTNS:-}" ]; then
	echo "run.sh: not in a private network namespace, refusing" >&2
	exit 1
fi
private_tables
ip link set lo up
shift 2

. "$here/sanitizers.sh"
sanitizer_env "$pydir"
export PYTHONPATH="$pydir${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$here"
exec "$py" -m pytest -q -p no:cacheprovider -rs --tb=short "$@" test_sockdiag.py test_selection.py
