#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag -p, the process filters, -N and --all-netns end to end.
#   usage: procs_cli.sh SOCKDIAG NETPEER
#
# Everything runs in private namespaces made here: the script re-executes
# itself under `unshare -p -f -m -n --mount-proc` (its own pid namespace,
# /proc, mount namespace and network namespace) and mounts a tmpfs on
# /run/netns, so `ip netns add` names, process scans and --all-netns see only
# what this test creates, and nothing can touch the host's sockets.
# Checks:
#  - -p: owners of a listener shared by two processes under two descriptors
#    each, the same set and format as ss -p; JSON "processes";
#  - pid/comm/user filters select by owner without -p (the scan is implied);
#  - --owners=bpf and --owners=proc list the same owners, -v says which ran,
#    auto without CAP_BPF falls back to /proc (bpf then exits 1); a bad
#    --owners value exits 2;
#  - -N NAME, -N PATH, -N pid:PID; a bad -N names the namespace and the reason;
#  - --all-netns lists the sockets of three named namespaces and of an
#    unnamed one, each labelled (table column; JSON netns and netns_inode);
#  - kill --all-netns destroys only the matching sockets, in every namespace,
#    with one summary line per namespace;
#  - a namespace that cannot be entered (from a user namespace) is reported
#    by name with the reason and the others are still listed.
set -euo pipefail

SD=${1:?usage: procs_cli.sh SOCKDIAG NETPEER}
NP=${2:?usage: procs_cli.sh SOCKDIAG NETPEER}
SD=$(realpath "$SD")
NP=$(realpath "$NP")
here=$(cd "$(dirname "$0")" && pwd)

if [[ ${3:-} != --inner ]]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (namespaces)"; exit 77; }
	for c in ip unshare ss python3; do
		command -v "$c" >/dev/null || { echo "SKIP(tool:$c): not installed"; exit 77; }
	done
	exec unshare -p -f -m -n --mount-proc -- "$0" "$SD" "$NP" --inner
fi

# ---- inside: pid 1 of a private pid namespace, private mounts and network ----
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for n in a b c; do ip netns del "sdiag-test-$n" 2>/dev/null || true; done
	umount /run/netns 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
npass=0
pass() { echo "ok: $*"; npass=$((npass + 1)); }

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (5 s).
wait_for() {
	local i
	for ((i = 0; i < 50; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "timeout waiting for '$2' in $1: $(cat "$1" 2>/dev/null)"
}

# bg NAME CMD...: start CMD in the background, output in $T/NAME.
bg() {
	local name=$1
	shift
	"$@" >"$T/$name" 2>&1 &
	PIDS+=($!)
}

mkdir -p /run/netns
mount -t tmpfs sdiag-test /run/netns
mount --make-private /run/netns
ip link set lo up

# ---- -p: a listener shared by two processes, two descriptors each -----------
python3 - >"$T/shared" 2>&1 <<'EOF' &
import os, socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 5100))
s.listen()
d = os.dup(s.fileno())
pid = os.fork()
if pid == 0:
    time.sleep(600)
    os._exit(0)
print("ready", os.getpid(), pid, s.fileno(), d, flush=True)
time.sleep(600)
EOF
PIDS+=($!)
wait_for "$T/shared" '^ready'
read -r _ PPY CPY FD1 FD2 <"$T/shared"
PIDS+=("$CPY")

"$SD" list -tlnp 'sport = :5100' >"$T/p.txt"
users=$(grep -o 'users:(.*' "$T/p.txt") || fail "-p: no users column: $(cat "$T/p.txt")"
ss_users=$(ss -tlnpH 'sport = :5100' | grep -o 'users:(.*' | sed 's/ *$//')
# The same owners as ss, in ss's order (by pid, then fd, the highest first).
[[ $users == "$(sed 's/ *$//' <<<"$ss_users")" ]] ||
	fail "-p: '$users' differs from ss's '$ss_users'"
