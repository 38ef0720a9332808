#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The exporter's configuration keys in effect, and its counts against ss(8),
# with --once (and one served scrape) inside private mount, pid and network
# namespaces with their own /run/netns. Namespace X holds a population made
# by a process named popx: two TCP listeners (backlogs 3 and 5), a UDP socket,
# a unix stream listener, and TIME-WAIT sockets (IPv4 and IPv6) made by
# closing connections client first. Checks:
#  - TIME-WAIT and every other TCP state per family equal ss's counts (and
#    what the test made);
#  - tcp-info = no: no sockdiag_tcp_* series (the default has them);
#  - tables = udp: no TCP series, the UDP socket counted;
#  - listeners = no: no accept-queue series; max-listeners = 1: one series
#    each, the other listener counted as dropped;
#  - group-by-comm: popx's unix listener is in its comm group (not only inet);
#  - cgroup-root: cgroup paths are named from that directory;
#  - --once --openmetrics: valid OpenMetrics (the Prometheus client library's
#    strict parser), the same values as the text format;
#  - listen = ADDR:PORT: /metrics served there (and not on the default).
#   usage: exporter_config.sh SOCKDIAG
set -euo pipefail

SD=${1:?usage: exporter_config.sh SOCKDIAG}
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
for t in unshare ip ss python3; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
. "$(dirname "$0")/../private_world.sh"
private_world SD_EXPCONF_INNER "$0" "$@"

T=$(mktemp -d)
NPASS=0
CG=
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cleanup() {
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	ip netns del X 2>/dev/null || true
	if [ -n "$CG" ]; then
		rmdir "$CGROOT$CG/sub" 2>/dev/null || true
		rmdir "$CGROOT$CG" 2>/dev/null || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "# checks: $NPASS passed, 1 failed, 0 skipped"; exit 1; }
pass() { echo "ok: $*"; NPASS=$((NPASS + 1)); }

# A cgroup of this run's own (unique name), the population inside sub/.
NAME=sdexpc$$$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
if [ -n "$CGROOT" ] && mkdir "$CGROOT/$NAME" 2>/dev/null && mkdir "$CGROOT/$NAME/sub"; then
	CG=/$NAME
fi

ip netns add X
ip -n X link set lo up
(
[ -n "$CG" ] && echo $BASHPID >"$CGROOT$CG/sub/cgroup.procs"
exec ip netns exec X python3 -c '
import socket, sys, time
open("/proc/self/comm", "w").write("popx")
keep = []
for port, backlog in ((4001, 3), (4002, 5)):
    s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(backlog); keep.append(s)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 4003)); keep.append(u)
x = socket.socket(socket.AF_UNIX); x.bind(sys.argv[1] + "/popx.sock"); x.listen(2); keep.append(x)
# TIME-WAIT: the client closes first (4 IPv4, 3 IPv6); the server closes on EOF.
for fam, addr, port, n in ((socket.AF_INET, "127.0.0.1", 4004, 4), (socket.AF_INET6, "::1", 4005, 3)):
    l = socket.socket(fam); l.bind((addr, port)); l.listen(8)
    for _ in range(n):
        c = socket.create_connection((addr, port)); a, _ = l.accept()
        c.close(); a.recv(1); a.close()
    l.close()
# Still before "ready": all 7 client ends in the timewait table (as the kernel
# counts them, per namespace), where they stay 60 s; the server ends then closed.
def tw():
    for line in open("/proc/net/sockstat"):
        if line.startswith("TCP:"):
            w = line.split()
            return int(w[w.index("tw") + 1])
for _ in range(1000):
    if tw() == 7:
        break
    time.sleep(0.01)
open(sys.argv[1] + "/ready", "w").close()
time.sleep(120)' "$T"
) &
for _ in $(seq $((200 * ${SOCKDIAG_TEST_SLOWDOWN:-1}))); do [ -e "$T/ready" ] && break; sleep 0.1; done
[ -e "$T/ready" ] || fail "population did not start"

value() { # FILE SAMPLE: its value, empty if absent
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}
expect() { # FILE SAMPLE VALUE
	local got
	got=$(value "$1" "$2")
	[ "$got" = "$3" ] || fail "$2 = '$got', expected $3"
}
once() { # NAME [CONFIG-TEXT]: the exposition of one pass over X in $T/NAME
	printf '%b' "${2:-}" >"$T/$1.conf"
	"$SD" exporter -N X -c "$T/$1.conf" --once >"$T/$1" 2>"$T/$1.err" ||
		fail "$1: exit $?: $(cat "$T/$1.err")"
}
S='sockdiag_sockets{netns="X",family='

