# SPDX-License-Identifier: GPL-2.0-or-later
"""The Python module against independent oracles: psutil.net_connections()
(/proc text), pyroute2's sock_diag decoder, getsockopt(TCP_INFO), what the
tests themselves created, the kernel's own errors. Run by run.sh inside
private network, pid and mount namespaces (never on the host's sockets)."""
import collections
import ctypes
import errno
import gc
import ipaddress
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import warnings

import psutil
import pytest
from pyroute2 import DiagSocket

import sockdiag

HERE = os.path.dirname(os.path.abspath(__file__))
SLOW = float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1") or 1)
ASAN = os.environ.get("SDIAG_PY_ASAN") == "1"
PSUTIL_KINDS = ["inet", "inet4", "inet6", "tcp", "tcp4", "tcp6", "udp", "udp4",
                "udp6", "unix", "all"]


def setup_module():
    # Never act on the host's sockets: run.sh made these namespaces.
    assert os.getpid() < 1000 and os.readlink("/proc/1/ns/net") == \
        os.readlink("/proc/self/ns/net"), "not in run.sh's private pid+net namespaces"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Holder:
    """holder.py in a process of its own (its own pid for psutil's pid)."""

    def __init__(self, base, netns_cmd=()):
        self.dir = tempfile.TemporaryDirectory(prefix="sdpy-")
        self.p = subprocess.Popen(list(netns_cmd) + [sys.executable,
                                  os.path.join(HERE, "holder.py"), str(base), self.dir.name],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.strip() == "ready", line

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30 * SLOW)
        self.dir.cleanup()


@pytest.fixture(scope="module")
def population():
    hs = [Holder(7000), Holder(7100)]
    yield hs
    for h in hs:
        h.close()


def six(c):
    return (c.family, c.type, c.laddr, c.raddr, c.status, c.pid)


@pytest.mark.parametrize("kind", PSUTIL_KINDS)
def test_same_as_psutil(population, kind):
    """The same set of (family, type, laddr, raddr, status, pid) as psutil."""
    ours = {six(c) for c in sockdiag.connections(kind, processes=True)}
    theirs = {six(c) for c in psutil.net_connections(kind)}
    assert ours == theirs
    # What the holders made is there: not two empty sets.
    pids = {h.p.pid for h in population}
    if kind in ("tcp4", "inet4", "inet", "all", "tcp"):
        assert {c[5] for c in ours if c[4] == "LISTEN"} == pids
    assert len(ours) >= {"unix": 6, "udp6": 2, "tcp6": 10}.get(kind, 4)


def test_psutil_types_and_fds(population):
    """Types as psutil's (enums, namedtuples, (), ""); fd of single owners."""
    theirs = {(c.pid, c.fd): c for c in psutil.net_connections("all")}
    ours = sockdiag.connections("all", processes=True)
    states = collections.Counter(c.status for c in ours)
    for st in ("LISTEN", "ESTABLISHED", "TIME_WAIT", "CLOSE_WAIT", "FIN_WAIT2", "NONE"):
        assert states[st] > 0, st
    for c in ours:
        assert type(c.family) is socket.AddressFamily and type(c.type) is socket.SocketKind
        assert isinstance(c.status, str)
        if c.family == socket.AF_UNIX:
            assert isinstance(c.laddr, str) and c.raddr == ""
        else:
            for a in (c.laddr, c.raddr):
                assert a == () or (type(a).__name__ == "addr" and a.ip == a[0] and a.port == a[1])
        if c.pid is not None and len(c.processes) == 1:
            # psutil took the same (pid, fd): the whole record matches.
            assert tuple(theirs[(c.pid, c.fd)]) == tuple(c)[:7]
            assert c.processes[0].pid == c.pid and c.processes[0].fd == c.fd
            assert c.processes[0].comm == psutil.Process(c.pid).name()[:15]
        else:
            assert c.fd == -1 or len(c.processes) > 1
    fd, family, type_, laddr, raddr, status, pid = ours[0]  # unpacks like sconn
    assert ours[0] == tuple(ours[0])[:7]


