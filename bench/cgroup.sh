#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/cgroup.sh — issue 11: cgroup filters and --count-by at 200k sockets
# spread over 20 cgroups. See bench/README.md.
#
#   flock /work/wt/bench.lock bench/cgroup.sh [-r RUNS] [-o REPORT.md] [PAIRS]
#   (default PAIRS 100000: 200k TCP sockets; 20 cgroups, 5% of them each)
#
# A unique slice sdbench<PID>.slice with cg00.service ... cg19.service is made
# under the cgroup2 mount (found in /proc/self/mountinfo) and removed at the
# end. In a NEW private network and pid namespace, bench/mkpairs builds the
# pairs with one worker per cgroup (-c -g), so each cgroup holds 1/20 of the
# sockets. Then, RUNS times round-robin after a warm-up, bench/measure times:
#   list     sockdiag list -tan                       (the reference)
#   cg       sockdiag list -tan 'cgroup /SLICE/cg07.service'     5%, kernel filter
#   cg_tree  sockdiag list -tan 'cgroup /SLICE/cg07.service/**'  the same, as a subtree
#   cg_unit  sockdiag list -tan 'unit cg07.service'
#   cg_user  the first, --no-kernel-filter
#   count    sockdiag list -tan --count-by unit,state
# and reports min and median wall and CPU time, and the ratios to `list`.
# Targets (issue 11): cg / list <= 0.5, count / list <= 1.3.
# Environment: BUILD (default build-bench), SOCKDIAG, CC.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
GROUPS_N=20
SCENARIOS="list cg cg_tree cg_unit cg_user count"

scenario() { # NAME -> CMD array
	local cg="/$SLICE_NAME/cg07.service"
	case $1 in
	list) CMD=("$SOCKDIAG" list -tan) ;;
	cg) CMD=("$SOCKDIAG" list -tan "cgroup $cg") ;;
	cg_tree) CMD=("$SOCKDIAG" list -tan "cgroup $cg/**") ;;
	cg_unit) CMD=("$SOCKDIAG" list -tan "unit cg07.service") ;;
	cg_user) CMD=("$SOCKDIAG" list -tan --no-kernel-filter "cgroup $cg") ;;
	count) CMD=("$SOCKDIAG" list -tan --count-by unit,state) ;;
	esac
}

inner() {
	local pairs=$1 runs=$2 out=$3 line pid n
	ip link set lo up
	exec {rfd}< <(exec "$TOOLS/mkpairs" -c "$SLICE" -g "$GROUPS_N" -w $((pairs / GROUPS_N)) "$pairs")
	pid=$!
	if ! read -r -t 900 -u "$rfd" line || [[ $line != "ready $pairs" ]]; then
		echo "cgroup.sh: mkpairs failed" >&2
		exit 1
	fi
	# The population is what it should be: 1/20 of the sockets in cg07.
	n=$("$SOCKDIAG" list -tanH "cgroup /$SLICE_NAME/cg07.service" | wc -l)
	# (each worker also has its two listeners)
	[ "$n" = $((2 * pairs / GROUPS_N + 2)) ] || { echo "cgroup.sh: cg07 has $n sockets" >&2; exit 1; }
	n=$("$SOCKDIAG" list -tanH | wc -l)
	echo "population: $n TCP sockets (+ listeners), $((2 * pairs / GROUPS_N)) in each cgroup" >&2
	for s in $SCENARIOS; do
		scenario "$s"
		"$TOOLS/measure" -- "${CMD[@]}" >/dev/null
	done
	for ((i = 0; i < runs; i++)); do
		for s in $SCENARIOS; do
			scenario "$s"
			echo "$s $("$TOOLS/measure" -p -20 -- "${CMD[@]}")" >>"$out"
		done
	done
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

if [ "${1:-}" = --inner ]; then
	shift
	TOOLS=$1 SLICE=$2 SLICE_NAME=$3
	shift 3
	inner "$@"
	exit
fi

RUNS=7
REPORT=
while getopts r:o: opt; do
	case $opt in
	r) RUNS=$OPTARG ;;
	o) REPORT=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
PAIRS=${1:-100000}
[ "$(id -u)" = 0 ] || { echo "cgroup.sh: needs root" >&2; exit 1; }
[ -x "$SOCKDIAG" ] || { echo "cgroup.sh: no $SOCKDIAG (build it first)" >&2; exit 1; }
CGROOT=$(awk '{ split($0, a, " - "); split(a[2], b, " "); if (b[1] == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$CGROOT" ] || { echo "cgroup.sh: no cgroup2 mount" >&2; exit 1; }

TOOLS=$(mktemp -d)
SLICE_NAME=sdbench$$.slice
SLICE=$CGROOT/$SLICE_NAME
cleanup() {
	sleep 0.5 # workers die with mkpairs (PDEATHSIG); give them a moment
	for ((g = 0; g < GROUPS_N; g++)); do
		rmdir "$SLICE/cg$(printf %02d $g).service" 2>/dev/null || true
	done
	rmdir "$SLICE" 2>/dev/null || true
	rm -rf "$TOOLS"
}
trap cleanup EXIT
${CC:-cc} -O2 -o "$TOOLS/mkpairs" "$ROOT/bench/mkpairs.c"
${CC:-cc} -O2 -o "$TOOLS/measure" "$ROOT/bench/measure.c"
mkdir "$SLICE"
for ((g = 0; g < GROUPS_N; g++)); do
	mkdir "$SLICE/cg$(printf %02d $g).service"
done

raw=$TOOLS/raw
unshare -n -p -f --mount-proc "$0" --inner "$TOOLS" "$SLICE" "$SLICE_NAME" "$PAIRS" "$RUNS" "$raw"

# raw lines: NAME WALL_S MAXRSS_KIB STATUS CPU_S
python3 - "$raw" "$PAIRS" "$RUNS" <<'EOF' | tee ${REPORT:+"$REPORT"}
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
pairs, runs = int(sys.argv[2]), int(sys.argv[3])
t = {}
for name, wall, rss, st, cpu in rows:
    assert st == "0", "%s exited %s" % (name, st)
    t.setdefault(name, []).append((float(wall), float(cpu), int(rss)))
print("### cgroup filters and --count-by: %d TCP sockets over 20 cgroups, %d runs\n" % (2 * pairs, runs))
print("| scenario | wall min s | wall median s | CPU min s | CPU median s | peak RSS MiB |")
print("|---|---:|---:|---:|---:|---:|")
for n, v in t.items():
    w = [x[0] for x in v]; c = [x[1] for x in v]
    print("| %s | %.4f | %.4f | %.4f | %.4f | %.1f |" % (n, min(w), statistics.median(w), min(c),
          statistics.median(c), max(x[2] for x in v) / 1024))
def ratio(a, b, f, i):
    return f([x[i] for x in t[a]]) / f([x[i] for x in t[b]])
print("\n| target | limit | wall min | wall median | CPU min | CPU median |")
print("|---|---:|---:|---:|---:|---:|")
for a, lim in (("cg", 0.5), ("cg_tree", 0.5), ("cg_unit", 0.5), ("cg_user", None), ("count", 1.3)):
    print("| %s / list | %s | %.2f | %.2f | %.2f | %.2f |" % (a, "≤ %.1f" % lim if lim else "–",
          ratio(a, "list", min, 0), ratio(a, "list", statistics.median, 0),
          ratio(a, "list", min, 1), ratio(a, "list", statistics.median, 1)))
EOF
