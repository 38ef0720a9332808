#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/top_nethogs.sh — `sockdiag top` against nethogs (and iftop) side by
# side on busy connections (issue 26), by hand.
#
#   bench/top_nethogs.sh [-e] [-r RUNS] [-s SECONDS] [-m MBIT] [CONNS]
#       (defaults: 5 runs, 20 s, 1000 Mbit/s, 10000 sockets)
#
# -e: Ethernet-sized packets. lo's own MTU (64 KiB) and segmentation offload
# let TCP send ~64 KiB per packet, so 1 Gbit/s is a few thousand packets a
# second; with -e lo gets MTU 1500 and gso_max_segs 1 (one 1448-byte
# segment per packet, ~86,000 packets a second at 1 Gbit/s): the packet
# rate a 1 Gbit/s Ethernet link gives a packet-capturing tool.
#
# Each run enters a new private network namespace (unshare -n) and starts
# bench/mktraffic there: CONNS/2 loopback TCP connections (CONNS sockets)
# carrying MBIT Mbit/s in all, every connection its share each second. Then,
# side by side in that namespace, all refreshing every second:
#   sockdiag top -b --interval 1s            (rows by pid, the default)
#   sockdiag top -b --interval 1s --by conn  (one row per socket)
#   nethogs -t -a -d 1 lo                    (trace mode; -a: lo is allowed)
#   iftop -t -n -N -P -i lo                  (text mode; if installed)
# After 3 s of warm-up it reads each one's CPU time (user + sys, utime +
# stime of /proc/PID/stat) at the start and the end of the same SECONDS
# window. Per run one line: the CPU ms of each in the window, top's share of
# nethogs' and iftop's, the rate each tool saw in its last refresh (top:
# the summary's RX, bytes; nethogs: the sum of its rows' sent + received
# KB/s, over lo it sees each packet once, as sent; iftop: its "Total send and
# receive rate" over the last 2 s, bits) and what mktraffic carried. Then min and median of
# the ratios over the runs. The tools' outputs are kept in a directory it
# names. Nothing touches the host's namespace.
#
# nethogs and iftop are not test dependencies: apt-get install nethogs iftop
# Environment: BUILD (default build), SOCKDIAG ($BUILD/cli/sockdiag).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
RUNS=5 SECS=${SECS:-20} MBIT=${MBIT:-1000} ETH=${ETH:-0}
while getopts er:s:m: o; do
	case $o in
	e) ETH=1 ;;
	r) RUNS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	m) MBIT=$OPTARG ;;
	*) echo "usage: bench/top_nethogs.sh [-e] [-r RUNS] [-s SECONDS] [-m MBIT] [CONNS]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
CONNS=${1:-10000}

if [[ ${TNBENCH_INNER:-} != 1 ]]; then
	if ! command -v nethogs >/dev/null; then
		echo "bench/top_nethogs.sh: nethogs is not installed: apt-get install nethogs iftop" >&2
		exit 2
	fi
	command -v iftop >/dev/null || echo "(iftop not installed: apt-get install iftop; measured without it)" >&2
	[[ -x $SOCKDIAG ]] || { echo "bench/top_nethogs.sh: no $SOCKDIAG: build first" >&2; exit 2; }
	TOOLS=$(mktemp -d)
	OUT=$(mktemp -d /tmp/top_nethogs.XXXXXX)
	trap 'rm -rf "$TOOLS"' EXIT
	"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -o "$TOOLS/mktraffic" "$ROOT/bench/mktraffic.c"
	echo "$((CONNS / 2)) connections ($CONNS sockets), $MBIT Mbit/s, lo MTU $([[ $ETH == 1 ]] && echo "1500, gso_max_segs 1" || echo 65536), $SECS s window, $RUNS runs; outputs in $OUT; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| run | top --by pid CPU ms | top --by conn CPU ms | nethogs CPU ms | iftop CPU ms | pid/nethogs | conn/nethogs | pid/iftop | seen: top RX/s | nethogs RX/s | iftop RX | carried | load avg |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|---:|"
	for i in $(seq "$RUNS"); do
		mkdir -p "$OUT/$i"
		TNBENCH_INNER=1 TOOLS=$TOOLS OUT=$OUT/$i RUN=$i SOCKDIAG=$SOCKDIAG SECS=$SECS MBIT=$MBIT ETH=$ETH \
			unshare -n "$0" "$CONNS" | tee -a "$OUT/rows"
	done
	echo
	awk -F'|' '
	function med(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	{ n++; p[n] = $7 + 0; c[n] = $8 + 0; f[n] = $9 + 0 }
	END {
		mp = med(p, n); mc = med(c, n); hasf = f[1] > 0; mf = med(f, n)
		printf "top --by pid / nethogs: min %.3f, median %.3f; ", p[1], mp
		printf "top --by conn / nethogs: min %.3f, median %.3f", c[1], mc
		if (hasf)
			printf "; top --by pid / iftop: min %.3f, median %.3f", f[1], mf
		printf " (%d runs)\n", n
	}' "$OUT/rows"
	exit 0
fi

# ---- inside the private namespace: one run ----------------------------------------------
n=$1
ip link set lo up
[[ $ETH == 1 ]] && ip link set lo mtu 1500 gso_max_segs 1
exec {rfd}< <(exec "$TOOLS/mktraffic" -r "$((MBIT * 1000000 / 8))" "$((n / 2))" 2>"$OUT/mktraffic.txt")
gen=$!
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	kill "$gen" 2>/dev/null || true
}
trap cleanup EXIT
read -r -t 300 -u "$rfd" line
[[ $line == "ready $((n / 2))" ]] || { echo "mktraffic failed: $line" >&2; exit 1; }
sleep 2 # the flow settles

