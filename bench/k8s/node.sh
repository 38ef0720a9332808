#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The DaemonSet's containers on a simulated node, for their requests and limits
# (deploy/kubernetes/sockdiag.yaml), by hand, as root:
#   flock /work/wt/bench.lock bench/k8s/node.sh [-P PODS] [-C PAIRS] [-N PAIRS] [-w SECONDS]
# In new private mount, pid and network namespaces with a /run/netns of their own:
# PODS pod namespaces (default 110, the kubelet's default maximum) named in
# /run/netns, each with PAIRS loopback TCP pairs (default 100: 200 sockets), and
# the node's own namespace with -N pairs (default 5000). The exporter
# (`exporter --all-netns` with the ConfigMap's exporter.conf: pod-labels on) and
# the guard (`guard --all-netns --metrics` with the ConfigMap's guard.conf: dead
# backends every 10 s, conntrack) run each in a cgroup of its own (cgroup v1
# memory + cpuacct, or v2), as a container's processes do; the limits apply to
# those totals (the guard's are the supervisor and one guard per namespace).
# Measured: memory peak (the cgroup's max usage) and CPU (cpuacct) over
# -w SECONDS (default 60) of the guard running, and per scrape of the
# exporter (10 scrapes), as millicores at a 30 s scrape interval.
# Environment: SOCKDIAG (default build-bench/cli/sockdiag, else build/cli/sockdiag), CC.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PODS=110 PAIRS=100 NODE=5000 WINDOW=60
if [[ ${1:-} == --inner ]]; then
	shift
	TOOLS=$1 PODS=$2 PAIRS=$3 NODE=$4 WINDOW=$5
else
	while getopts P:C:N:w: o; do
		case $o in
		P) PODS=$OPTARG ;;
		C) PAIRS=$OPTARG ;;
		N) NODE=$OPTARG ;;
		w) WINDOW=$OPTARG ;;
		*) exit 2 ;;
		esac
	done
	[[ $(id -u) == 0 ]] || { echo "node.sh: needs root (namespaces, cgroups)" >&2; exit 1; }
	TOOLS=$(mktemp -d)
	trap 'rm -rf "$TOOLS"' EXIT
	"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -o "$TOOLS/mkpairs" "$ROOT/bench/mkpairs.c"
	unshare -m -p -f --mount-proc -n -- "$0" --inner "$TOOLS" "$PODS" "$PAIRS" "$NODE" "$WINDOW"
	exit
fi

SD=${SOCKDIAG:-$ROOT/build-bench/cli/sockdiag}
[[ -x $SD ]] || SD=$ROOT/build/cli/sockdiag
PY=$(command -v /usr/bin/python3 || command -v python3)
mount --make-rprivate /
mount -t tmpfs none /run/netns
ip link set lo up
T=$(mktemp -d)
NAME=sdbench-k8s-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
CGS=()
PIDS=()
cleanup() {
	kill $(jobs -p) "${PIDS[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	for d in "${CGS[@]}"; do rmdir "$d" 2>/dev/null || true; done
	for ns in $(ip netns list | awk '/^sdb/ { print $1 }'); do ip netns del "$ns"; done
	umount /run/netns
	rm -rf "$T"
}
trap cleanup EXIT

# cgroup ROLE: make its cgroups; cg_join ROLE PID; mem_peak ROLE (bytes); cpu_ns ROLE.
if [[ -f /sys/fs/cgroup/memory/memory.max_usage_in_bytes || -d /sys/fs/cgroup/memory ]] &&
	[[ -d /sys/fs/cgroup/cpuacct ]]; then
	V=1
else
	V=2
	CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
fi
cgroup() {
	if [[ $V == 1 ]]; then
		mkdir /sys/fs/cgroup/memory/$NAME-$1 /sys/fs/cgroup/cpuacct/$NAME-$1
		CGS+=(/sys/fs/cgroup/memory/$NAME-$1 /sys/fs/cgroup/cpuacct/$NAME-$1)
	else
		mkdir "$CG2/$NAME-$1"
		CGS+=("$CG2/$NAME-$1")
	fi
}
cg_join() {
	if [[ $V == 1 ]]; then
		echo "$2" >/sys/fs/cgroup/memory/$NAME-$1/cgroup.procs
		echo "$2" >/sys/fs/cgroup/cpuacct/$NAME-$1/cgroup.procs
	else
		echo "$2" >"$CG2/$NAME-$1/cgroup.procs"
	fi
}
mem_peak() {
	if [[ $V == 1 ]]; then cat /sys/fs/cgroup/memory/$NAME-$1/memory.max_usage_in_bytes
	else cat "$CG2/$NAME-$1/memory.peak"; fi
}
mem_rss() { # anonymous memory now (v1: rss; v2: anon)
	if [[ $V == 1 ]]; then awk '$1 == "rss" { print $2 }' /sys/fs/cgroup/memory/$NAME-$1/memory.stat
	else awk '$1 == "anon" { print $2 }' "$CG2/$NAME-$1/memory.stat"; fi
}
cpu_ns() {
	if [[ $V == 1 ]]; then cat /sys/fs/cgroup/cpuacct/$NAME-$1/cpuacct.usage
	else awk '$1 == "usage_usec" { print $2 * 1000 }' "$CG2/$NAME-$1/cpu.stat"; fi
}