comm=$(cat "/proc/$PPY/comm")
want="users:((\"$comm\",pid=$CPY,fd=$FD2),(\"$comm\",pid=$CPY,fd=$FD1),(\"$comm\",pid=$PPY,fd=$FD2),(\"$comm\",pid=$PPY,fd=$FD1))"
[[ $PPY -gt $CPY ]] &&
	want="users:((\"$comm\",pid=$PPY,fd=$FD2),(\"$comm\",pid=$PPY,fd=$FD1),(\"$comm\",pid=$CPY,fd=$FD2),(\"$comm\",pid=$CPY,fd=$FD1))"
[[ $users == "$want" ]] || fail "-p: '$users', expected '$want'"
pass "-p: 2 processes x 2 descriptors, as ss: $users"

"$SD" list -tlnp --json 'sport = :5100' >"$T/p.json"
python3 - "$T/p.json" "$PPY" "$CPY" "$FD1" "$FD2" "$comm" <<'EOF' || fail "-p --json"
import json, sys
recs = json.load(open(sys.argv[1]))
ppy, cpy, fd1, fd2 = map(int, sys.argv[2:6])
assert len(recs) == 1, recs
got = recs[0]["processes"]
want = sorted([{"comm": sys.argv[6], "pid": p, "fd": f} for p in (ppy, cpy) for f in (fd1, fd2)],
              key=lambda o: (o["pid"], o["fd"]))
assert got == want, (got, want)
EOF
"$SD" list -tlnp --json 'sport = :5100' | grep -q '"processes"' || fail "no processes member"
"$SD" list -tln --json 'sport = :5100' | grep -q '"processes"' && fail "processes without -p"
pass "-p --json: processes array of {comm, pid, fd}"

# ---- filters on owners, no -p needed ------------------------------------------
bg srv "$NP" server 127.0.0.1 5200
wait_for "$T/srv" listening
SRV=${PIDS[-1]}
bg cli "$NP" client 127.0.0.1 5200 "" 65534
wait_for "$T/cli" connected
CLI=${PIDS[-1]}

count() { "$SD" list -tanH "$@" | wc -l; }
[[ $(count "pid = $CPY") == 1 ]] || fail "pid = child: $("$SD" list -tan "pid = $CPY")"
[[ $(count "pid = $SRV") == 2 ]] || fail "pid = server (listener and accepted)"
[[ $(count "pid = $SRV or pid = $CLI") == 3 ]] || fail "pid = server or pid = client"
[[ $(count "comm = netpe*") == 3 ]] || fail "comm = netpe*: $("$SD" list -tan 'comm = netpe*')"
[[ $(count "comm = netpeer and dport = :5200") == 1 ]] || fail "comm and sport"
"$SD" list -tanH "user = nobody" >"$T/u.txt"
[[ $(wc -l <"$T/u.txt") == 1 ]] && grep -q ':5200 *$' "$T/u.txt" ||
	fail "user = nobody: $(cat "$T/u.txt")"
[[ $(count "user = 65534") == 1 ]] || fail "user = 65534"
[[ $(count "user != 0") == 1 ]] || fail "user != 0"
# netpeer accepts: every one of these sockets has an owner.
[[ $(count "sport = :5200 and not pid >= 1") == 0 ]] || fail "owned sockets without owners"
[[ $(count "comm = no-such-comm") == 0 ]] || fail "comm = no-such-comm"
"$SD" list -tanp "pid = $CLI" | grep -q "users:((\"netpeer\",pid=$CLI,fd=3))" ||
	fail "pid filter with -p: $("$SD" list -tanp "pid = $CLI")"
set +e
"$SD" list -tan 'pid = bogus' 2>"$T/err"; st=$?
set -e
[[ $st == 2 ]] && grep -q "expected a number" "$T/err" || fail "pid = bogus: exit $st, $(cat "$T/err")"
pass "pid, comm and user filters select by owner, without -p"

# ---- --owners: the BPF iterator and the /proc walk agree -------------------------
"$SD" list -tanp -v --owners=proc >"$T/o-proc.txt" 2>"$T/o-proc.err"
grep -qx 'sockdiag list: owners: /proc walk (--owners=proc)' "$T/o-proc.err" ||
	fail "-v --owners=proc: $(cat "$T/o-proc.err")"
