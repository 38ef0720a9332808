#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The guard's policies end to end, in private network namespaces:
#  - grace: an address removed and added back within the grace period strands
#    nothing (logged); removed for good, its socket is destroyed when the grace
#    period ends (not before, and within grace + 100 ms); a link flap likewise;
#  - route changes: client namespace B with two uplinks to R; the default route
#    moves from uplink 1 to uplink 2: the socket sourced from uplink 1's address
#    to a peer behind the default is destroyed; sockets to directly connected
#    peers of either uplink and an exempt uid's socket survive;
#  - reaping: `reap = dport = :7001 and idle > 1s` destroys the idle
#    connections to port 7001, not those to 7000; above reap-max the rule is
#    refused and destroys nothing;
#  - exemptions: one address removed under udp-connected = no, exempt-cgroup,
#    exempt-dst and exempt-mark (exempt-loopback is on by default): of six
#    sockets using it only the plain TCP one is destroyed, the others are kept,
#    each counted under its reason, and still there in the kernel (ss); then a
#    guard without them (exempt-loopback = no) destroys those five.
#   usage: guard_policies.sh SOCKDIAG NETPEER
set -euo pipefail

SD=${1:?usage: guard_policies.sh SOCKDIAG NETPEER}
NP=${2:?usage: guard_policies.sh SOCKDIAG NETPEER}
. "$(dirname "$0")/lib.sh"
guard_netns_setup "$@"

R=sdp$$r
B=sdp$$b
T=$(mktemp -d)
PIDS=()
GUARD=
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$R" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	[ -n "${CGX:-}" ] && rmdir "$CGX" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; echo "--- guard log:"; cat "$T/guard.log" 2>/dev/null; exit 1; }
pass() { echo "ok: $*"; PASSED=$((${PASSED:-0} + 1)); }

# wait_for: lib.sh.

# R: the routers of both uplinks and the servers; B: the client host.
ip netns add "$R"
ip netns add "$B"
ip link add vr1 netns "$R" type veth peer name vb1 netns "$B"
ip link add vr2 netns "$R" type veth peer name vb2 netns "$B"
ip -n "$R" link set lo up
ip -n "$B" link set lo up
ip -n "$R" addr add 10.1.0.1/24 dev vr1
ip -n "$R" addr add 10.2.0.1/24 dev vr2
ip -n "$R" addr add 10.99.0.1/32 dev lo # a peer behind the default route
ip -n "$B" addr add 10.1.0.2/24 dev vb1
ip -n "$B" addr add 10.2.0.2/24 dev vb2
ip -n "$B" addr add 10.1.0.9/24 dev vb1 # the grace tests' address
for l in vr1 vr2; do ip -n "$R" link set $l up; done
for l in vb1 vb2; do ip -n "$B" link set $l up; done
ip -n "$B" route add default via 10.1.0.1 dev vb1
ip netns exec "$R" "$NP" server 0.0.0.0 7000 >"$T/server" &
PIDS+=($!)
ip netns exec "$R" "$NP" server 0.0.0.0 7001 >"$T/server1" &
PIDS+=($!)
wait_for "$T/server" listening || fail "server did not start"
wait_for "$T/server1" listening || fail "server 7001 did not start"
# A server on B itself: a peer that is an address of the host (a local route).
ip netns exec "$B" "$NP" server 10.2.0.2 7002 >"$T/serverb" &
PIDS+=($!)
wait_for "$T/serverb" listening || fail "server in B did not start"

start_guard() { # CONFIG-TEXT
	if [ -n "$GUARD" ]; then kill "$GUARD"; wait "$GUARD" 2>/dev/null || true; fi
	printf '%b' "$1" >"$T/guard.conf"
	: >"$T/guard.log"
	"$SD" guard -c "$T/guard.conf" -N "$B" 2>"$T/guard.log" &
	GUARD=$!
	PIDS+=($GUARD)
	wait_for "$T/guard.log" "started" || fail "guard did not start"
}

client() { # name dst port src [uid]
	rm -f "$T/$1"
	ip netns exec "$B" "$NP" client "$2" "$3" "$4" ${5:-} >"$T/$1" 2>&1 &
	PIDS+=($!)
	wait_for "$T/$1" connected || fail "client $1 did not connect: $(cat "$T/$1")"
}

aborted() { grep -q "errno=ECONNABORTED" "$T/$1"; }
alive() { ! grep -q "^recv" "$T/$1"; }

# ---- grace ------------------------------------------------------------------------------------
# 1 s, scaled by SOCKDIAG_TEST_SLOWDOWN (10 in make test-kernels' emulated guests, where one
# `ip` command can take longer than a flap's whole budget), and the bounds with it.
SLOW=${SOCKDIAG_TEST_SLOWDOWN:-1}
GRACE_MS=$((1000 * SLOW))
GRACE_MAX_MS=${GUARD_GRACE_MAX_MS:-$((GRACE_MS + 100 * SLOW))}
start_guard "grace = ${GRACE_MS}ms\n"
grep -q "grace $GRACE_MS ms" "$T/guard.log" || fail "grace not announced"

