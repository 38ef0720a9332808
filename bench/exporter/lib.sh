# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the exporter benchmarks (run.sh, million.sh, push.sh), sourced after ROOT is set.

BUILD=${BUILD:-$ROOT/build-bench}
SOCKDIAG=${SOCKDIAG:-$BUILD/cli/sockdiag}

stats() { # min median of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f %.4f", v[1], m }'
}

hwm() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# Python without a version manager's shims (their start-up is slower than a scrape).
PY=$(command -v /usr/bin/python3 || command -v python3)

wait_http() { # URL of "/" (cheap: no pass)
	for _ in $(seq 100); do
		"$PY" -c 'import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=5)' \
			"$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "$0: $1 never answered" >&2
	exit 1
}

# runs_opt "$@": -r RUNS into RUNS; sets NOPTS to the count to shift.
runs_opt() {
	local o OPTIND=1
	while getopts r: o; do
		case $o in
		r) RUNS=$OPTARG ;;
		*) exit 2 ;;
		esac
	done
	NOPTS=$((OPTIND - 1))
}

# bench_setup NAME "$@": -r RUNS (runs_opt; the N... left in ARGS), root and $SOCKDIAG
# checked, TOOLS (mkpairs, measure built) and OUT made, both removed at exit.
bench_setup() {
	local f name=$1
	shift
	runs_opt "$@"
	shift "$NOPTS"
	ARGS=("$@")
	[[ $(id -u) == 0 ]] || { echo "$name: needs root (unshare -n)" >&2; exit 1; }
	[[ -x $SOCKDIAG ]] || { echo "$name: no $SOCKDIAG (meson setup build-bench --buildtype=release)" >&2; exit 1; }
	TOOLS=$(mktemp -d)
	OUT=$(mktemp -d)
	trap 'rm -rf "$TOOLS" "$OUT"' EXIT
	for f in mkpairs measure; do
		"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -o "$TOOLS/$f" "$ROOT/bench/$f.c"
	done
}

# bench_each AWK: for each N of ARGS (default 10000 100000), "$0 --inner TOOLS N RUNS OUT"
# in new network and pid namespaces, its report and notes, then the ratios AWK prints from
# its raw lines ("scenario min median"; -v n=N).
bench_each() {
	local n nn
	for n in "${ARGS[@]:-10000 100000}"; do
		for nn in $n; do
			unshare -n -p -f --mount-proc -- env SOCKDIAG="$SOCKDIAG" "$0" --inner "$TOOLS" "$nn" "$RUNS" "$OUT"
			cat "$OUT/report-$nn"
			echo
			cat "$OUT/notes-$nn" 2>/dev/null || true
			echo
			awk -v n="$nn" "$1" "$OUT/raw-$nn"
			echo
		done
	done
}
