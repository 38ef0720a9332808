#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/kill/run.sh — the kill benchmark (issue 4). See bench/kill/README.md.
#
#   bench/kill/run.sh [-r RUNS] [-s "SCENARIOS"] [-o REPORT.md] [-N NICE] [N...]
#
# Destroy every established TCP socket of N loopback pairs (2N sockets), with
# a fresh population for every single run: each run enters a NEW private
# network namespace (unshare -n), builds the pairs (bench/mkpairs), times one
# command (bench/measure: wall time, peak RSS, CPU time; in an autogroup of its
# own at nice NICE, default -20, as bench/run.sh does on this shared machine),
# counts what is left in the connected states (ss -Htn), and leaves. Nothing
# touches the host's namespace.
#
# Scenarios: floor (bench/kill/rawkill: dump + batched SOCK_DESTROY, nothing
# decoded), kill (sockdiag kill -t --all), ss (ss -K -t), and kill_bN (kill
# with --batch N; floor_bN likewise) to choose the batch size.
#
# Environment: BUILD (default build-bench), SOCKDIAG (default
# $BUILD/cli/sockdiag), SS (default ss), CC (default cc).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
SS=${SS:-ss}

scenario() {
	case $1 in
	floor)     CMD=("$TOOLS/rawkill" -q);                     DESC='raw floor: dump + batched SOCK_DESTROY (bench/kill/rawkill)' ;;
	floor_b*)  CMD=("$TOOLS/rawkill" -q -b "${1#floor_b}");   DESC="rawkill -b ${1#floor_b}" ;;
	stream)    CMD=("$TOOLS/streamkill" -q);                  DESC='streaming floor: one walk, each datagram destroyed before the next recv (bench/kill/streamkill)' ;;
	stream_pf) CMD=("$TOOLS/streamkill" -q -P);               DESC='streamkill -P (one dump per family)' ;;
	kill)      CMD=("$SOCKDIAG" kill -t --all);               DESC='`sockdiag kill -t --all`' ;;
	kill_n)    CMD=("$SOCKDIAG" kill -tn --all);              DESC='`sockdiag kill -tn --all` (no service names)' ;;
	kill_nd)   CMD=("$SOCKDIAG" kill -t --all --ndjson);      DESC='`sockdiag kill -t --all --ndjson`' ;;
	kill_p1)   CMD=("$SOCKDIAG" kill -tn --all --passes 1);   DESC='`sockdiag kill -tn --all --passes 1` (no re-dump)' ;;
	kill_b*)   CMD=("$SOCKDIAG" kill -t --all --batch "${1#kill_b}"); DESC="\`sockdiag kill -t --all --batch ${1#kill_b}\`" ;;
	base)      CMD=("${SOCKDIAG_BASE:?}" kill -t --all);      DESC='`sockdiag kill -t --all` of $SOCKDIAG_BASE (another build: before/after in one run)' ;;
	ss)        CMD=("$SS" -K -t);                             DESC='`ss -K -t`' ;;
	ss_n)      CMD=("$SS" -K -tn);                            DESC='`ss -K -tn`' ;;
	*) echo "kill/run.sh: unknown scenario $1" >&2; exit 2 ;;
	esac
}

# ---- inner: one run of one scenario, inside a fresh private namespace -------
inner() {
	local n=$1 s=$2 pid line res left
	if [[ "$(readlink /proc/self/ns/net)" == "$(readlink /proc/1/ns/net)" ]]; then
		echo "kill/run.sh: not in a private network namespace, refusing" >&2
		exit 1
	fi
	ip link set lo up
	exec {rfd}< <(exec "$TOOLS/mkpairs" "$n")
	pid=$!
	if ! read -r -t 900 -u "$rfd" line || [[ $line != "ready $n" ]]; then
		echo "kill/run.sh: mkpairs $n failed" >&2
		kill "$pid" 2>/dev/null || true
		exit 1
	fi
	scenario "$s"
	local prio=()
	[[ $NICE == 0 ]] || prio=(-p "$NICE")
	res=$("$TOOLS/measure" "${prio[@]}" -- "${CMD[@]}" 2>/dev/null)
	left=$("$SS" -Htn | wc -l)
	echo "$s $res $left"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

if [[ ${1:-} == --inner ]]; then
	TOOLS=$2
	NICE=$5
	inner "$3" "$4"
	exit
fi

# ---- outer ------------------------------------------------------------------
RUNS=5
SCENARIOS="floor kill kill_n ss ss_n"
REPORT=
NICE=-20
while getopts "r:s:o:N:" opt; do
	case $opt in
	r) RUNS=$OPTARG ;;
	s) SCENARIOS=$OPTARG ;;
	o) REPORT=$OPTARG ;;
	N) NICE=$OPTARG ;;
	*) echo "usage: bench/kill/run.sh [-r RUNS] [-s SCENARIOS] [-o REPORT.md] [-N NICE] [N...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
