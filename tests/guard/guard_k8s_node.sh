#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The DaemonSet's guard on a simulated Kubernetes node (tests/guard/k8s_node.py):
# run inside a private mount + pid + network namespace with its own /run/netns,
# so that --all-netns sees only the pods the test makes.
#   usage: guard_k8s_node.sh SOCKDIAG MANIFEST
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "SKIP(netns): needs root (namespaces)"; exit 77; }
for t in ip unshare nsenter setpriv ss conntrack nft python3; do
	command -v $t >/dev/null || { echo "SKIP(tool:$t): not installed"; exit 77; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP(tool:python3-yaml): not installed"; exit 77; }
unshare -n nft add table inet sdk8sprobe 2>/dev/null ||
	{ echo "SKIP(nftables): cannot load rules (conntrack is made to track by one)"; exit 77; }
. "$(dirname "$0")/../private_world.sh"
private_world SOCKDIAG_K8S_NODE_INNER "$0" "$@"

SD=$(readlink -f "${1:?usage: guard_k8s_node.sh SOCKDIAG MANIFEST}")
rc=0
python3 "$(dirname "$0")/k8s_node.py" "$SD" "${2:?}" || rc=$?
umount /run/netns 2>/dev/null || true
exit $rc
