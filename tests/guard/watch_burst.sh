#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag watch under a burst, in a private network namespace: 100,000 UDP
# sockets closed at once. With the default (forced 32 MiB) buffer most or all
# events arrive (a slow reader on a loaded machine can still lose some); with
# a 4 KiB buffer most are dropped by the kernel. Either way watch must keep
# going and count every loss exactly: events + lost = 100,000.
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
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$T"' EXIT

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
echo "watch_burst: 2 passed, 0 failed"
echo "# checks: 2 passed, 0 failed, 0 skipped"
