#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/guard/run.sh — the guard benchmark (issue 6, "Performance").
#
#   bench/guard/run.sh [-r RUNS] [-n N] [-e EHASH] [-A NNS] [-o REPORT.md]
#
# Event-to-last-destroy latency when an address carrying N (default 10000)
# established TCP connections is removed, against the batched destroy floor
# for the same sockets. Two private namespaces joined by a veth pair: a server
# (bench/guard/manyconn server) in A on 8 ports, N clients from one address in
# B (manyconn client, which also timestamps the moment the last of its sockets
# reports the error). Each run builds the N connections afresh, then either
#   guard: `sockdiag guard -N B` is running; `ip -n B addr del` removes the
#          address. Reported: the guard's own time from the event's arrival to
#          the last destroy (its log line, "in X ms"), its CPU time, and end
#          to end from the moment the removal is written to an `ip -batch`
#          already running to the moment the last client saw its socket gone
#          (CLOCK_REALTIME both), or
#   floor: the address is removed (no guard running), then bench/kill/rawkill
#          in B (dump + batched SOCK_DESTROY, nothing decoded) destroys the
#          same sockets. Reported: its wall and CPU time, and end to end from
#          just before it starts to the last client's error.
# Guard, rawkill, `ip` and the clients run in sessions (autogroups) of their
# own at nice -20, as the other benchmarks on this shared machine do.
#
# -e EHASH: give A and B TCP and UDP hash tables of their own with EHASH
# buckets (net.ipv4.tcp_child_ehash_entries, set in an outer private
# namespace that creates them), so the dumps do not walk the sockets of every
# other namespace on the machine. Default 0: the host's shared tables, as a
# guard of the host's own namespace sees them.
#
# -A NNS: the guard runs as `sockdiag guard --all-netns` with NNS more
# namespaces (each with a guard of its own) besides A and B, issue 11's "100
# namespaces" case; B's guard is the one timed. As --all-netns acts on every
# namespace, everything then runs inside a private mount + pid + network
# namespace with its own tmpfs on /run/netns (the host's are never seen).
#
# Environment: BUILD (default build-guarddoc), SOCKDIAG, CC (default cc).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-guarddoc}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
RUNS=7 N=10000 EHASH=0 NNS=0 OUT=
NPORTS=8

while getopts "r:n:e:A:o:" opt; do
	case $opt in
	r) RUNS=$OPTARG ;;
	n) N=$OPTARG ;;
	e) EHASH=$OPTARG ;;
	A) NNS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) echo "usage: run.sh [-r RUNS] [-n N] [-e EHASH] [-A NNS] [-o REPORT.md]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "guard/run.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$SOCKDIAG" ] || { echo "guard/run.sh: no $SOCKDIAG (build it first)" >&2; exit 1; }

# With -e, run everything from an outer private namespace whose child hash
# sizes A and B inherit; nothing of the host's is changed.
if [ "$NNS" != 0 ] && [ -z "${GUARD_BENCH_OUTER:-}" ]; then
	exec env GUARD_BENCH_OUTER=1 unshare -m -p -f --mount-proc -n "$0" "$@"
fi
if [ "$EHASH" != 0 ] && [ -z "${GUARD_BENCH_OUTER:-}" ]; then
	exec env GUARD_BENCH_OUTER=1 unshare -n "$0" "$@"
fi
if [ "$NNS" != 0 ]; then
	# A private /run/netns: the guard sees only this benchmark's namespaces.
	mount --make-rprivate /
	mkdir -p /run/netns
	mount -t tmpfs none /run/netns
	ip link set lo up
fi
if [ -n "${GUARD_BENCH_OUTER:-}" ]; then
	sysctl -qw net.ipv4.tcp_child_ehash_entries="$EHASH"
	sysctl -qw net.ipv4.udp_child_hash_entries="$EHASH" 2>/dev/null || true
fi

T=$(mktemp -d)
A=sdgb$$a
B=sdgb$$b
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	for ((i = 1; i <= NNS; i++)); do ip netns del "${B}f$i" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT

CC=${CC:-cc}
"$CC" -O2 -o "$T/manyconn" "$HERE/manyconn.c"
"$CC" -O2 -o "$T/rawkill" "$ROOT/bench/kill/rawkill.c"
MC=$T/manyconn

