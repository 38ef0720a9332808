#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag watch with a FILTER, in a private network namespace: TCP
# connections to ports 7000 and 7001 on loopback are opened and closed, and
#  - the table (`watch -tn 'sport = :7000'`) shows exactly the two sockets
#    whose local port is 7000 (the listener and the accepted socket; not the
#    client whose peer is 7000, nothing of 7001), under a header with a Time
#    column, each row stamped HH:MM:SS.micro within the test's window;
#  - NDJSON with `--count 2 'sport = :7001'` stops by itself after the two
#    events of port 7001, each with an ISO-8601 UTC "time";
#  - the summary "N events, 0 lost" is on stderr; a bad filter exits 2;
#  - -N given twice (as list takes it): the events of both namespaces, each
#    labelled with its own ("netns"), none of ours; -N unit:NAME of no unit is
#    "no such cgroup", not a refusal of the form;
#  - freed UDP sockets' Send-Q is 0 (not 0 - 1 as 4294967295).
#   usage: watch_filter.sh SOCKDIAG
set -euo pipefail

SD=${1:?usage: watch_filter.sh SOCKDIAG}
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP(tool:python3): not installed"; exit 77; }
if [ -z "${SOCKDIAG_IN_NETNS:-}" ]; then
	exec env SOCKDIAG_IN_NETNS=1 unshare -n "$0" "$@"
fi
ip link set lo up
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; for f in "$T"/out* "$T"/err*; do echo "--- $f"; cat "$f"; done; exit 1; }
npass=0
pass() { echo "ok: $*"; npass=$((npass + 1)); }

# For each port: a listener, a client connected to it, the accepted socket;
# then every one of them is closed.
traffic() {
	python3 - "$@" <<'PY'
import socket, sys
ports = [int(p) for p in sys.argv[1:]]
socks = []
for p in ports:
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", p))
    l.listen(8)
    c = socket.create_connection(("127.0.0.1", p))
    a = l.accept()[0]
    socks += [a, c, l]
for s in socks:
    s.close()
PY
}

# wait_lines FILE N: until FILE has N lines (5 s at most).
wait_lines() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

secs() { date +%s.%N; }
# HH:MM:SS.micro (local time) -> seconds since the epoch, today.
stamp_secs() { date -d "$(date +%F) $1" +%s.%N; }

# ---- table, filtered by source port ----------------------------------------------------------
"$SD" watch -tn 'sport = :7000' >"$T/out_table" 2>"$T/err_table" &
W=$!
sleep 0.3
t0=$(secs)
traffic 7000 7001
wait_lines "$T/out_table" 3 || fail "table: fewer than 2 events"
sleep 0.3 # anything else that would (wrongly) match arrives by now
t1=$(secs)
kill -INT "$W"
wait "$W" || fail "table: watch exited $?"
read -r -a head <"$T/out_table"
[ "${head[0]}" = Time ] || fail "table: the first column is not Time: ${head[*]}"
rows=$(tail -n +2 "$T/out_table")
[ "$(wc -l <<<"$rows")" = 2 ] || fail "table: expected 2 events with sport 7000"
grep -q ':7001' <<<"$rows" && fail "table: an event of port 7001 passed the filter"
while read -r time state _ _ local peer; do
	[[ $time =~ ^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}$ ]] || fail "table: bad time '$time'"
	[ "$local" = 127.0.0.1:7000 ] || fail "table: local address $local passed 'sport = :7000'"
	[ "$state" = UNCONN ] || fail "table: final state $state, expected UNCONN (closed)"
	ts=$(stamp_secs "$time")
	awk -v t="$ts" -v a="$t0" -v b="$t1" 'BEGIN { exit !(t >= a - 0.001 && t <= b) }' ||
		fail "table: event time $time outside the test's window"
done <<<"$rows"
# The listener (peer *) and the accepted socket (peer the client's port).
grep -q '0\.0\.0\.0:\*' <<<"$rows" || fail "table: no event for the listener"
grep -Eq '127\.0\.0\.1:[0-9]+ *$' <<<"$rows" || fail "table: no event for the accepted socket"
grep -qx 'sockdiag watch: 2 events, 0 lost' "$T/err_table" ||
	fail "table: summary: $(cat "$T/err_table")"
pass "table: 2 events of sport 7000 (listener, accepted), Time column, summary on stderr"