# ---- TCP states against ss ---------------------------------------------------------------
once default
# ss's counts per family and state (ss -H: no header), the exporter's names.
declare -A ssn
while read -r st; do
	ssn[$st]=$((${ssn[$st]:-0} + 1))
done < <(for f in 4 6; do
	ip netns exec X ss -Htan -$f | awk -v f=$f '{ print f "/" $1 }'
done)
tw4=${ssn[4/TIME-WAIT]:-0} tw6=${ssn[6/TIME-WAIT]:-0}
[ "$tw4" = 4 ] && [ "$tw6" = 3 ] || fail "ss sees $tw4 + $tw6 TIME-WAIT sockets, the test made 4 + 3"
n=0
for k in 4/ESTAB:established 4/LISTEN:listen 4/TIME-WAIT:time_wait 6/TIME-WAIT:time_wait \
	6/LISTEN:listen 4/CLOSE-WAIT:close_wait 4/LAST-ACK:last_ack; do
	ss_key=${k%%:*} state=${k#*:}
	fam=inet
	[ "${ss_key%%/*}" = 6 ] && fam=inet6
	expect "$T/default" "$S\"$fam\",proto=\"tcp\",state=\"$state\"}" "${ssn[$ss_key]:-0}"
	n=$((n + 1))
done
pass "TCP per family and state = ss's counts ($n series; TIME-WAIT $tw4 IPv4, $tw6 IPv6)"

# ---- tcp-info ------------------------------------------------------------------------------
grep -q '^sockdiag_tcp_info_sockets{' "$T/default" || fail "default: no tcp_info series"
once notcpinfo 'tcp-info = no\n'
grep '^sockdiag_tcp_' "$T/notcpinfo" && fail "tcp-info = no: tcp_info series above"
expect "$T/notcpinfo" "$S\"inet\",proto=\"tcp\",state=\"listen\"}" 2
pass "tcp-info = no: no sockdiag_tcp_* series (the default has them); sockets still counted"

# ---- tables -------------------------------------------------------------------------------
once udp 'tables = udp\n'
grep 'proto="tcp"' "$T/udp" && fail "tables = udp: TCP series above"
grep '^sockdiag_tcp_' "$T/udp" && fail "tables = udp: tcp_info series above"
expect "$T/udp" "$S\"inet\",proto=\"udp\",state=\"close\"}" 1
pass "tables = udp: the UDP socket, no TCP series"

# ---- listeners, max-listeners --------------------------------------------------------------
L='sockdiag_accept_queue_limit{netns="X",proto="tcp",address="127.0.0.1",port='
expect "$T/default" "$L\"4001\"}" 3
expect "$T/default" "$L\"4002\"}" 5
once nolisteners 'listeners = no\n'
grep '^sockdiag_accept_queue' "$T/nolisteners" && fail "listeners = no: accept queue series above"
pass "listeners = no: no accept queue series (the default has both listeners')"
once onelistener 'max-listeners = 1\n'
for m in length limit; do
	n=$(grep -c "^sockdiag_accept_queue_$m{" "$T/onelistener" || true)
	[ "$n" = 1 ] || fail "max-listeners = 1: $n accept_queue_$m series"
done
expect "$T/onelistener" 'sockdiag_dropped_sockets_total{grouping="listener"}' 1
expect "$T/default" 'sockdiag_dropped_sockets_total{grouping="listener"}' 0
pass "max-listeners = 1: one series each, the other listener dropped"

# ---- group-by-comm: every family -------------------------------------------------------------
once comm 'group-by-comm = yes\ntables = unix\n'
nx=$(ip netns exec X ss -Hxl | grep -c popx.sock || true)
[ "$nx" = 1 ] || fail "ss sees $nx unix listeners, the test made 1"
expect "$T/comm" 'sockdiag_comm_sockets{netns="X",comm="popx",state="listen"}' "$nx"
pass "group-by-comm, tables = unix: popx's unix listener in its group"

# ---- cgroup-root ------------------------------------------------------------------------------
if [ -n "$CG" ]; then
	once cg 'group-by-cgroup = yes\ntables = tcp\n'
	expect "$T/cg" "sockdiag_cgroup_sockets{netns=\"X\",cgroup=\"$CG/sub\",state=\"listen\"}" 2
	once cgroot "group-by-cgroup = yes\ntables = tcp\ncgroup-root = $CGROOT$CG\n"
	expect "$T/cgroot" 'sockdiag_cgroup_sockets{netns="X",cgroup="/sub",state="listen"}' 2
	grep -q "cgroup=\"$CG/sub\"" "$T/cgroot" && fail "cgroup-root: the full path is still used"
	pass "cgroup-root = $CGROOT$CG: the listeners' cgroup named /sub (else $CG/sub)"
	CGSKIP=0
else
	echo "SKIP(cgroup2): no cgroup v2 hierarchy to make a cgroup in"
	CGSKIP=1
fi

# ---- --once --openmetrics ------------------------------------------------------------------
# Parsed by the Prometheus client library's strict OpenMetrics parser (Debian's
# python3-prometheus-client, under Debian's python3): every family, its type,
# "# EOF"; the socket and listener samples equal the text exposition's.
"$SD" exporter -N X --once --openmetrics >"$T/om" 2>"$T/om.err" ||
	fail "--once --openmetrics: exit $?: $(cat "$T/om.err")"
/usr/bin/python3 - "$T/om" "$T/default" <<'PY' || fail "--once --openmetrics: not valid OpenMetrics"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
om = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(om)}
text = {}
for line in open(sys.argv[2]):
    if not line.startswith("#"):
        k, v = line.rsplit(" ", 1)
        text[k] = float(v)
