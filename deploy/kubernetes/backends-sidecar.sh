#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# backends-sidecar.sh FILE: keep FILE listing the dead service backends of the
# cluster, for the guard's `dead-backends = FILE` (sockdiag-guard.conf(5)).
#
# It watches EndpointSlices (`kubectl get endpointslices -A --watch
# --output-watch-events -o json`) and, after every event, writes with an atomic
# rename the backends (ADDR:PORT/tcp, [ADDR6]:PORT/udp) that are not ready, or
# were and left their slice (pod deleted, slice deleted), unless the same
# ADDR:PORT/proto is ready in some slice. A dead backend stays listed for
# DEAD_TTL seconds (default 600): long enough for the guard to close every
# socket still connected to it, after which the address may be reused.
# When the watch ends (the API server closes watches) it starts again,
# seeded with FILE, so a restart forgets no dead backend.
#
# Needs sh, kubectl (with a service account that may list and watch
# endpointslices.discovery.k8s.io) and jq. Environment: KUBECTL (default
# kubectl), DEAD_TTL, SIDECAR_ONCE=1 (stop when the watch ends: for tests).
set -eu

out=${1:?usage: backends-sidecar.sh FILE}
ttl=${DEAD_TTL:-600}
kubectl=${KUBECTL:-kubectl}
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

# One JSON array of dead backends per event.
# shellcheck disable=SC2016
prog='
def keys_of($s; ready):
  ($s.addressType) as $fam
  | select($fam == "IPv4" or $fam == "IPv6")
  | ($s.ports // [])[] as $p
  | (($p.protocol // "TCP") | ascii_downcase) as $proto
  | select(($proto == "tcp" or $proto == "udp") and $p.port != null)
  | ($s.endpoints // [])[]
  | select((.conditions.ready != false) == ready)
  | .addresses[]
  | (if $fam == "IPv6" then "[\(.)]" else . end) + ":\($p.port)/\($proto)";
foreach inputs as $ev (
  { slices: {}, dead: ($seed | map({key: ., value: now}) | from_entries) };
  ($ev.object.metadata.uid // $ev.object.metadata.name) as $uid
  | (.slices[$uid] // []) as $before
  | (if $ev.type == "DELETED" then [] else [keys_of($ev.object; true)] end) as $now
  | (if $ev.type == "DELETED" then [] else [keys_of($ev.object; false)] end) as $notready
  | (if $ev.type == "DELETED" then del(.slices[$uid]) else .slices[$uid] = $now end)
  | reduce (($before - $now) + $notready)[] as $k (.; .dead[$k] = (.dead[$k] // now))
  | ([.slices[][]] | map({key: ., value: true}) | from_entries) as $alive
  | .dead |= with_entries(select(($alive[.key] | not) and (now - .value) < $ttl));
  [.dead | keys[]]
)'

while :; do
	seed=$(if [ -s "$out" ]; then grep -v '^#' "$out" || true; fi | jq -R . | jq -sc .)
	"$kubectl" get endpointslices -A --watch --output-watch-events -o json |
		jq --unbuffered -nc --argjson seed "$seed" --argjson ttl "$ttl" "$prog" |
		while IFS= read -r dead; do
			{
				echo "# dead backends, written by backends-sidecar.sh"
				printf '%s\n' "$dead" | jq -r '.[]'
			} >"$tmp"
			if ! cmp -s "$tmp" "$out"; then
				mv -f "$tmp" "$out"
			fi
		done
	[ "${SIDECAR_ONCE:-}" = 1 ] && exit 0
	sleep 1
done
