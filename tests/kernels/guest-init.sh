#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PID 1 of a guest booted by tests/kernels/run.sh, on the host's root (read-only 9p or
# virtiofs, tmpfs overlay). Mounts what a Debian system has, loads the diag modules the guest
# kernel ships, runs the requested suites from the build tree, copies their logs to the shared
# output directory (tag sdiagout) and powers off. Everything here runs in the guest's own
# kernel: nothing touches the host's sockets.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
mount -t proc proc /proc
mount -t sysfs sys /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
# The host's /tmp stays reachable under /.host-tmp: a checkout there (a CI job's) is
# bound back at its own path once config.env names it.
mkdir -p /.host-tmp && mount --bind /tmp /.host-tmp
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null || true
mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
mkdir -p /run/sdiag-out
# The output directory comes the way the root came (sdiag.fs=: 9p or virtiofs).
case " $(cat /proc/cmdline) " in
*" sdiag.fs=virtiofs "*) outfs=(-t virtiofs) ;;
*) outfs=(-t 9p -o trans=virtio,version=9p2000.L,msize=512000) ;;
esac
if ! mount "${outfs[@]}" sdiagout /run/sdiag-out; then
	echo "sdiag-guest: cannot mount the output directory"; poweroff -f
fi
OUT=/run/sdiag-out
# shellcheck source=/dev/null
. "$OUT/config.env"
for d in "$SRCDIR" "$BUILDDIR"; do
	case $d in
	/tmp/*)
		[ -d "$d" ] && continue
		mkdir -p "$d" && mount --bind "/.host-tmp/${d#/tmp/}" "$d" ||
			echo "sdiag-guest: cannot reach $d"
		;;
	esac
done
exec >"$OUT/guest.log" 2>&1 </dev/null
echo "sdiag-guest: kernel $(uname -r), $(nproc) cpus"
hostname sdiag-guest
# As on a root CI machine: the tests that need 7100 descriptors get them (SKIP(nofile) else).
ulimit -Hn 1048576 && ulimit -Sn 1048576
ip link set lo up
REL=$(uname -r)
mkdir -p "/lib/modules/$REL"
mount --bind "$MODROOT/lib/modules/$REL" "/lib/modules/$REL"
: >"$OUT/modules"
for m in $DIAG_MODULES; do
	if modprobe "$m" 2>/dev/null; then echo "$m" >>"$OUT/modules"; fi
done
sysctl -qw net.mptcp.enabled=1 2>/dev/null || true
python3 "$SRCDIR/tests/kernel_probe.py" --families >"$OUT/families" 2>&1
# What docs/kernels.md tabulates (tests/kernels/matrix.py), in a namespace of its own.
timeout 300 unshare -n python3 "$SRCDIR/tests/kernels/features.py" "$BUILDDIR/cli/sockdiag" \
	>"$OUT/features" 2>&1
# mtest NAME ARGS...: one meson test run; its log kept as OUT/testlog-NAME.json.
mtest() {
	local name=$1 r=0
	shift
	timeout "$GUEST_TIMEOUT" meson test -C "$BUILDDIR" --no-rebuild --print-errorlogs \
		--num-processes 2 --timeout-multiplier 4 "$@" || r=$?
	cp "$BUILDDIR/meson-logs/testlog.json" "$OUT/testlog-$name.json" 2>/dev/null
	cp "$BUILDDIR/meson-logs/testlog.txt" "$OUT/testlog-$name.txt" 2>/dev/null
	[ "$r" -eq 0 ] || rc=$r
}
rc=0
cd "$SRCDIR" || rc=1
if [ -n "${CMD:-}" ]; then
	timeout "$GUEST_TIMEOUT" bash -c "$CMD" || rc=$?
else
	suites=()
	for s in $SUITES; do suites+=(--suite "$s"); done
	[ ${#suites[@]} -eq 0 ] || mtest suites "${suites[@]}"
	# shellcheck disable=SC2086
	[ -z "$TESTS" ] || mtest tests $TESTS
fi
echo "$rc" >"$OUT/rc"
sync
poweroff -f
