#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The push benchmark (issue 36): what a push costs against a scrape of the same
# population, by hand, as root:
#   flock /work/wt/bench.lock bench/exporter/push.sh [-r RUNS] [N...]
# For each N (pairs; default 10000 100000) it enters new private network and pid
# namespaces, builds N loopback TCP pairs (bench/mkpairs) and a receiver that
# answers 204 (sink.py), with tables = tcp and tcp-info = yes, and measures
# (min and median of RUNS):
#   once_print  `exporter --once --openmetrics` to /dev/null (bench/measure: fork to wait4)
#   once_rw     `exporter --once --remote-write URL` (render, parse, encode, snappy, POST)
#   once_otlp   `exporter --once --otlp URL`
# and, in a running exporter, the CPU time (utime + stime of /proc/PID/stat, in clock
# ticks: OPS operations, default 20, make it precise) per operation:
#   cpu_scrape  a scrape of /metrics (OpenMetrics), one a second
#   cpu_rw      a push by remote write (push-interval = 1s; pushes counted by the sink)
#   cpu_otlp    a push by OTLP
# Environment: BUILD (default build-bench, --buildtype=release), SOCKDIAG, CC, OPS.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=7
. "$ROOT/bench/exporter/lib.sh" # BUILD, SOCKDIAG and the helpers
OPS=${OPS:-20}
HZ=$(getconf CLK_TCK)

cpu_s() { awk -v hz="$HZ" '{ printf "%.4f", ($14 + $15) / hz }' "/proc/$1/stat"; }

inner() {
	local n=$1 out=$2 pid line s sink=127.0.0.1:9411
	ip link set lo up
	exec {rfd}< <(exec "$TOOLS/mkpairs" "$n")
	pid=$!
	read -r -t 900 -u "$rfd" line && [[ $line == "ready $n" ]] || { echo "mkpairs failed" >&2; exit 1; }
	"$PY" "$ROOT/bench/exporter/sink.py" 9411 "$out/sink" &
	local sp=$!
	wait_http "http://$sink/"
	printf 'tables = tcp\ntcp-info = yes\n' >"$out/c.conf"
	{
		echo "## N = $n pairs ($("$SOCKDIAG" list -tan -H | wc -l) TCP sockets), $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo
		echo "| scenario | min s | median s | peak RSS MiB |"
		echo "|---|---:|---:|---:|"
	} >"$out/report-$n"
	declare -A cmd=(
		[once_print]="--once --openmetrics"
		[once_rw]="--once --remote-write http://$sink/api/v1/write"
		[once_otlp]="--once --otlp http://$sink"
	)
	# Interleaved (a run of each in turn), so that the machine's load drifts alike for all.
	for s in once_print once_rw once_otlp; do
		# shellcheck disable=SC2086
		"$TOOLS/measure" -- "$SOCKDIAG" exporter -c "$out/c.conf" ${cmd[$s]} >/dev/null
		: >"$out/s-$s"
	done
	for _ in $(seq "$RUNS"); do
		for s in once_print once_rw once_otlp; do
			# shellcheck disable=SC2086
			"$TOOLS/measure" -- "$SOCKDIAG" exporter -c "$out/c.conf" ${cmd[$s]} >>"$out/s-$s"
		done
	done
	for s in once_print once_rw once_otlp; do
		echo "| $s | $(awk '{ print $1 }' "$out/s-$s" | stats | sed 's/ / | /') | $(awk '{ printf "%.1f\n", $2 / 1024 }' "$out/s-$s" | sort -g | tail -1) |" >>"$out/report-$n"
		echo "$s $(awk '{ print $1 }' "$out/s-$s" | stats)" >>"$out/raw-$n"
	done
	# CPU per operation in a running exporter.
	local ep c0 c1 k
	"$SOCKDIAG" exporter -c "$out/c.conf" --listen 127.0.0.1:10113 2>/dev/null &
	ep=$!
	wait_http "http://127.0.0.1:10113/"
	"$PY" "$ROOT/bench/exporter/scrape.py" http://127.0.0.1:10113/metrics 1 >/dev/null
	c0=$(cpu_s $ep)
	# One scrape a second, the pushes' cadence (push-interval = 1s): a pass right after
	# another finds the kernel's tables in the caches, one a second later does not.
	"$PY" - "$OPS" <<-'PY'
	import sys, time, urllib.request
	for _ in range(int(sys.argv[1])):
	    t0 = time.monotonic()
	    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:10113/metrics",
	        headers={"Accept": "application/openmetrics-text;version=1.0.0"}), timeout=300).read()
	    time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
	PY
	c1=$(cpu_s $ep)
	echo "cpu_scrape $(awk -v a="$c0" -v b="$c1" -v k="$OPS" 'BEGIN { printf "%.4f", (b - a) / k }')" >>"$out/raw-$n"
	kill "$ep"; wait "$ep" 2>/dev/null || true
	for s in rw:remote-write-url=http://$sink/api/v1/write otlp:otlp-endpoint=http://$sink; do
		local name=${s%%:*} key=${s#*:}
		printf 'tables = tcp\ntcp-info = yes\npush-interval = 1s\n%s\n' "${key/=/ = }" >"$out/p.conf"
		: >"$out/sink"
		"$SOCKDIAG" exporter -c "$out/p.conf" --listen 127.0.0.1:10114 2>/dev/null &
		ep=$!
		until [ "$(wc -l <"$out/sink")" -ge 1 ]; do sleep 0.05; done	# the first push: warm-up
		c0=$(cpu_s $ep)
		until [ "$(wc -l <"$out/sink")" -ge $((OPS + 1)) ]; do sleep 0.05; done
		c1=$(cpu_s $ep)
		k=$(($(wc -l <"$out/sink") - 1))
		echo "cpu_$name $(awk -v a="$c0" -v b="$c1" -v k="$k" 'BEGIN { printf "%.4f", (b - a) / k }')" >>"$out/raw-$n"
		echo "- $name: $k pushes of $(awk 'NR > 1 { s += $2; n++ } END { printf "%d", s / n }' "$out/sink") bytes on average" >>"$out/notes-$n"
		kill "$ep"; wait "$ep" 2>/dev/null || true
	done
	kill "$sp" "$pid" 2>/dev/null || true
	echo >>"$out/report-$n"
	awk '/^cpu_/ { printf "| %s (CPU s per operation, running exporter) | %s |\n", $1, $2 }' \
		"$out/raw-$n" >>"$out/report-$n"
}

if [[ ${1:-} == --inner ]]; then
	shift
	TOOLS=$1 RUNS=$3 inner "$2" "$4"
	exit 0
fi
bench_setup push.sh "$@"
bench_each '
		{ min[$1] = $2; med[$1] = $3 }
		END {
			printf "Ratios at N = %s:\n\n", n
			printf "- --once remote write / --once print (wall, min, median): %.2f, %.2f (target <= 1.10)\n", min["once_rw"] / min["once_print"], med["once_rw"] / med["once_print"]
			printf "- --once OTLP / --once print (wall, min, median): %.2f, %.2f (target <= 1.10)\n", min["once_otlp"] / min["once_print"], med["once_otlp"] / med["once_print"]
			printf "- CPU per push / per scrape, running exporter: remote write %.2f, OTLP %.2f (target <= 1.10)\n", min["cpu_rw"] / min["cpu_scrape"], min["cpu_otlp"] / min["cpu_scrape"]
		}'