"$SD" list -tanp -v >/dev/null 2>"$T/o-auto.err"
if grep -qx 'sockdiag list: owners: BPF iterator' "$T/o-auto.err"; then
	"$SD" list -tanp -v --owners=bpf >"$T/o-bpf.txt" 2>"$T/o-bpf.err"
	grep -qx 'sockdiag list: owners: BPF iterator' "$T/o-bpf.err" ||
		fail "-v --owners=bpf: $(cat "$T/o-bpf.err")"
	diff "$T/o-proc.txt" "$T/o-bpf.txt" >&2 || fail "--owners=bpf and --owners=proc differ"
	[[ $(grep -c "users:((" "$T/o-bpf.txt") -ge 4 ]] || fail "--owners=bpf: few owners: $(cat "$T/o-bpf.txt")"
	"$SD" list -tan --owners=bpf "pid = $SRV" | grep -q ':5200 ' || fail "--owners=bpf pid filter"
	# Without CAP_BPF, auto falls back and says why; bpf refuses, exit 1.
	if command -v setpriv >/dev/null; then
		setpriv --bounding-set -all,+net_admin,+sys_ptrace,+dac_read_search -- \
			"$SD" list -tanp -v >"$T/o-nocap.txt" 2>"$T/o-nocap.err"
		grep -qx 'sockdiag list: owners: /proc walk (BPF iterator: Operation not permitted)' \
			"$T/o-nocap.err" || fail "auto without CAP_BPF: $(cat "$T/o-nocap.err")"
		diff "$T/o-proc.txt" "$T/o-nocap.txt" >&2 || fail "fallback gives other owners"
		set +e
		setpriv --bounding-set -all,+net_admin -- "$SD" list -tanp --owners=bpf \
			>"$T/o-nobpf.txt" 2>"$T/err"; st=$?
		set -e
		[[ $st == 1 && ! -s $T/o-nobpf.txt ]] &&
			grep -q 'cannot scan processes: Operation not permitted (--owners=bpf)' "$T/err" ||
			fail "--owners=bpf without CAP_BPF: exit $st, $(cat "$T/err")"
	fi
	pass "--owners=bpf and --owners=proc give the same owners; -v says which ran"
else
	grep -q 'owners: /proc walk (BPF iterator' "$T/o-auto.err" || fail "-v: $(cat "$T/o-auto.err")"
	set +e
	"$SD" list -tanp --owners=bpf >"$T/o-bpf.txt" 2>"$T/err"; st=$?
	set -e
	if grep -q '(BPF iterator: Operation not supported)' "$T/o-auto.err"; then
		# Built without the iterator: --owners=bpf refuses.
		[[ $st == 1 && ! -s $T/o-bpf.txt ]] || fail "--owners=bpf without the iterator: exit $st"
		pass "no BPF iterator in this build: --owners=bpf exits 1"
	else
		# The kernel cannot load it (asked of the kernel: no BPF_PROG_TYPE_SYSCALL before
		# 5.14, as on 5.10): the /proc walk's owners, and one line naming 5.14.
		probe=$(python3 "$here/../kernel_probe.py" bpf-syscall-prog)
		[[ $probe == "bpf-syscall-prog no" ]] ||
			fail "the iterator does not load ($(cat "$T/o-auto.err")), yet $probe"
		[[ $st == 0 ]] && diff "$T/o-proc.txt" "$T/o-bpf.txt" >&2 &&
			grep -qx "sockdiag list: --owners=bpf: this kernel ($(uname -r)) cannot load the BPF iterator (.*; Linux 5.14 and later with BTF can): walking /proc instead" "$T/err" ||
			fail "--owners=bpf where the kernel cannot load the iterator: exit $st, $(cat "$T/err")"
		pass "the kernel cannot load the BPF iterator ($probe): --owners=bpf walks /proc, says so"
	fi
