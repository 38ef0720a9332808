#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag exporter --all-netns and the bounded groupings, with --once, inside
# private mount, pid and network namespaces with their own /run/netns (the
# host's namespaces are never looked at). Two named namespaces X and Y hold
# listeners made by processes named popx (1 listener) and popy (2 listeners).
# Checks:
#  - --all-netns: the netns label of each namespace, its counts;
#  - group-by-comm: sockets by process name; with max-series = 1 the other
#    combinations are counted in sockdiag_dropped_sockets_total{grouping=
#    "comm"} and nothing is lost (grouped + dropped = sockets seen);
#  - group-by-cgroup: the inet sockets under this test's cgroup v2 path;
#  - -N X: only X, labelled X;
#  - a reload changing listen logs once that it needs a restart;
#  - life = yes with --all-netns: connection ends per namespace, one made
#    after the start (Z) followed, and let go when deleted.
#   usage: exporter_netns.sh SOCKDIAG
set -euo pipefail

SD=${1:?usage: exporter_netns.sh SOCKDIAG}
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
for t in unshare ip python3; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
. "$(dirname "$0")/../private_world.sh"
private_world SD_EXPNS_INNER "$0" "$@"

T=$(mktemp -d)
NPASS=0
cleanup() {
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	sleep 0.1
	ip netns del X 2>/dev/null || true
	ip netns del Y 2>/dev/null || true
	ip netns del Z 2>/dev/null || true
	[ -n "$CG" ] && rmdir "$CGROOT$CG" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "# checks: $NPASS passed, 1 failed, 0 skipped"; exit 1; }
pass() { echo "ok: $*"; NPASS=$((NPASS + 1)); }

ip netns add X
ip netns add Y
# Y's process makes its sockets in a cgroup of this test's own, if there is a
# cgroup v2 hierarchy: a socket belongs to its creator's cgroup.
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=
NAME=sdexp$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
if [ -n "$CGROOT" ] && mkdir "$CGROOT/$NAME" 2>/dev/null; then
	CG=/$NAME
fi
pop() { # NETNS COMM PORT...
	local ns=$1 comm=$2
	shift 2
	# (ip netns exec remounts /sys: the cgroup is joined before it.)
	(
	[ -n "${CGPROCS:-}" ] && echo $BASHPID >"$CGPROCS"
	exec ip netns exec "$ns" python3 -c '
import socket, sys, time
open("/proc/self/comm", "w").write(sys.argv[1])
keep = []
for p in sys.argv[3:]:
    s = socket.socket(); s.bind(("127.0.0.1", int(p))); s.listen(4); keep.append(s)
open(sys.argv[2], "w").close()
time.sleep(120)' "$comm" "$T/ready-$comm" "$@"
	) &
	for _ in $(seq 100); do [ -e "$T/ready-$comm" ] && return 0; sleep 0.1; done
	fail "population $comm did not start"
}
pop X popx 1111
CGPROCS=${CG:+$CGROOT$CG/cgroup.procs} pop Y popy 2222 3333

# expect FILE SAMPLE VALUE
expect() {
	local got
	got=$(awk -v s="$2" '$1 == s { print $2 }' "$1")
	[ "$got" = "$3" ] || fail "$2 = '$got', expected $3"
}
sum() { # FILE METRIC-PREFIX: the sum of the samples whose name+labels start so
	awk -v p="$2" 'index($1, p) == 1 { s += $2 } END { print s + 0 }' "$1"
}

"$SD" exporter --all-netns --once >"$T/all" || fail "--all-netns: exit $?"
expect "$T/all" 'sockdiag_sockets{netns="X",family="inet",proto="tcp",state="listen"}' 1
expect "$T/all" 'sockdiag_sockets{netns="Y",family="inet",proto="tcp",state="listen"}' 2
expect "$T/all" 'sockdiag_accept_queue_limit{netns="Y",proto="tcp",address="127.0.0.1",port="3333"}' 4
grep -q 'netns="X".*port="2222"' "$T/all" && fail "Y's listener labelled X"
pass "--all-netns: each namespace under its label"

"$SD" exporter -N X --once >"$T/x" || fail "-N X: exit $?"
expect "$T/x" 'sockdiag_sockets{netns="X",family="inet",proto="tcp",state="listen"}' 1
grep -q 'netns="Y"' "$T/x" && fail "-N X reports Y"
pass "-N X: X alone, labelled X"

printf 'group-by-comm = yes\ntables = tcp\n' >"$T/comm.conf"
"$SD" exporter --all-netns -c "$T/comm.conf" --once >"$T/comm" || fail "group-by-comm: exit $?"
expect "$T/comm" 'sockdiag_comm_sockets{netns="X",comm="popx",state="listen"}' 1
expect "$T/comm" 'sockdiag_comm_sockets{netns="Y",comm="popy",state="listen"}' 2
expect "$T/comm" 'sockdiag_dropped_sockets_total{grouping="comm"}' 0
pass "group-by-comm: sockets by process name"

printf 'group-by-comm = yes\ntables = tcp\nmax-series = 1\n' >"$T/cap.conf"
"$SD" exporter --all-netns -c "$T/cap.conf" --once >"$T/cap" || fail "max-series: exit $?"
n=$(grep -c '^sockdiag_comm_sockets{' "$T/cap")
[ "$n" = 1 ] || fail "max-series = 1: $n series"
grouped=$(sum "$T/cap" 'sockdiag_comm_sockets{')
dropped=$(sum "$T/cap" 'sockdiag_dropped_sockets_total{grouping="comm"}')
seen=$(sum "$T/cap" 'sockdiag_scrape_sockets')
[ "$dropped" -ge 1 ] && [ $((grouped + dropped)) = "$seen" ] ||
	fail "max-series = 1: grouped $grouped + dropped $dropped != seen $seen"
