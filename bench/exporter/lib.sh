# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the exporter benchmarks (run.sh, million.sh), sourced after ROOT is set.

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
