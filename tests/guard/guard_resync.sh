#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard after an rtnetlink overflow: the dump is the truth. The guard
# runs in namespace B (veth pairs vb, d1 and dj to A) with a 4 KiB event
# buffer; each check stops it (SIGSTOP), changes the addresses, overflows its
# socket with ~240 events on dj and resumes it (SIGCONT). Clients connect
# from B's addresses to a server on B's 10.255.0.1 (lo).
#  1. an address removed, then added back while events were lost, with a new
#     connection on it: neither the old nor the new socket is destroyed;
#  2. an address added to a second link and removed again while events were
#     lost: a later removal from its first link still destroys its socket;
#  3. randomized: ROUNDS rounds (GUARD_RESYNC_ROUNDS, default 12) of random
#     add/del/flush/link up/down, each behind an overflow; after each round
#     no socket whose address is still on an up link was destroyed and every
#     other one was. The seed is printed (GUARD_RESYNC_SEED to replay).
# A round ends at a marker: a socket on a dj address removed after the
# resync is logged; once it is destroyed every earlier decision was made.
#   usage: guard_resync.sh SOCKDIAG NETPEER
set -euo pipefail

SD=${1:?usage: guard_resync.sh SOCKDIAG NETPEER}
NP=${2:?usage: guard_resync.sh SOCKDIAG NETPEER}
. "$(dirname "$0")/lib.sh"
guard_netns_setup "$@"

A=sdr$$a
B=sdr$$b
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	kill -CONT "${GUARD:-0}" 2>/dev/null || true
	# A guard that has not exited 5 s after SIGTERM is killed: no test leaves one behind.
	for ((i = 0; i < 50; i++)); do
		kill -0 "${GUARD:-0}" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "${GUARD:-0}" 2>/dev/null || true
	wait 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; echo "--- guard log (last 30 lines):"; tail -n 30 "$T/guard.log"; exit 1; }
pass() { echo "ok: $*"; npass=$((${npass:-0} + 1)); }