pass "max-series = 1: one series, $dropped dropped, grouped + dropped = seen ($seen)"

# A reload that changes listen: the server keeps its socket, and says so once;
# the file back at the address served says nothing more.
printf 'listen = 127.0.0.1:19111\n' >"$T/listen.conf"
"$SD" exporter -c "$T/listen.conf" 2>"$T/listen.log" &
EXP=$!
wait_log() { # PATTERN COUNT
	for ((i = 0; i < 50 * ${SOCKDIAG_TEST_SLOWDOWN:-1}; i++)); do
		[ "$(grep -c -- "$1" "$T/listen.log")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "exporter log: no $2 x '$1': $(cat "$T/listen.log")"
}
wait_log "listening on 127.0.0.1:19111" 1
printf 'listen = 127.0.0.1:19112\n' >"$T/listen.conf"
kill -HUP $EXP
wait_log "reloaded" 1
grep -q "listen = 127.0.0.1:19112 needs a restart; still serving 127.0.0.1:19111" "$T/listen.log" ||
	fail "reload changing listen: $(cat "$T/listen.log")"
printf 'listen = 127.0.0.1:19111\ntables = tcp\n' >"$T/listen.conf"
kill -HUP $EXP
wait_log "reloaded" 2
[ "$(grep -c "needs a restart" "$T/listen.log")" = 1 ] ||
	fail "listen back to the address served: $(cat "$T/listen.log")"
python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:19111/metrics", timeout=10).read()' ||
	fail "no scrape answered at 127.0.0.1:19111 after the reloads"
# The probes of deploy/kubernetes/sockdiag.yaml: 200 and a word.
for probe in healthz:ok readyz:ready; do
	got=$(python3 -c 'import sys, urllib.request
r = urllib.request.urlopen("http://127.0.0.1:19111/" + sys.argv[1], timeout=10)
print(r.status, r.read().decode().strip())' "${probe%%:*}") || got="error $?"
	[ "$got" = "200 ${probe#*:}" ] || fail "/${probe%%:*}: '$got', want '200 ${probe#*:}'"
done
kill $EXP
wait $EXP || fail "exporter: exit $? on SIGTERM"
pass "reload changing listen: logged as needing a restart, once; still serving the old address"

# life = yes with --all-netns: the ends of X (there at the start) and of Z (made later),
# each under its namespace's label, once Z is followed.
printf 'life = yes\ntables = tcp\n' >"$T/life.conf"
"$SD" exporter --all-netns -c "$T/life.conf" --listen 127.0.0.1:19113 2>"$T/life.log" &
LEXP=$!
scrape_life() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		http://127.0.0.1:19113/metrics >"$T/life" 2>/dev/null
}
wait_value() { # SAMPLE VALUE
	for ((i = 0; i < 100 * ${SOCKDIAG_TEST_SLOWDOWN:-1}; i++)); do
		scrape_life && [ "$(awk -v s="$1" '$1 == s { print $2 }' "$T/life")" = "$2" ] && return 0
		sleep 0.1
	done
	fail "life --all-netns: $1 never $2: $(grep "^${1%%\{*}" "$T/life"; cat "$T/life.log")"
}
# The namespaces of this private world: its own, X and Y.
wait_value sockdiag_connection_end_namespaces 3
ip netns add Z
ip -n Z link set lo up
wait_value sockdiag_connection_end_namespaces 4
ends() { # NETNS PORT: one connection, 10 bytes each way, both sides closed
	ip -n "$1" link set lo up
	ip netns exec "$1" python3 -c '
import socket, sys
l = socket.socket(); l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); a = l.accept()[0]
c.sendall(b"x" * 10); a.recv(10); a.sendall(b"y" * 10); c.recv(10)
c.close(); a.recv(10); a.close()' "$2"
}
ends X 4441
ends Z 4442
wait_value 'sockdiag_connection_ends_total{netns="X",proto="tcp",outcome="ok",port="4441"}' 2
wait_value 'sockdiag_connection_ends_total{netns="Z",proto="tcp",outcome="ok",port="4442"}' 2
expect "$T/life" 'sockdiag_connection_end_sent_bytes_total{netns="Z",proto="tcp",outcome="ok",port="4442"}' 20
grep -q 'netns="X".*port="4442"' "$T/life" && fail "Z's ends labelled X"
ip netns del Z
wait_value sockdiag_connection_end_namespaces 3
kill $LEXP
wait $LEXP || fail "exporter (life, --all-netns): exit $? on SIGTERM"
pass "life = yes, --all-netns: the ends of X and of Z (made later) under their labels; Z let go"

if [ -n "$CG" ]; then
	printf 'group-by-cgroup = yes\ntables = tcp\n' >"$T/cg.conf"
	"$SD" exporter --all-netns -c "$T/cg.conf" --once >"$T/cg" || fail "group-by-cgroup: exit $?"
	expect "$T/cg" "sockdiag_cgroup_sockets{netns=\"Y\",cgroup=\"$CG\",state=\"listen\"}" 2
	grep -q "netns=\"X\",cgroup=\"$CG\"" "$T/cg" && fail "X's listener in Y's cgroup"
	pass "group-by-cgroup: Y's listeners under $CG"
else
	echo "SKIP(cgroup2): no cgroup v2 hierarchy to make a cgroup in"
	echo "# checks: $NPASS passed, 0 failed, 1 skipped"
	exit 0
fi
echo "# checks: $NPASS passed, 0 failed, 0 skipped"