def key(s):
    return s.name + "{" + ",".join('%s="%s"' % kv for kv in s.labels.items()) + "}"
want = {"sockdiag_sockets": "gauge", "sockdiag_accept_queue_limit": "gauge",
        "sockdiag_tcp_rtt_seconds": "gaugehistogram", "sockdiag_dropped_sockets": "counter",
        "sockdiag_scrape_passes": "counter"}
for name, typ in want.items():
    if name not in fams or fams[name].type != typ:
        sys.exit("family %s: %s, expected type %s" % (name, fams.get(name) and fams[name].type, typ))
n = 0
for name in ("sockdiag_sockets", "sockdiag_accept_queue_limit", "sockdiag_accept_queue_length"):
    for s in fams[name].samples:
        if text.get(key(s)) != s.value:
            sys.exit("%s = %s in OpenMetrics, %s in the text format" % (key(s), s.value, text.get(key(s))))
        n += 1
if n != sum(1 for k in text if k.startswith(("sockdiag_sockets{", "sockdiag_accept_queue_"))):
    sys.exit("%d samples in OpenMetrics, another number in the text format" % n)
g = {s.name for s in fams["sockdiag_tcp_rtt_seconds"].samples}
if not {"sockdiag_tcp_rtt_seconds_gcount", "sockdiag_tcp_rtt_seconds_gsum"} <= g:
    sys.exit("RTT gaugehistogram samples: %s" % sorted(g))
print("%d families, %d socket and listener samples equal the text format's" % (len(fams), n))
PY
pass "--once --openmetrics: valid OpenMetrics (strict parser), values as in the text format"

# ---- listen ------------------------------------------------------------------------------------
PORT=$((20000 + RANDOM % 20000))
printf 'listen = 127.0.0.1:%d\n' $PORT >"$T/listen.conf"
"$SD" exporter -N X -c "$T/listen.conf" 2>"$T/listen.err" &
scrape() { # PORT: the body of /metrics, or nothing
	python3 -c '
import sys, urllib.request
try:
    print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode(), end="")
except OSError:
    pass' "$1"
}
for _ in $(seq $((50 * ${SOCKDIAG_TEST_SLOWDOWN:-1}))); do
	scrape $PORT >"$T/served"
	[ -s "$T/served" ] && break
	sleep 0.1
done
[ -s "$T/served" ] || fail "listen = 127.0.0.1:$PORT: nothing served there: $(cat "$T/listen.err")"
expect "$T/served" "$S\"inet\",proto=\"tcp\",state=\"listen\"}" 2
grep -q "listening on 127.0.0.1:$PORT" "$T/listen.err" || fail "listen: $(cat "$T/listen.err")"
[ -z "$(scrape 10113)" ] || fail "listen = 127.0.0.1:$PORT: the default port answers too"
pass "listen = 127.0.0.1:$PORT: /metrics served there, not on the default port"

echo "# checks: $NPASS passed, 0 failed, $CGSKIP skipped"