NS=("$@")
[[ ${#NS[@]} -gt 0 ]] || NS=(10000 50000 200000)

if [[ $(id -u) != 0 ]]; then
	echo "kill/run.sh: needs root (network namespaces)" >&2
	exit 1
fi
TOOLS=$(mktemp -d /tmp/sdiag-killbench.XXXXXX)
trap 'rm -rf "$TOOLS"' EXIT
CC=${CC:-cc}
for t in mkpairs measure; do
	"$CC" -O2 -o "$TOOLS/$t" "$ROOT/bench/$t.c"
done
"$CC" -O2 -o "$TOOLS/rawkill" "$HERE/rawkill.c"
"$CC" -O2 -o "$TOOLS/streamkill" "$HERE/streamkill.c"
[[ -x $SOCKDIAG ]] || { echo "kill/run.sh: no $SOCKDIAG (build it first)" >&2; exit 1; }

SAMPLES=$TOOLS/samples
: >"$SAMPLES"
for n in "${NS[@]}"; do
	echo "N=$n: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	for ((r = 1; r <= RUNS; r++)); do
		for s in $SCENARIOS; do
			line=$(unshare -n "$0" --inner "$TOOLS" "$n" "$s" "$NICE")
			echo "$n $line" >>"$SAMPLES"
			echo "  run $r: $line" >&2
		done
	done
done

# samples: N SCEN WALL RSS_KIB EXIT CPU LEFT -> report
report() {
	echo "### sockdiag kill: destroy every established TCP socket (fresh population each run)"
	echo
	echo "$(date -u +%Y-%m-%d) $(uname -r), $(nproc) CPUs, $RUNS runs per cell, timed commands at nice $NICE"
	echo "in an autogroup of their own; wall time from fork to exit; CPU = user + sys of the command;"
	echo "\"left\" = sockets still in connected states afterwards (max over runs; must be 0)."
	echo
	for n in "${NS[@]}"; do
		echo "#### N = $n pairs ($((2 * n)) sockets)"
		echo
		echo "| scenario | command | min s | median s | × floor (min) | × stream (min / med) | ss -K ÷ this (min) | min CPU s | peak RSS MiB (max) | left | exit |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
		awk -v n="$n" '$1 == n' "$SAMPLES" | sort -k2,2 -k3,3g | awk '
			{ k = $2; w[k, ++c[k]] = $3; if ($4 > rss[k]) rss[k] = $4;
			  if (!(k in cpu) || $6 < cpu[k]) cpu[k] = $6;
			  if ($7 > left[k]) left[k] = $7; if ($5 != 0) ex[k] = $5; order[k] = 1 }
			END { for (k in order) { m = c[k]; min[k] = w[k, 1];
				med[k] = (m % 2) ? w[k, (m + 1) / 2] : (w[k, m / 2] + w[k, m / 2 + 1]) / 2 }
			  for (k in order) printf "%s %.4f %.4f %.1f %d %s %.4f\n", k, min[k], med[k],
				rss[k] / 1024, left[k], (k in ex) ? ex[k] : 0, cpu[k] }' >"$TOOLS/agg"
		floor=$(awk '$1 == "floor" { print $2 }' "$TOOLS/agg")
		ssmin=$(awk '$1 == "ss" { print $2 }' "$TOOLS/agg")
		stmin=$(awk '$1 == "stream" { print $2 }' "$TOOLS/agg")
		stmed=$(awk '$1 == "stream" { print $3 }' "$TOOLS/agg")
		for s in $SCENARIOS; do
			scenario "$s"
			awk -v s="$s" -v d="$DESC" -v f="${floor:-0}" -v ss="${ssmin:-0}" \
				-v st="${stmin:-0}" -v stm="${stmed:-0}" '$1 == s {
				xf = f > 0 ? sprintf("%.2f", $2 / f) : "-";
				xt = st > 0 ? sprintf("%.2f / %.2f", $2 / st, $3 / stm) : "-";
				xs = ss > 0 ? sprintf("%.2f", ss / $2) : "-";
				printf "| %s | %s | %.3f | %.3f | %s | %s | %s | %.3f | %.1f | %d | %s |\n",
					s, d, $2, $3, xf, xt, xs, $7, $4, $5, $6 }' "$TOOLS/agg"
		done
		echo
	done
}
if [[ -n $REPORT ]]; then
	report | tee "$REPORT"
else
	report
fi
