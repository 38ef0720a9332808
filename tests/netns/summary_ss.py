#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Differential test of `sockdiag -s` against `ss -s`, in the private network namespace
diff_ss.sh made, on a population this script builds: the same layout byte for byte, the
counts the population implies, and the JSON form with the same numbers.

"TCP: N" and "closed" come from the kernel's TCP "alloc" counter and "orphaned" from its
orphan counter, which are global (every namespace's sockets, and other tests run in
parallel): there the two tools are compared through what does not move, total - closed =
the hashed TCP sockets of this namespace."""
import json
import re
import socket
import subprocess
import sys
import time

SD = sys.argv[1]
FAILED = []
PASSED = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    (FAILED if not cond else PASSED).append(name)


def out(*argv):
    r = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check("%s: exit 0, quiet" % " ".join(argv), r.returncode == 0 and r.stderr == "",
          "rc %d err %r" % (r.returncode, r.stderr))
    return r.stdout


TCP_LINE = re.compile(r"TCP:   (\d+) \(estab (\d+), closed (\d+), orphaned (\d+), "
                      r"timewait (\d+)\)$")


def split(text):
    lines = text.split("\n")
    m = TCP_LINE.match(lines[1]) if len(lines) > 1 else None
    return lines, m


def populate():
    keep = []
    l4 = socket.socket()
    l4.bind(("127.0.0.1", 7201))
    l4.listen(8)
    keep.append(l4)
    for _ in range(2):  # two IPv4 connections: 4 established sockets
        c = socket.create_connection(("127.0.0.1", 7201))
        a, _ = l4.accept()
        keep += [c, a]
    l6 = socket.socket(socket.AF_INET6)
    l6.bind(("::1", 7202))
    l6.listen(1)
    keep.append(l6)
    for fam, addr in ((socket.AF_INET, ("127.0.0.1", 7203)), (socket.AF_INET, ("127.0.0.1", 7204)),
                      (socket.AF_INET6, ("::1", 7205))):
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.bind(addr)
        keep.append(u)
    keep.append(socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
    keep.append(socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6))
    keep.append(socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6))
    # One connection closed by its client, whose end lingers (FIN-WAIT-2 in the tw table).
    c = socket.create_connection(("127.0.0.1", 7201))
    a, _ = l4.accept()
    c.close()
    keep.append(a)
    settle()
    return keep


def sockstat_tw():
    """The kernel's count of this namespace's timewait sockets (/proc/net/sockstat)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                w = line.split()
                return int(w[w.index("tw") + 1])
    return -1


def settle():
    """The closed client's end is first a full socket in FIN-WAIT-1 or -2, then
    (its ACK in) a timewait socket, where it stays for tcp_fin_timeout (60 s):
    the tools are compared once the kernel counts it there, on a still
    population (the two tools would otherwise race its move)."""
    for _ in range(500):
        if sockstat_tw() == 1:
            return
        time.sleep(0.01)
    check("the closed client's end reached the timewait table", False,
          "sockstat tw %d" % sockstat_tw())


def main():
    keep = populate()
    ours, theirs = out(SD, "-s"), out("ss", "-s")
    (lo, mo), (lt, mt) = split(ours), split(theirs)
    check("TCP line in ss's form", mo is not None and mt is not None, repr((lo[:2], lt[:2])))
    if mo and mt:
        o, t = [int(x) for x in mo.groups()], [int(x) for x in mt.groups()]
        check("estab and timewait as ss", (o[1], o[4]) == (t[1], t[4]), repr((o, t)))
        check("total - closed as ss", o[0] - o[2] == t[0] - t[2], repr((o, t)))
        check("the population's counts: estab 5 (2 pairs and a CLOSE-WAIT), timewait 1 "
              "(the closed client)", o[1] == 5 and o[4] == 1, repr(o))
    check("every other line byte for byte as ss", lo[:1] + lo[2:] == lt[:1] + lt[2:],
          "\n%s\n---\n%s" % (ours, theirs))
    want = {"RAW": (3, 1, 2), "UDP": (3, 2, 1), "TCP": (7, 6, 1), "INET": (13, 9, 4)}
    rows = {l.split("\t")[0]: tuple(int(x) for x in l.split()[1:]) for l in lo if "\t" in l}
    for name, counts in want.items():
        check("%s row: %s" % (name, counts), rows.get(name) == counts, repr(rows.get(name)))
    j = json.loads(out(SD, "-s", "--json"))
    check("--json: the same numbers", j["total"] == int(lo[0].split()[1]) and
          j["tcp"]["estab"] == o[1] and j["tcp"]["timewait"] == o[4] and
          all((j["transport"][k.lower()]["total"], j["transport"][k.lower()]["ip"],
               j["transport"][k.lower()]["ipv6"]) == rows[k] for k in
              ("RAW", "UDP", "TCP", "INET", "FRAG")), repr(j))
    r = subprocess.run([SD, "-s", "sport", "=", ":1"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check("-s with a FILTER: exit 2, one line", r.returncode == 2 and r.stdout == "" and
          len(r.stderr.splitlines()) == 1, repr(r.stderr))
    for s in keep:
        s.close()
    print("# checks: %d passed, %d failed, 0 skipped" % (len(PASSED), len(FAILED)))
    if FAILED:
        sys.exit(1)


if __name__ == "__main__":
    main()
