#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""deploy/kubernetes/backends-sidecar.sh with a stand-in kubectl
(tests/deploy/kubectl) replaying EndpointSlice watch events
(tests/deploy/endpointslices/, in kubectl's --output-watch-events JSON; written
by hand after the discovery.k8s.io/v1 schema, no cluster being at hand): after
each prefix of the events, the file holds exactly the dead backends (not
ready, or gone from their slice, and ready nowhere else; not ready when first
seen too); FQDN slices are
ignored; a restart keeps what the file listed; DEAD_TTL=0 lists nothing; the
file parses for `sockdiag kill --dead-backends` (--dry-run in a private
network namespace) and is written by rename (no temporary file left).
Usage: sidecar.py SOCKDIAG DEPLOY_DIR."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

SD, DEPLOY = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(DEPLOY, "kubernetes", "backends-sidecar.sh")
EVENTS = sorted(glob.glob(os.path.join(HERE, "endpointslices", "*.json")))
failures, passed = [], [0]

# The dead backends after each event (the oracle, from reading the events).
DNS_DEAD = ["10.244.2.7:53/tcp", "10.244.2.7:53/udp"]
WANT = [
    [],                                             # kube-dns: two ready endpoints
    [],                                             # web: one ready (IPv6)
    [],                                             # an FQDN slice: ignored
    DNS_DEAD,                                       # 10.244.2.7 not ready, terminating
    DNS_DEAD,                                       # ... then gone from the slice
    DNS_DEAD + ["[fd00:10:244::5]:8080/tcp"],       # web's slice deleted
    DNS_DEAD,                                       # the address ready again in web-v2
]


def check(cond, what):
    if cond:
        passed[0] += 1
    else:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run_sidecar(tmp, events, out, env=None):
    replay = os.path.join(tmp, "replay.json")
    with open(replay, "w") as f:
        for e in events:
            with open(e) as g:
                f.write(g.read())
    e = dict(os.environ, KUBECTL=os.path.join(HERE, "kubectl"), KUBECTL_REPLAY=replay,
             SIDECAR_ONCE="1", **(env or {}))
    r = subprocess.run(["sh", SCRIPT, out], env=e, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "sidecar exits 0 when the watch ends: %s" % r.stderr)


def listed(out):
    if not os.path.exists(out):
        return None
    with open(out) as f:
        return sorted(l.strip() for l in f if l.strip() and not l.startswith("#"))


def main():
    for tool in ("jq", "sh"):
        if not shutil.which(tool):
            print("SKIP(tool:%s): not installed" % tool)
            sys.exit(77)
    check(len(EVENTS) == len(WANT), "%d recorded events" % len(WANT))
    tmp = tempfile.mkdtemp(prefix="sockdiag-sidecar-")
    for n in range(1, len(EVENTS) + 1):
        out = os.path.join(tmp, "dead-%d" % n)
        run_sidecar(tmp, EVENTS[:n], out)
        got = listed(out)
        check(got == sorted(WANT[n - 1]), "after %s: %s, want %s" %
              (os.path.basename(EVENTS[n - 1]), got, sorted(WANT[n - 1])))
    # A restart (the API server closed the watch): the new watch lists the
    # current slices only, but what the file listed stays.
    # Its initial list: kube-dns without 10.244.2.7, web-v2; and 10.244.1.5
    # ready in a new slice too.
    out = os.path.join(tmp, "dead-%d" % len(EVENTS))
    with open(out, "a") as f:
        f.write("10.244.1.5:53/udp\n")
    now = os.path.join(tmp, "now.json")
    with open(EVENTS[4]) as f, open(now, "w") as g:
        g.write(f.read().replace('"MODIFIED"', '"ADDED"'))
    run_sidecar(tmp, [now, EVENTS[6]], out)
    check(listed(out) == sorted(DNS_DEAD),
          "restart keeps the file's dead backends, minus those ready again: %s" % listed(out))
    # A backend not ready when first seen (the sidecar started late) is dead too.
    out = os.path.join(tmp, "late")
    with open(EVENTS[3]) as f, open(now, "w") as g:
        g.write(f.read().replace('"MODIFIED"', '"ADDED"'))
    run_sidecar(tmp, [now], out)
    check(listed(out) == sorted(DNS_DEAD), "not ready when first seen: dead: %s" % listed(out))
    # DEAD_TTL=0: a dead backend is dropped at once.
    out = os.path.join(tmp, "ttl0")
    run_sidecar(tmp, EVENTS, out, {"DEAD_TTL": "0"})
    check(listed(out) == [], "DEAD_TTL=0: nothing listed: %s" % listed(out))
    left = [f for f in os.listdir(tmp) if ".tmp." in f]
    check(not left, "no temporary file left: %s" % left)
    # The guard's parser takes the file (--dry-run: nothing destroyed, and
    # in a namespace of its own).
    out = os.path.join(tmp, "dead-6")
    r = subprocess.run(["unshare", "-n", SD, "kill", "--dry-run", "--dead-backends", out],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "would destroy 0" in r.stderr,
          "the file parses for kill --dead-backends: %d %s" % (r.returncode, r.stderr))
    shutil.rmtree(tmp, ignore_errors=True)
    print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failures)))
    sys.exit(1 if failures else 0)


main()
