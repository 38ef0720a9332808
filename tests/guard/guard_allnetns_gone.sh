#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard --all-netns: a namespace that goes between the scan that found
# it and its guard's start is the normal race of short-lived namespaces (1 in
# 300 create/delete cycles): logged quietly as gone, not as an error. Made
# certain here: strace holds the supervisor's open of /run/netns/gone for
# 1.5 s (its inject delay), and meanwhile the name is unmounted, as `ip netns
# del` does before removing the file (what is left is a plain file). Inside a
# private mount + pid + network namespace with its own /run/netns, as
# guard_allnetns.sh.
#   usage: guard_allnetns_gone.sh SOCKDIAG
set -euo pipefail

SD=${1:?usage: guard_allnetns_gone.sh SOCKDIAG}
. "$(dirname "$0")/lib.sh" # wait_for
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (namespaces)"; exit 77; }
for t in ip unshare strace; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
. "$(dirname "$0")/../private_world.sh"
private_world SOCKDIAG_GONE_INNER "$0" "$@"

T=$(mktemp -d)
SUP=
cleanup() {
	# The supervisor (strace's child) first: strace ends with it.
	if [ -n "$SUP" ]; then
		kill $(cat /proc/$SUP/task/*/children 2>/dev/null) 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do kill -0 "$SUP" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$SUP" 2>/dev/null || true
	fi
	wait 2>/dev/null || true
	umount /run/netns/gone 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- guard log:"; cat "$T/guard.log"; echo "# checks: 0 passed, 1 failed, 0 skipped"; exit 1; }

: >"$T/guard.conf"
strace -f -qq -o /dev/null -e trace=openat -P /run/netns/gone \
	-e inject=openat:delay_enter=1500000 \
	"$SD" guard --all-netns -c "$T/guard.conf" 2>"$T/guard.log" &
SUP=$!
wait_for "$T/guard.log" "started: every network namespace" 100 || fail "guard did not start"
ip netns add gone
sleep 0.5	# the supervisor is in its (delayed) open of /run/netns/gone now
umount /run/netns/gone
wait_for "$T/guard.log" "netns gone: gone before its guard started\|cannot enter\|cannot start" 100 ||
	fail "nothing logged about the namespace gone before its guard started"
sleep 0.3
grep -q "cannot enter\|cannot start\|died" "$T/guard.log" && fail "the normal race logged as an error"
grep -q "netns gone: gone before its guard started" "$T/guard.log" || fail "not logged as gone"
echo "ok: a namespace gone before its guard started: '$(grep 'netns gone' "$T/guard.log" | cut -d' ' -f2-)'"
echo "# checks: 1 passed, 0 failed, 0 skipped"
