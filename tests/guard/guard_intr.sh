#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard while its resync dumps are interrupted (NLM_F_DUMP_INTR). In
# namespace B, lo carries 2,000 addresses (a dump of them spans several
# datagrams) and STABLE (10.78.0.1), never touched, with a connection from it.
# The guard runs with a 4 KiB event buffer; for SECONDS (GUARD_INTR_SECONDS,
# default 6) a loop deletes and re-adds 50 of the other addresses at a time:
# every batch overflows the guard's buffer (a resync) and moves addresses
# while its dumps run (the kernel marks them interrupted). Then:
#  1. the guard is alive, resynced, and logged no error;
#  2. STABLE's socket lives (an interrupted dump accepted as complete could
#     miss STABLE and destroy it);
#  3. the guard still acts: STABLE removed, its socket is destroyed.
#   usage: guard_intr.sh SOCKDIAG NETPEER
set -euo pipefail

SD=${1:?usage: guard_intr.sh SOCKDIAG NETPEER}
NP=${2:?usage: guard_intr.sh SOCKDIAG NETPEER}
. "$(dirname "$0")/lib.sh"
guard_netns_setup "$@"

B=sdi$$b
T=$(mktemp -d)
PIDS=()
cleanup() {
	[ -n "${GUARD:-}" ] && stop_guard "$GUARD"
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; echo "--- guard log (last 30 lines):"; tail -n 30 "$T/guard.log"; exit 1; }
pass() { echo "ok: $*"; npass=$((${npass:-0} + 1)); }

ip netns add "$B"
ip -n "$B" link set lo up
ip -n "$B" addr add 10.255.0.1/32 dev lo
for i in $(seq 0 1999); do echo "addr add 10.77.$((i / 250)).$((i % 250 + 1))/32 dev lo"; done >"$T/many"
ip -n "$B" -batch "$T/many"
ip -n "$B" addr add 10.78.0.1/32 dev lo

ip netns exec "$B" "$NP" server 10.255.0.1 7000 >"$T/server" &
PIDS+=($!)
wait_for "$T/server" listening || fail "server did not start"
ip netns exec "$B" "$NP" client 10.255.0.1 7000 10.78.0.1 >"$T/c.stable" 2>&1 &
PIDS+=($!)
wait_for "$T/c.stable" connected || fail "client from 10.78.0.1 did not connect"

: >"$T/guard.conf"
"$SD" guard -c "$T/guard.conf" -N "$B" --rtnl-rcvbuf 4096 2>"$T/guard.log" &
GUARD=$!
wait_for "$T/guard.log" "started" || fail "guard did not start: $(cat "$T/guard.log")"

# 40 batches, each: 50 of the first 200 addresses deleted and added back.
for r in $(seq 0 39); do
	for i in $(seq 0 49); do
		j=$(((r * 50 + i) % 200))
		echo "addr del 10.77.0.$((j + 1))/32 dev lo"
		echo "addr add 10.77.0.$((j + 1))/32 dev lo"
	done >"$T/churn.$r"
done
end=$((SECONDS + ${GUARD_INTR_SECONDS:-6}))
batches=0
while ((SECONDS < end)); do
	ip -n "$B" -batch "$T/churn.$((batches % 40))"
	batches=$((batches + 1))
done

# Once quiet, one more event must reach a guard that is still listening.
kill -0 "$GUARD" || fail "the guard died during the churn"
resyncs=$(grep -c "resync after lost" "$T/guard.log" || true)
deferred=$(grep -c "changed during each of" "$T/guard.log" || true)
echo "# $batches churn batches; the guard logged $resyncs resyncs, $deferred deferrals"
# An overflow makes the guard resync: done ("resync after lost") or, when every
# dump was interrupted, deferred ("changed during each of"; the started guard's
# first dump came before the churn). Either shows the overflow happened (a slow
# guard under ASan may only have deferred by the time the churn stops).
[ $((resyncs + deferred)) -gt 0 ] || fail "no resync during the churn: the overflow did not happen"
grep -q "ERROR\|cannot" "$T/guard.log" && fail "the guard logged an error"
pass "the guard survived $batches churn batches with resyncs"

ended() { grep -q "^recv" "$T/c.$1"; }
ended stable && fail "STABLE's socket was destroyed: $(cat "$T/c.stable")"
pass "STABLE's socket lives through the interrupted dumps"

ip -n "$B" addr del 10.78.0.1/32 dev lo
wait_for "$T/c.stable" "^recv" 100 || fail "STABLE removed: its socket was not destroyed"
grep -q "^recv errno=ECONNABORTED" "$T/c.stable" || fail "STABLE: $(cat "$T/c.stable")"
pass "after the churn the guard still acts: STABLE removed, its socket destroyed"
kill -0 "$GUARD" || fail "guard died"
echo "# checks: $npass passed, 0 failed, 0 skipped"
