#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The exporter at a million TCP sockets (issue 36), by hand, as root:
#   flock /work/wt/bench.lock bench/exporter/million.sh [-r RUNS] [PAIRS]
# In new private network and pid namespaces it builds PAIRS loopback pairs
# (default 500000: 1,000,000 sockets, bench/mkpairs) and measures, RUNS times
# each (default 5), round-robin after one untimed warm-up each:
#   raw_i    bench/rawdump -L -e 0xe: one TCP walk asking for what the exporter
#            asks for (INET_DIAG_INFO, VEGASINFO, CONG), messages counted only:
#            the floor of a scrape with tcp_info
#   raw      bench/rawdump -L: the same without extensions
#   once_i   `sockdiag exporter --once` (tables = tcp, tcp-info = yes):
#            bench/measure, wall time and peak RSS
#   http_i   one scrape of a running exporter (same configuration), timed
#            by the client (scrape.py)
#   http_new the same with the per-destination metrics on (ephemeral-ports,
#            udp-drops, destinations = cgroup)
#   node     prometheus-node-exporter --collector.disable-defaults
#            --collector.tcpstat (it reads /proc/net/tcp and tcp6), if
#            installed, in the same namespace, scraped the same way
# Wall time and CPU time (user + system, the kernel's walk included: for the
# commands from wait4, for the daemons the difference of /proc/PID/stat around
# each scrape), the commands at nice -20 in their own autogroup (bench/measure
# -p -20), the daemons at nice -20: on a shared machine CPU time is the
# steadier measure. Peak RSS: ru_maxrss, or each daemon's VmHWM after its
# scrapes (start, warm-up, RUNS scrapes). Prints a Markdown table and the
# ratios to raw_i.
# Memory: about 4 GiB of kernel memory for 1M sockets; it checks MemAvailable
# first and everything goes with the namespaces when the script ends.
# Environment: BUILD (default build-bench, --buildtype=release), SOCKDIAG, CC.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=5
. "$ROOT/bench/exporter/lib.sh" # BUILD, SOCKDIAG and the helpers

# A daemon in a session, so an autogroup, of its own at nice -20, as measure -p -20 runs the
# commands (in the script's autogroup its scrapes waited for the machine's other work).
daemon() {
	setsid sh -c 'echo -20 >/proc/self/autogroup; exec nice -n -20 "$@"' sh "$@" 2>/dev/null &
	DPID=$!
}

# CPU seconds (user + system: the kernel's walk is the reader's system time) of a process.
cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }

# row NAME FILE: "wall cpu rss_kib" lines -> a table row and the raw line for the ratios.
row() {
	local w c
	w=$(awk '{ print $1 }' "$2" | stats)
	c=$(awk '{ print $2 }' "$2" | stats)
	echo "| $1 | ${w% *} | ${w#* } | ${c% *} | ${c#* } | $(awk '{ print $3 / 1024 }' "$2" | sort -g | tail -1) |" >>"$OUTD/report"
	echo "$1 $w $c" >>"$OUTD/raw"
}

# scrape_daemon NAME PID URL: RUNS scrapes, each its wall time (client) and the daemon's CPU.
scrape_daemon() {
	local i c0 c1 w
	"$PY" "$ROOT/bench/exporter/scrape.py" "$3" 1 >/dev/null # warm-up
	for i in $(seq "$RUNS"); do
		c0=$(cpu "$2")
		w=$("$PY" "$ROOT/bench/exporter/scrape.py" "$3" 1)
		c1=$(cpu "$2")
		echo "$w $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }') 0" >>"$OUTD/m-$1"
	done
	local hw
	hw=$(awk '/^VmHWM/ { print $2 }' "/proc/$2/status")
	sed -i "\$s/ 0\$/ $hw/" "$OUTD/m-$1"
	row "$1" "$OUTD/m-$1"
}