def pyroute2_sockets(family, protocol=socket.IPPROTO_TCP):
    with DiagSocket() as ds:
        ds.bind()
        return ds.get_sock_stats(family=family, protocol=protocol)


TCP_STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2",
              6: "TIME_WAIT", 7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN",
              11: "CLOSING"}


def test_same_as_pyroute2_inet(population):
    """TCP, both families: what pyroute2 decodes of the same kernel dump."""
    theirs = set()
    for fam in (socket.AF_INET, socket.AF_INET6):
        for m in pyroute2_sockets(fam):
            theirs.add((m["idiag_family"], m["idiag_src"], m["idiag_sport"],
                        m["idiag_dst"] if m["idiag_dport"] else None, m["idiag_dport"],
                        TCP_STATES[m["idiag_state"]], m["idiag_inode"], m["idiag_uid"],
                        m["idiag_cookie"]))
    ours = set()
    for c in sockdiag.connections("tcp"):
        # A TIME-WAIT socket has no uid (the kernel sends 0): None here.
        assert (c.uid is None) == (c.status == "TIME_WAIT")
        ours.add((int(c.family), c.laddr.ip, c.laddr.port, c.raddr.ip if c.raddr else None,
                  c.raddr.port if c.raddr else 0, c.status, c.inode, c.uid or 0, c.cookie))
    assert len(ours) >= 20 and ours == theirs, sorted(map(repr, ours ^ theirs))


def test_same_as_pyroute2_unix(population):
    theirs = {}
    for m in pyroute2_sockets(socket.AF_UNIX):
        name = dict(m["attrs"]).get("UNIX_DIAG_NAME", "")
        theirs[m["udiag_ino"]] = (m["udiag_type"], name.replace("\0", "@"))
    # pyroute2 drops an abstract name's leading NUL (we show it as '@', as psutil).
    ours = {c.inode: (int(c.type), c.laddr[1:] if c.laddr.startswith("@") else c.laddr)
            for c in sockdiag.connections("unix")}
    assert len(ours) >= 12 and ours == theirs
    assert any(v[1].startswith("sockdiag-test-") for v in ours.values())


def tcp_info_fields(s):
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    u8 = raw[0]
    u32 = struct.unpack_from("=21I", raw, 8)
    return {"state": u8, "snd_mss": u32[2], "pmtu": u32[13], "advmss": u32[19]}


def test_details_tcp_info():
    lst = socket.create_server(("127.0.0.1", 7400))
    c = socket.create_connection(("127.0.0.1", 7400))
    a, _ = lst.accept()
    try:
        socks = sockdiag.connections("tcp", filter="sport = :7400 and state established",
                                     details=True)
        assert len(socks) == 1
        ti = socks[0].tcp_info
        want = tcp_info_fields(a)
        assert {k: ti[k] for k in want} == want
        assert set(ti) >= {"rtt", "rttvar", "snd_cwnd", "bytes_acked", "delivery_rate_app_limited"}
        assert sockdiag.connections("tcp", filter="sport = :7400")[0].tcp_info is None
    finally:
        for s in (c, a, lst):
            s.close()


def test_kinds():
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    nl.bind((0, 0))
    try:
        got = [c for c in sockdiag.connections("netlink") if c.inode == os.fstat(nl.fileno()).st_ino]
        assert len(got) == 1 and got[0].family == socket.AF_NETLINK and got[0].netid == "nl"
        inodes = {c.inode for c in sockdiag.connections("every")}
        assert os.fstat(nl.fileno()).st_ino in inodes
    finally:
        nl.close()
    assert {c.netid for c in sockdiag.connections(("tcp4", "udp6"))} <= {"tcp", "udp"}
    assert all(c.family == socket.AF_INET if c.netid == "tcp" else c.family == socket.AF_INET6
               for c in sockdiag.connections(("tcp4", "udp6")))
    with pytest.raises(ValueError, match="unknown kind"):
        sockdiag.connections("tcp7")


