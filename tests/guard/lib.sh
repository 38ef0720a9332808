# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the guard's end-to-end scripts (guard_*.sh), never run.

# guard_netns_setup "$@": skip (exit 77) without root or ip; otherwise run the
# calling script again in a private network namespace and, there, ask for small
# per-namespace TCP and UDP hash tables. Namespaces the script creates from it
# get tables of their own (nothing on the host changes); without them every
# dump the guard makes walks the sockets of all other namespaces, and a latency
# bound would measure the machine's load.
guard_netns_setup() {
	[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
	command -v ip >/dev/null || { echo "SKIP(tool:ip): not installed (iproute2)"; exit 77; }
	if [ -z "${SOCKDIAG_GUARD_OUTER:-}" ]; then
		exec env SOCKDIAG_GUARD_OUTER=1 unshare -n "$0" "$@"
	fi
	sysctl -qw net.ipv4.tcp_child_ehash_entries=1024 2>/dev/null || true
	sysctl -qw net.ipv4.udp_child_hash_entries=256 2>/dev/null || true
}

# stop_guard PID: SIGTERM, up to 5 s to exit, then SIGKILL: no test leaves a guard behind.
stop_guard() {
	local i
	kill "$1" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null || true
}

# wait_for FILE PATTERN [TENTHS]: until FILE has a line matching PATTERN, at
# most TENTHS (default 50) tenths of a second times SOCKDIAG_TEST_SLOWDOWN
# (`make asan` sets it: instrumented code is slower). Returns 1 on timeout.
wait_for() {
	local i
	for ((i = 0; i < ${3:-50} * ${SOCKDIAG_TEST_SLOWDOWN:-1}; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ms_after FILE T0: milliseconds from T0 (date +%s.%N) to the "at=" stamp a
# test client wrote in FILE when its recv returned.
ms_after() {
	local at
	at=$(sed -n 's/.* at=//p' "$1")
	awk -v a="$at" -v b="$2" 'BEGIN { printf "%d", (a - b) * 1000 }'
}

# latency_attempt ATTEMPT MS MAX_MS: prints the attempt; true when MS is within
# MAX_MS. A slow attempt is retried (the time measured is also the machine's:
# 2 shared cores) and says so; the third slow one fails the test.
latency_attempt() {
	echo "attempt $1: recv returned ECONNABORTED $2 ms after the address was removed"
	[ "$2" -le "$3" ] && return 0
	[ "$1" = 3 ] && fail "victim's recv returned after $2 ms (> $3) three times"
	echo "attempt $1: $2 ms > $3 ms: RETRIED (load on the machine?)"
	return 1
}
