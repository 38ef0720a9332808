#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Dead-backend benchmarks, by hand (results in bench/RESULTS.md). Each runs in a
# private network namespace made here, inside one that asks for per-namespace
# TCP/UDP hash tables of their own (the host's are shared otherwise: every
# dump would walk the machine's sockets).
#   bench/backends/run.sh sockets [PAIRS BACKENDS DEAD RUNS]   (50000 100 50 7)
#   bench/backends/run.sh change [CHANGES PAIRS]               (100 200)
#   bench/backends/run.sh conntrack [ENTRIES RUNS]             (100000 3)
# Environment: SOCKDIAG (default build/cli/sockdiag).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sd=${SOCKDIAG:-build/cli/sockdiag}
what=${1:-sockets}
shift || true
case $what in
sockets) set -- "${1:-50000}" "${2:-100}" "${3:-50}" "${4:-7}" ;;
change) set -- "${1:-100}" "${2:-200}" ;;
conntrack) set -- "${1:-100000}" "${2:-3}" ;;
*) echo "usage: run.sh {sockets|change|conntrack} [ARGS]" >&2; exit 2 ;;
esac
case ${SDIAG_BENCH_STAGE:-0} in
0)
	exec env SDIAG_BENCH_STAGE=1 unshare -n sh -c '
		sysctl -qw net.ipv4.tcp_child_ehash_entries=262144
		sysctl -qw net.ipv4.udp_child_hash_entries=65536
		exec env SDIAG_BENCH_STAGE=2 unshare -n "$0" "$@"' "$0" "$what" "$@"
	;;
2) ;;
*)
	echo "run.sh: unexpected SDIAG_BENCH_STAGE" >&2
	exit 1
	;;
esac
if [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ]; then
	echo "run.sh: not in a private network namespace, refusing" >&2
	exit 1
fi
ip link set lo up
ip addr add 10.0.0.1/32 dev lo
ip addr add 10.0.0.2/32 dev lo
sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
exec python3 "$here/bench.py" "$sd" "$what" "$@"
