#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard --metrics: the guard runs from a private namespace (where it
# serves its metrics on loopback) and guards namespace B (-N), joined to A by
# a veth pair; a server in A, clients in B. Checks, on /metrics:
#  - after an address removal: one address_removed event, two sockets
#    destroyed (TCP and connected UDP), one kept for its exempt uid, one
#    decision-to-destroy latency observed;
#  - after an rtnetlink overflow: a resync counted, the stranded socket
#    destroyed (three in all);
#  - a refused and a taken SIGHUP reload;
#  - `promtool check metrics` passes (when promtool is installed);
#  - a dry-run guard counts would_destroy and destroys nothing.
#   usage: guard_metrics.sh SOCKDIAG NETPEER
set -euo pipefail

SD=${1:?usage: guard_metrics.sh SOCKDIAG NETPEER}
NP=${2:?usage: guard_metrics.sh SOCKDIAG NETPEER}
. "$(dirname "$0")/lib.sh"
guard_netns_setup "$@"
ip link set lo up

A=sdm$$a
B=sdm$$b
M=127.0.0.1:10115
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	kill -CONT "${GUARD:-0}" 2>/dev/null || true
	wait 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

NPASS=0
NSKIP=0
fail() {
	echo "FAIL: $*"
	echo "--- guard log:"
	cat "$T/guard.log" 2>/dev/null
	echo "# checks: $NPASS passed, 1 failed, $NSKIP skipped"
	exit 1
}
pass() { echo "ok: $*"; NPASS=$((NPASS + 1)); }
wait_for() { # FILE PATTERN [TENTHS]
	local i
	for ((i = 0; i < ${3:-50}; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
scrape() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		"http://$M/metrics" >"$T/metrics" || fail "cannot fetch /metrics"
}
# expect SAMPLE VALUE: the last scrape has that sample with that value.
expect() {
	local got
	got=$(awk -v s="$1" '$1 == s { print $2 }' "$T/metrics")
	[ "$got" = "$2" ] || fail "$1 = '${got}', expected $2"
}

ip netns add "$A"
ip netns add "$B"
ip link add va netns "$A" type veth peer name vb netns "$B"
ip -n "$A" link set lo up
ip -n "$B" link set lo up
ip -n "$A" addr add 10.9.0.1/16 dev va
ip -n "$B" addr add 10.9.0.2/16 dev vb
ip -n "$B" addr add 10.10.0.3/16 dev vb
ip -n "$A" addr add 10.10.0.1/16 dev va
ip -n "$A" link set va up
ip -n "$B" link set vb up
ip netns exec "$A" "$NP" server 0.0.0.0 7000 >"$T/server" &
PIDS+=($!)
wait_for "$T/server" listening || fail "server did not start"

printf 'exempt-uid = 4242\n' >"$T/guard.conf"
"$SD" guard -c "$T/guard.conf" -N "$B" --rtnl-rcvbuf 4096 --metrics "$M" 2>"$T/guard.log" &
GUARD=$!
PIDS+=($GUARD)
wait_for "$T/guard.log" "started" || fail "guard did not start"

client() { # name proto src [uid]
	local cmd=client dst=10.9.0.1
	[ "$2" = udp ] && cmd=udpclient
	rm -f "$T/$1"
	ip netns exec "$B" "$NP" $cmd $dst 7000 "$3" ${4:-} >"$T/$1" 2>&1 &
	PIDS+=($!)
	wait_for "$T/$1" connected || fail "client $1 did not connect: $(cat "$T/$1")"
}

scrape
expect 'sockdiag_guard_events_total{kind="address_removed"}' 0
expect 'sockdiag_guard_decision_to_destroy_seconds_count' 0
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/metrics" || fail "promtool check metrics"
	pass "promtool check metrics passes"
else
	echo "SKIP(tool:promtool): not installed (Debian: prometheus)"
	NSKIP=$((NSKIP + 1))
fi

# ---- an address removal ------------------------------------------------------------------
client victim tcp 10.9.0.2
client victim_udp udp 10.9.0.2
client exempt tcp 10.9.0.2 4242
ip -n "$B" addr del 10.9.0.2/16 dev vb
wait_for "$T/guard.log" "removed from vb: destroyed" || fail "no action logged"
scrape
expect 'sockdiag_guard_events_total{kind="address_removed"}' 1
expect 'sockdiag_guard_events_total{kind="link_down"}' 0
expect 'sockdiag_guard_sockets_total{outcome="destroyed"}' 2
expect 'sockdiag_guard_sockets_total{outcome="already_gone"}' 0
expect 'sockdiag_guard_sockets_total{outcome="failed"}' 0
expect 'sockdiag_guard_kept_sockets_total{reason="uid"}' 1
expect 'sockdiag_guard_decision_to_destroy_seconds_count' 1
expect 'sockdiag_guard_decision_to_destroy_seconds_bucket{le="+Inf"}' 1
expect 'sockdiag_guard_resyncs_total' 0
pass "after an address removal: 1 event, 2 destroyed, 1 kept (uid), 1 latency observed"

# ---- overflow and resync ----------------------------------------------------------------------
ip -n "$B" addr add 10.9.1.5/16 dev vb
client burst_victim tcp 10.9.1.5
{
	for i in $(seq 10 250); do echo "addr add 10.9.2.$i/16 dev vb"; done
	for i in $(seq 10 250); do echo "addr del 10.9.2.$i/16 dev vb"; done
	echo "addr del 10.9.1.5/16 dev vb"
} >"$T/batch"
kill -STOP "$GUARD"
ip -n "$B" -batch "$T/batch"
kill -CONT "$GUARD"
wait_for "$T/burst_victim" "^recv" 50 || fail "stranded socket not destroyed after the burst"
wait_for "$T/guard.log" "resync after lost" || fail "no resync logged"
scrape
expect 'sockdiag_guard_resyncs_total' 1
expect 'sockdiag_guard_sockets_total{outcome="destroyed"}' 3
pass "overflow: 1 resync counted, the stranded socket destroyed"

# ---- reloads ------------------------------------------------------------------------------------
printf 'bogus = 1\n' >"$T/guard.conf"
kill -HUP "$GUARD"
wait_for "$T/guard.log" "keeping the previous configuration" || fail "bad reload not refused"
printf 'exempt-uid = 4242\n' >"$T/guard.conf"
kill -HUP "$GUARD"
wait_for "$T/guard.log" "reloaded" || fail "good reload not taken"
scrape
expect 'sockdiag_guard_config_reloads_total{result="refused"}' 1
expect 'sockdiag_guard_config_reloads_total{result="ok"}' 1
pass "reloads: 1 refused, 1 taken"
kill "$GUARD"
wait "$GUARD" || fail "guard: exit $? on SIGTERM"

# ---- dry run ------------------------------------------------------------------------------------
ip -n "$B" addr add 10.9.0.2/16 dev vb
"$SD" guard -c "$T/guard.conf" -N "$B" --dry-run --metrics "$M" 2>"$T/guard.log" &
GUARD=$!
PIDS+=($GUARD)
wait_for "$T/guard.log" "started" || fail "dry-run guard did not start"
client dry tcp 10.9.0.2
ip -n "$B" addr del 10.9.0.2/16 dev vb
wait_for "$T/guard.log" "would destroy" || fail "no dry-run action logged"
scrape
expect 'sockdiag_guard_sockets_total{outcome="would_destroy"}' 1
expect 'sockdiag_guard_sockets_total{outcome="destroyed"}' 0
expect 'sockdiag_guard_decision_to_destroy_seconds_count' 0
grep -q "^recv" "$T/dry" && fail "a dry run destroyed a socket"
pass "dry run: would_destroy 1, destroyed 0"
echo "# checks: $NPASS passed, 0 failed, $NSKIP skipped"
