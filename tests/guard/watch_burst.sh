#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag watch under a burst, in a private network namespace: 100,000 UDP
# sockets closed at once. With the default (forced 32 MiB) buffer most or all
# events arrive (a slow reader on a loaded machine can still lose some); with
# a 4 KiB buffer most are dropped by the kernel. Either way watch must keep
# going and count every loss exactly: events + lost = 100,000. top too, through
# two overflows: CLOSED + lost = 200,000.
#   usage: watch_burst.sh SOCKDIAG NETPEER
set -euo pipefail

SD=${1:?usage: watch_burst.sh SOCKDIAG NETPEER}
NP=${2:?usage: watch_burst.sh SOCKDIAG NETPEER}
N=100000
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
if [ -z "${SOCKDIAG_IN_NETNS:-}" ]; then
	exec env SOCKDIAG_IN_NETNS=1 unshare -n "$0" "$@"
fi
ip link set lo up
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; kill -CONT $(jobs -p) 2>/dev/null || true; rm -rf "$T"' EXIT  # top may be stopped

run() { # rcvbuf-args...
	rm -f "$T/events" "$T/err" "$T/burst" # nothing of an earlier run may count
	"$SD" watch -u --ndjson "$@" >"$T/events" 2>"$T/err" &
	local wp=$! prev=-1 n i
	sleep 0.3
	mkfifo "$T/go"
	"$NP" burst $N <"$T/go" >"$T/burst" 2>"$T/burst.err" &
	local bp=$! st=0
	exec 3>"$T/go"
	for ((i = 0; i < 100; i++)); do grep -q ready "$T/burst" && break; sleep 0.2; done
	grep -q ready "$T/burst" ||
		{ echo "FAIL: burst did not start: $(cat "$T/burst" "$T/burst.err" 2>/dev/null)"; exit 1; }
	exec 3>&-	# every holder of the sockets exits now
	# The helper's status counts: a burst that failed half-way would close
	# fewer than N sockets and the sums below would be wrong for that reason.
	wait "$bp" || st=$?
	[ "$st" = 0 ] ||
		{ echo "FAIL: burst helper exited $st: $(cat "$T/burst.err")"; exit 1; }
	grep -qx "closed $N" "$T/burst" ||
		{ echo "FAIL: burst helper: $(cat "$T/burst" "$T/burst.err")"; exit 1; }
	# Events arrive through a kernel workqueue: wait until they stop.
	for ((i = 0; i < 60; i++)); do
		n=$(wc -l <"$T/events")
		[ "$n" = "$prev" ] && break
		prev=$n
		sleep 1
	done
	kill -INT "$wp"
	wait "$wp" || { echo "FAIL: watch exited $?"; cat "$T/err"; exit 1; }
	rm -f "$T/go"
}

check() { # label expect-loss
	local printed summary events lost
	printed=$(wc -l <"$T/events")
	summary=$(tail -n 1 "$T/err")
	events=$(sed -n 's/^sockdiag watch: \([0-9]*\) events\?, \([0-9]*\) lost$/\1/p' <<<"$summary")
	lost=$(sed -n 's/^sockdiag watch: \([0-9]*\) events\?, \([0-9]*\) lost$/\2/p' <<<"$summary")
	[ -n "$events" ] || { echo "FAIL: $1: no summary: $summary"; exit 1; }
	[ "$events" = "$printed" ] || { echo "FAIL: $1: summary says $events, printed $printed"; exit 1; }
	[ $((events + lost)) = $N ] ||
		{ echo "FAIL: $1: $events events + $lost lost != $N"; exit 1; }
	if [ "$2" = yes ]; then
		[ "$lost" -gt 0 ] || { echo "FAIL: $1: expected losses with a 4 KiB buffer"; exit 1; }
		grep -q "events\? lost (receive queue overflow)" "$T/err" ||
			{ echo "FAIL: $1: losses not reported as they happened"; exit 1; }
	fi
	# Every line is a JSON object with the fields watch promises.
	head -n 1 "$T/events" | grep -q '"time":"20.*"netid":"udp".*"cookie":"' ||
		{ echo "FAIL: $1: bad event line: $(head -n 1 "$T/events")"; exit 1; }
	echo "ok: $1: $events events + $lost lost = $N"
}

run
check "default buffer" no
run --rcvbuf 4096
check "4 KiB buffer" yes

