#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/procs.sh — process attribution benchmark (issue 5): `sockdiag list -tanp`
# against `sockdiag list -tan` and `ss -tanp`, at N established loopback pairs.
#
#   bench/procs.sh [-P] [-r RUNS] [-c SS_P_CAP] [-s "SCENARIOS"] [-o REPORT.md] [N...]
#   (default N: 10000 50000 200000; RUNS default 5; SCENARIOS default
#   "list list_p list_pproc ss ss_p")
#
# Scenarios: list (`list -tan`), list_p (`list -tanp`: the BPF owners iterator
# when it loads, as root), list_pbpf (`--owners=bpf`), list_pproc
# (`--owners=proc`: the /proc walk), ss (`ss -tan`), ss_p (`ss -tanp`).
#
# Same method as bench/run.sh (read bench/README.md): for each N a NEW private
# network namespace (unshare -n) holding N pairs built by bench/mkpairs, every
# command timed by bench/measure (fork to wait4, CPU = user + sys, peak RSS),
# stdout to /dev/null, runs interleaved round-robin after one untimed warm-up.
# `ss -tanp` is quadratic in the number of sockets: above SS_P_CAP sockets
# (default 150000) it runs once, without warm-up. Nothing touches the host's
# network namespace.
#
# The process scans (ours and ss's) read every process's descriptors: by
# default the host's whole /proc (read-only), so their cost includes whatever
# else the host holds open (the "fds" column). With -P each N also gets a
# private pid namespace with its own /proc (unshare -p -f --mount-proc): the
# scans then see only the pairs' processes, which isolates the scaling in N.
#
# Environment: BUILD (default build-bench), SOCKDIAG (default $BUILD/cli/sockdiag),
# SS (default ss), CC (default cc), NICE (default -20, 0 = off).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}
SS=${SS:-ss}
NICE=${NICE:--20}
SCENARIOS=${SCENARIOS:-"list list_p list_pproc ss ss_p"}

scenario() {
	case $1 in
	list)   CMD=("$SOCKDIAG" list -tan) ;;
	list_p) CMD=("$SOCKDIAG" list -tanp) ;;
	list_pbpf) CMD=("$SOCKDIAG" list -tanp --owners=bpf) ;;
	list_pproc) CMD=("$SOCKDIAG" list -tanp --owners=proc) ;;
	ss)     CMD=("$SS" -tan) ;;
	ss_p)   CMD=("$SS" -tanp) ;;
	esac
}

