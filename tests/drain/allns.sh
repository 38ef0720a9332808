#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sockdiag drain over several namespaces (drain.py's part allns: --all-netns while
# namespaces are made and deleted, several -N), in private mount, pid and network
# namespaces with a tmpfs on /run/netns (tests/private_world.sh): --all-netns sees
# only what the test makes. Usage: allns.sh SOCKDIAG. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SD=$(realpath "${1:?usage: allns.sh SOCKDIAG}")
. "$here/../private_world.sh"
private_world_can DRAIN_ALLNS_INNER ip python3
private_world DRAIN_ALLNS_INNER "$0" "$@"
exec python3 "$here/drain.py" "$SD" allns