fi
set +e
"$SD" list -tanp --owners=fast 2>"$T/err"; st=$?
set -e
[[ $st == 2 ]] && grep -q "owners: 'fast': expected auto, bpf or proc" "$T/err" ||
	fail "--owners=fast: exit $st, $(cat "$T/err")"

# ---- three named namespaces ------------------------------------------------------
declare -A PORT=([a]=5001 [b]=5002 [c]=5001)
for n in a b c; do
	ns=sdiag-test-$n
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	bg "srv-$n" ip netns exec "$ns" "$NP" server 127.0.0.1 "${PORT[$n]}"
	wait_for "$T/srv-$n" listening
	bg "cli-$n" ip netns exec "$ns" "$NP" client 127.0.0.1 "${PORT[$n]}"
	wait_for "$T/cli-$n" connected
done
NSPID_B=$(pgrep -f "server 127.0.0.1 5002" | head -1)

[[ $("$SD" list -tlnH -N sdiag-test-a | grep -c ':5001 ') == 1 ]] || fail "-N NAME"
[[ $("$SD" list -tlnH -N /run/netns/sdiag-test-c | grep -c ':5001 ') == 1 ]] || fail "-N PATH"
[[ $("$SD" list -tlnH -N "pid:$NSPID_B" | grep -c ':5002 ') == 1 ]] || fail "-N pid:PID"
[[ $("$SD" list -tlnH | grep -c ':500[12] ') == 0 ]] || fail "-N leaked into our namespace"
set +e
"$SD" list -tln -N sdiag-test-missing >/dev/null 2>"$T/err"; st=$?
set -e
[[ $st == 1 ]] && grep -qF "netns sdiag-test-missing: no such network namespace (looked for /run/netns/sdiag-test-missing)" "$T/err" ||
	fail "-N missing: exit $st, $(cat "$T/err")"
for bad in pid:abc pid: pid:0 pid:-1; do
	set +e
	"$SD" list -tln -N "$bad" >"$T/out" 2>"$T/err"; st=$?
	set -e
	[[ $st == 2 && ! -s $T/out ]] && grep -qF -- "-N '$bad': PID must be a process id" "$T/err" ||
		fail "-N $bad: exit $st, $(cat "$T/err")"
done
set +e
"$SD" list -tln -N /etc/hostname >/dev/null 2>"$T/err"; st=$?
set -e
[[ $st == 1 ]] && grep -q "/etc/hostname" "$T/err" || fail "-N non-namespace: exit $st, $(cat "$T/err")"
pass "-N NAME, PATH, pid:PID; a bad one is named with the reason: $(head -1 "$T/err")"

# ---- --all-netns -------------------------------------------------------------------
"$SD" list --all-netns -tln >"$T/all.txt"
head -1 "$T/all.txt" | grep -q '^Netns ' || fail "--all-netns: no Netns column: $(head -1 "$T/all.txt")"
for n in a b c; do
	grep -Eq "^sdiag-test-$n +LISTEN .*127.0.0.1:${PORT[$n]} " "$T/all.txt" ||
		fail "--all-netns: sdiag-test-$n's listener: $(cat "$T/all.txt")"
done
# Our own namespace is unnamed: labelled by its lowest pid, 1 (this script).
grep -Eq '^pid:1 +LISTEN .*127.0.0.1:5100 ' "$T/all.txt" || fail "--all-netns: pid:1: $(cat "$T/all.txt")"
[[ $(grep -c LISTEN "$T/all.txt") == 5 ]] || fail "--all-netns: not 5 listeners: $(cat "$T/all.txt")"
"$SD" list --all-netns -tln --json >"$T/all.json"
python3 - "$T/all.json" <<'EOF' || fail "--all-netns --json: $(cat "$T/all.json")"
import json, os, sys
recs = json.load(open(sys.argv[1]))
want = {"sdiag-test-a": 5001, "sdiag-test-b": 5002, "sdiag-test-c": 5001, "pid:1": 5200}
seen = {}
for r in recs:
    label, ino = r["netns"], r["netns_inode"]
    path = "/run/netns/" + label if not label.startswith("pid:") else "/proc/%s/ns/net" % label[4:]
    assert os.stat(path).st_ino == ino, (label, ino)
    seen.setdefault(label, set()).add(r["local"]["port"])
