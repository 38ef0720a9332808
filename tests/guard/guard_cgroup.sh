#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard with cgroup policy, end to end: two private network
# namespaces joined by a veth pair, a server in one, clients and the guard in
# the other; clients in cgroups of a unique test slice under the cgroup2 mount
# (found in /proc/self/mountinfo; removed afterwards).
#   usage: guard_cgroup.sh SOCKDIAG NETPEER
# Configuration: only-unit = the slice, exempt-unit = keep.service.
# Checks:
#  - keep.service is removed and created again after the guard started (a
#    restarted service: new cgroup id), its client is still exempt without
#    SIGHUP, and the log says the cgroups were looked up again (both values
#    changed: keep.service, and the slice, which contains it);
#  - the client in victim.service gets ECONNABORTED when its address goes;
#  - a client outside the slice is kept ("not in only-cgroup");
#  - the action line counts both kept sockets by reason.
set -euo pipefail

SD=${1:?usage: guard_cgroup.sh SOCKDIAG NETPEER}
NP=${2:?usage: guard_cgroup.sh SOCKDIAG NETPEER}
CGROOT=$(awk '{ split($0, a, " - "); split(a[2], b, " "); if (b[1] == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$CGROOT" ] && [ -w "$CGROOT" ] || { echo "SKIP(cgroup2): no writable cgroup2 mount"; exit 77; }

. "$(dirname "$0")/lib.sh"
guard_netns_setup "$@"

A=sdc$$a
B=sdc$$b
# Names of this run's own: exempt-unit looks the unit up host-wide, and another
# run's keep.service coming and going would change what this guard resolves.
TAG=sdc$$x$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
SLICE=$TAG.slice
KEEP=${TAG}keep.service
VICTIM=${TAG}victim.service
CG=$CGROOT/$SLICE
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	for d in "$KEEP" "$VICTIM"; do rmdir "$CG/$d" 2>/dev/null || true; done
	rmdir "$CG" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; echo "--- guard log:"; cat "$T/guard.log" 2>/dev/null; exit 1; }

mkdir "$CG" "$CG/$KEEP" "$CG/$VICTIM"
ip netns add "$A"
ip netns add "$B"
ip link add va netns "$A" type veth peer name vb netns "$B"
ip -n "$A" link set lo up
ip -n "$B" link set lo up
ip -n "$A" addr add 10.9.0.1/16 dev va
ip -n "$B" addr add 10.9.0.2/16 dev vb
ip -n "$A" link set va up
ip -n "$B" link set vb up
ip netns exec "$A" "$NP" server 0.0.0.0 7000 >"$T/server" &
PIDS+=($!)
wait_for "$T/server" listening || fail "server did not start"

printf 'only-unit = %s\nexempt-unit = %s\n' "$SLICE" "$KEEP" >"$T/guard.conf"
"$SD" guard -c "$T/guard.conf" -N "$B" 2>"$T/guard.log" &
PIDS+=($!)
wait_for "$T/guard.log" "started" || fail "guard did not start"

# The service restarts: its cgroup is removed and made again (a new id).
old=$(stat -c %i "$CG/$KEEP")
rmdir "$CG/$KEEP"
mkdir "$CG/$KEEP"
[ "$(stat -c %i "$CG/$KEEP")" != "$old" ] || fail "the new cgroup has the old id"

client() { # name cgroup-dir|-
	rm -f "$T/$1"
	if [ "$2" = - ]; then
		ip netns exec "$B" "$NP" client 10.9.0.1 7000 10.9.0.2 >"$T/$1" 2>&1 &
	else
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$2" \
			ip netns exec "$B" "$NP" client 10.9.0.1 7000 10.9.0.2 >"$T/$1" 2>&1 &
	fi
	PIDS+=($!)
	wait_for "$T/$1" connected || fail "client $1 did not connect: $(cat "$T/$1")"
}
client keep "$CG/$KEEP"
client victim "$CG/$VICTIM"
client outside -

ip -n "$B" addr del 10.9.0.2/16 dev vb
wait_for "$T/victim" "^recv" 20 || fail "victim's recv did not return"
grep -q "errno=ECONNABORTED" "$T/victim" || fail "victim: $(cat "$T/victim")"
# The action line ends the event's handling: what it kept is then asked of the kernel.
wait_for "$T/guard.log" "removed from vb: destroyed" 20 || fail "no action line"
n=$(ip netns exec "$B" ss -Htn state established src 10.9.0.2 | wc -l)
[ "$n" = 2 ] || fail "ss sees $n connections from 10.9.0.2, expected the 2 kept"
grep -q "^recv" "$T/keep" && fail "the client of the restarted exempt service was destroyed"
grep -q "^recv" "$T/outside" && fail "the client outside only-unit was destroyed"
grep -q "cgroups looked up again: 2 of the configured cgroups and units changed" "$T/guard.log" ||
	fail "no log line for the new cgroup"
grep -q "destroyed 1 socket.*kept 2: .*not in only-cgroup 1.*cgroup 1\|destroyed 1 socket.*kept 2: .*cgroup 1.*not in only-cgroup 1" \
	"$T/guard.log" || fail "no action line with both reasons"
echo "ok: restarted exempt service followed without SIGHUP; only-unit kept the outsider;" \
	"logged: $(grep 'removed from vb' "$T/guard.log" | head -1 | cut -d' ' -f3-)"
