#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag list --interval DURATION [--count N], in a private network
# namespace with a known TCP pair and a listener:
#  - NDJSON: N snapshots, every record stamped with its snapshot's time (one
#    time per snapshot, the i-th at least i intervals after the first), each snapshot the
#    whole population;
#  - the filter, -i (tcp_info) and -m (skmem) apply to every snapshot;
#  - --json: one complete array per snapshot; a table: one header each, a
#    Time column;
#  - --count-by: each snapshot's groups stamped too (JSON/NDJSON "time", TIME);
#  - SIGTERM between snapshots: exit 0 and complete output;
#  - --count without --interval, bad durations: exit 2 with one line.
#   usage: list_interval.sh SOCKDIAG
set -euo pipefail

SD=${1:?usage: list_interval.sh SOCKDIAG}
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
for t in python3 unshare; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
if [ -z "${SDIAG_LIST_INNER:-}" ]; then
	exec env SDIAG_LIST_INNER=1 unshare -n "$0" "$@"
fi
ip link set lo up

T=$(mktemp -d)
POP=
NPASS=0
cleanup() {
	[ -n "$POP" ] && kill "$POP" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "# checks: $NPASS passed, 1 failed, 0 skipped"; exit 1; }
pass() { echo "ok: $*"; NPASS=$((NPASS + 1)); }

python3 -c '
import socket, sys, time
l = socket.socket(); l.bind(("127.0.0.1", 7777)); l.listen(8)
c = socket.create_connection(("127.0.0.1", 7777)); a = l.accept()[0]
c.sendall(b"x" * 1000); a.recv(1000)
open(sys.argv[1], "w").close(); time.sleep(120)' "$T/ready" &
POP=$!
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.1; done
[ -e "$T/ready" ] || fail "population did not start"

# ---- NDJSON snapshots -------------------------------------------------------------------
"$SD" list -tan -i -m --interval 300ms --count 3 --ndjson >"$T/nd" || fail "exit $?"
python3 - "$T/nd" <<'PY' || fail "NDJSON snapshots: see above"
import datetime, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
times = sorted({r["time"] for r in recs})
if len(times) != 3:
    sys.exit("FAIL detail: %d distinct snapshot times, want 3: %s" % (len(times), times))