for label, port in want.items():
    assert port in seen.get(label, ()), (label, port, seen)
assert len({r["netns_inode"] for r in recs}) == 4, recs
EOF
pass "--all-netns: 4 namespaces, each socket labelled (name or pid:1, inode)"

# ---- kill across namespaces --------------------------------------------------------
set +e
"$SD" kill --all-netns -t 'dport = :5001' >"$T/kill.txt" 2>"$T/kill.err"; st=$?
set -e
[[ $st == 0 ]] || fail "kill --all-netns: exit $st: $(cat "$T/kill.txt" "$T/kill.err")"
for n in a c; do
	wait_for "$T/cli-$n" "recv errno=ECONNABORTED"
	grep -q "^netns sdiag-test-$n: destroyed 1," "$T/kill.err" ||
		fail "kill: no summary for sdiag-test-$n: $(cat "$T/kill.err")"
	grep -Eq "^sdiag-test-$n +destroyed " "$T/kill.txt" || fail "kill: rows: $(cat "$T/kill.txt")"
done
grep -q "^netns sdiag-test-b: destroyed 0," "$T/kill.err" || fail "kill: summary for b: $(cat "$T/kill.err")"
grep -q "^netns pid:1: destroyed 0," "$T/kill.err" || fail "kill: summary for pid:1: $(cat "$T/kill.err")"
grep -q "^destroyed 2," "$T/kill.err" || fail "kill: total: $(cat "$T/kill.err")"
grep -q recv "$T/cli-b" && fail "kill: sdiag-test-b's client was hit: $(cat "$T/cli-b")"
grep -q recv "$T/cli" && fail "kill: our own client was hit"
[[ $("$SD" list -tnH -N sdiag-test-b 'dport = :5002' | grep -c ESTAB) == 1 ]] || fail "b's socket gone"
[[ $("$SD" list -tlnH -N sdiag-test-a | grep -c ':5001 ') == 1 ]] || fail "a's listener gone"
pass "kill --all-netns: only the matched sockets (a, c), one summary per namespace"

"$SD" kill -N sdiag-test-b -p --dry-run "pid = $NSPID_B" >"$T/dry.txt" 2>&1 || fail "kill -p dry run: $(cat "$T/dry.txt")"
grep -q "users:((\"netpeer\",pid=$NSPID_B," "$T/dry.txt" || fail "kill -p: $(cat "$T/dry.txt")"
pass "kill -N -p with a pid filter"

# ---- a namespace that cannot be entered -----------------------------------------
# In a new user namespace we have no CAP_SYS_ADMIN over namespaces the host's
# user namespace owns (the three named ones): they are reported, and the
# namespace made inside (owned by the new user namespace) is still listed.
set +e
unshare -U -r -n -- bash -c '
	ip link set lo up
	"$1" server 127.0.0.1 5300 >/dev/null & p=$!
	sleep 0.3
	"$2" list --all-netns -tln; st=$?
	kill $p
	exit $st' _ "$NP" "$SD" >"$T/userns.txt" 2>"$T/userns.err"
st=$?
set -e
[[ $st == 1 ]] || fail "unenterable: exit $st: $(cat "$T/userns.txt" "$T/userns.err")"
for n in a b c; do
	grep -q "netns sdiag-test-$n: .*Operation not permitted" "$T/userns.err" ||
		fail "unenterable sdiag-test-$n not reported: $(cat "$T/userns.err")"
done
grep -Eq '^pid:[0-9]+ +LISTEN .*127.0.0.1:5300 ' "$T/userns.txt" ||
	fail "unenterable: the enterable namespace was not listed: $(cat "$T/userns.txt")"
pass "unenterable namespaces reported by name ($(head -1 "$T/userns.err")); the rest listed"

echo "procs_cli: $npass passed, 0 failed"
echo "# checks: $npass passed, 0 failed, 0 skipped"
