#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/top.sh — the CPU cost of one `sockdiag top` refresh (issue 26), by hand.
#
#   bench/top.sh [-r RUNS] [SOCKETS...]      (default: 1000 10000 100000)
#
# For each SOCKETS it enters a new private network namespace (unshare -n),
# builds SOCKETS/2 established loopback TCP pairs there (bench/mkpairs), and
# measures CPU time (user + sys, bench/measure) of:
#   - one `sockdiag list -tani` pass (the reference: one dump with tcp_info,
#     every socket rendered), median of RUNS;
#   - one steady-state top refresh: `top -b --count 12 --interval 0.1s` minus
#     `top -b --count 2 ...`, divided by 10 (startup, the baseline dump and the
#     owner scan of the first refresh cancel out), median of RUNS, for --by pid
#     and --by conn.
# and prints a markdown table: CPU per refresh, its ratio to the list pass, and
# the share of one core that a 1 s refresh costs. Nothing touches the host's
# namespace. Environment: BUILD (default build), SOCKDIAG ($BUILD/cli/sockdiag).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
RUNS=5
while getopts r: o; do
	case $o in
	r) RUNS=$OPTARG ;;
	*) echo "usage: bench/top.sh [-r RUNS] [SOCKETS...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
SIZES=("${@:-1000 10000 100000}")
# shellcheck disable=SC2206
SIZES=(${SIZES[*]})

if [[ ${TOPBENCH_INNER:-} != 1 ]]; then
	TOOLS=$(mktemp -d)
	trap 'rm -rf "$TOOLS"' EXIT
	for f in mkpairs measure; do
		"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -o "$TOOLS/$f" "$ROOT/bench/$f.c"
	done
	echo "| sockets | list -tani CPU ms | top refresh CPU ms (--by pid) | ratio | top (--by conn) | ratio | % of a core at 1 s |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	for n in "${SIZES[@]}"; do
		TOPBENCH_INNER=1 TOOLS=$TOOLS SOCKDIAG=$SOCKDIAG RUNS=$RUNS unshare -n "$0" "$n"
	done
	exit 0
fi

# ---- inside the private namespace: one size ----------------------------------------------
n=$1
ip link set lo up
exec {rfd}< <(exec "$TOOLS/mkpairs" -p 0 "$((n / 2))")
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
read -r -t 900 -u "$rfd" line
[[ $line == "ready $((n / 2))" ]] || { echo "mkpairs failed: $line" >&2; exit 1; }

cpu() { "$TOOLS/measure" -- "$@" | awk '{print $4}'; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
per_refresh() {
	local a b
	a=$(cpu "$SOCKDIAG" top -b --count 2 --interval 0.1s "$@")
	b=$(cpu "$SOCKDIAG" top -b --count 12 --interval 0.1s "$@")
	awk -v a="$a" -v b="$b" 'BEGIN {print (b - a) / 10}'
}
cpu "$SOCKDIAG" list -tani >/dev/null # warm-up
list=$(for _ in $(seq "$RUNS"); do cpu "$SOCKDIAG" list -tani; done | median)
pidr=$(for _ in $(seq "$RUNS"); do per_refresh --by pid; done | median)
conn=$(for _ in $(seq "$RUNS"); do per_refresh --by conn; done | median)
awk -v n="$n" -v l="$list" -v p="$pidr" -v c="$conn" 'BEGIN {
	printf "| %d | %.1f | %.1f | %.2fx | %.1f | %.2fx | %.1f%% |\n", n, l * 1000, p * 1000,
		p / l, c * 1000, c / l, p * 100 }'
