#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make test-kernels: boot other kernels in QEMU (TCG: no /dev/kvm needed) on this machine's own
# userspace and build tree, and run test suites there.
#
#   tests/kernels/run.sh BUILDDIR
#
# Environment:
#   KERNELS="5.10 6.1 6.12 7.2"   Debian kernels to test, the newest package of each:
#                          5.10: bullseye's linux-image-5.10.0-N-amd64-unsigned (5.10-cloud: its
#                          -cloud-amd64 flavour, which has no 9p: its guest reaches this
#                          machine's root over virtiofs, /usr/lib/qemu/virtiofsd, read-only
#                          bind in a mount namespace of its own), 6.1 and 6.12: bookworm's
#                          linux-image-6.1.0-N-amd64-unsigned and -6.12.N+deb12-amd64-unsigned,
#                          7.2: sid's linux-binary-unsigned-7.2.N+deb14-amd64 with
#                          linux-modules-7.2.N+deb14-amd64. apt-get download from the archive the
#                          system's sources list names (bullseye's and sid's lists kept apart
#                          under BUILDDIR/kernels/apt-SUITE/), cached under
#                          BUILDDIR/kernels/PKG_VERSION/; no other download.
#   KERNEL_IMAGE=vmlinuz KERNEL_MODULES=DIR   any other kernel instead (DIR holds lib/modules/REL
#                          or is /lib/modules/REL itself).
#   KERNEL_SUITES="live netns families"   meson suites run in the guest; KERNEL_TESTS: test names.
#   KERNEL_TIMEOUT=3600    seconds a guest may run.  KERNEL_MEM=2048 KERNEL_SMP=2
#   SOCKDIAG_TEST_SLOWDOWN=10   what the guests' tests scale their waits and bounds by.
#   KERNEL_CMD="..."       run this shell command in the guest instead of the suites
#                          (from the source tree; output in BUILDDIR/kernels/REL/guest.log).
# Prints one line per kernel:
#   kernel REL: N passed, N failed, N skipped (of N tests); families: ...
# and exits 1 when a suite failed or a guest did not finish. Per kernel, BUILDDIR/kernels/REL/
# keeps console.log, guest.log, testlog.json (meson's), families, modules.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
builddir=$(cd "$1" && pwd)
cache=$builddir/kernels
KERNELS=${KERNELS-5.10 6.1 6.12 7.2}
KERNEL_SUITES=${KERNEL_SUITES-live netns families}
KERNEL_TESTS=${KERNEL_TESTS-}
KERNEL_TIMEOUT=${KERNEL_TIMEOUT:-3600}
KERNEL_MEM=${KERNEL_MEM:-2048}
KERNEL_SMP=${KERNEL_SMP:-2}
DIAG_MODULES="inet_diag tcp_diag udp_diag raw_diag sctp_diag vsock_diag vsock_loopback tipc
diag tipc_diag smc smc_diag mptcp_diag xsk_diag unix_diag packet_diag netlink_diag"
mkdir -p "$cache"

die() { echo "test-kernels: $*" >&2; exit 2; }

for t in qemu-system-x86_64 busybox cpio depmod modprobe; do
	command -v "$t" >/dev/null || [ -x "/sbin/$t" ] || die "$t missing (make test-kernels installs it)"
done
busybox=$(command -v busybox)
# Debian 12's qemu-system-common ships the C virtiofsd there (for kernels without 9p).
virtiofsd_bin=${VIRTIOFSD:-/usr/lib/qemu/virtiofsd}

# newest PATTERN [SUITE]: the newest package whose name matches the extended regex PATTERN
# (SUITE: in that Debian suite's lists, see sapt; else in the system's).
newest() {
	local ac=(apt-cache)
	[ -z "${2:-}" ] || ac=(sapt "$2" apt-cache)
	"${ac[@]}" search --names-only "$1" | awk '{print $1}' | grep -E "$1" | sort -V | tail -n 1
}