ts = [datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ") for t in times]
# The schedule counts from the first stamp: snapshot i is due i x 300 ms after it. A late
# snapshot (a slow machine: QEMU without KVM) does not push the next ones back, so two
# neighbours may be less than 300 ms apart; each is never early.
after = [(t - ts[0]).total_seconds() for t in ts]
if any(a < 0.3 * i - 0.01 for i, a in enumerate(after)):
    sys.exit("FAIL detail: snapshots %s s after the first, want >= 0.3 s x i" % after)
for t in times:
    snap = [r for r in recs if r["time"] == t]
    states = sorted(r["state"] for r in snap)
    if states != ["ESTAB", "ESTAB", "LISTEN"]:
        sys.exit("FAIL detail: snapshot %s: %s" % (t, states))
    if not all("tcp_info" in r and "skmem" in r for r in snap if r["state"] == "ESTAB"):
        sys.exit("FAIL detail: -i/-m missing in snapshot %s" % t)
PY
pass "NDJSON: 3 snapshots, the i-th >= i x 300 ms after the first, each the whole population, -i and -m in each"

"$SD" list -tn --interval 200ms --count 2 --ndjson 'sport = :7777' >"$T/f" || fail "exit $?"
[ "$(wc -l <"$T/f")" = 2 ] || fail "filter: $(cat "$T/f")"
grep -q '"port":7777' "$T/f" || fail "filter: $(cat "$T/f")"
pass "a filter applies to every snapshot"

# ---- JSON arrays and tables -------------------------------------------------------------------
"$SD" list -tn --interval 200ms --count 2 --json >"$T/j" || fail "exit $?"
python3 - "$T/j" <<'PY' || fail "JSON snapshots"
import json, sys
text, dec, arrays, i = open(sys.argv[1]).read(), json.JSONDecoder(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    v, i = dec.raw_decode(text, i)
    arrays.append(v)
if len(arrays) != 2 or not all(isinstance(a, list) and len(a) == 2 for a in arrays):
    sys.exit("FAIL detail: %s" % arrays)
if len({r["time"] for a in arrays for r in a}) != 2:
    sys.exit("FAIL detail: times")
PY
"$SD" list -tn --interval 200ms --count 2 >"$T/t" || fail "exit $?"
[ "$(grep -c '^Time ' "$T/t")" = 2 ] || fail "table: $(cat "$T/t")"
pass "--json: one array per snapshot; tables: one header each, a Time column"

# ---- --count-by: each snapshot's groups stamped like records -----------------------------------
"$SD" list -tan --count-by state --interval 300ms --count 2 --ndjson >"$T/cn" || fail "exit $?"
python3 - "$T/cn" <<'PY' || fail "--count-by NDJSON snapshots: see above"
import datetime, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
if any(list(r)[0] != "time" for r in recs):
    sys.exit("FAIL detail: a group without \"time\" first: %s" % recs)
times = sorted({r["time"] for r in recs})
if len(times) != 2:
    sys.exit("FAIL detail: %d distinct snapshot times, want 2: %s" % (len(times), recs))
ts = [datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ") for t in times]
if (ts[1] - ts[0]).total_seconds() < 0.29:
    sys.exit("FAIL detail: snapshots %s apart" % times)
for t in times:
    got = sorted((r["state"], r["count"]) for r in recs if r["time"] == t)
    if got != [("ESTAB", 2), ("LISTEN", 1)]:
        sys.exit("FAIL detail: snapshot %s: %s" % (t, got))
PY
"$SD" list -tan --count-by state --interval 200ms --count 2 --json >"$T/cj" || fail "exit $?"
python3 - "$T/cj" <<'PY' || fail "--count-by JSON snapshots"
import json, sys
text, dec, arrays, i = open(sys.argv[1]).read(), json.JSONDecoder(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    v, i = dec.raw_decode(text, i)
    arrays.append(v)
if len(arrays) != 2 or any(len({g.get("time") for g in a}) != 1 or None in {g.get("time") for g in a}
                           for a in arrays):
    sys.exit("FAIL detail: %s" % arrays)
PY
"$SD" list -tan --count-by state --interval 200ms --count 2 >"$T/ct" || fail "exit $?"
python3 - "$T/ct" <<'PY' || fail "--count-by table: $(cat "$T/ct")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
heads = [l.split() for l in lines if l.startswith("TIME")]
rows = [l.split() for l in lines if not l.startswith("TIME")]
if heads != [["TIME", "STATE", "COUNT"]] * 2 or len(rows) != 4:
    sys.exit("FAIL detail")
if not all(re.fullmatch(r"\d\d:\d\d:\d\d\.\d{6}", r[0]) for r in rows):
    sys.exit("FAIL detail: times")
PY
"$SD" list -tan --count-by state --ndjson >"$T/c1" || fail "exit $?"
grep -q '"time"' "$T/c1" && fail "--count-by without --interval: a time: $(cat "$T/c1")"
pass "--count-by with --interval: a time first in NDJSON/JSON groups, a TIME column per table"

# ---- SIGTERM -----------------------------------------------------------------------------------
# (SIGTERM: a background job of a script starts with SIGINT ignored.) Sent
# once the first snapshot is out, so the signals are blocked by then.
"$SD" list -tn --interval 200ms --json >"$T/int" &
L=$!
for _ in $(seq 200); do grep -q '^\]' "$T/int" 2>/dev/null && break; sleep 0.1; done
kill -TERM $L
wait $L || fail "SIGTERM: exit $?"
python3 -c 'import json, sys
t = open(sys.argv[1]).read().strip()
assert t.startswith("[") and t.endswith("]"), t[-50:]' "$T/int" || fail "SIGTERM: incomplete JSON"
pass "SIGTERM between snapshots: exit 0, output complete"
# Snapshots longer than the interval (1 ms): SIGTERM still stops it.
"$SD" list -tn --interval 1ms --json >"$T/late" &
L=$!
for _ in $(seq 200); do grep -q '^\]' "$T/late" 2>/dev/null && break; sleep 0.1; done
kill -TERM $L
for _ in $(seq 100); do kill -0 $L 2>/dev/null || break; sleep 0.1; done
if kill -0 $L 2>/dev/null; then
	kill -KILL $L
	fail "SIGTERM with snapshots late: still running after 10 s"
fi
wait $L || fail "SIGTERM with snapshots late: exit $?"
pass "SIGTERM while snapshots run late: exit 0"

# ---- errors ------------------------------------------------------------------------------------
for args in "--count 2" "--interval 0" "--interval 5x" "--interval 1s --count 0" "--interval -1"; do
	set +e
	"$SD" list $args 2>"$T/err" >/dev/null
	st=$?
	set -e
	[ "$st" = 2 ] || fail "list $args: exit $st, want 2"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "list $args: $(cat "$T/err")"
done
pass "bad --interval/--count: exit 2, one line"
echo "# checks: $NPASS passed, 0 failed, 0 skipped"
