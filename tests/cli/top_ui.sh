#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sockdiag top's full-screen view, driven in tmux (a server of its own, a
# unique socket name, killed at the end) inside a private network namespace
# with two flows of different rates from two processes:
#  - the rows are sorted by RX/s, largest first; r reverses the order;
#  - g groups by the next keys (pid -> comm -> conn: the header changes);
#  - a narrower window drops columns (OWNER) and no line is wider than it;
#  - a comm with bytes that are not ASCII, under LC_ALL=C, shows as '?';
#  - q, SIGTERM and SIGQUIT end it with status 0 and the terminal restored
#    (the shell after it finds echo and icanon on; tmux: the main screen, the
#    cursor shown);
#  - --count 3: three refreshes, then the same.
#   usage: top_ui.sh SOCKDIAG
set -euo pipefail

SD=$(realpath "${1:?usage: top_ui.sh SOCKDIAG}")
[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (network namespaces)"; exit 77; }
for t in python3 unshare tmux; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
"$SD" top --help | grep -q -- '--batch' || { echo "FAIL: no top"; exit 1; }
if [ -z "${SDIAG_TOPUI_INNER:-}" ]; then
	exec env SDIAG_TOPUI_INNER=1 unshare -n "$0" "$@"
fi
ip link set lo up
SLOW=${SOCKDIAG_TEST_SLOWDOWN:-1}

T=$(mktemp -d)
BASE=sdtop-ui-$$-$RANDOM
SOCK=$BASE-0
NSERVERS=0
POP=()
NPASS=0
cleanup() {
	for ((n = 1; n <= NSERVERS; n++)); do
		tmux -L "$BASE-$n" kill-server 2>/dev/null || true
		rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$BASE-$n"
	done
	for p in "${POP[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- screen:"; cat "$T/screen" 2>/dev/null || true
	echo "# checks: $NPASS passed, 1 failed, 0 skipped"
	exit 1
}
pass() { echo "ok: $*"; NPASS=$((NPASS + 1)); }

# One flow: PORT RATE (bytes/s) COMM; the receiver in the same process.
flow() {
	python3 - "$1" "$2" "$3" <<'PY' &
import ctypes, socket, sys, threading, time
port, rate, comm = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3].encode("utf-8", "surrogateescape")
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(comm[:15]), 0, 0, 0)  # PR_SET_NAME
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(1)
c = socket.create_connection(("127.0.0.1", port)); a = l.accept()[0]
def rd():
    while a.recv(1 << 16):
        pass
threading.Thread(target=rd, daemon=True).start()
t0, sent = time.monotonic(), 0
while True:
    if sent < (time.monotonic() - t0) * rate:
        c.sendall(b"x" * 10000); sent += 10000
    else:
        time.sleep(0.005)
PY
	POP+=($!)
}
# The slow flow first: its process has the lower pid, so an order by pid is not the
# order by rate.
flow 7202 100000 $'sl\xc3\xa9w\x1bx'
flow 7201 1000000 fastflow

screen() { tmux -L "$SOCK" capture-pane -p -t top >"$T/screen"; }
# wait_for PYTHON-CONDITION-ON-LINES WHAT: poll the screen up to 10 s (times the slowdown).
wait_for() {
	for ((i = 0; i < 50 * SLOW; i++)); do
		screen
		python3 - "$T/screen" "$1" <<'PY' && return 0
import sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
		sleep 0.2
	done
	fail "$2"
}
key() { tmux -L "$SOCK" send-keys -t top "$@"; }
# The shell around top reports its status and the terminal's modes after it.
AFTER='echo TOP-EXIT=$?; stty -a | tr " ;" "\n\n" | grep -x -e echo -e icanon | tr "\n" " "; echo; sleep 120'
start() {
	# A server of its own each time: a new session on a server being killed
	# can fail ("server exited unexpectedly").
	[ "$NSERVERS" = 0 ] || tmux -L "$SOCK" kill-server 2>/dev/null || true
	NSERVERS=$((NSERVERS + 1))
	SOCK=$BASE-$NSERVERS
	tmux -L "$SOCK" new-session -d -s top -x 120 -y 30 \
		"env LC_ALL=$1 $SD top --interval 0.5s $2 'sport = :7201 or sport = :7202'; $AFTER"
}
# The rows under the header line: lists of words.
ROWS='[l.split() for l in lines[lines.index(next(x for x in lines if "CONNS" in x)) + 1:] if l.strip()]'
rate='lambda s: float(s[:-1]) * {"k": 1e3, "M": 1e6, "G": 1e9}[s[-1]] if s[-1] in "kMG" else float(s)'

# ---- sort and reverse ------------------------------------------------------------------
start C.UTF-8 "--by pid"
wait_for "any('CONNS' in l for l in lines) and len($ROWS) == 2 and all(($rate)(r[3]) > 0 for r in $ROWS)" \
	"two rows with traffic"
# One refresh's rates depend on the senders getting CPU: the order is checked on a
# refresh where the fast flow leads, however long that takes (the slow one, by pid, cannot).
wait_for "len($ROWS) == 2 and ($rate)($ROWS[0][3]) > ($rate)($ROWS[1][3]) and 'fastflow' in lines[lines.index(next(x for x in lines if 'CONNS' in x)) + 1]" \
	"not sorted by RX/s, largest first"