# archive and sapt (apt on another suite with a sources list and package lists of its own under
# CACHE/apt-SUITE, the system's apt sources and lists untouched): tests/tools/sapt.sh.
SAPT_CACHE=$cache SAPT_WHO=test-kernels
. "$src/tests/tools/sapt.sh"

# fetch NAME: echo the extracted tree of the newest Debian package(s) of that kernel:
# 6.1 and 6.12 from the system's bookworm lists, 5.10 (and 5.10-cloud) from bullseye, 7.2 from
# sid (split: the image in linux-binary-unsigned-REL, the modules in linux-modules-REL).
# Cached under CACHE/PKG_VERSION: a rerun downloads nothing.
fetch() {
	local re suite="" pkg pkgs ver deb dir p
	case $1 in
	5.10) suite=bullseye re='^linux-image-5\.10\.0-[0-9]+-amd64-unsigned$' ;;
	5.10-cloud) suite=bullseye re='^linux-image-5\.10\.0-[0-9]+-cloud-amd64-unsigned$' ;;
	6.1) re='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
	6.12) re='^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' ;;
	7.2) suite=sid re='^linux-binary-unsigned-7\.2\.[0-9]+\+deb14-amd64$' ;;
	*) die "unknown kernel '$1' (known: 5.10 5.10-cloud 6.1 6.12 7.2; any other: KERNEL_IMAGE=)" ;;
	esac
	pkg=$(newest "$re" "$suite")
	if [ -z "$pkg" ] && [ -z "$suite" ]; then
		# An empty package list (a fresh machine): one update, then ask again.
		apt-get update >&2 || true
		pkg=$(newest "$re")
	fi
	[ -n "$pkg" ] || die "no Debian package for kernel $1 (apt-cache search '$re'${suite:+ in $suite})"
	pkgs=$pkg
	case $pkg in linux-binary-unsigned-*) pkgs="$pkg linux-modules-${pkg#linux-binary-unsigned-}" ;; esac
	ver=$(${suite:+sapt "$suite"} apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p' | head -n 1)
	dir=$cache/${pkg}_$ver
	if [ ! -e "$dir/.done" ]; then
		rm -rf "$dir" && mkdir -p "$dir/deb"
		# apt-get downloads as _apt where it may (else it warns, and downloads as root).
		if id _apt >/dev/null 2>&1; then chown _apt "$dir/deb"; fi
		for p in $pkgs; do
			echo "test-kernels: apt-get download $p${suite:+ ($suite)}" >&2
			(cd "$dir/deb" && ${suite:+sapt "$suite"} apt-get download "$p" >&2) ||
				die "apt-get download $p failed"
		done
		chmod 0755 "$dir"
		for deb in "$dir"/deb/*.deb; do
			dpkg -x "$deb" "$dir/root"
			rm -f "$deb"
		done
		# sid's packages put the modules under usr/lib only.
		[ -e "$dir/root/lib" ] || ln -s usr/lib "$dir/root/lib"
		touch "$dir/.done"
	fi
	echo "$dir/root"
}

# image_of ROOT: the kernel image of an extracted package (boot/vmlinuz-REL, or sid's
# lib/modules/REL/vmlinuz.unsigned).
image_of() {
	local i
	for i in "$1"/boot/vmlinuz-* "$1"/lib/modules/*/vmlinuz*; do
		[ -e "$i" ] && { echo "$i"; return; }
	done
	die "no kernel image in $1"
}