inner() {
	local n=$1 line pid
	OUTD=$2
	ip link set lo up
	exec {rfd}< <(exec "$TOOLS/mkpairs" "$n")
	pid=$!
	read -r -t 1800 -u "$rfd" line && [[ $line == "ready $n" ]] || { echo "mkpairs failed" >&2; exit 1; }
	printf 'tables = tcp\ntcp-info = yes\n' >"$OUTD/i.conf"
	printf 'tables = tcp udp\ntcp-info = yes\nephemeral-ports = yes\nudp-drops = yes\ndestinations = cgroup\n' >"$OUTD/new.conf"
	local socks
	socks=$("$TOOLS/rawdump" -L | awk '{ print $NF }')
	local cmds=(raw_i raw once_i)
	declare -A cmd=(
		[raw_i]="$TOOLS/rawdump -q -L -e 0xe"
		[raw]="$TOOLS/rawdump -q -L"
		[once_i]="$SOCKDIAG exporter -c $OUTD/i.conf --once"
	)
	local s i
	{
		echo "## $socks TCP sockets ($n pairs), $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo
		echo "| scenario | wall min s | wall median s | CPU min s | CPU median s | peak RSS MiB |"
		echo "|---|---:|---:|---:|---:|---:|"
	} >"$OUTD/report"
	for s in "${cmds[@]}"; do "$TOOLS/measure" -p -20 -- ${cmd[$s]} >/dev/null; done
	for i in $(seq "$RUNS"); do
		for s in "${cmds[@]}"; do
			"$TOOLS/measure" -p -20 -- ${cmd[$s]} 2>/dev/null |
				awk '{ print $1, $4, $2 }' >>"$OUTD/m-$s"
		done
	done
	for s in "${cmds[@]}"; do row "$s" "$OUTD/m-$s"; done
	local port=10113 conf name
	for conf in http_i:i http_new:new; do
		name=${conf%%:*}
		daemon "$SOCKDIAG" exporter -c "$OUTD/${conf#*:}.conf" --listen "127.0.0.1:$port"
		local ep=$DPID
		wait_http "http://127.0.0.1:$port/"
		[[ $(cat /proc/$ep/comm) == sockdiag ]] || { echo "million.sh: pid $ep is not the exporter" >&2; exit 1; }
		scrape_daemon "$name" "$ep" "http://127.0.0.1:$port/metrics"
		kill "$ep"
		wait "$ep" 2>/dev/null || true
		port=$((port + 1))
	done
	if command -v prometheus-node-exporter >/dev/null; then
		daemon prometheus-node-exporter --collector.disable-defaults --collector.tcpstat \
			--web.listen-address=127.0.0.1:9100
		local np=$DPID
		wait_http "http://127.0.0.1:9100/"
		scrape_daemon node "$np" "http://127.0.0.1:9100/metrics"
		kill "$np"
		wait "$np" 2>/dev/null || true
	fi
	kill "$pid" 2>/dev/null || true
}

if [[ ${1:-} == --inner ]]; then
	TOOLS=$2 RUNS=$4 inner "$3" "$5"
	exit 0
fi
runs_opt "$@"
shift "$NOPTS"
N=${1:-500000}
[[ $(id -u) == 0 ]] || { echo "million.sh: needs root (unshare -n)" >&2; exit 1; }
[[ -x $SOCKDIAG ]] || { echo "million.sh: no $SOCKDIAG (meson setup build-bench --buildtype=release)" >&2; exit 1; }
avail=$(awk '/^MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)
need=$((N * 2 * 6 / 1000))	# ~6 KiB a socket in the kernel, with margin
((avail > need + 2048)) || { echo "million.sh: $avail MiB available, want $need + 2048" >&2; exit 1; }
TOOLS=$(mktemp -d)
OUT=$(mktemp -d)
trap 'rm -rf "$TOOLS" "$OUT"' EXIT
for f in mkpairs measure rawdump; do
	"${CC:-cc}" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -o "$TOOLS/$f" "$ROOT/bench/$f.c"
done
unshare -n -p -f --mount-proc -- env SOCKDIAG="$SOCKDIAG" "$0" --inner "$TOOLS" "$N" "$RUNS" "$OUT"
cat "$OUT/report"
echo
awk '{ wmin[$1] = $2; wmed[$1] = $3; cmin[$1] = $4; cmed[$1] = $5 }
	END {
		printf "Ratios to raw_i: wall min, median; CPU min, median (target <= 1.3):\n\n"
		for (s in wmin) if (s != "raw_i")
			printf "- %s: %.2f, %.2f; %.2f, %.2f\n", s, wmin[s] / wmin["raw_i"],
				wmed[s] / wmed["raw_i"], cmin[s] / cmin["raw_i"], cmed[s] / cmed["raw_i"]
	}' "$OUT/raw"
