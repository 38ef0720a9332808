#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/life_idle.sh — what `sockdiag life` costs beside many open connections, by hand.
#
#   bench/life_idle.sh [-s SECONDS] [-p PAIRS] [SOCKDIAG...]   (default 20 s, 100000 pairs,
#                                                               the build's sockdiag)
#
# In a private network (and mount) namespace, bench/mkpairs builds PAIRS idle loopback TCP
# connections (2 × PAIRS sockets); then each SOCKDIAG in turn runs `life -t --ndjson` for
# SECONDS while nothing closes: its CPU per second (user + sys, /proc/PID/stat) is what its
# dumps cost, its peak RSS (VmHWM) what its table of live sockets holds, and the line it
# prints at exit says how far apart the dump budget spaced the dumps. Several binaries
# (e.g. one built before --dump-budget) are measured in one run, on the same connections.
# LIFE_ARGS adds options (e.g. "--dump-budget off").
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECS=20
PAIRS=100000
while getopts s:p: o; do
	case $o in
	s) SECS=$OPTARG ;;
	p) PAIRS=$OPTARG ;;
	*) echo "usage: bench/life_idle.sh [-s SECONDS] [-p PAIRS] [SOCKDIAG...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "${BUILD:-$ROOT/build}/cli/sockdiag"

if [ "${LIFE_IDLE_INNER:-}" != 1 ]; then
	TMP=$(mktemp -d)
	trap 'rm -rf "$TMP"' EXIT
	cc -O2 -o "$TMP/mkpairs" "$ROOT/bench/mkpairs.c"
	LIFE_IDLE_INNER=1 TMP=$TMP unshare -m -n "$0" -s "$SECS" -p "$PAIRS" "$@"
	exit
fi

mount --make-rprivate /
ip link set lo up
exec {rfd}< <(exec "$TMP/mkpairs" "$PAIRS")
pairs_pid=$!
trap 'kill $pairs_pid 2>/dev/null || true' EXIT # its workers die with it
read -r -t 1800 -u "$rfd" line && [[ $line == "ready $PAIRS" ]] || { echo "mkpairs failed" >&2; exit 1; }
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

echo "$PAIRS idle pairs ($((2 * PAIRS)) sockets), $SECS s, LIFE_ARGS='${LIFE_ARGS:-}'"
echo "| sockdiag | CPU ms per s | peak RSS MiB | at exit |"
echo "|---|---:|---:|---|"
for sd in "$@"; do
	# shellcheck disable=SC2086
	"$sd" life -t --ndjson ${LIFE_ARGS:-} >/dev/null 2>"$TMP/err" &
	pid=$!
	sleep 3 # the first dumps (and owner scan) done
	t0=$(ticks $pid)
	sleep "$SECS"
	t1=$(ticks $pid)
	rss=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
	kill -TERM $pid
	wait $pid || true
	echo "| $sd | $(echo "scale=1; ($t1 - $t0) * 1000 / $hz / $SECS" | bc) |" \
		"$(echo "scale=1; $rss / 1024" | bc) | $(paste -sd' ' "$TMP/err") |"
done