wait_for() { # FILE PATTERN TENTHS
	local i
	for ((i = 0; i < $3; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "guard/run.sh: timed out waiting for '$2' in $1:" >&2
	cat "$1" >&2
	exit 1
}

ip netns add "$A"
ip netns add "$B"
ip link add va netns "$A" type veth peer name vb netns "$B"
ip -n "$A" link set lo up
ip -n "$B" link set lo up
ip -n "$A" addr add 10.20.0.1/16 dev va
ip -n "$A" link set va up
ip -n "$B" link set vb up
for ((i = 1; i <= NNS; i++)); do
	ip netns add "${B}f$i"
	ip -n "${B}f$i" link set lo up
done
ip netns exec "$A" "$MC" server 10.20.0.1 7000 $NPORTS >"$T/server" &
PIDS+=($!)
wait_for "$T/server" listening 50

# connect RUN: the address back on vb, N fresh connections from it.
connect() {
	# The resets of sockets destroyed after their address went could not be
	# sent, so the server's ends are still there, holding the 4-tuples the
	# new connections need: clear them first (untimed).
	ip netns exec "$A" "$T/rawkill" -q
	ip -n "$B" addr add 10.20.0.2/16 dev vb 2>/dev/null || true
	ip netns exec "$B" "$MC" run -p -20 "$MC" client 10.20.0.2 10.20.0.1 7000 $NPORTS "$N" \
		>"$T/client.$1" 2>&1 &
	CLIENT=$!
	PIDS+=($CLIENT)
	wait_for "$T/client.$1" "^ready $N" 600
	# The server accepts asynchronously; let it catch up.
	sleep 1
}

field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a - b) * 1000 }'; }