pairs() { # NETNS|"" N: mkpairs there, until ready
	local rfd
	if [[ -n $1 ]]; then
		exec {rfd}< <(exec ip netns exec "$1" "$TOOLS/mkpairs" "$2")
	else
		exec {rfd}< <(exec "$TOOLS/mkpairs" "$2")
	fi
	PIDS+=($!)
	read -r -t 300 -u "$rfd" line && [[ $line == "ready $2" ]] || { echo "mkpairs $1 failed" >&2; exit 1; }
}

echo "# $PODS pods x $PAIRS pairs, node $NODE pairs; $SD"
pairs "" "$NODE"
for i in $(seq "$PODS"); do
	ip netns add "sdb$i"
	ip -n "sdb$i" link set lo up
	pairs "sdb$i" "$PAIRS"
done
SOCKS=$(( (PODS * PAIRS + NODE) * 2 ))

# The ConfigMap's files, the dead-backends file where guard.conf reads it.
"$PY" - "$ROOT/deploy/kubernetes/sockdiag.yaml" "$T" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
cm = next(d for d in docs if d["kind"] == "ConfigMap")
t = sys.argv[2]
open(t + "/exporter.conf", "w").write(cm["data"]["exporter.conf"] + "pods-dir = %s/pods\n" % t)
open(t + "/guard.conf", "w").write(
    cm["data"]["guard.conf"].replace("/run/sockdiag/dead-backends", t + "/dead-backends"))
open(t + "/dead-backends", "w").write("10.0.0.1:8080/tcp\n")
EOF
mkdir -p "$T/pods"

metric() { # PORT NAME: its value
	"$PY" -c 'import sys, urllib.request
for l in urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=30).read().decode().splitlines():
    if l.startswith(sys.argv[2] + " "): print(l.split()[1])' "$1" "$2"
}

# The guard: the supervisor and PODS + 1 guards.
cgroup guard
( cg_join guard $BASHPID; exec "$SD" guard --all-netns --metrics 127.0.0.1:19114 -c "$T/guard.conf" 2>"$T/guard.log" ) &
GPID=$!
for _ in $(seq 120); do
	[[ $(metric 19114 'sockdiag_guard_netns{state="running"}' 2>/dev/null) == $((PODS + 1)) ]] && break
	sleep 0.5
done
[[ $(metric 19114 'sockdiag_guard_netns{state="running"}') == $((PODS + 1)) ]] ||
	{ echo "the guard did not start $((PODS + 1)) guards:" >&2; tail "$T/guard.log" >&2; exit 1; }
c0=$(cpu_ns guard)
sleep "$WINDOW"
c1=$(cpu_ns guard)
passes=$(metric 19114 sockdiag_guard_backend_passes_total)
g_peak=$(mem_peak guard) g_rss=$(mem_rss guard)
g_procs=$(pgrep -c -f "sockdiag guard" || true)
kill "$GPID"
wait "$GPID" 2>/dev/null || true

# The exporter: 10 scrapes (pod-labels on).
cgroup exporter
( cg_join exporter $BASHPID; exec "$SD" exporter --all-netns --listen 127.0.0.1:19113 -c "$T/exporter.conf" 2>"$T/exporter.log" ) &
EPID=$!
for _ in $(seq 100); do
	"$PY" -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:19113/healthz", timeout=5)' 2>/dev/null && break
	sleep 0.1
done
e0=$(cpu_ns exporter)
t0=$(date +%s.%N)
for _ in $(seq 10); do
	metric 19113 sockdiag_scrape_sockets >"$T/seen"
done
t1=$(date +%s.%N)
e1=$(cpu_ns exporter)
e_peak=$(mem_peak exporter) e_rss=$(mem_rss exporter)
kill "$EPID"
wait "$EPID" 2>/dev/null || true

awk -v socks="$SOCKS" -v pods="$PODS" -v seen="$(cat "$T/seen")" -v procs="$g_procs" \
	-v gc="$((c1 - c0))" -v w="$WINDOW" -v passes="$passes" -v gp="$g_peak" -v gr="$g_rss" \
	-v ec="$((e1 - e0))" -v wall="$(echo "$t1 - $t0" | bc)" -v ep="$e_peak" -v er="$e_rss" 'BEGIN {
	printf "\n| container | memory peak MiB | anon now MiB | CPU | millicores |\n|---|---:|---:|---|---:|\n"
	printf "| guard (%d processes: supervisor + %d guards) | %.1f | %.1f | %.3f s over %d s (%d backend passes) | %.1f |\n",
		procs, pods + 1, gp / 1048576, gr / 1048576, gc / 1e9, w, passes, gc / 1e6 / w
	printf "| exporter (pod-labels) | %.1f | %.1f | %.3f s per scrape (wall %.3f s) | %.1f at a 30 s interval |\n",
		ep / 1048576, er / 1048576, ec / 1e9 / 10, wall / 10, ec / 1e6 / 10 / 30
	printf "\n%d sockets made, %s seen by the last scrape.\n", socks, seen
}'