# modroot_of DIR: the root holding lib/modules/REL for a KERNEL_MODULES given by the user.
modroot_of() {
	local d=$1
	if [ -d "$d/lib/modules" ]; then echo "$d"; return; fi
	case $d in */lib/modules/*) echo "${d%/lib/modules/*}" ;; *) die "KERNEL_MODULES=$d: no lib/modules/REL in it" ;; esac
}

# initramfs MODROOT REL OUT FS: busybox + the modules that mount the host root over FS (9p or
# virtiofs), decompressed.
initramfs() {
	local modroot=$1 rel=$2 out=$3 fs=$4 w m n=0 seen="" mods
	case $fs in
	9p) mods="virtio_pci 9pnet_virtio 9p overlay" ;;
	*) mods="virtio_pci virtiofs overlay" ;;
	esac
	w=$(mktemp -d)
	mkdir -p "$w/bin" "$w/modules" "$w/proc" "$w/sys" "$w/dev"
	cp "$busybox" "$w/bin/busybox"
	for a in sh mount umount mkdir insmod switch_root poweroff cat echo sleep; do
		ln -s busybox "$w/bin/$a"
	done
	cp "$here/initramfs-init" "$w/init"
	: >"$w/modules/order"
	# --show-depends lists a module shared by two of them twice: each is loaded once, in order.
	while read -r verb m _; do
		[ "$verb" = insmod ] || continue
		case " $seen " in *" $m "*) continue ;; esac
		seen="$seen $m"
		n=$((n + 1))
		local base
		base=$(printf '%02d-%s' "$n" "$(basename "$m")")
		case $m in
		*.xz) xz -dc "$m" >"$w/modules/${base%.xz}"; base=${base%.xz} ;;
		*.zst) zstd -qdc "$m" >"$w/modules/${base%.zst}"; base=${base%.zst} ;;
		*.gz) gzip -dc "$m" >"$w/modules/${base%.gz}"; base=${base%.gz} ;;
		*) cp "$m" "$w/modules/$base" ;;
		esac
		echo "$base" >>"$w/modules/order"
	done < <(modprobe -d "$modroot" -S "$rel" --show-depends -a $mods)
	(cd "$w" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
	rm -rf "$w"
}

# has MODROOT REL MODULE CONFIG: the kernel has MODULE (a module it ships, or CONFIG=y).
has() {
	modprobe -d "$1" -S "$2" --show-depends "$3" >/dev/null 2>&1 ||
		grep -qs "^$4=y" "$1/boot/config-$2"
}

# virtiofsd TAG DIR MODE LOG: serve DIR (read-only when MODE is ro: the daemon runs in a mount
# namespace of its own on a read-only bind of DIR) as virtiofs TAG on $vfsdir/TAG.sock; adds
# the daemon's pid to $vpids once its socket exists.
virtiofsd() {
	local dir=$2 mode=$3 log=$4 sock=$vfsdir/$1.sock view=$vfsdir/$1.view pid i
	mkdir -p "$view"
	rm -f "$sock"
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" &&
		{ [ "$3" != ro ] || mount -o remount,bind,ro "$2"; } &&
		exec "$4" --socket-path="$5" -o source="$2" -o cache="$6" -o no_xattr' \
		sh "$dir" "$view" "$mode" "$virtiofsd_bin" "$sock" \
		"$([ "$mode" = ro ] && echo always || echo none)" >"$log" 2>&1 &
	pid=$!
	for i in $(seq 100); do
		[ -S "$sock" ] && { vpids="$vpids $pid"; return; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill "$pid" $vpids 2>/dev/null
	die "virtiofsd for $dir did not start (see $log)"
}

# boot NAME IMAGE MODROOT: one guest; prints its summary line; returns 1 when it failed.
boot() {
	local image=$2 modroot=$3 rel out t0 rc fs share vpids=""
	rel=$(ls "$modroot/lib/modules" | head -n 1)
	[ -n "$rel" ] || die "no lib/modules/REL under $modroot"
	[ -e "$modroot/lib/modules/$rel/modules.dep" ] || depmod -b "$modroot" "$rel"
	# The guest reaches the host's root over 9p, or over virtiofs where the kernel has no 9p
	# (Debian's cloud flavour leaves 9p out; it has virtiofs).
	if has "$modroot" "$rel" 9p CONFIG_9P_FS; then
		fs=9p
	elif has "$modroot" "$rel" virtiofs CONFIG_VIRTIO_FS; then
		fs=virtiofs
		[ -x "$virtiofsd_bin" ] || die "kernel $rel has no 9p: it needs $virtiofsd_bin" \
			"(qemu-system-common)"
		# virtiofsd and its read-only view need a mount namespace: root.
		[ "$(id -u)" = 0 ] || die "kernel $rel has no 9p: its virtiofs guest needs root" \
			"(virtiofsd in a mount namespace)"
	else
		echo "kernel $rel: FAIL not booted: neither 9p (CONFIG_9P_FS) nor virtiofs" \
			"(CONFIG_VIRTIO_FS), which the guest reaches this machine's root with"
		return 1
	fi
	out=$cache/$rel
	rm -rf "$out" && mkdir -p "$out"
	initramfs "$modroot" "$rel" "$out/initramfs.cpio.gz" "$fs"
	{
		printf '%s=%q\n' BUILDDIR "$builddir" SRCDIR "$src" MODROOT "$modroot" \
			SUITES "$KERNEL_SUITES" TESTS "$KERNEL_TESTS" CMD "${KERNEL_CMD:-}" \
			DIAG_MODULES "$(echo $DIAG_MODULES)" GUEST_TIMEOUT "$((KERNEL_TIMEOUT - 60))"
		# TCG emulates every instruction: the tests' latency bounds and waits scale by
		# 10 (ASan's runs use 4); guard_e2e's 100 ms bound saw 498 ms on a loaded host.
		echo "export SOCKDIAG_TEST_SLOWDOWN=${SOCKDIAG_TEST_SLOWDOWN:-10}"
	} >"$out/config.env"
	if [ "$fs" = 9p ]; then
		share=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
			-virtfs "local,path=$out,mount_tag=sdiagout,security_model=none,multidevs=remap")
	else
		# virtiofs: one virtiofsd per tree (this machine's root read-only, the output
		# directory writable), the guest's memory shared with them.
		vfsdir=$(mktemp -d "$cache/virtiofs.XXXXXX")
		virtiofsd hostroot / ro "$out/virtiofsd-hostroot.log"
		virtiofsd sdiagout "$out" rw "$out/virtiofsd-sdiagout.log"
		# shellcheck disable=SC2054
		share=(-object "memory-backend-memfd,id=mem,size=${KERNEL_MEM}M,share=on"
			-numa node,memdev=mem
			-chardev "socket,id=vfs0,path=$vfsdir/hostroot.sock"
			-device vhost-user-fs-pci,queue-size=1024,chardev=vfs0,tag=hostroot
			-chardev "socket,id=vfs1,path=$vfsdir/sdiagout.sock"
			-device vhost-user-fs-pci,queue-size=1024,chardev=vfs1,tag=sdiagout)
	fi
	echo "test-kernels: booting $rel over $fs (console: $out/console.log)" >&2
	t0=$(date +%s)
	rc=0
	timeout --foreground -k 10 "$KERNEL_TIMEOUT" qemu-system-x86_64 -m "$KERNEL_MEM" -smp "$KERNEL_SMP" \
		-nographic -no-reboot -nodefaults -serial stdio -cpu max \
		-kernel "$image" -initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet panic=-1 sdiag.fs=$fs sdiag.init=$here/guest-init.sh" \
		"${share[@]}" </dev/null >"$out/console.log" 2>&1 || rc=$?
	if [ -n "$vpids" ]; then
		# shellcheck disable=SC2086
		kill $vpids 2>/dev/null || true
		# shellcheck disable=SC2086
		wait $vpids 2>/dev/null || true
		rm -rf "$vfsdir"
	fi
	python3 "$here/report.py" "$rel" "$out" "$(($(date +%s) - t0))" "$rc" | tee "$out/report"
}

status=0
if [ -n "${KERNEL_IMAGE:-}" ]; then
	[ -n "${KERNEL_MODULES:-}" ] || die "KERNEL_IMAGE needs KERNEL_MODULES (the tree with lib/modules/REL)"
	boot custom "$KERNEL_IMAGE" "$(modroot_of "$KERNEL_MODULES")" || status=1
else
	for k in $KERNELS; do
		root=$(fetch "$k")
		boot "$k" "$(image_of "$root")" "$root" || status=1
	done
fi
exit $status