# guard_in SUPERVISOR NS: the pid of the --all-netns guard inside named namespace NS.
guard_in() {
	local want p
	want=net:[$(stat -L -c %i "/run/netns/$2")]
	for p in $(pgrep -P "$1"); do
		[ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$want" ] && echo "$p"
	done
	return 0
}

run_guard() {
	local r=$1 log=$T/guard.$r start last logts indaemon line
	ip netns exec "$B" true # warm the page cache for ip
	local gpid cpu0 cpu1 gp
	if [ "$NNS" = 0 ]; then
		"$MC" run -p -20 "$SOCKDIAG" guard -N "$B" >"$T/guardrun.$r" 2>"$log" &
		gp=$!
		PIDS+=($gp)
		wait_for "$log" started 100
		gpid=$(pgrep -P "$gp")
	else
		"$MC" run -p -20 "$SOCKDIAG" guard --all-netns >"$T/guardrun.$r" 2>"$log" &
		gp=$!
		PIDS+=($gp)
		wait_for "$log" "\\[netns $B\\]: started" 300
		# Every guard up (A, B, the fillers and this script's own namespace)
		# before anything is timed.
		local i
		for ((i = 0; i < 600; i++)); do
			[ "$(grep -c ']: started' "$log")" -ge $((NNS + 3)) ] && break
			sleep 0.1
		done
		gpid=$(guard_in "$(pgrep -P "$gp")" "$B")
		sleep 1
	fi
	# The guard's CPU time for the event (its schedstat: ns on a CPU), which
	# the load of other sessions on this shared machine does not inflate.
	read -r cpu0 _ </proc/"$gpid"/schedstat
	# `ip` is started beforehand and waits for its command on a FIFO, so
	# the time starts when the removal is asked for, not when a program
	# begins to load (bash's $EPOCHREALTIME: no fork to read the clock).
	local ipfd
	mkfifo "$T/ipfifo.$r"
	"$MC" run -p -20 ip -n "$B" -batch - <"$T/ipfifo.$r" >"$T/ip.$r" 2>&1 &
	exec {ipfd}>"$T/ipfifo.$r"
	sleep 0.5
	start=$EPOCHREALTIME
	echo "addr del 10.20.0.2/16 dev vb" >&"$ipfd"
	exec {ipfd}>&-
	wait_for "$T/client.$r" "^closed" 600
	wait_for "$log" "removed from vb: destroyed" 100
	read -r cpu1 _ </proc/"$gpid"/schedstat
	kill "$gp"
	wait "$CLIENT" "$gp" 2>/dev/null || true
	line=$(grep "removed from vb: destroyed" "$log" | head -n 1)
	grep -q "destroyed $N sockets" <<<"$line" || { echo "guard/run.sh: $line" >&2; exit 1; }
	last=$(field "$T/client.$r" last)
	# "2026-12-03T06:37:19.753Z": the log's millisecond wall clock.
	logts=$(date -d "$(cut -d' ' -f1 <<<"$line")" +%s.%N)
	indaemon=$(sed -n 's/.* in \([0-9.]*\) ms$/\1/p' <<<"$line")
	local cpu
	cpu=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')
	echo "$indaemon $(ms "$last" "$start") $(ms "$logts" "$start") $cpu" >>"$T/guard.results"
	echo "guard run $r: in daemon $indaemon ms (cpu $cpu ms); ip→last owner" \
		"$(ms "$last" "$start") ms; ip→log line $(ms "$logts" "$start") ms" >&2
}

run_floor() {
	local r=$1 start last wall cpu
	# The same sockets in the same condition as the guard finds them: their
	# address gone, so no reset can leave (sending one would cost the floor
	# a route lookup, a packet and the server's work for it).
	ip -n "$B" addr del 10.20.0.2/16 dev vb
	# The states the guard asks for (its defaults: ESTAB, SYN-SENT, SYN-RECV);
	# rawkill's own default, ss's "connected", would also walk the kernel's
	# bind hash for bound-inactive sockets.
	ip netns exec "$B" "$MC" run -p -20 "$T/rawkill" -s e >"$T/floor.$r"
	wait_for "$T/client.$r" "^closed" 600
	wait "$CLIENT" 2>/dev/null || true
	grep -q "destroyed $N failed 0" "$T/floor.$r" ||
		{ echo "guard/run.sh: rawkill: $(cat "$T/floor.$r")" >&2; exit 1; }
	start=$(field "$T/floor.$r" start)
	wall=$(field "$T/floor.$r" wall)
	cpu=$(field "$T/floor.$r" cpu)
	last=$(field "$T/client.$r" last)
	wall=$(awk -v w="$wall" 'BEGIN { printf "%.2f", w * 1000 }')
	cpu=$(awk -v w="$cpu" 'BEGIN { printf "%.2f", w * 1000 }')
	echo "$wall $(ms "$last" "$start") $cpu" >>"$T/floor.results"
	echo "floor run $r: rawkill $wall ms (cpu $cpu ms); start→last owner" \
		"$(ms "$last" "$start") ms" >&2
}

for ((r = 1; r <= RUNS; r++)); do
	connect "g$r"
	run_guard "g$r"
	connect "f$r"
	run_floor "f$r"
done

# stats FILE COLUMN: "min median" of a column.
stats() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
			printf "%.2f %.2f", v[1], m }'
}
read -r g_min g_med <<<"$(stats "$T/guard.results" 1)"
read -r ge_min ge_med <<<"$(stats "$T/guard.results" 2)"
read -r gl_min gl_med <<<"$(stats "$T/guard.results" 3)"
read -r gc_min gc_med <<<"$(stats "$T/guard.results" 4)"
read -r f_min f_med <<<"$(stats "$T/floor.results" 1)"
read -r fc_min fc_med <<<"$(stats "$T/floor.results" 3)"
read -r fe_min fe_med <<<"$(stats "$T/floor.results" 2)"
target=$(awk -v f="$f_med" 'BEGIN { printf "%.2f", 1.2 * f + 5 }')
target_e=$(awk -v f="$fe_med" 'BEGIN { printf "%.2f", 1.2 * f + 5 }')
hash="the host's shared TCP/UDP hash tables ($(cat /proc/sys/net/ipv4/tcp_ehash_entries 2>/dev/null || echo ?) buckets)"
[ "$EHASH" != 0 ] && hash="private hash tables of $EHASH buckets (tcp_child_ehash_entries)"
guard="\`sockdiag guard -N B\`"
[ "$NNS" != 0 ] && guard="\`sockdiag guard --all-netns\` with $NNS more namespaces ($((NNS + 3)) guards)"
report() {
	cat <<EOF
$N established TCP connections from one address, $RUNS runs each, $hash;
guard: $guard;
load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Milliseconds, min / median.

| | min | median |
|---|---:|---:|
| guard: event → last destroy (its log line, "in X ms") | $g_min | $g_med |
| floor: rawkill dump + batched SOCK_DESTROY (wall) | $f_min | $f_med |
| target: 1.2 × floor median + 5 ms | | $target |
| guard CPU time for the event (schedstat) | $gc_min | $gc_med |
| floor CPU time (rawkill, user + system) | $fc_min | $fc_med |
| guard end to end: removal asked (\`ip -batch\`) → last owner sees the error | $ge_min | $ge_med |
| guard end to end: removal asked → the guard's log line (ms clock) | $gl_min | $gl_med |
| floor end to end: rawkill starts → last owner sees the error | $fe_min | $fe_med |
| target end to end: 1.2 × floor median + 5 ms | | $target_e |
EOF
}
report
[ -n "$OUT" ] && report >"$OUT"
exit 0
