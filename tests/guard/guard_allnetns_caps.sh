#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag guard --all-netns without the capabilities it needs stops at once
# with exit status 3 and one line saying which, as `guard` does without
# CAP_NET_ADMIN, instead of starting guards that die and are started again for
# ever:
#  - without CAP_SYS_ADMIN (no namespace can be entered);
#  - without CAP_NET_ADMIN (no socket can be destroyed);
#  - without CAP_NET_ADMIN but with --dry-run it runs (destroys nothing anyway).
# Inside a private mount + pid + network namespace with its own /run/netns, as
# guard_allnetns.sh (a named namespace there gives the supervisor a guard to
# start).
#   usage: guard_allnetns_caps.sh SOCKDIAG
set -euo pipefail

SD=${1:?usage: guard_allnetns_caps.sh SOCKDIAG}
. "$(dirname "$0")/lib.sh" # wait_for
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (namespaces)"; exit 77; }
for t in ip unshare setpriv timeout; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
. "$(dirname "$0")/../private_world.sh"
private_world SOCKDIAG_CAPS_INNER "$0" "$@"

T=$(mktemp -d)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	wait 2>/dev/null || true
	ip netns del capsns 2>/dev/null || true
	umount /run/netns 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
npass=0
fail() {
	echo "FAIL: $*"; echo "--- guard log:"; cat "$T/guard.log"
	echo "# checks: $npass passed, 1 failed, 0 skipped"; exit 1
}
pass() { echo "ok: $*"; npass=$((npass + 1)); }
: >"$T/guard.conf"
ip netns add capsns
LIMIT=$((5 * ${SOCKDIAG_TEST_SLOWDOWN:-1}))

# without CAP: exit status 3 within LIMIT s, one line on stderr matching WANT.
without() {
	local cap=$1 want=$2 rc=0
	timeout -s KILL "$LIMIT" setpriv --inh-caps=-"$cap" --bounding-set=-"$cap" -- \
		"$SD" guard --all-netns -c "$T/guard.conf" >"$T/guard.log" 2>&1 || rc=$?
	[ "$rc" = 3 ] || fail "without $cap: exit status $rc (want 3; 137: still running after ${LIMIT} s)"
	[ "$(wc -l <"$T/guard.log")" = 1 ] && grep -q "$want" "$T/guard.log" ||
		fail "without $cap: not one line naming '$want'"
	pass "without $cap: exit 3, '$(cat "$T/guard.log")'"
}
without sys_admin "CAP_SYS_ADMIN"
without net_admin "CAP_NET_ADMIN"

setpriv --inh-caps=-net_admin --bounding-set=-net_admin -- \
	"$SD" guard --all-netns --dry-run -c "$T/guard.conf" >"$T/guard.log" 2>&1 &
PID=$!
wait_for "$T/guard.log" "started in network namespace capsns" 50 ||
	fail "without net_admin, --dry-run: no guard started in capsns"
kill -0 "$PID" 2>/dev/null || fail "without net_admin, --dry-run: the supervisor exited"
pass "without net_admin, --dry-run: runs, its guard started in capsns"
echo "# checks: $npass passed, 0 failed, 0 skipped"