pass "rows sorted by RX/s, largest first"
key r
wait_for "'ascending' in lines[0] and ($rate)($ROWS[0][3]) < ($rate)($ROWS[1][3])" "r: ascending order"
pass "r reverses the order"

# ---- grouping ----------------------------------------------------------------------------
key g
wait_for "any(l.split()[:2] == ['COMM', 'CONNS'] for l in lines)" "g: grouped by comm"
pass "g: pid -> comm"
key g
wait_for "any(l.split()[:5] == ['PROTO', 'LADDR', 'LPORT', 'RADDR', 'RPORT'] for l in lines)" \
	"g: one row per connection"
pass "g: comm -> conn"

# ---- resize --------------------------------------------------------------------------------
wait_for "any('OWNER' in l for l in lines)" "OWNER at 120 columns"
tmux -L "$SOCK" resize-window -t top -x 60 -y 12
wait_for "not any('OWNER' in l for l in lines) and any('RX/s' in l for l in lines) and max(len(l) for l in lines) <= 60" \
	"60 columns: OWNER dropped, RX/s kept"
pass "resize to 60x12: columns dropped to fit, RX/s kept"

# ---- quit restores the terminal --------------------------------------------------------------
key q
wait_for "any('TOP-EXIT=0' in l for l in lines) and any(l.split() == ['icanon', 'echo'] for l in lines) and not any('sockdiag top' in l for l in lines)" \
	"q: exit 0, echo and icanon back"
pass "q: exit 0, the screen and the terminal modes restored"

# ---- not UTF-8: only ASCII reaches the terminal ------------------------------------------------
start C "--by comm"
wait_for "any(l.startswith('sl??w?x ') for l in lines)" "C locale: sl??w?x"
grep -q $'\xc3' "$T/screen" && fail "a non-ASCII byte reached a C-locale terminal"
pass "LC_ALL=C: a comm with UTF-8 and ESC shows as sl??w?x"
pid=$(pgrep -P "$(tmux -L "$SOCK" list-panes -t top -F '#{pane_pid}')" -x sockdiag || true)
[ -n "$pid" ] || fail "no top process under the pane"
kill -TERM "$pid"
wait_for "any('TOP-EXIT=0' in l for l in lines) and any(l.split() == ['icanon', 'echo'] for l in lines)" \
	"SIGTERM: exit 0, terminal restored"
pass "SIGTERM: exit 0, the terminal restored"

# ---- SIGQUIT (Ctrl-\) too: was the default action, a core dump with the alternate
# screen left on and the cursor hidden ---------------------------------------------------------
# tmux's own view of the pane: alternate screen off, cursor shown.
modes() { tmux -L "$SOCK" display -p -t top '#{alternate_on} #{cursor_flag}'; }
start C.UTF-8 "--by pid"
wait_for "any('CONNS' in l for l in lines)" "the view before SIGQUIT"
[ "$(modes)" = "1 0" ] || fail "the view is not on the alternate screen with the cursor hidden: $(modes)"
pid=$(pgrep -P "$(tmux -L "$SOCK" list-panes -t top -F '#{pane_pid}')" -x sockdiag || true)
[ -n "$pid" ] || fail "no top process under the pane"
kill -QUIT "$pid"
wait_for "any('TOP-EXIT=' in l for l in lines)" "SIGQUIT: top ended"
wait_for "any('TOP-EXIT=0' in l for l in lines) and any(l.split() == ['icanon', 'echo'] for l in lines)" \
	"SIGQUIT: exit 0, terminal modes restored"
[ "$(modes)" = "0 1" ] || fail "SIGQUIT: alternate screen / cursor flags $(modes), want 0 1"
pass "SIGQUIT: exit 0, the main screen back, the cursor shown"

# ---- --count N: N refreshes, then exit (was refused: "--count is for batch mode") ------------
start C.UTF-8 "--by pid --count 3"
t0=$(date +%s.%N)
wait_for "any('CONNS' in l for l in lines) and len($ROWS) == 2" "--count 3: the view"
wait_for "any('TOP-EXIT=' in l for l in lines)" "--count 3: top ended"
t1=$(date +%s.%N)
wait_for "any('TOP-EXIT=0' in l for l in lines) and any(l.split() == ['icanon', 'echo'] for l in lines)" \
	"--count 3: exit 0, terminal restored"
[ "$(modes)" = "0 1" ] || fail "--count: alternate screen / cursor flags $(modes), want 0 1"
# Three refreshes of 0.5 s, the last one shown for an interval: 2 s.
python3 -c "import sys; d = $t1 - $t0; sys.exit(0 if 1.9 <= d <= 6 * $SLOW else 1)" ||
	fail "--count 3 --interval 0.5s: ended after $(python3 -c "print($t1 - $t0)") s, want about 2"
pass "--count 3: three refreshes, then exit 0 and the terminal restored"
echo "# checks: $NPASS passed, 0 failed, 0 skipped"