client flap 10.1.0.1 7000 10.1.0.9
ip -n "$B" addr del 10.1.0.9/24 dev vb1
sleep 0.3
ip -n "$B" addr add 10.1.0.9/24 dev vb1
wait_for "$T/guard.log" "10.1.0.9/24 removed from vb1: back within the grace period" 30 ||
	fail "address back within grace: not logged"
sleep 0.2
alive flap || fail "address back within grace: socket destroyed: $(cat "$T/flap")"
grep -q "destroyed [1-9]" "$T/guard.log" && fail "address back within grace: something destroyed"
pass "address removed and added back within the grace period: nothing destroyed, logged"

# Two clocks (its and the client's are one): t_start before `ip` runs, t0 when it
# returns (the removal is done then: ip waits for the ack). The guard hears the
# event between the two, and holds it 1000 ms from then (on a millisecond
# clock): so the socket goes no sooner than 1000 ms after t_start (less
# GRACE_EPS_MS = 5 for that clock's rounding), and within grace + 100 ms of t0
# on an idle machine; on a shared one the upper bound gets up to three attempts.
GRACE_EPS_MS=5
for attempt in 1 2 3; do
	client gone 10.1.0.1 7000 10.1.0.9
	t_start=$(date +%s.%N)
	ip -n "$B" addr del 10.1.0.9/24 dev vb1
	t0=$(date +%s.%N)
	wait_for "$T/gone" "^recv" 30 || fail "address gone: socket not destroyed"
	aborted gone || fail "address gone: $(cat "$T/gone")"
	ms=$(ms_after "$T/gone" "$t0")
	early=$(ms_after "$T/gone" "$t_start")
	echo "attempt $attempt: ECONNABORTED $ms ms after the removal, $early ms after ip started (grace $GRACE_MS ms)"
	[ "$early" -ge $((GRACE_MS - GRACE_EPS_MS)) ] ||
		fail "destroyed $early ms after ip started: before the grace period ended"
	[ "$ms" -le "$GRACE_MAX_MS" ] && break
	[ "$attempt" = 3 ] && fail "destroyed after $ms ms (> grace + 100 ms) three times"
	ip -n "$B" addr add 10.1.0.9/24 dev vb1
done
pass "address removed for good: destroyed when the grace period ended ($ms ms)"

ip -n "$B" addr add 10.1.0.9/24 dev vb1
client linkflap 10.2.0.1 7000 10.2.0.2
ip -n "$B" link set vb2 down
sleep 0.2
ip -n "$B" link set vb2 up
wait_for "$T/guard.log" "link vb2 went down: back within the grace period" 30 ||
	fail "link flap: not logged"
sleep 0.2
alive linkflap || fail "link flap: socket destroyed"
pass "link flap within the grace period: nothing destroyed"

for attempt in 1 2 3; do
	t_start=$(date +%s.%N)
	ip -n "$B" link set vb2 down
	t0=$(date +%s.%N)
	wait_for "$T/linkflap" "^recv" 30 || fail "link down for good: socket not destroyed"
	aborted linkflap || fail "link down: $(cat "$T/linkflap")"
	ms=$(ms_after "$T/linkflap" "$t0")
	early=$(ms_after "$T/linkflap" "$t_start")
	echo "attempt $attempt: ECONNABORTED $ms ms after the link went down, $early ms after ip started (grace $GRACE_MS ms)"
	[ "$early" -ge $((GRACE_MS - GRACE_EPS_MS)) ] ||
		fail "link down: destroyed $early ms after ip started: before the grace period ended"
	[ "$ms" -le "$GRACE_MAX_MS" ] && break
	[ "$attempt" = 3 ] && fail "link down: destroyed after $ms ms (> grace + 100 ms) three times"
	ip -n "$B" link set vb2 up
	client linkflap 10.2.0.1 7000 10.2.0.2
done
pass "link down for good: destroyed when the grace period ended ($ms ms)"
ip -n "$B" link set vb2 up
ip -n "$B" route replace default via 10.1.0.1 dev vb1

