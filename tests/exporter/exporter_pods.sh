#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# exporter --all-netns with pod-labels = yes, on a fabricated node, inside
# private mount, pid and network namespaces with their own /run/netns: two
# "pods" are network namespaces whose first process sits in a cgroup named as
# the kubelet names a pod's (the systemd driver's kubepods-...-pod<UID>.slice,
# with '_' for '-', and the cgroupfs driver's kubepods/.../pod<UID>/), made under
# this test's own cgroup; a third namespace's process is in no pod's cgroup; a
# fake kubelet pod log directory (NAMESPACE_NAME_UID, as /var/log/pods) names
# the pods, with a decoy for another UID. Checks: each pod's series carry
# k8s_namespace and k8s_pod, the others none (the node's namespace, the third);
# max-pods = 1 labels one namespace only.
# The exporter runs with the capabilities the DaemonSet's exporter container adds
# (from deploy/kubernetes/sockdiag.yaml); the sandboxes run as other users.
#   usage: exporter_pods.sh SOCKDIAG MANIFEST
set -euo pipefail

SD=${1:?usage: exporter_pods.sh SOCKDIAG MANIFEST}
MANIFEST=${2:?usage: exporter_pods.sh SOCKDIAG MANIFEST}
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
for t in unshare ip python3 setpriv; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CGROOT" ] || { echo "SKIP(cgroup2): no cgroup v2 hierarchy"; exit 77; }
. "$(dirname "$0")/../private_world.sh"
private_world SD_EXPPODS_INNER "$0" "$@"

