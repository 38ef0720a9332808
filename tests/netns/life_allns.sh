#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `sockdiag life --all-netns` while namespaces are created and deleted: each namespace's
# connection ends are recorded with its label, a deleted namespace is let go, one made
# later is followed. In private mount, pid and network namespaces (tests/private_world.sh).
# Usage: life_allns.sh SOCKDIAG. Exit 0 pass, 1 fail, 77 cannot run here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SD=$(realpath "${1:?usage: life_allns.sh SOCKDIAG}")
. "$here/../private_world.sh"
private_world_can LIFE_ALLNS_INNER ip python3
private_world LIFE_ALLNS_INNER "$0" "$@"

out=$(mktemp)
err=$(mktemp)
fail=0
cleanup() {
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -f "$out" "$err"
}
trap cleanup EXIT

# A UDP socket bound to PORT and closed in namespace NS, again until life records it
# (a namespace is followed from the first dump after it appears).
ended_in() {
	local ns=$1 port=$2
	for _ in $(seq 100); do
		ip netns exec "$ns" python3 -c "import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('127.0.0.1', $port))
u.close()"
		for _ in 1 2 3; do
			grep -q "\"netns\":\"$ns\",\"proto\":\"udp\",\"local\":{\"addr\":\"127.0.0.1\",\"port\":$port}" "$out" &&
				{ echo "ok   recorded in $ns"; return 0; }
			sleep 0.1
		done
	done
	echo "FAIL not recorded in $ns"
	fail=1
}

ip netns add life1
ip netns exec life1 ip link set lo up
"$SD" life --all-netns --ndjson --interval 0.1 >"$out" 2>"$err" &
pid=$!
ended_in life1 4001
ip netns add life2
ip netns exec life2 ip link set lo up
ended_in life2 4002
ip netns del life1
ended_in life2 4003
ip netns add life3
ip netns exec life3 ip link set lo up
ended_in life3 4004
kill "$pid"
wait "$pid" || { echo "FAIL exit status $?"; fail=1; }
pid=
grep -q "records, 0 lost" "$err" && echo "ok   summary" || { echo "FAIL summary: $(cat "$err")"; fail=1; }
exit $fail