# ---- NDJSON, --count -------------------------------------------------------------------------
"$SD" watch -tn --ndjson --count 2 'sport = :7001' >"$T/out_json" 2>"$T/err_json" &
W=$!
sleep 0.3
traffic 7000 7001
for ((i = 0; i < 50; i++)); do kill -0 "$W" 2>/dev/null || break; sleep 0.1; done
kill -0 "$W" 2>/dev/null && fail "json: --count 2 did not stop watch"
wait "$W" || fail "json: watch exited $?"
[ "$(wc -l <"$T/out_json")" = 2 ] || fail "json: expected 2 lines"
while read -r line; do
	[[ $line =~ ^\{\"time\":\"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z\" ]] ||
		fail "json: no ISO-8601 time first: $line"
	grep -q '"local":{"addr":"127.0.0.1","port":7001}' <<<"$line" ||
		fail "json: local port is not 7001: $line"
done <"$T/out_json"
grep -qx 'sockdiag watch: 2 events, 0 lost' "$T/err_json" ||
	fail "json: summary: $(cat "$T/err_json")"
pass "ndjson: --count 2 stopped after the 2 events of sport 7001, each with a UTC time"

# ---- UDP: a freed socket's Send-Q is 0 ----------------------------------------------------------
# The kernel reports sk_wmem_alloc - 1 as a UDP socket's Send-Q; in the destroy event of a
# freed socket that is 0 - 1: 4294967295 was printed.
"$SD" watch -un --count 3 'sport = :7003 or sport = :7004' >"$T/out_udp" 2>"$T/err_udp" &
W=$!
sleep 0.3
python3 - <<'PY'
import socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a.bind(("127.0.0.1", 7003))
b = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
b.bind(("::1", 7003))
d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
d.bind(("127.0.0.1", 7003 + 1))
d.connect(("127.0.0.1", 7003))
d.send(b"x" * 100)  # sent (queued at a): nothing left in d's send queue
for s in (a, b, d):
    s.close()
PY
for ((i = 0; i < 50; i++)); do kill -0 "$W" 2>/dev/null || break; sleep 0.1; done
kill -0 "$W" 2>/dev/null && fail "udp: --count 3 did not stop watch"
wait "$W" || fail "udp: watch exited $?"
# Time Recv-Q Send-Q Local Peer
rows=$(tail -n +2 "$T/out_udp")
[ "$(wc -l <<<"$rows")" = 3 ] || fail "udp: expected the 3 events of sport 7003 and 7004"
awk '$3 != 0 { exit 1 }' <<<"$rows" || fail "udp: a freed socket's Send-Q is not 0"
pass "udp: freed sockets' Send-Q 0 (was 4294967295)"

# ---- -N twice: two namespaces of their own (processes in them), ours not watched -------------
for v in A B; do
	unshare -n python3 -c 'import signal, subprocess
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
open("'"$T/up_$v"'", "w").close()
signal.pause()' &
	eval "P$v=\$!"
done
for ((i = 0; i < 100; i++)); do [ -e "$T/up_A" ] && [ -e "$T/up_B" ] && break; sleep 0.1; done
[ -e "$T/up_A" ] && [ -e "$T/up_B" ] || fail "-N twice: the namespaces did not come up"
"$SD" watch -tn --ndjson --count 4 -N "pid:$PA" -N "pid:$PB" 'sport = :7002' \
	>"$T/out_ns" 2>"$T/err_ns" &
W=$!
sleep "$(awk -v s="${SOCKDIAG_TEST_SLOWDOWN:-1}" 'BEGIN { print 0.5 * s }')"
traffic 7002 # ours: not watched
for p in "$PA" "$PB"; do
	nsenter --net="/proc/$p/ns/net" python3 - <<'PY'
import socket
l = socket.socket(); l.bind(("127.0.0.1", 7002)); l.listen(8)
c = socket.create_connection(("127.0.0.1", 7002)); a = l.accept()[0]
for s in (a, c, l):
    s.close()
PY
done
for ((i = 0; i < 50; i++)); do kill -0 "$W" 2>/dev/null || break; sleep 0.1; done
kill -0 "$W" 2>/dev/null && fail "-N twice: --count 4 did not stop watch (events of one namespace only?)"
wait "$W" || fail "-N twice: watch exited $?"
kill "$PA" "$PB"
python3 - "$T/out_ns" <<'PY' ||
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
labels = sorted({r.get("netns") for r in recs})
if len(recs) != 4 or len(labels) != 2 or None in labels:
    sys.exit("FAIL detail: %s" % recs)
for lab in labels:
    if sum(r.get("netns") == lab for r in recs) != 2:
        sys.exit("FAIL detail: not 2 events for %s: %s" % (lab, recs))
PY
	fail "-N twice: $(cat "$T/out_ns")"
pass "-N twice: 2 events in each namespace, labelled with it; ours not watched"
set +e
"$SD" watch -t -N unit:sockdiag-no-such-$$.service >/dev/null 2>"$T/err_unit"
st=$?
set -e
[ "$st" = 2 ] && grep -q "no such cgroup" "$T/err_unit" ||
	fail "-N unit:NAME: exit $st: $(cat "$T/err_unit")"
pass "-N unit:NAME of no unit: exit 2, no such cgroup"

# ---- a bad filter ----------------------------------------------------------------------------
set +e
"$SD" watch -t 'sport = :' >/dev/null 2>"$T/err_bad"
st=$?
set -e
[ "$st" = 2 ] || fail "bad filter: exit $st, expected 2"
pass "bad filter: exit 2"

echo "watch_filter: $npass passed, 0 failed"
echo "# checks: $npass passed, 0 failed, 0 skipped"