def test_count_by(population):
    """Groups as the records give them; the CLI's vocabulary (laddr/raddr the IP, a
    v4-mapped one as IPv4, lip/rip/netid/comm/peer aliases); one key's groups are
    plain values, several keys' tuples."""
    socks = sockdiag.connections("all", processes=True)

    def ip(c, a):
        if c.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        if a:
            x = ipaddress.ip_address(a.ip)
            return str(x.ipv4_mapped) if x.version == 6 and x.ipv4_mapped else a.ip
        return "0.0.0.0" if c.family == socket.AF_INET else "::"

    for keys in (("family", "status"), ("lendpoint",), ("netid", "state", "lport"),
                 ("pid", "comm"), ("rip", "rport", "uid"), ("laddr",), ("peer",), ("state",)):
        want = collections.Counter()
        for c in socks:
            v = []
            for k in keys:
                inet = c.family in (socket.AF_INET, socket.AF_INET6)
                if k == "lport":
                    v.append((c.laddr.port if c.laddr else 0) if inet else None)
                elif k == "rport":
                    v.append((c.raddr.port if c.raddr else 0) if inet else None)
                elif k in ("rip", "peer"):
                    v.append(ip(c, c.raddr))
                elif k == "laddr":
                    v.append(ip(c, c.laddr))
                elif k == "lendpoint":
                    v.append(c.laddr)
                elif k == "comm":
                    v.append(c.processes[0].comm if c.processes else None)
                else:
                    v.append(getattr(c, k))
            want[tuple(v) if len(keys) > 1 else v[0]] += 1
        assert sockdiag.count_by(keys, kind="all") == dict(want), keys
    assert sockdiag.count_by("status,family") == sockdiag.count_by(["status", "family"])
    assert sockdiag.count_by("raddr", kind="tcp") == sockdiag.count_by("rip", kind="tcp")
    assert sockdiag.count_by(("process", "proto"), kind="tcp") == \
        sockdiag.count_by(("comm", "netid"), kind="tcp")
    with pytest.raises(ValueError, match="unknown key"):
        sockdiag.count_by("colour")
    with pytest.raises(ValueError, match="unknown key 'unit'"):
        sockdiag.count_by("unit")


FILTER_ERRORS = [
    # (prefix that parses, the offending token, what follows)
    ("dport = :80 and ", "and", ""),
    ("( sport = :22 ", "", ""),
    ("sport = :22 or ", "bogus", " = 1"),
    ("src 127.0.0.1 and state ", "nosuchstate", ""),
    ("dport = :é80 or ", "xyzzy", ""),
]


@pytest.mark.parametrize("prefix,token,rest", FILTER_ERRORS)
def test_filter_error_position(prefix, token, rest):
    expr = prefix + token + rest
    with pytest.raises(sockdiag.FilterError) as ei:
        sockdiag.connections(filter=expr)
    e = ei.value
    assert isinstance(e, ValueError) and e.expression == expr
    if prefix.startswith("dport = :é"):
        # é is not a port: the first error is there, in bytes of UTF-8.
        assert e.position == len("dport = ".encode()), (e.position, str(e))
        return
    assert (e.position, e.length) == (len(prefix.encode()), len(token.encode())), str(e)
    assert str(e)


def test_filter_matches():
    l1 = socket.create_server(("127.0.0.1", 7501))
    l2 = socket.create_server(("127.0.0.1", 7502))
    try:
        got = sockdiag.connections("tcp", filter="sport = :7501 or sport = :7502")
        assert sorted(c.laddr.port for c in got) == [7501, 7502]
        got = sockdiag.connections("tcp", filter="sport = :7501")
        assert [c.laddr.port for c in got] == [7501]
    finally:
        l1.close()
        l2.close()