# ---- top: two overflows, each counted ---------------------------------------------------------
# top -b is stopped (SIGSTOP) while a burst closes N sockets: its 32 MiB queue fills and
# the kernel drops the rest; continued, it reads the queue and says how many were lost.
# Twice: the second message must count both overflows (a counter assigned, not added,
# said only the second's). Every end is either read (CLOSED, summed over the snapshots:
# these never-bound sockets are in no dump, so -a counts their ends from the events) or
# lost: CLOSED + lost = 2N.
# The Drops of top's sock_diag socket (/proc/net/netlink, by its inode), once it passed
# BEFORE (the drops of earlier bursts: the workqueue may not have begun this one's events)
# and holds still.
top_drops() { # PID
	local ino
	ino=$(for f in /proc/"$1"/fd/*; do readlink "$f"; done 2>/dev/null |
		sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | while read -r n; do
			awk -v n="$n" '$2 == 4 && $10 == n && $4 != "00000000" { print n }' /proc/net/netlink
		done | head -n 1)
	[ -n "$ino" ] || { echo "FAIL: top: no subscribed sock_diag socket" >&2; exit 1; }
	awk -v n="$ino" '$10 == n { print $9 }' /proc/net/netlink
}
drops_settled() { # PID BEFORE
	local prev=-1 d i
	for ((i = 0; i < 120; i++)); do
		d=$(top_drops "$1")
		[ "$d" -gt "$2" ] && [ "$d" = "$prev" ] && return 0
		prev=$d
		sleep 0.5
	done
	echo "FAIL: top: the kernel dropped no event of a burst (Drops $d, $2 before)"
	exit 1
}
# A connected UDP socket: one row in every snapshot, so that the first one is seen.
"$NP" udpclient 127.0.0.1 7410 >/dev/null 2>&1 &
ANCHOR=$!
"$SD" top -b -u -a --by proto --ndjson --interval 0.5s -v >"$T/top" 2>"$T/toperr" &
TP=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/top" ] && break; sleep 0.2; done
[ -s "$T/top" ] || { echo "FAIL: top: no first snapshot: $(cat "$T/toperr")"; exit 1; }
for b in 1 2; do
	rm -f "$T/go" "$T/burst"
	mkfifo "$T/go"
	"$NP" burst $N <"$T/go" >"$T/burst" 2>"$T/burst.err" &
	bp=$!
	exec 3>"$T/go"
	for ((i = 0; i < 100; i++)); do grep -q ready "$T/burst" && break; sleep 0.2; done
	grep -q ready "$T/burst" || { echo "FAIL: burst $b did not start"; exit 1; }
	kill -STOP "$TP"
	before=$(top_drops "$TP")
	exec 3>&-
	wait "$bp" || { echo "FAIL: burst $b helper: $(cat "$T/burst.err")"; exit 1; }
	drops_settled "$TP" "$before"
	kill -CONT "$TP"
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c 'destroy events lost' "$T/toperr")" -ge "$b" ] && break
		sleep 0.2
	done
	# Each overflow a new, larger total (a counter assigned, not added, said the
	# same number again: equal bursts overflow by equal counts).
	[ "$(grep -c 'destroy events lost' "$T/toperr")" -ge "$b" ] ||
		{ echo "FAIL: top: burst $b: no new count of lost events: $(cat "$T/toperr")"; exit 1; }
done
# Then until the sums add up (every queued event read), or 60 s.
lost=0 closed=0
for ((i = 0; i < 120; i++)); do
	lost=$(sed -n 's/^sockdiag top: \([0-9]*\) destroy events lost.*/\1/p' "$T/toperr" | tail -n 1)
	closed=$(jq -s '[.[] | .closed] | add' "$T/top")
	[ $((closed + lost)) -ge $((2 * N)) ] && break
	sleep 0.5
done
kill -INT "$TP"
wait "$TP" || { echo "FAIL: top exited $?: $(cat "$T/toperr")"; exit 1; }
kill "$ANCHOR" 2>/dev/null || true
[ $((closed + lost)) = $((2 * N)) ] ||
	{ echo "FAIL: top: $closed closed + $lost lost != $((2 * N)) ($(grep lost "$T/toperr" | tr '\n' ' '))"; exit 1; }
echo "ok: top, stopped through two bursts: $closed closed + $lost lost = $((2 * N))"
echo "watch_burst: 3 passed, 0 failed"
echo "# checks: 2 passed, 0 failed, 0 skipped"
