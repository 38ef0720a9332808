#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Makefile's dependency step while another apt-get holds the locks (right after
# boot, unattended-upgrades): it waits instead of failing at once.
#  - `apt-get update` that finds the package lists' lock held (apt's own message,
#    "Could not get lock /var/lib/apt/lists/lock", exit 100) is retried until the
#    lock is free, saying once that it waits;
#  - every apt-get call asks apt to wait for the dpkg lock itself
#    (-o DPkg::Lock::Timeout=600);
#  - any other failure of apt-get update fails the step at once, with its message.
# apt-get is a stand-in on PATH (nothing is installed): it logs its arguments and,
# while the "other apt-get" (a background process of this test) lives, answers update
# as apt does. dpkg-query is the real one: the package asked for is not installed.
#   usage: make_deps.sh SOURCE_ROOT
set -euo pipefail

SRC=${1:?usage: make_deps.sh SOURCE_ROOT}
command -v make >/dev/null || { echo "SKIP(tool:make): not installed"; exit 77; }
command -v dpkg-query >/dev/null || { echo "SKIP(tool:dpkg-query): not a Debian system"; exit 77; }
T=$(mktemp -d)
HOLDER=
trap '[ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null || true; rm -rf "$T"' EXIT
PKG=sockdiag-no-such-package-$$
npass=0
fail() { echo "FAIL: $*"; echo "--- make:"; cat "$T/out" 2>/dev/null; echo "--- apt-get calls:"; cat "$T/log" 2>/dev/null; exit 1; }
pass() { echo "ok: $*"; npass=$((npass + 1)); }

mkdir "$T/bin"
cat >"$T/bin/apt-get" <<'SH'
#!/bin/bash
echo "$*" >>"$APT_LOG"
for a; do
	case $a in
	update)
		if [ -e "$APT_HELD" ] && kill -0 "$(cat "$APT_HELD")" 2>/dev/null; then
			echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process $(cat "$APT_HELD") (apt-get)" >&2
			echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
			exit 100
		fi
		[ -z "${APT_BROKEN:-}" ] || { echo "E: The repository 'x' does not have a Release file." >&2; exit 100; }
		echo "Reading package lists... Done"
		exit 0 ;;
	install) exit 0 ;;
	esac
done
exit 0
SH
chmod +x "$T/bin/apt-get"
export APT_LOG=$T/log APT_HELD=$T/held

# ---- the lists' lock held for about 3 s -------------------------------------------------------
sleep 3 &
HOLDER=$!
echo "$HOLDER" >"$T/held"
t0=$(date +%s)
make -s -C "$SRC" deps BUILD_DEPS="$PKG" PATH="$T/bin:$PATH" >"$T/out" 2>&1 ||
	fail "make deps failed while another apt-get held the lock"
t1=$(date +%s)
HOLDER=
[ $((t1 - t0)) -ge 2 ] || fail "make deps did not wait for the lock ($((t1 - t0)) s)"
[ "$(grep -c -w update "$T/log")" -ge 2 ] || fail "apt-get update was not tried again"
[ "$(grep -c 'waiting' "$T/out")" = 1 ] || fail "not said once that it waits"
grep -q "install .*$PKG" "$T/log" || fail "the package was not installed after the wait"
while read -r line; do
	[[ " $line " == *" -o DPkg::Lock::Timeout=600 "* ]] ||
		fail "an apt-get call without -o DPkg::Lock::Timeout=600: $line"
done <"$T/log"
pass "lock held: apt-get update retried until free ($((t1 - t0)) s), install after it, every call with DPkg::Lock::Timeout=600"

# ---- any other failure: at once ------------------------------------------------------------
rm -f "$T/log" "$T/held"
t0=$(date +%s)
if APT_BROKEN=1 make -s -C "$SRC" deps BUILD_DEPS="$PKG" PATH="$T/bin:$PATH" >"$T/out" 2>&1; then
	fail "make deps passed though apt-get update failed"
fi
t1=$(date +%s)
[ $((t1 - t0)) -le 2 ] || fail "another failure was retried ($((t1 - t0)) s)"
grep -q "does not have a Release file" "$T/out" || fail "apt-get's message not shown"
grep -q install "$T/log" && fail "installed after a failed update"
pass "another apt-get update failure: the step fails at once with apt's message"
echo "# checks: $npass passed, 0 failed, 0 skipped"