def make_pairs(port, n):
    lst = socket.create_server(("127.0.0.1", port), backlog=n + 8)
    out = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port))
        a, _ = lst.accept()
        out += [c, a]
    return lst, out


def fd_cookie(s):
    return struct.unpack("=Q", s.getsockopt(socket.SOL_SOCKET, 57, 8))[0]  # SO_COOKIE


def test_kill_kinds_of_different_families():
    # Each kind keeps its families (the query's table_afs): tcp4 and udp6 select
    # IPv4 TCP and IPv6 UDP, not IPv6 TCP nor IPv4 UDP. The oracle: the
    # sockets made here, by cookie.
    keep = []
    made = {}
    for fam, addr, kind in ((socket.AF_INET, "127.0.0.1", "tcp4"), (socket.AF_INET6, "::1", "tcp6")):
        lst = socket.create_server((addr, 7611), family=fam)
        c = socket.create_connection((addr, 7611))
        a, _ = lst.accept()
        keep += [lst, c, a]
        made[kind] = {fd_cookie(c), fd_cookie(a)}
    for fam, addr, kind in ((socket.AF_INET, "127.0.0.1", "udp4"), (socket.AF_INET6, "::1", "udp6")):
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.bind((addr, 7611))
        u.connect((addr, 7612))
        keep.append(u)
        made[kind] = {fd_cookie(u)}
    try:
        dry = sockdiag.kill("sport = :7611 or dport = :7611", kind=["tcp4", "udp6"], dry_run=True)
        assert {s.cookie for s, r in dry} == made["tcp4"] | made["udp6"]
        assert {r for s, r in dry} == {"would-destroy"}
    finally:
        for s in keep:
            s.close()


def test_kill_exact():
    l1, p1 = make_pairs(7601, 4)
    l2, p2 = make_pairs(7602, 4)
    try:
        flt = "sport = :7601 or dport = :7601"
        before = {c.cookie: c for c in sockdiag.connections("tcp", filter=flt)}
        others = {c.cookie for c in sockdiag.connections("tcp", filter="sport = :7602 or dport = :7602")}
        assert len(before) == 9 and len(others) == 9
        # sockdiag kill's selection: the connected sockets, not the listener (a filter
        # without state clauses keeps ss's default states; test_selection.py compares).
        lcookie = {k for k, c in before.items() if c.status == "LISTEN"}
        conns = set(before) - lcookie
        assert len(lcookie) == 1
        dry = sockdiag.kill(flt, kind="tcp", dry_run=True)
        assert {s.cookie for s, r in dry} == conns and {r for s, r in dry} == {"would-destroy"}
        assert {c.cookie for c in sockdiag.connections("tcp", filter=flt)} == set(before)
        res = sockdiag.kill(flt, kind="tcp")
        # Every matched socket once: destroyed, or gone when destroying its peer reset
        # and closed it first; of each pair, one end at least was destroyed.
        got = {s.cookie: r for s, r in res}
        assert len(res) == len(got) and set(got) == conns
        assert set(got.values()) <= {"destroyed", "gone"}
        ends = {(c.laddr.port, c.raddr.port): k for k, c in before.items() if k in conns}
        for (lp, rp), k in ends.items():
            if got[k] == "gone":
                assert got[ends[(rp, lp)]] == "destroyed"
        # The listener is left listening; nothing else matches any more.
        assert [(c.cookie, c.status) for c in sockdiag.connections("tcp", filter=flt)] == \
            [(lcookie.pop(), "LISTEN")]
        assert {c.cookie for c in sockdiag.connections("tcp", filter="sport = :7602 or dport = :7602")} == others
        for s in p1:
            with pytest.raises(OSError) as ei:
                s.recv(1)
            assert ei.value.errno in (errno.ECONNABORTED, errno.ECONNRESET)
        assert p1[0].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) in (0, errno.ECONNABORTED)
        p2[0].sendall(b"x")
        assert p2[1].recv(1) == b"x"
    finally:
        for s in [l1, l2] + p1 + p2:
            s.close()
    with pytest.raises(ValueError):
        sockdiag.kill("")


