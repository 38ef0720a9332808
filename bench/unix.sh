#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/unix.sh — unix sockets: `sockdiag list -xa` (table, NDJSON, -p) against `ss -xa`
# and the raw unix_diag floor. See bench/README.md.
#
#   bench/unix.sh [-r RUNS] [-N NICE] [N...]   (default N: 100000 pairs = 200k sockets)
#
# For each N it enters new private network and pid namespaces (unshare -n -p -f
# --mount-proc), builds N connected unix stream pairs and 100 named listeners there
# (bench/mkunix.py), checks that sockdiag and ss list the same number of sockets,
# and times each scenario RUNS times, interleaved round-robin after one untimed
# warm-up (bench/measure: wall, CPU, peak RSS). `ss -xap` runs at most 3 times (it
# takes ~9 s at 100k pairs). A unix dump sees only its own network namespace, so
# the host's sockets are neither counted nor touched.
#
# Environment: BUILD (default build-bench), SOCKDIAG (default $BUILD/cli/sockdiag),
# SS (default ss), CC (default cc).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
SS=${SS:-ss}
SCENARIOS="floor list ndjson ss list_p ss_p"

scenario() {
	case $1 in
	floor)  CMD=("$TOOLS/rawdump" -q -x);           DESC='raw unix_diag dump floor (name, peer, queues, uid), count only' ;;
	list)   CMD=("$SOCKDIAG" list -xa);             DESC='`sockdiag list -xa`' ;;
	ndjson) CMD=("$SOCKDIAG" list -xa --ndjson);    DESC='`sockdiag list -xa --ndjson`' ;;
	ss)     CMD=("$SS" -xa);                        DESC='`ss -xa`' ;;
	list_p) CMD=("$SOCKDIAG" list -xap);            DESC='`sockdiag list -xap`' ;;
	ss_p)   CMD=("$SS" -xap);                       DESC='`ss -xap`' ;;
	*) echo "unix.sh: unknown scenario $1" >&2; exit 2 ;;
	esac
}

inner() {
	local n=$1 out=$2 runs=$3 line got want s r
	coproc POP { exec python3 "$ROOT/bench/mkunix.py" "$n"; }
	read -r line <&"${POP[0]}" || { echo "unix.sh: mkunix failed" >&2; exit 1; }
	want=${line#ready }
	got=$("$SOCKDIAG" list -xa -H | wc -l)
	[[ $got == $(("$SS" -xa -H || true) | wc -l) ]] ||
		{ echo "unix.sh: sockdiag lists $got sockets, ss another number" >&2; exit 1; }
	((got >= want)) || { echo "unix.sh: $got sockets listed, $want made" >&2; exit 1; }
	echo "$got" >"$out/count-$n"
	for s in $SCENARIOS; do # warm-up (not ss -xap)
		[[ $s == ss_p ]] && continue
		scenario "$s"
		"${CMD[@]}" >/dev/null
	done
	for ((r = 0; r < runs; r++)); do
		for s in $SCENARIOS; do
			[[ $s == ss_p ]] && ((r >= 3)) && continue
			scenario "$s"
			echo "$s $("$TOOLS/measure" -p "$NICE" -- "${CMD[@]}")" >>"$out/raw-$n"
		done
	done
	kill "$POP_PID" 2>/dev/null || true
}

report() {
	local n=$1 out=$2
	echo "### N = $n pairs ($(cat "$out/count-$n") unix sockets)"
	echo
	python3 - "$out/raw-$n" "$SCENARIOS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    s, wall, rss, rc, cpu = line.split()
    if rc != "0":
        sys.exit("unix.sh: %s exited %s" % (s, rc))
    rows.setdefault(s, []).append((float(wall), int(rss), float(cpu)))
def mm(s, i):
    v = [r[i] for r in rows[s]]
    return min(v), statistics.median(v)
print("| scenario | runs | wall min / median (ms) | CPU median (ms) | peak RSS (MiB) | / floor (min / median) | / ss (min / median) |")
print("|---|---|---|---|---|---|---|")
fmin, fmed = mm("floor", 0)
for s in sys.argv[2].split():
    wmin, wmed = mm(s, 0)
    _, cmed = mm(s, 2)
    rss = max(r[1] for r in rows[s]) / 1024
    ref = "ss_p" if s.endswith("_p") else "ss"
    smin, smed = mm(ref, 0)
    vs_ss = "%.2f / %.2f" % (wmin / smin, wmed / smed) if s not in ("floor", ref) else ""
    print("| %s | %d | %.1f / %.1f | %.1f | %.1f | %.2f / %.2f | %s |" % (
        s, len(rows[s]), wmin * 1e3, wmed * 1e3, cmed * 1e3, rss, wmin / fmin, wmed / fmed, vs_ss))
PY
	echo
}

main() {
	local runs=7 opt n
	NICE=-20
	while getopts "r:N:" opt; do
		case $opt in
		r) runs=$OPTARG ;;
		N) NICE=$OPTARG ;;
		*) echo "usage: bench/unix.sh [-r RUNS] [-N NICE] [N...]" >&2; exit 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	[[ $# -gt 0 ]] || set -- 100000
	[[ $(id -u) == 0 ]] || { echo "unix.sh: needs root (unshare -n -p)" >&2; exit 1; }
	[[ -x $SOCKDIAG ]] || { echo "unix.sh: $SOCKDIAG not built" >&2; exit 1; }
	OUT=$(mktemp -d /tmp/sockdiag-bench-unix.XXXXXX)
	TOOLS=$OUT/tools
	mkdir -p "$TOOLS"
	for f in rawdump measure; do
		"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$TOOLS/$f" "$ROOT/bench/$f.c"
	done
	export TOOLS SOCKDIAG SS NICE
	echo "## Unix sockets, run of $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- Kernel: $(uname -r); ss: $("$SS" -V 2>&1 | head -1);" \
		"sockdiag: git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "- $runs runs per scenario (ss -xap: 3), interleaved after a warm-up; nice $NICE;" \
		"load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	for n in "$@"; do
		unshare -n -p -f --mount-proc -- "$0" --inner "$n" "$OUT" "$runs"
		report "$n" "$OUT"
	done
	rm -rf "$OUT"
}

if [[ ${1:-} == --inner ]]; then
	shift
	inner "$@"
else
	main "$@"
fi
