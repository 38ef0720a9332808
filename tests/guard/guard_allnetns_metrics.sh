#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard --all-netns --metrics: what the supervisor's metrics server
# leaves to the guards it forks, and its probes. Inside a private mount + pid +
# network namespace with its own /run/netns (tests/private_world.sh).
#   usage: guard_allnetns_metrics.sh SOCKDIAG
# Checks:
#  - no guard holds a socket of the supervisor's: neither the listening socket
#    (its inode from /proc/net/tcp, the kernel's word) nor a scrape connection
#    open while the guard was forked (a fork keeps every descriptor, CLOEXEC or
#    not; a guard holding an accepted connection keeps it open after the
#    supervisor closes it);
#  - the probes (daemon/guard/metrics.h, sockdiag(8)) with the supervisor's
#    loop held for 36 s by strace in its open of a namespace to guard (an
#    inject delay, as guard_allnetns_gone.sh does), its HTTP threads free:
#    held in the first scan (stuck0 there at the start), /readyz is 503 until
#    the scan ends and /healthz 200, then 503 once 30 s passed without a
#    census; held later (stuck made while it runs), /healthz and /readyz go
#    from 200 to 503 after 30 s; both 200 again once the loop goes on.
set -euo pipefail

SD=${1:?usage: guard_allnetns_metrics.sh SOCKDIAG}
. "$(dirname "$0")/lib.sh" # wait_for, stop_guard
. "$(dirname "$0")/../private_world.sh"
private_world_can SOCKDIAG_ALLNETNS_METRICS_INNER ip strace python3
private_world SOCKDIAG_ALLNETNS_METRICS_INNER "$0" "$@"

T=$(mktemp -d)
M=127.0.0.1:10119
PORT_HEX=$(printf '%04X' 10119)
GUARD=
PIDS=()
cleanup() {
	if [ -n "$GUARD" ]; then
		# Under strace: the supervisor (strace's child) first, strace ends with it.
		kill $(cat /proc/$GUARD/task/*/children 2>/dev/null) 2>/dev/null || true
		stop_guard "$GUARD"
	fi
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	private_world_fini
	rm -rf "$T"
}
trap cleanup EXIT
npass=0
fail() {
	echo "FAIL: $*"
	echo "--- guard log:"
	tail -40 "$T/guard.log" 2>/dev/null
	echo "# checks: $npass passed, 1 failed, 0 skipped"
	exit 1
}
pass() { echo "ok: $*"; npass=$((npass + 1)); }
# status PATH: the HTTP status of GET PATH (000: no answer).
status() {
	python3 - "http://$M$1" <<'EOF'
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
EOF
}
# sockets PID: the socket inodes PID holds, one a line.
sockets() {
	local l
	for l in /proc/$1/fd/*; do readlink "$l" 2>/dev/null || true; done |
		sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | sort -u
}
# guard_of NS: the pid of the supervisor's child in named namespace NS.
guard_of() {
	local want p
	want=net:[$(stat -L -c %i "/run/netns/$1")]
	for p in $(cat /proc/$SUP/task/*/children 2>/dev/null); do
		[ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$want" ] && echo "$p"
	done
	return 0
}

: >"$T/guard.conf"
# until_503 PATH: poll PATH until it answers 503 (40 s at most), 200 meanwhile.
until_503() {
	local t0 h=
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt 40 ]; do
		h=$(status "$1")
		[ "$h" = 503 ] && break
		[ "$h" = 200 ] || fail "$1: $h"
		sleep 0.1
	done
	[ "$h" = 503 ] || fail "$1: $h after $(($(date +%s) - t0)) s of a held loop (expected 503 after 30 s)"
}

ip netns add a
ip netns add stuck0
# The loop is held only where it opens /run/netns/stuck0 or /run/netns/stuck.
strace -f -qq -o /dev/null -e trace=openat -P /run/netns/stuck0 -P /run/netns/stuck \
	-e inject=openat:delay_enter=36000000 \
	"$SD" guard --all-netns -c "$T/guard.conf" --metrics "$M" 2>"$T/guard.log" &
GUARD=$!

# ---- the probes in the first scan --------------------------------------------------------------
for ((i = 0; i < 100; i++)); do
	[ "$(status /healthz)" = 000 ] || break
	sleep 0.1