def run_dropped(caps, code):
    """Run code in a child without the capabilities (setpriv drops them from
    the bounding set, so root's exec gets none of them)."""
    drop = ",".join("-" + c for c in caps)
    r = subprocess.run(["setpriv", "--bounding-set", drop, "--inh-caps", drop, "--",
                        sys.executable, "-c", "import sockdiag\n" + code],
                       capture_output=True, text=True, timeout=60 * SLOW)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_permission_error():
    lst = socket.create_server(("127.0.0.1", 7701))
    try:
        out = run_dropped(["net_admin"], """
try:
    sockdiag.kill("sport = :7701", kind="tcp")
    print("no error")
except PermissionError as e:
    print("PermissionError", e.errno, len(sockdiag.connections("tcp", filter="sport = :7701")))
""")
        assert out == "PermissionError %d 1" % errno.EPERM
        # Nothing was destroyed.
        assert len(sockdiag.connections("tcp", filter="sport = :7701")) == 1
        out = run_dropped(["sys_admin"], """
try:
    sockdiag.connections(netns="/proc/1/ns/net")
    print("no error")
except PermissionError as e:
    print("PermissionError", e.errno)
""")
        assert out == "PermissionError %d" % errno.EPERM
    finally:
        lst.close()
    with pytest.raises(FileNotFoundError):
        sockdiag.connections(netns="sockdiag-no-such-netns-%d" % os.getpid())


def test_other_netns():
    h = Holder(7800, netns_cmd=["unshare", "-n", "sh", "-c",
                                'ip link set lo up && exec "$0" "$@"'])
    try:
        # The holder's python runs inside unshare -n: its pid is unshare's (exec).
        spec = "/proc/%d/ns/net" % h.p.pid
        assert os.readlink(spec) != os.readlink("/proc/self/ns/net")
        theirs = sockdiag.connections("tcp", netns=spec)
        assert {c.laddr.port for c in theirs if c.status == "LISTEN"} == {7800, 7801, 7802, 7803, 7804}
        assert all(c.netns == spec for c in theirs)
        assert not sockdiag.connections("tcp", filter="sport = :7804")
        fd = os.open(spec, os.O_RDONLY)
        try:
            byfd = sockdiag.connections("tcp", netns=fd)
            assert {c.cookie for c in byfd} == {c.cookie for c in theirs}
            assert {c.cookie for c in sockdiag.iter_connections("tcp", netns=fd)} == \
                {c.cookie for c in theirs}
        finally:
            os.close(fd)
    finally:
        h.close()


def os_threads():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("Threads:"))


def test_iteration_pulls_without_a_thread():
    # The iterator pulls from the library's pull-mode dump in the caller's
    # thread: no producer thread exists while it runs, and two iterators can
    # be interleaved, each with its own dump (one handle each).
    lst, pairs = make_pairs(7903, 1100)  # 2201 sockets: three chunks
    flt = "sport = :7903 or dport = :7903"
    try:
        want = {c.cookie for c in sockdiag.connections("tcp", filter=flt)}
        assert len(want) == 2201
        base = os_threads()
        a = sockdiag.iter_connections("tcp", filter=flt)
        b = sockdiag.iter_connections("tcp", filter=flt)
        got_a, got_b = [next(a).cookie], [next(b).cookie]
        assert os_threads() == base
        for x, y in zip(a, b):
            got_a.append(x.cookie)
            got_b.append(y.cookie)
            assert os_threads() == base
        got_a += [c.cookie for c in a]
        got_b += [c.cookie for c in b]
        assert sorted(got_a) == sorted(want) and sorted(got_b) == sorted(want)
        with pytest.raises(StopIteration):
            next(a)
    finally:
        for s in [lst] + pairs:
            s.close()