T=$(mktemp -d)
NPASS=0
BASE=$CGROOT/sdpods$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
UID1=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
UID2=11112222-3333-4444-5555-666677778888
CG1=$BASE/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID1//-/_}.slice/cri-containerd-0123abcd.scope
CG2=$BASE/kubepods/besteffort/pod$UID2/4567ef01
CG3=$BASE/system.slice/other.service
cleanup() {
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	# Deepest first: a cgroup goes once its processes and children have.
	[ -d "$BASE" ] && find "$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "# checks: $NPASS passed, 1 failed, 0 skipped"; exit 1; }
pass() { echo "ok: $*"; NPASS=$((NPASS + 1)); }
mkdir -p "$CG1" "$CG2" "$CG3" || { echo "SKIP(cgroup2): cannot make cgroups"; exit 77; }

# A pod's sandbox: joins cgroup CG, then a network namespace of its own,
# listening on PORT in it, as uid USER without capabilities (as the pause
# container runs: the exporter must see its namespace through /proc); its pid
# (the lowest in that namespace) in $T/pid-NAME.
chmod 755 "$T"
sandbox() { # NAME CG PORT USER
	install -m 666 /dev/null "$T/pid-$1"
	(
	echo $BASHPID >"$2/cgroup.procs"
	exec unshare -n sh -c 'ip link set lo up && exec setpriv --reuid="$1" --regid="$1" \
		--clear-groups --inh-caps=-all --bounding-set=-all /usr/bin/python3 -c "
import os, socket, sys, time
s = socket.socket(); s.bind((\"127.0.0.1\", int(sys.argv[2]))); s.listen(4)
open(sys.argv[1], \"w\").write(str(os.getpid()))
time.sleep(120)" "$2" "$3"' sh "$4" "$T/pid-$1" "$3"
	) &
	for _ in $(seq 100); do [ -s "$T/pid-$1" ] && return 0; sleep 0.1; done
	fail "sandbox $1 did not start"
}
sandbox web "$CG1" 1111 0
sandbox dns "$CG2" 2222 65535
sandbox other "$CG3" 3333 65534
P1=$(cat "$T/pid-web") P2=$(cat "$T/pid-dns") P3=$(cat "$T/pid-other")
mkdir -p "$T/pods/default_web-0_$UID1/app" "$T/pods/kube-system_coredns-7d8f9_$UID2/coredns" \
	"$T/pods/default_decoy_aaaabbbb-cccc-dddd-eeee-ffff00001111"

# expect FILE SAMPLE VALUE
expect() {
	local got
	got=$(awk -v s="$2" '$1 == s { print $2 }' "$1")
	[ "$got" = "$3" ] || fail "$2 = '$got', expected $3 in: $(grep -F 'state="listen"' "$1")"
}
printf 'pod-labels = yes\npods-dir = %s\ntables = tcp\n' "$T/pods" >"$T/pods.conf"
# With the DaemonSet's capabilities, as its container has them.
CAPS=$(python3 -c 'import sys, yaml
ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]
c = [c for c in ds["spec"]["template"]["spec"]["containers"] if c["name"] == "exporter"][0]
print(",".join("+" + x.lower() for x in c["securityContext"]["capabilities"]["add"]))' "$MANIFEST")
# Served (a server drops the capabilities its passes do not need; --once keeps
# them), scraped once.
scrape() { # CONF OUT
	local pid body
	setpriv --no-new-privs --bounding-set=-all,"$CAPS" --inh-caps=-all -- \
		"$SD" exporter --all-netns -c "$1" --listen 127.0.0.1:19131 2>"$T/exporter.log" &
	pid=$!
	body=$(python3 -c 'import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:19131/healthz", timeout=5); break
    except OSError: time.sleep(0.1)
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:19131/metrics", timeout=30).read().decode())') ||
		fail "no scrape: $(cat "$T/exporter.log")"
	kill "$pid"
	wait "$pid" || true
	printf '%s\n' "$body" >"$2"
}
scrape "$T/pods.conf" "$T/out"
expect "$T/out" "sockdiag_sockets{netns=\"pid:$P1\",k8s_namespace=\"default\",k8s_pod=\"web-0\",family=\"inet\",proto=\"tcp\",state=\"listen\"}" 1
expect "$T/out" "sockdiag_sockets{netns=\"pid:$P2\",k8s_namespace=\"kube-system\",k8s_pod=\"coredns-7d8f9\",family=\"inet\",proto=\"tcp\",state=\"listen\"}" 1
expect "$T/out" "sockdiag_accept_queue_limit{netns=\"pid:$P1\",k8s_namespace=\"default\",k8s_pod=\"web-0\",proto=\"tcp\",address=\"127.0.0.1\",port=\"1111\"}" 4
grep -q "^sockdiag_tcp_rtt_seconds_count{netns=\"pid:$P2\",k8s_namespace=\"kube-system\",k8s_pod=\"coredns-7d8f9\"}" "$T/out" ||
	fail "the RTT histogram lacks the pod labels"
pass "pods under either cgroup driver: k8s_namespace and k8s_pod on their series"
expect "$T/out" "sockdiag_sockets{netns=\"pid:$P3\",family=\"inet\",proto=\"tcp\",state=\"listen\"}" 1
[ "$(grep -c 'k8s_pod="decoy"\|netns="pid:1",k8s' "$T/out")" = 0 ] || fail "a pod on the node's namespace or the decoy"
pass "no pod for a namespace outside kubepods, the node's, or a UID no sandbox has"

printf 'pod-labels = yes\npods-dir = %s\ntables = tcp\nmax-pods = 1\n' "$T/pods" >"$T/cap.conf"
"$SD" exporter --all-netns -c "$T/cap.conf" --once >"$T/cap" || fail "max-pods: exit $?"
n=$(grep '^sockdiag_sockets{' "$T/cap" | grep -o 'k8s_pod="[^"]*"' | sort -u | wc -l)
[ "$n" = 1 ] || fail "max-pods = 1: $n pods labelled"
pass "max-pods = 1: one namespace labelled"

printf 'tables = tcp\n' >"$T/off.conf"
"$SD" exporter --all-netns -c "$T/off.conf" --once >"$T/off" || fail "exit $?"
grep -q k8s_ "$T/off" && fail "pod labels without pod-labels = yes"
pass "pod-labels off (the default): no pod labels"
echo "# checks: $NPASS passed, 0 failed, 0 skipped"