# Runs inside the private namespace: one N.
inner() {
	local n=$1 out=$2 runs=$3 cap=$4 pid line s r socks prio=()
	ip link set lo up
	exec {rfd}< <(exec "$TOOLS/mkpairs" "$n")
	pid=$!
	if ! read -r -t 900 -u "$rfd" line || [[ $line != "ready $n" ]]; then
		echo "procs.sh: mkpairs $n failed" >&2
		kill "$pid" 2>/dev/null || true
		exit 1
	fi
	[[ $NICE == 0 ]] || prio=(-p "$NICE")
	socks=$("$TOOLS/rawdump" | awk '{print $6}')
	{
		echo "sockets $socks"
		echo "fds $(find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
		echo "load_before $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$out/meta-$n"
	: >"$out/samples-$n"
	for s in $SCENARIOS; do
		[[ $s == ss_p && $socks -gt $cap ]] && continue
		scenario "$s"
		"$TOOLS/measure" -o "$out/out-$n-$s" -- "${CMD[@]}" >/dev/null
		echo "lines_$s $(wc -l <"$out/out-$n-$s")" >>"$out/meta-$n"
		echo "owned_$s $(grep -c 'users:((' "$out/out-$n-$s")" >>"$out/meta-$n"
		[[ $s == list_p* ]] || rm -f "$out/out-$n-$s"
	done
	# The owners scenarios must print the same (the same owners either way).
	local a b
	for a in "$out/out-$n-"list_p*; do
		[[ -e $a ]] || continue
		for b in "$out/out-$n-"list_p*; do
			cmp -s "$a" "$b" || echo "differ ${a##*-} ${b##*-}" >>"$out/meta-$n"
		done
	done
	rm -f "$out/out-$n-"list_p*
	for ((r = 1; r <= runs; r++)); do
		for s in $SCENARIOS; do
			if [[ $s == ss_p && $socks -gt $cap ]]; then
				((r == 1)) || continue
				scenario "$s"
				echo "$s $("$TOOLS/measure" "${prio[@]}" -o "$out/out-$n-$s" -- "${CMD[@]}")" \
					>>"$out/samples-$n"
				echo "lines_$s $(wc -l <"$out/out-$n-$s")" >>"$out/meta-$n"
				echo "owned_$s $(grep -c 'users:((' "$out/out-$n-$s")" >>"$out/meta-$n"
				rm -f "$out/out-$n-$s"
				continue
			fi
			scenario "$s"
			echo "$s $("$TOOLS/measure" "${prio[@]}" -- "${CMD[@]}")" >>"$out/samples-$n"
		done
	done
	echo "load_after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta-$n"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

# samples ("scen wall rss exit cpu") -> "scen wall_min wall_med cpu_min cpu_med rss_max runs exit"
stats() {
	awk '{ w[$1] = w[$1] " " $2; c[$1] = c[$1] " " $5; if ($3 > m[$1]) m[$1] = $3
		if ($4 != 0) bad[$1] = $4; cnt[$1]++ }
	function med(str,   a, k, i, j, t) {
		k = split(str, a, " ")
		for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
		MIN = a[1]
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END { for (s in cnt) { wm = med(w[s]); wmin = MIN; cm = med(c[s]); cmin = MIN
		printf "%s %.4f %.4f %.4f %.4f %d %d %d\n", s, wmin, wm, cmin, cm, m[s], cnt[s], bad[s] + 0 } }' "$1"
}

get() { awk -v s="$2" -v c="$3" '$1 == s { print $c }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "–"; else printf "%.2f", a / b }'; }

report() {
	local out=$1 n s st first=""
	shift
	echo "| N pairs | TCP sockets | fds on host | scenario | runs | wall min s | wall median s | CPU min s | CPU median s | peak RSS KiB | lines | with owners | ×list -tan (wall min / med) | µs per socket (wall min) |"
	echo "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in "$@"; do
		st="$out/stats-$n"
		stats "$out/samples-$n" >"$st"
		for s in $SCENARIOS; do
			[[ -n $(get "$st" "$s" 2) ]] || continue
			scenario "$s"
			printf '| %s | %s | %s | `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n' \
				"$n" "$(get "$out/meta-$n" sockets 2)" "$(get "$out/meta-$n" fds 2)" \
				"${CMD[*]##*/}" "$(get "$st" "$s" 7)" \
				"$(get "$st" "$s" 2)" "$(get "$st" "$s" 3)" "$(get "$st" "$s" 4)" "$(get "$st" "$s" 5)" \
				"$(get "$st" "$s" 6)" "$(get "$out/meta-$n" "lines_$s" 2)" \
				"$(get "$out/meta-$n" "owned_$s" 2)" \
				"$(ratio "$(get "$st" "$s" 2)" "$(get "$st" list 2)")" \
				"$(ratio "$(get "$st" "$s" 3)" "$(get "$st" list 3)")" \
				"$(awk -v w="$(get "$st" "$s" 2)" -v k="$(get "$out/meta-$n" sockets 2)" \
					'BEGIN { printf "%.2f", w * 1e6 / k }')"
		done
	done
	echo
	for n in "$@"; do
		if grep -q '^differ' "$out/meta-$n"; then
			echo "- N=$n: the -p scenarios printed DIFFERENT output: $(grep '^differ' "$out/meta-$n" | head -3 | tr '\n' ' ')"
		else
			echo "- N=$n: every -p scenario printed the same output (same owners)."
		fi
	done
	echo
	echo "Load averages (before → after) per N:"
	for n in "$@"; do
		echo "- N=$n: $(cut -d' ' -f2- <(grep load_before "$out/meta-$n")) → $(cut -d' ' -f2- <(grep load_after "$out/meta-$n"))"
	done
	echo
	echo "Targets: issue 5, at 200k \`list -tanp\` ≤ 5× \`list -tan\` with the /proc walk, linear in N"
	echo "(µs per socket flat); issue 14, with the BPF iterator ≤ 2× and peak RSS ≤ 32 MB."
}

main() {
	local runs=5 cap=150000 reportf="" opt n ns out pidns=() where="the host's /proc"
	while getopts "Pr:c:s:o:" opt; do
		case $opt in
		P) pidns=(-p -f --mount-proc); where='a private pid namespace and /proc (-P)' ;;
		r) runs=$OPTARG ;;
		c) cap=$OPTARG ;;
		s) SCENARIOS=$OPTARG ;;
		o) reportf=$OPTARG ;;
		*) echo "usage: bench/procs.sh [-P] [-r RUNS] [-c SS_P_CAP] [-s SCENARIOS] [-o REPORT.md] [N...]" >&2; exit 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	ns=("$@")
	[[ ${#ns[@]} -gt 0 ]] || ns=(10000 50000 200000)
	[[ $(id -u) == 0 ]] || { echo "procs.sh: needs root (unshare -n)" >&2; exit 1; }
	[[ -x $SOCKDIAG ]] || { echo "procs.sh: $SOCKDIAG not built" >&2; exit 1; }
	out=$(mktemp -d /tmp/sockdiag-procs.XXXXXX)
	TOOLS=$out/tools
	mkdir -p "$TOOLS"
	for f in mkpairs rawdump measure; do
		"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$TOOLS/$f" "$ROOT/bench/$f.c"
	done
	export TOOLS SOCKDIAG SS NICE SCENARIOS
	for n in "${ns[@]}"; do
		unshare -n "${pidns[@]}" -- "$0" --inner "$n" "$out" "$runs" "$cap"
		sleep 3
	done
	{
		echo "## Processes (-p), run of $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "- $(nproc) CPUs, kernel $(uname -r), $("$SS" -V 2>&1 | head -1); sockdiag $SOCKDIAG"
		echo "- bench/procs.sh: $runs timed runs per scenario (\`ss -tanp\` once above $cap sockets)," \
			"interleaved after one warm-up; stdout to /dev/null; nice $NICE; process scans over $where."
		echo
		report "$out" "${ns[@]}"
		echo
		echo "Raw samples: $out/samples-N (scenario wall_s maxrss_kib exit cpu_s)."
	} | tee ${reportf:+"$reportf"}
}

if [[ ${1:-} == --inner ]]; then
	shift
	inner "$@"
else
	main "$@"
fi