"$SOCKDIAG" top -b --interval 1s >"$OUT/top_pid.txt" 2>&1 &
pids+=($!)
"$SOCKDIAG" top -b --interval 1s --by conn >"$OUT/top_conn.txt" 2>&1 &
pids+=($!)
stdbuf -oL nethogs -t -a -d 1 lo >"$OUT/nethogs.txt" 2>&1 &
pids+=($!)
if command -v iftop >/dev/null; then
	stdbuf -oL iftop -t -n -N -P -i lo >"$OUT/iftop.txt" 2>&1 &
	pids+=($!)
fi

# utime + stime of a process in clock ticks (the fields after the command's ")")
ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat" 2>/dev/null || echo -1; }
sleep 3
a=()
for p in "${pids[@]}"; do a+=("$(ticks "$p")"); done
sleep "$SECS"
b=()
for p in "${pids[@]}"; do b+=("$(ticks "$p")"); done
load=$(cut -d' ' -f1 /proc/loadavg)
hz=$(getconf CLK_TCK)
ms() { awk -v a="$1" -v b="$2" -v hz="$hz" 'BEGIN {print (a < 0 || b < 0) ? -1 : (b - a) * 1000 / hz}'; }
tp=$(ms "${a[0]}" "${b[0]}")
tc=$(ms "${a[1]}" "${b[1]}")
nh=$(ms "${a[2]}" "${b[2]}")
ift=-1
[[ ${#pids[@]} -gt 3 ]] && ift=$(ms "${a[3]}" "${b[3]}")
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
kill "$gen" 2>/dev/null || true
wait "$gen" 2>/dev/null || true
pids=()

# what each one saw in its last refresh
top_rx=$(grep -E ' sockets .* RX ' "$OUT/top_pid.txt" | tail -1 | sed -E 's/.* RX ([^ ]+).*/\1/')
# nethogs -t: "Refreshing:" then "program/pid/uid<TAB>sent KB/s<TAB>received KB/s" lines
# (over lo a packet is seen once, as sent: the two columns are summed)
nh_rx=$(awk -F'\t' '/^Refreshing:/ {if (cur != "") last = cur; cur = 0; next}
	NF == 3 {cur += $2 + $3} END {printf "%.0f KB/s", last}' "$OUT/nethogs.txt")
# iftop -t: "Total send and receive rate:  LAST2S LAST10S LAST40S" (bits)
if_rx=$(grep -E '^Total send and receive rate:' "$OUT/iftop.txt" 2>/dev/null | tail -1 |
	awk '{print $6 "/s"}' || true)
carried=$(sed -nE 's/.*: ([0-9]+ Mbit\/s)/\1/p' "$OUT/mktraffic.txt")
# shellcheck disable=SC2153 # RUN comes from the outer invocation
awk -v run="$RUN" -v tp="$tp" -v tc="$tc" -v nh="$nh" -v ift="$ift" -v tr="$top_rx" \
	-v nr="$nh_rx" -v ir="${if_rx:--}" -v ca="$carried" -v load="$load" 'BEGIN {
	printf "| %d | %.0f | %.0f | %.0f | %s | %.3f | %.3f | %s | %s | %s | %s | %s | %s |\n",
		run, tp, tc, nh, (ift < 0 ? "-" : sprintf("%.0f", ift)),
		(nh > 0 ? tp / nh : 0), (nh > 0 ? tc / nh : 0),
		(ift > 0 ? sprintf("%.3f", tp / ift) : "-"), tr, nr, ir, ca, load }'
