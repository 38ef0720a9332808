# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced (bash) by the scripts that act on every network namespace (--all-netns,
# -N over /run/netns), never run.
#
# private_world FLAG "$0" "$@": run the calling script again (FLAG set in its
# environment) in private mount, pid and network namespaces, and there give it a
# /run/netns of its own (a tmpfs) and loopback up. What --all-netns sees is then
# only what the script makes: never the host's namespaces or processes.
private_world() {
	local flag=$1
	shift
	if [ -z "${!flag:-}" ]; then
		exec env "$flag=1" unshare -m -p -f --mount-proc -n "$@"
	fi
	# Before any mount: a FLAG inherited from outside must not make the host's
	# /run/netns the one covered.
	[ "$$" = 1 ] || { echo "FAIL: not in a private pid namespace"; exit 1; }
	mount --make-rprivate /
	mkdir -p /run/netns
	mount -t tmpfs none /run/netns
	ip link set lo up
}

# private_world_fini: inside, at the end: every named namespace deleted, /run/netns unmounted
# (the world goes with its last process anyway; this is what a cleanup trap says it leaves).
private_world_fini() {
	local n
	for n in $(ip netns list | awk '{print $1}'); do ip netns del "$n" 2>/dev/null || true; done
	umount /run/netns 2>/dev/null || true
}

# private_world_can FLAG TOOL...: outside (FLAG unset), exit 77 with a SKIP line
# unless every TOOL is installed and this user can make the namespaces.
private_world_can() {
	local flag=$1 tool
	shift
	[ -z "${!flag:-}" ] || return 0
	for tool in unshare "$@"; do
		command -v "$tool" >/dev/null 2>&1 || { echo "SKIP(tool:$tool)" >&2; exit 77; }
	done
	unshare -m -p -f -n true 2>/dev/null || { echo "SKIP(netns): need root" >&2; exit 77; }
}