wait_for() { # FILE PATTERN [TENTHS]
	local i
	for ((i = 0; i < ${3:-50}; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

ip netns add "$A"
ip netns add "$B"
ip link add va netns "$A" type veth peer name vb netns "$B"
ip link add a1 netns "$A" type veth peer name d1 netns "$B"
ip link add aj netns "$A" type veth peer name dj netns "$B"
for l in lo va a1 aj; do ip -n "$A" link set "$l" up; done
for l in lo vb d1 dj; do ip -n "$B" link set "$l" up; done
ip -n "$B" addr add 10.255.0.1/32 dev lo

ip netns exec "$B" "$NP" server 10.255.0.1 7000 >"$T/server" &
PIDS+=($!)
wait_for "$T/server" listening || fail "server did not start"

: >"$T/guard.conf"	# the defaults
# No leak check for this guard in the ASan build: after its many SIGSTOP/SIGCONT cycles,
# LeakSanitizer's stop-the-world at exit spins forever (seen: the guard logged its exit on
# SIGTERM, then ran at 100% CPU for minutes). guard_e2e and guard_metrics keep the check.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	"$SD" guard -c "$T/guard.conf" -N "$B" --rtnl-rcvbuf 4096 2>"$T/guard.log" &
GUARD=$!
PIDS+=($GUARD)
wait_for "$T/guard.log" "started" || fail "guard did not start: $(cat "$T/guard.log")"

# client NAME SRC: a TCP connection from SRC, blocked in recv.
client() {
	rm -f "$T/c.$1"
	ip netns exec "$B" "$NP" client 10.255.0.1 7000 "$2" >"$T/c.$1" 2>&1 &
	PIDS+=($!)
	wait_for "$T/c.$1" connected || fail "client $1 from $2 did not connect: $(cat "$T/c.$1")"
}
destroyed() { grep -q "^recv errno=ECONNABORTED" "$T/c.$1"; }
ended() { grep -q "^recv" "$T/c.$1"; }

# overflow: ~240 address events on dj, far more than a 4 KiB buffer holds.
junk() {
	local i
	for i in $(seq 1 120); do echo "addr add 10.99.0.$i/32 dev dj"; done
	for i in $(seq 1 120); do echo "addr del 10.99.0.$i/32 dev dj"; done
}
junk >"$T/junk"
MARK=0
RESYNCS=0
stop() { kill -STOP "$GUARD"; }
# resume: SIGCONT, wait for the resync, then for a marker socket's destruction.
resume() {
	local m
	ip -n "$B" -batch "$T/junk"
	MARK=$((MARK + 1))
	m=10.98.$((MARK / 250)).$((MARK % 250 + 1))
	kill -CONT "$GUARD"
	RESYNCS=$((RESYNCS + 1))
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "resync after lost" "$T/guard.log")" -ge "$RESYNCS" ] && break
		sleep 0.1
	done
	[ "$(grep -c "resync after lost" "$T/guard.log")" -ge "$RESYNCS" ] ||
		fail "no resync after the overflow (round marker $MARK)"
	ip -n "$B" addr add "$m/32" dev dj
	client "mark$MARK" "$m"
	ip -n "$B" addr del "$m/32" dev dj
	wait_for "$T/c.mark$MARK" "^recv" 100 || fail "marker socket on $m not destroyed"
}

# ---- 1. removed, added back while events were lost ------------------------------------------
ip -n "$B" addr add 10.9.1.5/32 dev vb
client s1old 10.9.1.5
stop
ip -n "$B" addr del 10.9.1.5/32 dev vb
ip -n "$B" -batch "$T/junk"
ip -n "$B" addr add 10.9.1.5/32 dev vb
client s1new 10.9.1.5
resume
ended s1old && fail "removed and added back: the old socket was destroyed: $(cat "$T/c.s1old")"
ended s1new && fail "removed and added back: the new socket was destroyed: $(cat "$T/c.s1new")"
[ "$("$SD" list -N "$B" -Htn 'src 10.9.1.5' | wc -l)" = 2 ] || fail "sockets on 10.9.1.5 gone"
pass "address removed and added back during an overflow: both its sockets live"

# ---- 2. added to a second link and removed again while events were lost -------------------
ip -n "$B" addr add 10.9.1.6/32 dev vb
client s2 10.9.1.6
stop
ip -n "$B" addr add 10.9.1.6/32 dev d1
ip -n "$B" -batch "$T/junk"
ip -n "$B" addr del 10.9.1.6/32 dev d1
resume
ended s2 && fail "address briefly on d1: its socket was destroyed: $(cat "$T/c.s2")"
ip -n "$B" addr del 10.9.1.6/32 dev vb
wait_for "$T/c.s2" "^recv" 50 ||
	fail "address briefly on d1, then removed from vb: its socket was not destroyed"
destroyed s2 || fail "s2: $(cat "$T/c.s2")"
pass "address briefly on a second link during an overflow: its later removal strands the socket"

# ---- 3. randomized ------------------------------------------------------------------------------------
SEED=${GUARD_RESYNC_SEED:-$(( $(date +%s) % 100000 ))}
ROUNDS=${GUARD_RESYNC_ROUNDS:-12}
echo "randomized: seed $SEED, $ROUNDS rounds (GUARD_RESYNC_SEED=$SEED to replay)"
RANDOM=$SEED
POOL=(10.9.5.1 10.9.5.2 10.9.5.3 10.9.5.4 10.9.5.5 10.9.5.6)
LINKS=(vb d1)
declare -A LIVE=()	# address -> client name whose socket should be alive
N=0
# up_addrs: the pool addresses on an up link, as the kernel has them now.
up_addrs() {
	ip -n "$B" -o -4 addr show up | awk '{ sub("/.*", "", $4); print $4 }' | grep '^10\.9\.5\.' |
		sort -u || true
}
# new clients for every pool address on an up link that has no live socket
refill() {
	local x
	for x in $(up_addrs); do
		if [ -z "${LIVE[$x]:-}" ]; then
			N=$((N + 1))
			client "r$N" "$x"
			LIVE[$x]=r$N
		fi
	done
}
random_op() {
	local x=${POOL[RANDOM % ${#POOL[@]}]} l=${LINKS[RANDOM % 2]}
	case $((RANDOM % 6)) in
	0 | 1) echo "addr add $x/32 dev $l" ;;
	2) echo "addr del $x/32 dev $l" ;;
	3) echo "addr flush dev $l" ;;
	4) echo "link set $l down" ;;
	5) echo "link set $l up" ;;
	esac
}
for x in "${POOL[@]:0:4}"; do ip -n "$B" addr add "$x/32" dev "${LINKS[RANDOM % 2]}"; done
refill
for ((round = 1; round <= ROUNDS; round++)); do
	stop
	ops=()
	for ((k = 0; k < 1 + RANDOM % 4; k++)); do
		op=$(random_op)
		ops+=("$op")
		ip -n "$B" $op 2>/dev/null || true	# adding what is there, deleting what is not
	done
	resume
	up=" $(up_addrs | tr '\n' ' ')"
	for x in "${!LIVE[@]}"; do
		c=${LIVE[$x]}
		if [[ "$up" == *" $x "* ]]; then
			ended "$c" && fail "round $round (seed $SEED; ${ops[*]}): socket on $x" \
				"destroyed, but $x is still on an up link: $(cat "$T/c.$c")"
		else
			wait_for "$T/c.$c" "^recv" 10 || fail "round $round (seed $SEED;" \
				"${ops[*]}): socket on $x not destroyed, $x is on no up link"
			destroyed "$c" || fail "round $round: $c: $(cat "$T/c.$c")"
			unset "LIVE[$x]"
		fi
	done
	echo "round $round: $(printf '%s; ' "${ops[@]}")live:${up}"
	# Bring every link up now and then, so that addresses come back to life.
	if ((round % 4 == 0)); then
		stop
		for l in "${LINKS[@]}"; do ip -n "$B" link set "$l" up; done
		resume
	fi
	refill
done
pass "randomized: $ROUNDS rounds with overflows, every stranded socket destroyed, no live one"
grep -q "ERROR\|cannot" "$T/guard.log" && fail "the guard logged an error"
kill -0 "$GUARD" || fail "guard died"
echo "# checks: $npass passed, 0 failed, 0 skipped"
