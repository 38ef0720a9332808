#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Randomized differential test of `sockdiag kill` (run by run.sh inside a
private network namespace A). A second namespace B, joined to A by a veth
pair, holds every peer, so that no socket of A depends on another socket of
A. Each trial builds a random population in A (TCP listeners, v4, v6,
dual-stack with IPv4-mapped accepted sockets, a SO_REUSEPORT group of 8,
accepted and outgoing connections, TIME-WAIT, UDP bound and connected),
runs one filter of a list (every filter once per run, in a random order), each
with an independent Python oracle, runs `sockdiag kill -tua FILTER --ndjson`,
and checks:
  - the sockets reported destroyed are exactly those the oracle selects,
    each reported once;
  - every socket A's owners hold sees ECONNABORTED iff it was selected;
  - with `ss -H -tuane` before and after: every unselected socket is still
    there in the same state; selected TCP sockets are gone from their state.
Between trials, `sockdiag kill -tua --all` clears A, and is checked too.
On a kernel that refuses to destroy TIME-WAIT sockets (before Linux 6.0; asked
of the kernel with a SOCK_DESTROY of tests/kernel_probe.py's own), each
selected TIME-WAIT socket must be reported unsupported with the line naming
6.0 and stay there; those of earlier trials linger (60 s) and are accounted
for the same way.
Usage: diff.py PATH-TO-SOCKDIAG [SEED] (or SOCKDIAG_TEST_SEED=SEED)."""
import ctypes
import errno
import json
import os
import random
import socket
import subprocess
import sys
import time

SD = sys.argv[1]
# The populations are random, the coverage is not: every filter runs in
# every run. SOCKDIAG_TEST_SEED (or the second argument) replays a run.
SEED = int(sys.argv[2] if len(sys.argv) > 2 else
           os.environ.get("SOCKDIAG_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernel_probe  # noqa: E402  (tests/kernel_probe.py: asks the kernel, not sockdiag)

SO_COOKIE = 57
TW_REFUSED = "this kernel cannot destroy TIME-WAIT sockets (Linux 6.0 and later can)"
CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)

A4, A4M, A6 = "10.0.0.1", "10.0.1.1", "fd00::1"
B4, B4M, B6 = "10.0.0.2", "10.0.1.2", "fd00::2"


def sh(*cmd):
    subprocess.run(cmd, check=True)


class Netns:
    """Namespace A (ours) and B (made here); switch the whole process."""

    def __init__(self):
        self.a = os.open("/proc/self/ns/net", os.O_RDONLY)
        if libc.unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare")
        self.b = os.open("/proc/self/ns/net", os.O_RDONLY)
        self.holder = subprocess.Popen(["sleep", "100000"])  # a process in B for ip(8)
        self.enter_a()
        sh("ip", "link", "add", "va", "type", "veth", "peer", "name", "vb")
        sh("ip", "link", "set", "vb", "netns", str(self.holder.pid))
        for addr in (A4 + "/24", A4M + "/24"):
            sh("ip", "addr", "add", addr, "dev", "va")
        sh("ip", "addr", "add", A6 + "/64", "dev", "va", "nodad")
        sh("ip", "link", "set", "va", "up")
        inb = ["nsenter", "-t", str(self.holder.pid), "-n"]
        for addr in (B4 + "/24", B4M + "/24"):
            sh(*inb, "ip", "addr", "add", addr, "dev", "vb")
        sh(*inb, "ip", "addr", "add", B6 + "/64", "dev", "vb", "nodad")
        sh(*inb, "ip", "link", "set", "vb", "up")
        sh(*inb, "ip", "link", "set", "lo", "up")

    def enter_a(self):
        if libc.setns(self.a, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns A")

    def enter_b(self):
        if libc.setns(self.b, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns B")

    def close(self):
        self.holder.kill()
        self.holder.wait()


def cookie_of(s):
    return "%x" % int.from_bytes(s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8), "little")


class Rec:
    """One socket of namespace A, as the oracle sees it."""

    def __init__(self, proto, state, laddr, lport, raddr, rport, sock=None, cookie=None):
        self.proto, self.state = proto, state
        self.laddr, self.lport, self.raddr, self.rport = laddr, lport, raddr, rport
        self.sock = sock
        self.cookie = cookie or cookie_of(sock)


def v4(addr):
    return "." in addr and ":" not in addr


def v6(addr):
    return ":" in addr


# Filters in ss syntax, each with an oracle over Rec. States as ss names them
# ("listening" is LISTEN only; -l would add UNCONN).
FILTERS = [
    ("sport = :7003", lambda r: r.lport == 7003),
    ("dport = :8001", lambda r: r.rport == 8001),
    ("state listening", lambda r: r.state == "LISTEN"),
    ("state unconnected or sport = :7012", lambda r: r.state == "UNCONN" or r.lport == 7012),
    ("state established and sport >= :7010 and sport <= :7014",
     lambda r: r.state == "ESTAB" and 7010 <= r.lport <= 7014),
    ("dst 10.0.0.2", lambda r: r.raddr == B4),
    ("src fd00::1 and not sport = :7011", lambda r: r.laddr == A6 and r.lport != 7011),
    ("( sport = :9001 or sport = :9012 or dport = :9500 )",
     lambda r: r.lport in (9001, 9012) or r.rport == 9500),
    ("sport = :7030", lambda r: r.lport == 7030),
    ("state time-wait", lambda r: r.state == "TIME-WAIT"),
    ("sport = :7020", lambda r: r.lport == 7020),
    ("dport > :8010", lambda r: r.rport > 8010),
    ("not sport < :9000", lambda r: r.lport >= 9000),
    ("src 10.0.0.1 and dport = :0", lambda r: r.laddr == A4 and r.rport == 0),
    ("state established and ( dst fd00::2 or sport = :7001 )",
     lambda r: r.state == "ESTAB" and (r.raddr == B6 or r.lport == 7001)),
    ("sport = :7000 or dport = :8000", lambda r: r.lport == 7000 or r.rport == 8000),
]


def tcp_listen(family, addr, port, reuseport=False):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuseport:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind((addr, port))
    s.listen(64)
    return s


def build(ns, rnd):
    """A random population. Returns (records of A, sockets to close in B)."""
    recs, bsocks, pend = [], [], []
    # Listeners in A and their clients in B.
    lst = []
    for port in rnd.sample(range(7000, 7010), rnd.randint(2, 6)):
        wild = rnd.random() < 0.3
        s = tcp_listen(socket.AF_INET, "0.0.0.0" if wild else A4, port)
        lst.append((s, A4, port))
        recs.append(Rec("tcp", "LISTEN", "0.0.0.0" if wild else A4, port, "0.0.0.0", 0, s))
    for port in rnd.sample(range(7010, 7015), rnd.randint(1, 4)):
        s = tcp_listen(socket.AF_INET6, A6, port)
        lst.append((s, A6, port))
        recs.append(Rec("tcp", "LISTEN", A6, port, "::", 0, s))
    s = tcp_listen(socket.AF_INET6, "::", 7020)  # dual-stack: IPv4 clients are v4-mapped
    lst.append((s, A4M, 7020))
    recs.append(Rec("tcp", "LISTEN", "::", 7020, "::", 0, s))
    for i in range(8):
        s = tcp_listen(socket.AF_INET, A4, 7030, reuseport=True)
        recs.append(Rec("tcp", "LISTEN", A4, 7030, "0.0.0.0", 0, s))
        if i == 0:
            lst.append((s, A4, 7030))
    ns.enter_b()
    for s, addr, port in lst:
        for _ in range(rnd.randint(0, 3)):
            c = socket.socket(socket.AF_INET6 if v6(addr) else socket.AF_INET)
            c.connect((addr, port))
            bsocks.append(c)
            pend.append((addr, port, c.getsockname()))
    ns.enter_a()
    time.sleep(0.05)
    socks7030 = [r.sock for r in recs if r.lport == 7030]
    for addr, port, (caddr, cport, *_) in pend:
        cands = socks7030 if port == 7030 else [s for s, a, p in lst if p == port]
        a = None
        while a is None:
            for s in cands:  # a reuseport connection lands on any member
                s.setblocking(False)
                try:
                    a, _ = s.accept()
                    break
                except BlockingIOError:
                    pass
                finally:
                    s.setblocking(True)
        a.setblocking(True)
        la, lp = a.getsockname()[:2]
        ra, rp = a.getpeername()[:2]
        recs.append(Rec("tcp", "ESTAB", la, lp, ra, rp, a))
    # Outgoing connections from A to listeners in B.
    ns.enter_b()
    blst = [tcp_listen(socket.AF_INET, B4, p) for p in range(8000, 8005)]
    blst += [tcp_listen(socket.AF_INET6, B6, p) for p in range(8010, 8013)]
    bsocks += blst
    ns.enter_a()
    out = []
    for _ in range(rnd.randint(2, 10)):
        b = rnd.choice(blst)
        addr, port = b.getsockname()[:2]
        c = socket.socket(b.family)
        c.connect((addr, port))
        out.append(c)
        la, lp = c.getsockname()[:2]
        recs.append(Rec("tcp", "ESTAB", la, lp, addr, port, c))
    # TIME-WAIT in A: A closes first (at least one: "state time-wait" runs in every run).
    for _ in range(rnd.randint(1, 3)):
        b = blst[0]
        c = socket.create_connection(b.getsockname()[:2])
        la, lp = c.getsockname()[:2]
        r = Rec("tcp", "TIME-WAIT", la, lp, B4, 8000, c)
        c.close()
        r.sock = None
        recs.append(r)
    ns.enter_b()
    time.sleep(0.05)
    for b in blst:  # accept and close the server sides (TIME-WAIT peers close too)
        b.setblocking(False)
        while True:
            try:
                x, _ = b.accept()
                bsocks.append(x)
            except BlockingIOError:
                break
    ns.enter_a()
    time.sleep(0.05)
    for x in bsocks:
        if x.getsockname()[1] == 8000 and x.type == socket.SOCK_STREAM:
            try:
                x.getpeername()
            except OSError:
                continue
            # Close the server side of TIME-WAIT connections (their peer closed).
            x.setblocking(False)
            try:
                if x.recv(1) == b"":
                    x.close()
            except (BlockingIOError, OSError):
                pass
    # UDP in A.
    for port in rnd.sample(range(9000, 9010), rnd.randint(1, 5)):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((A4, port))
        recs.append(Rec("udp", "UNCONN", A4, port, "0.0.0.0", 0, u))
    for port in rnd.sample(range(9010, 9015), rnd.randint(1, 3)):
        u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        u.bind((A6, port))
        recs.append(Rec("udp", "UNCONN", A6, port, "::", 0, u))
    for i in range(rnd.randint(1, 4)):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((A4, 9100 + i))
        u.connect((B4, rnd.choice((9500, 9501))))
        ra, rp = u.getpeername()
        recs.append(Rec("udp", "ESTAB", A4, 9100 + i, ra, rp, u))
    time.sleep(0.1)
    return recs, bsocks + out


def ss_snapshot():
    out = subprocess.run(["ss", "-H", "-tuane"], capture_output=True, text=True, check=True).stdout
    snap = {}
    for line in out.splitlines():
        f = line.split()
        ck = [x[3:] for x in f if x.startswith("sk:")]
        if ck:
            snap[ck[0]] = (f[0], f[1])
    return snap


def norm(addr):
    return addr[7:] if addr.startswith("::ffff:") else addr


def refused(rows, tw_ok):
    """The rows that are not destroyed, less the TIME-WAIT sockets a kernel that refuses to
    destroy them (tw_ok False) reports unsupported with the line naming Linux 6.0."""
    return [r for r in rows if r.get("result") != "destroyed" and
            (tw_ok or r.get("state") != "TIME-WAIT" or r.get("result") != "unsupported" or
             r.get("result_detail") != TW_REFUSED)]


def trial(ns, n, rnd, ftext, oracle, tw_ok):
    recs, others = build(ns, rnd)
    # The oracle speaks of the socket's own addresses; v4-mapped ones in the
    # :: family show their IPv4 form only through an IPv4 filter if mapped.
    want = {r.cookie for r in recs if oracle(r)}
    if not tw_ok:  # TIME-WAIT stays: selected, reported unsupported, not destroyed
        want -= {r.cookie for r in recs if r.state == "TIME-WAIT"}
    before = ss_snapshot()
    missing = [r.cookie for r in recs if r.cookie not in before]
    problems = []
    if missing:
        problems.append("ss does not show %d population sockets before the kill" % len(missing))
    p = subprocess.run([SD, "kill", "-tua", "--ndjson", ftext], capture_output=True, text=True,
                       timeout=60)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    destroyed = {r["cookie"] for r in rows if r.get("result") == "destroyed"}
    others_res = refused(rows, tw_ok)
    if not tw_ok:
        tw_sel = {r.cookie for r in recs if r.state == "TIME-WAIT" and oracle(r)}
        tw_rep = {r["cookie"] for r in rows if r.get("state") == "TIME-WAIT"}
        if not tw_sel <= tw_rep:
            problems.append("selected TIME-WAIT sockets not reported: %s" %
                            sorted(tw_sel - tw_rep))
    exp_rc = 0 if want else 1
    if p.returncode != exp_rc:
        problems.append("exit %d, expected %d (%s)" % (p.returncode, exp_rc, p.stderr.strip()))
    if destroyed != want:
        problems.append("destroyed %d, expected %d: extra %s, missed %s" % (
            len(destroyed), len(want), sorted(destroyed - want), sorted(want - destroyed)))
    if others_res:
        problems.append("unexpected results: %s" % others_res)
    # Each socket is reported once, whatever the passes (bound UDP sockets
    # stay hashed after a destroy and are dumped again by a later pass).
    if len(rows) != len({r["cookie"] for r in rows}):
        problems.append("a socket reported twice: %d rows, %d cookies" % (
            len(rows), len({r["cookie"] for r in rows})))
    after = ss_snapshot()
    for r in recs:
        hit = r.cookie in want
        if r.sock is not None:
            err = r.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if (err == errno.ECONNABORTED) != hit:
                problems.append("%s %s %s:%d -> %s:%d: SO_ERROR %d, selected %s" % (
                    r.proto, r.state, r.laddr, r.lport, r.raddr, r.rport, err, hit))
        b, a = before.get(r.cookie), after.get(r.cookie)
        if not hit and b != a:
            problems.append("unselected %s %s:%d changed in ss: %s -> %s" % (
                r.proto, r.laddr, r.lport, b, a))
        if not tw_ok and r.state == "TIME-WAIT" and a != b:
            problems.append("TIME-WAIT %s:%d changed in ss on a kernel that cannot destroy "
                            "it: %s -> %s" % (r.laddr, r.lport, b, a))
        if hit and r.proto == "tcp" and a is not None and a[1] == b[1]:
            problems.append("selected %s %s:%d still %s in ss" % (r.proto, r.laddr, r.lport, a[1]))
    print("trial %d: %-55s population %3d, selected %3d, destroyed %3d: %s" % (
        n, repr(ftext), len(recs), len(want), len(destroyed), "ok" if not problems else "FAIL"))
    for x in problems:
        print("   ", x, file=sys.stderr)
    for r in recs:
        if r.sock is not None:
            r.sock.close()
    ns.enter_b()
    for s in others:
        s.close()
    ns.enter_a()
    # Let TIME-WAIT and closing sockets of this trial not collide with the next.
    subprocess.run(["sysctl", "-q", "-w", "net.ipv4.tcp_tw_reuse=1"], capture_output=True)
    return not problems


def clear_a(tw_ok):
    """Destroy what a trial left in A (TIME-WAIT and closing sockets), so
    ports can be bound again. This is the tool under test as well: every row
    must say destroyed, the exit status must say whether any was, and after
    it ss must show no TCP or UDP socket in A (but TIME-WAIT ones where the
    kernel cannot destroy them: unsupported, with the line). Returns problems
    found."""
    problems = []
    before = ss_snapshot()
    p = subprocess.run([SD, "kill", "-tua", "--all", "--ndjson"], capture_output=True, text=True,
                       timeout=60)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    bad = refused(rows, tw_ok)
    if bad:
        problems.append("clearing A: results %s" % bad)
    n = sum(r.get("result") == "destroyed" for r in rows)
    if p.returncode != (0 if n else 1):
        problems.append("clearing A: exit %d with %d destroyed (%s)" % (
            p.returncode, n, p.stderr.strip()))
    if {r["cookie"] for r in rows} - set(before):
        problems.append("clearing A: destroyed sockets ss did not show")
    left = {k: v for k, v in ss_snapshot().items() if tw_ok or v != ("tcp", "TIME-WAIT")}
    if left:
        problems.append("clearing A: still there after kill --all: %s" % left)
    for x in problems:
        print("   ", x, file=sys.stderr)
    return not problems


def main():
    print("seed %d (rerun: SOCKDIAG_TEST_SEED=%d, or diff.py SOCKDIAG %d)" % (SEED, SEED, SEED))
    rnd = random.Random(SEED)
    order = list(range(len(FILTERS)))
    rnd.shuffle(order)
    ns = Netns()
    ok = True
    failed = [0]
    try:
        tw_ok = kernel_probe.time_wait_destroyed()
        if not tw_ok:
            print("kernel: TIME-WAIT sockets cannot be destroyed (EOPNOTSUPP, asked with a "
                  "SOCK_DESTROY of its own): expected unsupported")
        for n, i in enumerate(order):
            ok &= clear_a(tw_ok)
            t = trial(ns, n, rnd, *FILTERS[i], tw_ok)
            failed[0] += not t
            ok &= t
        ok &= clear_a(tw_ok)
    finally:
        ns.close()
    print("diff: %d filters, %d trials, %s (seed %d)" % (
        len(FILTERS), len(order), "all passed" if ok else "FAILED", SEED))
    print("# checks: %d passed, %d failed, 0 skipped" % (len(order) - failed[0], failed[0]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