def test_iteration_while_sockets_churn():
    lst, stable = make_pairs(7901, 1200)  # 2401 sockets: more than two chunks
    stable_cookies = {c.cookie for c in sockdiag.connections("tcp", filter="sport = :7901 or dport = :7901")}
    assert len(stable_cookies) == 2401
    churn = socket.create_server(("127.0.0.1", 7902), backlog=256)
    stop = threading.Event()

    def churner():
        # linger 0: closed with a reset, no TIME-WAIT piles up
        linger = struct.pack("ii", 1, 0)
        while not stop.is_set():
            c = socket.create_connection(("127.0.0.1", 7902))
            a, _ = churn.accept()
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            c.close()
            a.close()
            stop.wait(0.0005)

    t = threading.Thread(target=churner)
    t.start()
    try:
        for i in range(20):
            seen = collections.Counter()
            src = sockdiag.iter_connections("tcp") if i % 2 else sockdiag.connections("tcp")
            for c in src:
                seen[c.cookie] += 1
            assert stable_cookies <= set(seen)
            assert max(seen.values()) == 1
        # Generators dropped in the middle of a dump stop it cleanly (the
        # churner stopped first: its sockets would move the count).
        stop.set()
        t.join()
        nfd = len(os.listdir("/proc/self/fd"))
        for _ in range(50):
            g = sockdiag.iter_connections("tcp")
            next(g)
            del g
        assert len(os.listdir("/proc/self/fd")) == nfd
    finally:
        stop.set()
        t.join()
        for s in [lst, churn] + stable:
            s.close()


