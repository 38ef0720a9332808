#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/guard/route.sh — the guard's route-change pass (issue 12).
#
#   bench/guard/route.sh [-r RUNS] [-n N] [-p PEERS] [-o REPORT.md]
#
# N (default 10000) established TCP connections from B to PEERS (default 1000)
# distinct peers in R, behind a route through a veth pair; `sockdiag guard
# -N B` with on-route-change = yes. Each run adds (then the next deletes) a
# route that concerns none of them (192.0.2.0/24), so every pass dumps the N
# sockets, asks the kernel for the route of each distinct (peer, mark, device,
# uid) once (PEERS lookups) and destroys nothing. Reported: the guard's own
# figure for the pass ("in X ms" of its log line: dump, lookups, verdicts),
# min and median over RUNS. Target: <= 50 ms. As root; everything runs in
# private namespaces (an outer `unshare -n` with small per-namespace hash
# tables, then R and B inside it).
#
# Environment: BUILD (default build-bench), SOCKDIAG, CC (default cc).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
RUNS=7 N=10000 PEERS=1000 OUT=

while getopts "r:n:p:o:" opt; do
	case $opt in
	r) RUNS=$OPTARG ;;
	n) N=$OPTARG ;;
	p) PEERS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) echo "usage: route.sh [-r RUNS] [-n N] [-p PEERS] [-o REPORT.md]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "route.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$SOCKDIAG" ] || { echo "route.sh: no $SOCKDIAG (build it first)" >&2; exit 1; }
if [ -z "${ROUTE_BENCH_OUTER:-}" ]; then
	exec env ROUTE_BENCH_OUTER=1 unshare -n "$0" "$@"
fi
sysctl -qw net.ipv4.tcp_child_ehash_entries=16384 2>/dev/null || true

R=sdrb$$r
B=sdrb$$b
T=$(mktemp -d)
PIDS=()
cleanup() {
	exec {hold}>&- 2>/dev/null || true
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$R" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

ip netns add "$R"
ip netns add "$B"
ip link add vr netns "$R" type veth peer name vb netns "$B"
ip -n "$R" link set lo up
ip -n "$B" link set lo up
ip -n "$R" addr add 10.20.0.1/16 dev vr
ip -n "$B" addr add 10.20.0.2/16 dev vb
ip -n "$R" link set vr up
ip -n "$B" link set vb up
ip -n "$B" route add 10.30.0.0/16 via 10.20.0.1
for ((i = 0; i < PEERS; i++)); do
	echo "addr add 10.30.$((i / 250)).$((i % 250 + 1))/32 dev lo"
done >"$T/peers.batch"
ip -n "$R" -batch "$T/peers.batch"
${CC:-cc} -O2 -o "$T/manyconn" "$HERE/manyconn.c"
ip netns exec "$R" "$T/manyconn" server 0.0.0.0 7000 1 >"$T/server" 2>&1 &
PIDS+=($!)
for ((i = 0; i < 50; i++)); do grep -q listening "$T/server" 2>/dev/null && break; sleep 0.1; done

exec {hold}> >(ip netns exec "$B" python3 "$HERE/peers.py" 10.20.0.2 "$N" "$PEERS" >"$T/clients")
for ((i = 0; i < 600; i++)); do grep -q "^ready" "$T/clients" 2>/dev/null && break; sleep 0.1; done
grep -q "^ready $N" "$T/clients" || { echo "route.sh: clients: $(cat "$T/clients")" >&2; exit 1; }

printf 'on-route-change = yes\n' >"$T/guard.conf"
nice -n -20 "$SOCKDIAG" guard -c "$T/guard.conf" -N "$B" 2>"$T/guard.log" &
PIDS+=($!)
for ((i = 0; i < 50; i++)); do grep -q started "$T/guard.log" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
base=$(grep -c "routes changed" "$T/guard.log" || true)
for ((r = 1; r <= RUNS; r++)); do
	if ((r % 2)); then ip -n "$B" route add 192.0.2.0/24 via 10.20.0.1
	else ip -n "$B" route del 192.0.2.0/24; fi
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "routes changed" "$T/guard.log")" -ge $((base + r)) ] && break
		sleep 0.05
	done
	sleep 0.3
done
grep "routes changed" "$T/guard.log" | tail -n "$RUNS" >"$T/passes"
{
	echo "### Route-change pass: $N sockets to $PEERS peers ($(date -u '+%Y-%m-%d %H:%M') UTC, $RUNS runs)"
	echo
	echo '```'
	head -2 "$T/passes" | sed 's/^[^ ]* sockdiag-guard: //'
	echo '```'
	echo
	sed -n 's/.*[ (]\([0-9.]*\) ms)\{0,1\}$/\1/p' "$T/passes" | sort -n | awk -v runs="$RUNS" '
		{ v[NR] = $1 }
		END {
			med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "| target | limit | min | median | runs | verdict |\n|---|---:|---:|---:|---:|---|\n"
			printf "| route-change pass (ms) | ≤ 50 | %.2f | %.2f | %d | %s |\n", v[1], med, NR,
				med <= 50 ? "met" : "NOT met"
		}'
} | tee ${OUT:+"$OUT"}