done
t0=$(date +%s)
grep -q "started: every network namespace" "$T/guard.log" && fail "the first scan was not held"
h=$(status /healthz)
r=$(status /readyz)
[ "$h" = 200 ] && [ "$r" = 503 ] || fail "in the first scan: /healthz $h, /readyz $r (expected 200, 503)"
pass "in the first scan: /healthz 200, /readyz 503"
until_503 /healthz
[ $(($(date +%s) - t0)) -ge 29 ] || fail "/healthz 503 after $(($(date +%s) - t0)) s, before 30 s"
grep -q "started: every network namespace" "$T/guard.log" && fail "the first scan ended before 30 s"
pass "a first scan held: /healthz 503 after $(($(date +%s) - t0)) s"
wait_for "$T/guard.log" "started: every network namespace" 150 || fail "guard did not start"
SUP=$(cat /proc/$GUARD/task/*/children | tr -d " ")
[ -n "$SUP" ] || fail "no supervisor under strace"
wait_for "$T/guard.log" "\[netns a\]: started" 50 || fail "no guard in a"
[ "$(status /healthz)" = 200 ] || fail "/healthz: $(status /healthz) after the first scan"
[ "$(status /readyz)" = 200 ] || fail "/readyz: $(status /readyz) after the first scan"
pass "after the first scan: /healthz and /readyz 200"

# ---- no guard holds the supervisor's sockets ----------------------------------------------
LISTEN=$(awk -v p="0100007F:$PORT_HEX" '$2 == p && $4 == "0A" { print $10 }' /proc/net/tcp)
[ -n "$LISTEN" ] || fail "no listening socket on $M in /proc/net/tcp"
sockets "$SUP" | grep -qx "$LISTEN" || fail "the supervisor ($SUP) does not hold socket $LISTEN"
# A scrape connection, open (accepted, idle) while the next guard is forked.
python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", 10119)); print("connected", flush=True); time.sleep(60)' \
	>"$T/conn" &
PIDS+=($!)
wait_for "$T/conn" connected || fail "no connection to $M"
CONN=$(awk -v p="0100007F:$PORT_HEX" '$2 == p && $4 == "01" { print $10 }' /proc/net/tcp)
[ -n "$CONN" ] || fail "the supervisor's end of the connection is not in /proc/net/tcp"
ip netns add b
wait_for "$T/guard.log" "\[netns b\]: started" 50 || fail "no guard in b"
sockets "$SUP" >"$T/sup"
for ns in a b; do
	p=$(guard_of $ns)
	[ -n "$p" ] || fail "no guard process in $ns"
	sockets "$p" >"$T/g$ns"
	[ -s "$T/g$ns" ] || fail "guard $p ($ns) holds no socket at all: not looked at"
	grep -qx "$LISTEN" "$T/g$ns" && fail "guard $p ($ns) holds the listening socket $LISTEN"
	grep -qx "$CONN" "$T/g$ns" && fail "guard $p ($ns) holds the scrape connection $CONN"
	shared=$(comm -12 "$T/sup" "$T/g$ns" | tr '\n' ' ')
	[ -z "$shared" ] || fail "guard $p ($ns) shares the supervisor's sockets: $shared"
done
pass "no guard holds the supervisor's listening socket ($LISTEN), connection ($CONN) or any other socket of its"

# ---- the probes in a later scan ----------------------------------------------------------------
ip netns add stuck
t0=$(date +%s)
until_503 /healthz
[ $(($(date +%s) - t0)) -ge 29 ] || fail "/healthz 503 after $(($(date +%s) - t0)) s, before 30 s"
r=$(status /readyz)
[ "$r" = 503 ] || fail "/readyz: $r while /healthz says 503"
pass "a later scan held: /healthz and /readyz 503 after $(($(date +%s) - t0)) s without a census"
wait_for "$T/guard.log" "\[netns stuck\]: started" 150 || fail "the loop did not go on after the delay"
[ "$(status /healthz)" = 200 ] || fail "/healthz: $(status /healthz) once the loop went on"
[ "$(status /readyz)" = 200 ] || fail "/readyz: $(status /readyz) once the loop went on"
pass "/healthz and /readyz 200 again once the loop goes on"
echo "# checks: $npass passed, 0 failed, 0 skipped"
