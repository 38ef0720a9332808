#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/pybench.sh [-r RUNS] [N]: the Python module's benchmark (issue 27). In new private
# network and pid namespaces, builds N established loopback TCP pairs (bench/mkpairs;
# default N 50000: 100k sockets), then runs bench/pybench.py there. Needs a build with the
# module (BUILD, default build) and python3-psutil, python3-pyroute2.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
RUNS=7
if [[ ${1:-} == -r ]]; then RUNS=$2; shift 2; fi
N=${1:-50000}
if [[ ${PYBENCH_INNER:-} != 1 ]]; then
	TOOLS=$(mktemp -d /tmp/pybench.XXXXXX)
	trap 'rm -rf "$TOOLS"' EXIT
	"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -o "$TOOLS/mkpairs" "$ROOT/bench/mkpairs.c"
	PYBENCH_INNER=1 TOOLS=$TOOLS unshare -n -p -f --mount-proc "$0" -r "$RUNS" "$N"
	exit
fi
ip link set lo up
exec {rfd}< <(exec "$TOOLS/mkpairs" "$N")
read -r -u "$rfd" line
[[ $line == "ready $N" ]] || { echo "pybench.sh: mkpairs: $line" >&2; exit 1; }
echo "N = $N pairs ($((2 * N)) established TCP sockets and the listeners), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
/usr/bin/python3 "$ROOT/bench/pybench.py" "$BUILD/python" "$BUILD/cli/sockdiag" "$RUNS"