def test_threads():
    lst, pairs = make_pairs(8001, 50)
    try:
        want = {c.cookie for c in sockdiag.connections("tcp", filter="sport = :8001 or dport = :8001")}
        errors = []

        def worker():
            try:
                for _ in range(30):
                    got = {c.cookie for c in sockdiag.connections("tcp", filter="sport = :8001 or dport = :8001")}
                    if got != want:
                        errors.append(got ^ want)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        ts = [threading.Thread(target=worker) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert errors == [] and len(want) == 101
    finally:
        for s in [lst] + pairs:
            s.close()


def test_watch():
    with sockdiag.watch(filter="sport = :8101 or dport = :8101") as w:
        assert isinstance(w.fileno(), int)
        t = time.monotonic()
        assert w.read(timeout=0.2) == []
        assert time.monotonic() - t >= 0.19
        l1, p1 = make_pairs(8101, 2)
        l2, p2 = make_pairs(8102, 2)
        cookies = {c.cookie for c in sockdiag.connections("tcp", filter="sport = :8101 or dport = :8101")}
        assert len(cookies) == 5
        for s in [l1, l2] + p1 + p2:
            s.close()
        got = []
        deadline = time.monotonic() + 10 * SLOW
        while len(got) < 5 and time.monotonic() < deadline:
            got += w.read(timeout=0.5)
        assert {c.cookie for c in got} == cookies
        assert all(c.status == "CLOSE" or c.state == "UNCONN" or c.status for c in got)
        assert all(8101 in (c.laddr.port, c.raddr.port if c.raddr else 0) for c in got)
        assert w.read(timeout=0.1 * SLOW) == []
        assert w.lost == 0
    with pytest.raises(ValueError):
        w.read(timeout=0)


def test_life():
    """life(): an ok connection's payload bytes exact, a refused one refused, each once."""
    # A failed connect no dump saw has lost its peer port: no filter on dport.
    with sockdiag.life(filter="not sport = :8111", interval=0.2) as lf:
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", 8111))
        srv.listen(4)
        c = socket.create_connection(("127.0.0.1", 8111))
        a, _ = srv.accept()
        c.sendall(b"x" * 7000)
        n = 0
        while n < 7000:
            n += len(a.recv(65536))
        a.sendall(b"y" * 300)
        n = 0
        while n < 300:
            n += len(c.recv(65536))
        port = c.getsockname()[1]
        c.close()
        a.recv(1)
        a.close()
        srv.close()
        r = socket.socket()
        with pytest.raises(ConnectionRefusedError):
            r.connect(("127.0.0.1", 8112))
        rport = r.getsockname()[1]
        r.close()
        got = []
        while not ([g for g in got if g["local"]["port"] == port] and
                   [g for g in got if g["local"]["port"] == rport]):
            got.append(next(lf))
        ok = [g for g in got if g["local"]["port"] == port]
        assert len(ok) == 1 and ok[0]["outcome"] == "ok", got
        assert (ok[0]["bytes_acked"], ok[0]["bytes_received"]) == (7000, 300)
        assert ok[0]["peer"] == {"addr": "127.0.0.1", "port": 8111}
        assert [g["outcome"] for g in got if g["local"]["port"] == rport] == ["refused"]
        # The filter selects: the accepted side (sport 8111) is not one of them.
        assert not [g for g in got if g["local"]["port"] == 8111], got
        assert lf.lost == 0
    with pytest.raises(ValueError):
        next(lf)
    with pytest.raises(ValueError):
        sockdiag.life(interval=0)
    # dump_budget: a percentage of a core (as --dump-budget), 0 off.
    for bad in (-1, 0.0001, 101):
        with pytest.raises(ValueError):
            sockdiag.life(dump_budget=bad)
    for good in (0, 0.5, 100):
        sockdiag.life(dump_budget=good, interval=5).close()


def life_bpf(flt):
    """life(filter=flt, interval=30, bpf=True), its program loaded (no warning); skips
    the test in a build without BPF."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        lf = sockdiag.life(filter=flt, interval=30, bpf=True)
    if said and "built without BPF" in str(said[0].message):
        lf.close()
        pytest.skip("built without BPF")
    if said:
        lf.close()
    assert not said, [str(w.message) for w in said]
    return lf


def test_life_bpf():
    """life(bpf=True): a connection much shorter than the interval has its exact start
    (between our clock before and after connect()) and its owner (this process); one
    destroyed while held (by sockdiag.kill(), not by life) is aborted."""
    with life_bpf("sport = :8113 or dport = :8113") as lf:
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", 8113))
        srv.listen(4)
        t0 = time.time()
        c = socket.create_connection(("127.0.0.1", 8113))
        t1 = time.time()
        a, _ = srv.accept()
        port = c.getsockname()[1]
        c.close()
        a.close()
        # Destroyed while held (by this process, not by life): ECONNABORTED, aborted.
        k = socket.create_connection(("127.0.0.1", 8113))
        ka, _ = srv.accept()
        kport = k.getsockname()[1]
        assert [r for _, r in sockdiag.kill("sport = :%d" % kport, kind="tcp")] == ["destroyed"]
        with pytest.raises(ConnectionAbortedError):
            k.recv(1)
        k.close()
        ka.close()
        srv.close()
        got = []
        while not ([g for g in got if g["local"]["port"] == port] and
                   [g for g in got if g["local"]["port"] == kport]):
            got.append(next(lf))
        assert lf.bpf_lost == 0
    rec = [g for g in got if g["local"]["port"] == port][0]
    assert rec["start_exact"] is True, rec
    assert int(t0 * 1000) / 1000 - 0.002 <= rec["start"] <= t1 + 0.002, (t0, t1, rec)
    assert rec["owner"] == {"pid": os.getpid(), "comm": open("/proc/self/comm").read().strip()}
    assert [g["outcome"] for g in got if g["local"]["port"] == kport] == ["aborted"], got


def test_life_bpf_ring():
    """life(bpf=True) left unread while 50,000 connects are refused (a birth and an end
    each in the ring, more than its 4 MiB hold): bpf_lost counts the records the ring had
    no room for; every connection still has its record, refused, or a counted loss."""
    n = 50000
    lf = life_bpf("dst 127.0.0.9")

    def too_long(*_):
        raise TimeoutError("records + losses never reached the connections made")
    old = signal.signal(signal.SIGALRM, too_long)
    try:
        with lf:
            for _ in range(n):
                c = socket.socket()
                c.connect_ex(("127.0.0.9", 1))
                c.close()
            signal.alarm(int(60 * SLOW))
            outcomes = collections.Counter()
            while sum(outcomes.values()) + lf.lost < n:
                outcomes[next(lf)["outcome"]] += 1
            signal.alarm(0)
            lost = lf.bpf_lost
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert 0 < lost < 2 * n, lost
    assert lf.bpf_lost == lost  # kept after close()
    assert list(outcomes) == ["refused"], outcomes


def test_gil_released_while_waiting():
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        with sockdiag.watch(filter="sport = :1") as w:
            w.read(timeout=0.3)
        n = count[0]
    finally:
        stop.set()
        t.join()
    assert n > 1000


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def malloc_in_use():
    """Bytes the C heap holds (glibc's mallinfo2): the extension's and the library's
    allocations, which tracemalloc does not see."""
    class Mallinfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]
    fn = ctypes.CDLL(None).mallinfo2
    fn.restype = Mallinfo2
    m = fn()
    return m.uordblks + m.hblkhd


def test_no_leaks(population):
    """10k calls: no growth of Python memory (tracemalloc), of the C heap (mallinfo2),
    of references (counts of objects every Socket shares), descriptors and RSS. Under
    ASan the C heap and RSS are ASan's (its quarantine grows by design): there ASan
    checks every access instead. Most calls dump unix and UDP sockets (tables private
    to the namespace: fast whatever else runs on the machine); TCP, owners and details
    every 1000."""
    ns = "/proc/self/ns/net"

    def calls(n):
        for i in range(n):
            sockdiag.connections("unix", netns=ns)
            sockdiag.connections("udp", filter="sport = :7000 or sport = :7101")
            if i % 100 == 0:
                list(zip(range(3), sockdiag.iter_connections("unix")))
                sockdiag.count_by(("laddr", "state"), kind="unix")
                sockdiag.kill("sport = :1", kind="udp", dry_run=True)
                with sockdiag.watch():
                    pass
                try:
                    sockdiag.connections(filter="sport = = 1")
                except sockdiag.FilterError:
                    pass
            if i % 1000 == 0:
                sockdiag.connections("tcp", processes=True, details=True)
                sockdiag.count_by(("lport", "pid", "comm"), kind="tcp")

    calls(300)
    gc.collect()
    refs = [sys.getrefcount(x) for x in (ns, socket.AF_INET, socket.SOCK_STREAM, "LISTEN")]
    nfd = len(os.listdir("/proc/self/fd"))
    rss = rss_kib()
    heap = malloc_in_use()
    tracemalloc.start()
    snap = tracemalloc.take_snapshot()
    calls(10000)
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap, "filename"))
    tracemalloc.stop()
    assert grown < 64 * 1024, grown
    assert [sys.getrefcount(x) for x in (ns, socket.AF_INET, socket.SOCK_STREAM, "LISTEN")] == refs
    assert len(os.listdir("/proc/self/fd")) == nfd
    if not ASAN:
        assert malloc_in_use() - heap < 256 * 1024, (heap, malloc_in_use())
        assert rss_kib() - rss < 8 * 1024, (rss, rss_kib())


def test_readme_example(population, capsys):
    """README.md's Python example runs as shown."""
    readme = open(os.path.join(HERE, "..", "..", "README.md"), encoding="utf-8").read()
    code = readme.split("## Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert "addr(ip='127.0.0.1', port=7000) LISTEN %d" % population[0].p.pid in \
        [" ".join(l.split()[:4]) for l in out]
    assert out[-1].startswith("bad filter at byte 16 ")