# ---- route changes ------------------------------------------------------------------------------
start_guard 'on-route-change = yes\nexempt-uid = 4242\n'
client stranded 10.99.0.1 7000 10.1.0.2
client exempt 10.99.0.1 7000 10.1.0.2 4242
client direct1 10.1.0.1 7000 10.1.0.2
client direct2 10.2.0.1 7000 10.2.0.2
client localpeer 10.2.0.2 7002 10.1.0.2
t0=$(date +%s.%N)
ip -n "$B" route replace default via 10.2.0.1 dev vb2
wait_for "$T/stranded" "^recv" 30 || fail "route change: stranded socket not destroyed"
aborted stranded || fail "route change: $(cat "$T/stranded")"
echo "route change: ECONNABORTED $(ms_after "$T/stranded" "$t0") ms after the default route moved"
# The action line ends the pass: what it kept is then asked of the kernel.
wait_for "$T/guard.log" "routes changed.*destroyed 1 socket " 30 || fail "route change: no action line"
grep -q "routes changed.*uid 1" "$T/guard.log" || fail "route change: exempt socket not counted"
estab() { ip netns exec "$B" ss -Htn state established "$@" | wc -l; }
[ "$(estab dst 10.99.0.1)" = 1 ] || fail "route change: exempt uid destroyed (ss)"
[ "$(estab dst 10.1.0.1 and src 10.1.0.2)" = 1 ] || fail "route change: socket to uplink 1's router destroyed (ss)"
[ "$(estab dst 10.2.0.1)" = 1 ] || fail "route change: socket to uplink 2's router destroyed (ss)"
[ "$(estab dst 10.2.0.2)" = 1 ] || fail "route change: socket to an address of the host destroyed (ss)"
alive exempt || fail "route change: exempt uid destroyed"
alive direct1 || fail "route change: socket to uplink 1's own router destroyed"
alive direct2 || fail "route change: socket to uplink 2's router destroyed"
alive localpeer || fail "route change: socket to an address of the host itself destroyed"
pass "default route moved: the socket sourced from uplink 1 to a peer behind it destroyed; \
exempt uid, directly connected peers and a peer on the host itself kept"
passes=$(grep -c "routes changed" "$T/guard.log")
ip -n "$B" route replace default via 10.1.0.1 dev vb1
for ((i = 0; i < 30 * ${SOCKDIAG_TEST_SLOWDOWN:-1}; i++)); do
	[ "$(grep -c "routes changed" "$T/guard.log")" -gt "$passes" ] && break
	sleep 0.1
done
[ "$(grep -c "routes changed" "$T/guard.log")" -gt "$passes" ] || fail "route back: no new pass"
[ "$(estab dst 10.99.0.1)" = 1 ] || fail "route back: exempt socket destroyed (ss)"
alive exempt || fail "route back: exempt socket destroyed"
pass "route moved back: a second pass, nothing more destroyed"

# ---- reaping --------------------------------------------------------------------------------------
# The clients first: every pass of the guard then sees all three.
client r1 10.1.0.1 7001 10.1.0.2
client r2 10.1.0.1 7001 10.1.0.2
client r3 10.1.0.1 7001 10.1.0.2
client keep7000 10.1.0.1 7000 10.1.0.2
client r4uid 10.1.0.1 7001 10.1.0.2 4242
start_guard 'reap = dport = :7001 and idle > 1s\nreap-interval = 1s\nreap-max = 2\nexempt-uid = 4242\n'
wait_for "$T/guard.log" "refused: more than reap-max = 2" 40 || fail "reap: cap not enforced"
alive r1 && alive r2 && alive r3 || fail "reap: refused rule destroyed something"
pass "reap: 3 sockets match, reap-max = 2: refused, nothing destroyed"
printf 'reap = dport = :7001 and idle > 1s\nreap-interval = 1s\nreap-max = 3\nexempt-uid = 4242\n' >"$T/guard.conf"
kill -HUP "$GUARD"
for c in r1 r2 r3; do
	wait_for "$T/$c" "^recv" 40 || fail "reap: $c not destroyed"
	aborted $c || fail "reap: $c: $(cat "$T/$c")"
done
grep -q "reap (line 1) 'dport = :7001 and idle > 1s': destroyed 3 sockets (already gone 0, failed 0; kept 1: uid 1)" "$T/guard.log" ||
	fail "reap: no action line saying why the 4th was kept"
alive r4uid || fail "reap: the exempt uid's connection to port 7001 was destroyed"
[ "$(estab dport = :7001)" = 1 ] || fail "reap: ss sees $(estab dport = :7001) connections to port 7001, expected the exempt one"
[ "$(estab dst 10.1.0.1 and src 10.1.0.2 and dport = :7000)" = 2 ] ||
	fail "reap: the connection to port 7000 was destroyed (ss)"
alive keep7000 || fail "reap: the connection to port 7000 was destroyed"
pass "reap: the idle connections to port 7001 destroyed, the one to 7000 kept"

