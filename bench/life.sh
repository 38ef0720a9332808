#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/life.sh — `sockdiag life` under a close rate (issue 34), by hand.
#
#   bench/life.sh [-s SECONDS] [RATE...]      (default: 10 s; 5000 10000 25000)
#
# For each RATE, in a new private network (and mount) namespace: bench/mkcloses makes
# loopback TCP connections at RATE per second for SECONDS (100 bytes each way, both
# close: two sockets end per connection, two closes on this host and two records, where a
# server with remote clients sees one: RATE 5000 is 10k closes/s, 25000 50k) while
#   1. `sockdiag life -t --ndjson` runs: its CPU (user + sys, /proc/PID/stat) over the
#      load, its peak RSS (VmHWM), and its summary: records + lost must equal the
#      sockets that ended (2 per connection; 0 unaccounted);
#   2. bench/tcplife.bt (a tcplife equivalent on sock:inet_sock_set_state) under
#      Debian's bpftrace runs on the same load: its CPU over the load (the tracepoint
#      is global: other namespaces' connections are traced too, and counted).
# Prints one markdown row per RATE and tool, after a line with the TCP sockets allocated on
# the host in all namespaces (each dump of life walks them all: the kernel's table is global,
# so another program's million sockets cost life's dumps). The load comes from JOBS processes
# (default 2: one reaches about 14k connections a second here, two about 28k). Environment:
# BUILD, SOCKDIAG, JOBS,
# LIFE_ARGS (more options for life, e.g. --interval 60 to see the events' cost alone).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
SECS=10
while getopts s: o; do
	case $o in
	s) SECS=$OPTARG ;;
	*) echo "usage: bench/life.sh [-s SECONDS] [RATE...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 5000 10000 25000
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/mkcloses" "$ROOT/bench/mkcloses.c"

if [ "${LIFE_BENCH_INNER:-}" != 1 ]; then
	echo "TCP sockets allocated on the host (all namespaces): $(awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "alloc") print $(i + 1) }' /proc/net/sockstat)"
	echo "| rate/s asked | tool | connections made | made/s | sockets ended (closes) | closes/s | records | lost | unaccounted | CPU s | CPU s per 100k conns | % of one core | peak RSS MiB |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for rate in "$@"; do
		LIFE_BENCH_INNER=1 TMP=$TMP unshare -m -n "$0" -s "$SECS" "$rate"
	done
	exit 0
fi

mount --make-rprivate /
ip link set lo up
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
rate=$1

# load PID: the close load, with PID's CPU over it (seconds) and its peak RSS (KiB):
# sets made, cpu, rss, and row (the columns from CPU s on).
load() {
	local t0 t1
	t0=$(ticks "$1")
	made=$("$TMP/mkcloses" "$rate" "$SECS" 100 "${JOBS:-2}")
	sleep 1.5
	t1=$(ticks "$1")
	rss=$(awk '/VmHWM/ { print $2 }' "/proc/$1/status")
	cpu=$(echo "scale=3; ($t1 - $t0) / $hz" | bc)
	row="$cpu | $(echo "scale=3; $cpu * 100000 / $made" | bc) |"
	row+=" $(echo "scale=2; 100 * $cpu / ($SECS + 1.5)" | bc) | $(echo "scale=1; $rss / 1024" | bc) |"
}

# 1. sockdiag life
# shellcheck disable=SC2086
"$SOCKDIAG" life -t --ndjson ${LIFE_ARGS:-} >/dev/null 2>"$TMP/life.err" &
pid=$!
sleep 1
load $pid
kill -TERM $pid
wait $pid || true
read -r recs lost < <(sed -n 's/^sockdiag life: \([0-9]*\) records\?, \([0-9]*\) lost$/\1 \2/p' "$TMP/life.err")
echo "| $rate | sockdiag life | $made | $(echo "$made / $SECS" | bc) | $((2 * made)) |" \
	"$((2 * made / SECS)) | $recs | $lost | $((2 * made - recs - lost)) | $row"
# How far apart the dump budget spaced the dumps, if it did.
sed -n 's/^sockdiag life: dumps up to/  (life: dumps up to/p' "$TMP/life.err" | sed 's/$/)/' >&2

# 2. the bpftrace reference
if command -v bpftrace >/dev/null && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
	bpftrace "$ROOT/bench/tcplife.bt" >"$TMP/bt.out" 2>"$TMP/bt.err" &
	pid=$!
	for _ in $(seq 600); do grep -q Attaching "$TMP/bt.out" && break; sleep 0.1; done
	load $pid
	kill -INT $pid
	wait $pid || true
	lines=$(($(grep -c '' "$TMP/bt.out") - 1))
	echo "| $rate | bpftrace tcplife.bt | $made | $(echo "$made / $SECS" | bc) | $((2 * made)) |" \
		"$((2 * made / SECS)) | $lines (all namespaces) | – | – | $row"
fi
