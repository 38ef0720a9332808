#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The exporter benchmark (issue 13), by hand, as root:
#   flock /work/wt/bench.lock bench/exporter/run.sh [-r RUNS] [N...]
# For each N (pairs; default 10000 100000 = 20k and 200k sockets) it enters new
# private network and pid namespaces, builds N loopback TCP pairs
# (bench/mkpairs), and measures, RUNS times each (min and median):
#   list      `sockdiag list -tan` (bench/measure: fork to wait4)
#   once      `sockdiag exporter --once`, tables = tcp, tcp-info = no
#   once_i    the same with tcp-info = yes (RTT histogram, TCP sums)
#   http      a scrape of a running exporter (tcp, no tcp-info), timed by the
#             client; http_i with tcp-info; http_all: the default
#             configuration (every table, tcp-info)
#   conc10    10 simultaneous scrapes (tcp-info): round wall time, and the
#             passes they cost (sockdiag_scrape_passes_total)
#   node      prometheus-node-exporter (tcpstat + netstat collectors only),
#             if installed, scraped the same way in the same namespace
# and each daemon's peak RSS (VmHWM) after its scrapes.
# Environment: BUILD (default build-bench, configured --buildtype=release),
# SOCKDIAG (default $BUILD/cli/sockdiag), CC.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=7
. "$ROOT/bench/exporter/lib.sh" # BUILD, SOCKDIAG and the helpers

passes() {
	"$PY" -c 'import urllib.request, sys
for l in urllib.request.urlopen(sys.argv[1]).read().decode().splitlines():
    if l.startswith("sockdiag_scrape_passes_total "): print(int(float(l.split()[1])))' "$1"
}

inner() {
	local n=$1 out=$2 pid line cfg
	ip link set lo up
	exec {rfd}< <(exec "$TOOLS/mkpairs" "$n")
	pid=$!
	read -r -t 900 -u "$rfd" line && [[ $line == "ready $n" ]] || { echo "mkpairs failed" >&2; exit 1; }
	local socks
	socks=$("$SOCKDIAG" list -tan -H | wc -l)
	printf 'tables = tcp\ntcp-info = no\n' >"$out/tcp.conf"
	printf 'tables = tcp\ntcp-info = yes\n' >"$out/tcp_i.conf"
	: >"$out/all.conf"
	{
		echo "## N = $n pairs ($socks TCP sockets), $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo
		echo "| scenario | min s | median s | peak RSS MiB |"
		echo "|---|---:|---:|---:|"
	} >"$out/report-$n"
	row() { echo "| $1 | $2 | $3 | $4 |" >>"$out/report-$n"; }
	local s rss
	for s in list once once_i; do
		local cmd=("$SOCKDIAG" list -tan)
		[[ $s == once ]] && cmd=("$SOCKDIAG" exporter -c "$out/tcp.conf" --once)
		[[ $s == once_i ]] && cmd=("$SOCKDIAG" exporter -c "$out/tcp_i.conf" --once)
		"$TOOLS/measure" -- "${cmd[@]}" >/dev/null # warm-up
		: >"$out/s"
		for _ in $(seq "$RUNS"); do "$TOOLS/measure" -- "${cmd[@]}" >>"$out/s"; done
		rss=$(awk '{ print $2 / 1024 }' "$out/s" | sort -g | tail -1)
		row "$s" $(awk '{ print $1 }' "$out/s" | stats) "$rss"
		echo "$s $(awk '{ print $1 }' "$out/s" | stats)" >>"$out/raw-$n"
	done
	local port=10113
	for s in http:tcp http_i:tcp_i http_all:all; do
		local name=${s%%:*} conf=${s#*:} url
		url="http://127.0.0.1:$port/metrics"
		"$SOCKDIAG" exporter -c "$out/$conf.conf" --listen "127.0.0.1:$port" 2>/dev/null &
		local ep=$!
		wait_http "${url%/metrics}/"
		"$PY" "$ROOT/bench/exporter/scrape.py" "$url" 1 >/dev/null # warm-up
		"$PY" "$ROOT/bench/exporter/scrape.py" "$url" "$RUNS" >"$out/s"
		row "$name" $(stats <"$out/s") "$(hwm $ep)"
		echo "$name $(stats <"$out/s")" >>"$out/raw-$n"
		if [[ $name == http_i ]]; then
			local p0 p1
			p0=$(passes "$url")
			"$PY" "$ROOT/bench/exporter/scrape.py" "$url" "$RUNS" 10 >"$out/c"
			p1=$(passes "$url")
			# Each passes() read is a pass of its own.
			row "conc10 (10 simultaneous, round wall)" $(awk '{ print $1 }' "$out/c" | stats) "$(hwm $ep)"
			echo "conc10 $(awk '{ print $1 }' "$out/c" | stats)" >>"$out/raw-$n"
			echo "- 10 simultaneous scrapes x $RUNS rounds cost $((p1 - p0 - 1)) passes ($((10 * RUNS)) requests)." >>"$out/notes-$n"
		fi
		kill "$ep"
		wait "$ep" 2>/dev/null || true
		port=$((port + 1))
	done
	if command -v prometheus-node-exporter >/dev/null; then
		prometheus-node-exporter --collector.disable-defaults --collector.tcpstat \
			--collector.netstat --web.listen-address=127.0.0.1:9100 2>/dev/null &
		local np=$!
		wait_http "http://127.0.0.1:9100/"
		"$PY" "$ROOT/bench/exporter/scrape.py" "http://127.0.0.1:9100/metrics" 1 >/dev/null
		"$PY" "$ROOT/bench/exporter/scrape.py" "http://127.0.0.1:9100/metrics" "$RUNS" >"$out/s"
		row "node_exporter (tcpstat, netstat)" $(stats <"$out/s") "$(hwm $np)"
		echo "node $(stats <"$out/s")" >>"$out/raw-$n"
		kill "$np"
		wait "$np" 2>/dev/null || true
	fi
	kill "$pid" 2>/dev/null || true
}

if [[ ${1:-} == --inner ]]; then
	shift
	TOOLS=$1 RUNS=$3 inner "$2" "$4"
	exit 0
fi
bench_setup run.sh "$@"
bench_each '
		{ min[$1] = $2; med[$1] = $3 }
		END {
			printf "Ratios at N = %s (min, median):\n\n", n
			printf "- one scrape (tcp, no tcp-info) / list -tan: %.2f, %.2f (target <= 1.3)\n", min["http"] / min["list"], med["http"] / med["list"]
			printf "- one scrape with tcp-info / list -tan: %.2f, %.2f (target <= 1.6)\n", min["http_i"] / min["list"], med["http_i"] / med["list"]
			printf "- --once (tcp, no tcp-info) / list -tan: %.2f, %.2f\n", min["once"] / min["list"], med["once"] / med["list"]
			printf "- --once with tcp-info / list -tan: %.2f, %.2f\n", min["once_i"] / min["list"], med["once_i"] / med["list"]
			printf "- 10 simultaneous scrapes / one scrape (tcp-info): %.2f, %.2f\n", min["conc10"] / min["http_i"], med["conc10"] / med["http_i"]
			if ("node" in min)
				printf "- node_exporter scrape / sockdiag scrape with tcp-info: %.2f, %.2f\n", min["node"] / min["http_i"], med["node"] / med["http_i"]
		}'