# ---- exemptions, udp-connected ---------------------------------------------------------------------
# Six sockets use 10.1.0.9: a plain TCP client (the one to destroy), a connected
# UDP socket, a TCP client to 127.0.0.1 (loopback), one in a cgroup of this run's
# own, one to 10.99.0.1 (exempt-dst), one with SO_MARK 0x1142 (exempt-mark
# 0x42/0xff).
CGROOT=$(awk '{ split($0, a, " - "); split(a[2], b, " "); if (b[1] == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$CGROOT" ] && [ -w "$CGROOT" ] || { echo "SKIP(cgroup2): no writable cgroup2 mount"; \
	echo "# checks: $PASSED passed, 0 failed, 1 skipped"; exit 0; }
CGX=$CGROOT/sdpx$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
mkdir "$CGX"
ip netns exec "$B" "$NP" server 127.0.0.1 7003 >"$T/serverlo" &
PIDS+=($!)
wait_for "$T/serverlo" listening || fail "loopback server in B did not start"
start_guard "udp-connected = no\nexempt-cgroup = ${CGX#"$CGROOT"}\nexempt-dst = 10.99.0.0/24\nexempt-mark = 0x42/0xff\n"
xclient() { # name netpeer-args...: a client in B, from 10.1.0.9
	local name=$1
	shift
	rm -f "$T/$name"
	ip netns exec "$B" "$NP" "$@" >"$T/$name" 2>&1 &
	PIDS+=($!)
	wait_for "$T/$name" connected || fail "client $name did not connect: $(cat "$T/$name")"
}
xclient xvictim client 10.1.0.1 7000 10.1.0.9
xclient xudp udpclient 10.1.0.1 7000 10.1.0.9
xclient xlo client 127.0.0.1 7003 10.1.0.9
xclient xdst client 10.99.0.1 7000 10.1.0.9
NETPEER_MARK=0x1142 xclient xmark client 10.1.0.1 7000 10.1.0.9
# Into the cgroup before ip netns exec (which remounts /sys).
rm -f "$T/xcg"
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CGX" \
	ip netns exec "$B" "$NP" client 10.1.0.1 7000 10.1.0.9 >"$T/xcg" 2>&1 &
PIDS+=($!)
wait_for "$T/xcg" connected || fail "client xcg did not connect: $(cat "$T/xcg")"
kept() { # the sockets from 10.1.0.9 the kernel still has (ss, TCP and UDP)
	ip netns exec "$B" ss -Htuan src 10.1.0.9 | grep -c ESTAB || true
}
[ "$(kept)" = 6 ] || fail "exemptions: ss sees $(kept) sockets from 10.1.0.9, the test made 6"
ip -n "$B" addr del 10.1.0.9/24 dev vb1
wait_for "$T/xvictim" "^recv" 30 || fail "exemptions: the plain TCP socket was not destroyed"
aborted xvictim || fail "exemptions: xvictim: $(cat "$T/xvictim")"
# The action line is written once every socket of the event was decided and
# destroyed: what it keeps is then known, and the kernel is asked.
wait_for "$T/guard.log" "address 10.1.0.9/24 removed from vb1: destroyed" 30 ||
	fail "exemptions: no action line for 10.1.0.9"
line=$(grep -F "address 10.1.0.9/24 removed from vb1: destroyed" "$T/guard.log" | cut -d' ' -f3-)
n=$(kept)
for c in xudp xlo xdst xmark xcg; do
	alive $c || fail "exemptions: $c was destroyed: $(cat "$T/$c"); ss sees $n kept; logged: $line"
done
[ "$n" = 5 ] || fail "exemptions: ss sees $n sockets from 10.1.0.9, expected the 5 kept"
[[ "$line" == *": destroyed 1 socket (already gone 0, failed 0; kept 5: "* ]] ||
	fail "exemptions: the action line: $line"
for r in "state 1" "loopback 1" "cgroup 1" "mark 1" "destination 1"; do
	[[ "$line" =~ [:,]\ $r[,\)] ]] || fail "exemptions: the action line does not count '$r': $line"
done
pass "udp-connected = no, exempt-loopback, exempt-cgroup, exempt-dst, exempt-mark: \
5 sockets kept (ss), one destroyed; logged: $line"

# The same five, under a guard without those exemptions: all destroyed.
ip -n "$B" addr add 10.1.0.9/24 dev vb1
start_guard 'exempt-loopback = no\n'
ip -n "$B" addr del 10.1.0.9/24 dev vb1
for c in xudp xlo xdst xmark xcg; do
	wait_for "$T/$c" "^recv" 30 || fail "no exemptions: $c not destroyed"
	aborted $c || fail "no exemptions: $c: $(cat "$T/$c")"
done
[ "$(kept)" = 0 ] || fail "no exemptions: ss still sees $(kept) sockets from 10.1.0.9"
pass "without the exemptions (exempt-loopback = no, udp-connected = yes) the five are destroyed"

echo "# checks: $PASSED passed, 0 failed, 0 skipped"
