#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard, grace = 0: an address deleted and added back in one
# `ip -batch` (a DHCP renewal, a VPN client), or a link taken down and up
# again, then a new connection made from that address: the new connection is
# live and must never be destroyed, while a socket whose address is deleted in
# the same batch and stays gone must be. The guard's socket dumps are made
# slower by a random 0..RACE_DUMP_MS ms (tests/tools/slowdump.c, as a host with
# many sockets would have them), so the new connection often appears while the
# guard is still judging the removal: the window the race needs.
#
# Each cycle, in a private network namespace (the script re-runs itself in one):
#  1. clients connected from Y (on vb, deleted in the batch, stays gone) and
#     from Z (the cycle's marker, on another link);
#  2. one batch, at random either "addr del X; addr add X" or "link set vb
#     down; link set vb up", with "addr del Y" at a random place in it;
#  3. after a random 0..15 ms, a new client connects from X;
#  4. Z is deleted: once Z's client is destroyed, the guard has acted on every
#     earlier event (one loop, in order), so every decision about X and Y was made;
#  5. X's new client must still be blocked in recv; Y's must have got ECONNABORTED.
# GUARD_RACE_CYCLES cycles (default 50; 1000 by hand, bench/RESULTS.md),
# GUARD_RACE_SEED to replay, RACE_DUMP_MS the slowest dump request (20),
# GUARD_RACE_KEEP_LOG=FILE keeps the guard's log.
#   usage: guard_race.sh SOCKDIAG NETPEER SLOWDUMP.so
set -euo pipefail

SD=${1:?usage: guard_race.sh SOCKDIAG NETPEER SLOWDUMP.so}
NP=${2:?usage: guard_race.sh SOCKDIAG NETPEER SLOWDUMP.so}
SLOW=${3:?usage: guard_race.sh SOCKDIAG NETPEER SLOWDUMP.so}
. "$(dirname "$0")/lib.sh"
guard_netns_setup "$@"
# Once more, so that this namespace has the small socket tables just asked for
# (the guard's dumps would walk the host's sockets otherwise).
if [ -z "${GUARD_RACE_INNER:-}" ]; then
	exec env GUARD_RACE_INNER=1 unshare -n "$0" "$@"
fi

T=$(mktemp -d)
PIDS=()
GUARD=
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "$GUARD" ] && kill "$GUARD" 2>/dev/null || true
	wait 2>/dev/null || true
	[ -n "${GUARD_RACE_KEEP_LOG:-}" ] && cp "$T/guard.log" "$GUARD_RACE_KEEP_LOG"
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; echo "--- guard log (last 30 lines):"; tail -n 30 "$T/guard.log"; exit 1; }

slowdown=${SOCKDIAG_TEST_SLOWDOWN:-1}
CYCLES=${GUARD_RACE_CYCLES:-50}
SEED=${GUARD_RACE_SEED:-$(( $(date +%s%N) % 100000 ))}
DUMP_MS=${RACE_DUMP_MS:-20}
echo "seed $SEED, $CYCLES cycles, dumps slowed by 0..$DUMP_MS ms (GUARD_RACE_SEED=$SEED to replay)"
RANDOM=$SEED

# Everything in this (private) namespace: veth pairs whose two ends are both
# here (vb carries X and Y, vc the markers: a link down on vb must not take
# them; va and vd give them a carrier), the server on lo.
ip link set lo up
ip link add va type veth peer name vb
ip link add vc type veth peer name vd
for l in va vb vc vd; do ip link set $l up; done
ip addr add 10.255.0.1/32 dev lo
X=10.9.0.2
Y=10.10.0.2
ip addr add $X/32 dev vb

# wait_fast FILE PATTERN SECONDS: wait_for at 10 ms steps (scaled by the slowdown).
wait_fast() {
	local i
	for ((i = 0; i < $3 * 100 * slowdown; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

"$NP" server 10.255.0.1 7000 >"$T/server" &
PIDS+=($!)
wait_fast "$T/server" listening 5 || fail "server did not start"

: >"$T/guard.conf"	# the defaults: grace = 0
SLOWDUMP_MS=$DUMP_MS SLOWDUMP_RANDOM=$SEED LD_PRELOAD="$SLOW" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$SD" guard -c "$T/guard.conf" 2>"$T/guard.log" &
GUARD=$!
wait_fast "$T/guard.log" "started" 10 || fail "guard did not start: $(cat "$T/guard.log")"

# client NAME SRC: a TCP connection from SRC, blocked in recv (its pid in CPID).
# A connect that fails (the address or its route not back yet) is retried.
client() {
	local try
	for try in 1 2 3 4 5; do
		rm -f "$T/c.$1" # an earlier client's "connected" must not count
		"$NP" client 10.255.0.1 7000 "$2" >"$T/c.$1" 2>&1 &
		CPID=$!
		PIDS+=($CPID)
		wait_fast "$T/c.$1" "connected\|netpeer" 5 || fail "client $1 from $2: no answer"
		grep -q connected "$T/c.$1" && return 0
		sleep 0.01
	done
	fail "client $1 from $2 did not connect: $(cat "$T/c.$1")"
}

killed=0 kept_y=0 n_addr=0 n_link=0
for ((c = 1; c <= CYCLES; c++)); do
	Z=10.98.$((c / 250)).$((c % 250 + 1))
	ip addr add $Y/32 dev vb
	ip addr add "$Z/32" dev vc
	client y "$Y"
	YPID=$CPID
	client z "$Z"
	ZPID=$CPID
	if ((RANDOM % 2)); then
		ops=("addr del $X/32 dev vb" "addr add $X/32 dev vb")
		n_addr=$((n_addr + 1))
	else
		ops=("link set vb down" "link set vb up")
		n_link=$((n_link + 1))
	fi
	case $((RANDOM % 3)) in
	0) ops=("addr del $Y/32 dev vb" "${ops[@]}") ;;
	1) ops=("${ops[0]}" "addr del $Y/32 dev vb" "${ops[1]}") ;;
	2) ops=("${ops[@]}" "addr del $Y/32 dev vb") ;;
	esac
	printf '%s\n' "${ops[@]}" >"$T/batch"
	ip -batch "$T/batch"
	sleep "$(printf '0.%03d' $((RANDOM % 16)))"
	client x "$X"
	XPID=$CPID
	ip addr del "$Z/32" dev vc
	wait_fast "$T/c.z" "^recv" 10 || fail "cycle $c: marker socket on $Z not destroyed"
	if grep -q "^recv" "$T/c.x"; then
		killed=$((killed + 1))
		echo "cycle $c: the new connection from $X was destroyed ($(tr '\n' ' ' <"$T/batch"))"
	fi
	if ! wait_fast "$T/c.y" "^recv errno=ECONNABORTED" 1; then
		kept_y=$((kept_y + 1))
		echo "cycle $c: the socket on $Y (deleted, stays gone) was not destroyed"
	fi
	kill "$XPID" "$YPID" "$ZPID" 2>/dev/null || true
done
echo "$CYCLES cycles ($n_addr address re-adds, $n_link link down/up): $killed live connections destroyed, $kept_y stranded sockets kept"
checks=0
[ "$killed" = 0 ] && checks=$((checks + 1))
[ "$kept_y" = 0 ] && checks=$((checks + 1))
echo "# checks: $checks passed, $((2 - checks)) failed, 0 skipped"
[ "$checks" = 2 ] || fail "$killed live connections destroyed, $kept_y stranded sockets kept"
echo "ok: no live connection destroyed, every stranded socket destroyed"
