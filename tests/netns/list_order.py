#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag list -tan` lists TCP sockets in ss's order: every IPv4 socket
before every IPv6 one, each family in the kernel's order, line for line as
`ss -tan` (the oracle). libsockdiag walks TCP of both families once and
mixes them; sockdiag list holds the IPv6 records back (at most 8192, then an
IPv6-only dump follows), so both paths are run: 300 IPv6 pairs, then 4200
(8400 sockets, past the bound). The sockets are made alternately IPv4 and
IPv6, so the kernel's walk interleaves them. Run by diff_ss.sh inside a
private network namespace. Exits 1 on any failure."""
import resource
import socket
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def endpoints(argv):
    """(state, local, peer) of each line of a `-tan` table, in order."""
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail("%s exited %d: %r" % (" ".join(argv), r.returncode, r.stderr))
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    return [(f[0], f[3], f[4]) for f in rows]


def check(sockdiag, want6):
    got = endpoints([sockdiag, "list", "-tan"])
    oracle = endpoints(["ss", "-tan"])
    fams = [6 if local.startswith("[") else 4 for _, local, _ in got]
    if fams != sorted(fams):
        fail("an IPv4 socket listed after an IPv6 one (%d IPv6 sockets)" % want6)
    if fams.count(6) < want6:
        fail("%d IPv6 sockets listed, at least %d made" % (fams.count(6), want6))
    if got != oracle:
        diff = next(i for i in range(min(len(got), len(oracle))) if got[i] != oracle[i]) \
            if len(got) == len(oracle) else "lengths %d/%d" % (len(got), len(oracle))
        fail("not ss's order (%d IPv6 sockets): first difference at %s" % (want6, diff))
    print("ok: %d lines in ss's order, %d IPv6" % (len(got), fams.count(6)))


def main():
    sockdiag = sys.argv[1]
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    l4 = socket.create_server(("127.0.0.1", 5000), backlog=4096)
    l6 = socket.create_server(("::1", 5001), family=socket.AF_INET6, backlog=4096)
    keep = [l4, l6]
    made6 = 1
    for n6 in (300, 4200):
        while made6 < 2 * n6 + 1:
            for lst, fam, addr in ((l4, socket.AF_INET, "127.0.0.1"),
                                   (l6, socket.AF_INET6, "::1")):
                if fam == socket.AF_INET and made6 > 2 * 300:
                    continue  # past the first round: IPv6 only, a few IPv4 suffice
                c = socket.socket(fam)
                c.connect((addr, lst.getsockname()[1]))
                a, _ = lst.accept()
                keep += [c, a]
                if fam == socket.AF_INET6:
                    made6 += 2
        check(sockdiag, made6)
    for s in keep:
        s.close()


if __name__ == "__main__":
    main()
