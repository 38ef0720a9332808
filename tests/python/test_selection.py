# SPDX-License-Identifier: GPL-2.0-or-later
"""kill()'s selection against `sockdiag kill`'s, side by side on identical
populations in namespaces of their own (oracles: ss before and after, the
sockets' own errnos); the arguments refused as the CLI refuses them; Socket's
cgroup path and repr. Run by run.sh, inside its private namespaces."""
import errno
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

import sockdiag

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.environ.get("SOCKDIAG_CLI", "")
SLOW = float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1") or 1)


def setup_module():
    assert os.getpid() < 1000 and os.readlink("/proc/1/ns/net") == \
        os.readlink("/proc/self/ns/net"), "not in run.sh's private pid+net namespaces"


class Population:
    """killpop.py in a network namespace of its own (unshare -n)."""

    def __init__(self, port=7000):
        self.p = subprocess.Popen(["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"',
                                   sys.executable, os.path.join(HERE, "killpop.py"), str(port)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.socks = json.loads(self.p.stdout.readline())
        self.ns = "/proc/%d/ns/net" % self.p.pid
        assert os.readlink(self.ns) != os.readlink("/proc/self/ns/net")

    def errnos(self):
        self.p.stdin.write("\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def ss(self, port=7000):
        """(proto, local, peer) of every TCP and UDP socket on local port, as ss shows them."""
        out = subprocess.run(["nsenter", "--net=" + self.ns, "ss", "-tuanH"], check=True,
                             capture_output=True, text=True).stdout
        rows = set()
        for line in out.splitlines():
            f = line.split()
            if f[4].endswith(":%d" % port):
                rows.add((f[0], f[4], "*" if f[5].endswith(":*") else f[5]))
        return rows

    def ss_names(self):
        """ss's rows on port 7000, as the names of the sockets they are."""
        idx = {tuple(v[1:]): n for n, v in self.socks.items()}
        return {idx.get(r, r) for r in self.ss()}

    def names(self, cookies):
        return {n for n, v in self.socks.items() if v[0] in cookies}

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30 * SLOW)


# kind, the CLI's options for it, filter, what the documented rule destroys: sockets in
# ss's default (connected) states unless the filter has state clauses, which replace them.
KILL_CASES = [
    ("tcp", ["-t"], "sport = :7000", {"srv"}),
    ("udp", ["-u"], "sport = :7000", {"uconn"}),
    ("inet", ["-t", "-u"], "sport = :7000", {"srv", "uconn"}),
    ("inet", ["-t", "-u"], "sport = :7000 and state listening state unconnected",
     {"lst", "ubound"}),
]


@pytest.mark.parametrize("kind,opts,flt,want", KILL_CASES)
def test_kill_selects_as_cli(kind, opts, flt, want):
    assert CLI, "SOCKDIAG_CLI: the sockdiag binary"
    a, b = Population(), Population()
    try:
        before = {"lst", "srv", "ubound", "uconn"}
        assert a.ss_names() == before and b.ss_names() == before
        r = subprocess.run([CLI, "kill", "-N", a.ns] + opts + ["--json", flt],
                           capture_output=True, text=True, timeout=60 * SLOW)
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)
        assert {x["result"] for x in rows} == {"destroyed"}, rows
        by_cli = a.names({int(x["cookie"], 16) for x in rows})
        res = sockdiag.kill(flt, kind=kind, netns=b.ns)
        assert {x for _, x in res} == {"destroyed"}, res
        by_py = b.names({s.cookie for s, _ in res})
        assert len(rows) == len(res) == len(want)
        assert by_cli == by_py == want
        # ss: exactly those left the table (or their state), nothing else did.
        # An unconnected UDP socket stays bound as it was (only its owner learns, below).
        left = want - {"ubound"}
        assert before - a.ss_names() == left and before - b.ss_names() == left
        # Each socket's own errno: destroyed ones ECONNABORTED (a destroyed listener no
        # longer accepts: EINVAL), the client of a destroyed connection a reset, the rest
        # alive.
        expect = {n: "EAGAIN" for n in a.socks}
        expect.update({n: "ECONNABORTED" for n in want})
        if "lst" in want:
            expect["lst"] = "EINVAL"
        if "srv" in want:
            expect["cli"] = "ECONNRESET"
        assert a.errnos() == expect and b.errnos() == expect
    finally:
        a.close()
        b.close()


def test_kill_arguments():
    for bad in (5, None, b"sport = :1", ["sport = :1"]):
        with pytest.raises(TypeError, match="filter"):
            sockdiag.kill(bad, kind="tcp", dry_run=True)
    with pytest.raises(TypeError, match="filter"):
        sockdiag.connections(filter=5)
    with pytest.raises(ValueError, match="non-empty"):
        sockdiag.kill("", kind="tcp", dry_run=True)


@pytest.mark.parametrize("kind", ["tcp\0", "tcp\0udp", ("udp", "tcp\0"), "", ("",)])
def test_kind_refused(kind):
    with pytest.raises(ValueError, match="kind"):
        sockdiag.connections(kind)


def test_kind_bytes():
    with pytest.raises(TypeError, match="kind"):
        sockdiag.connections(b"tcp")


@pytest.mark.parametrize("keys,why", [
    ("lport,lport", "'lport' given twice"),
    ("pid,pid", "'pid' given twice"),
    (("lport", "lport"), "'lport' given twice"),
    ("pid,", "an empty key"),
    (",pid", "an empty key"),
    ("pid,,lport", "an empty key"),
    (("pid", ""), "an empty key"),
    ("", "no key"),
    ((), "no key"),
    ("lport\0", "unknown key"),
])
def test_count_by_keys_refused(keys, why):
    with pytest.raises(ValueError, match=why):
        sockdiag.count_by(keys, kind="udp")


def test_count_by_keys_type():
    for keys in (b"lport", [b"lport"], 5):
        with pytest.raises(TypeError, match="keys"):
            sockdiag.count_by(keys, kind="udp")


def test_netns_not_a_namespace():
    with tempfile.NamedTemporaryFile(prefix="sdpy-ns-") as f:
        for spec in ("/dev/zero", f.name):
            with pytest.raises(OSError) as ei:
                sockdiag.connections("tcp", netns=spec)
            assert "not a network namespace" in str(ei.value), str(ei.value)
            assert ei.value.filename == spec
    with pytest.raises(ValueError, match="netns"):
        sockdiag.connections("tcp", netns="/proc/self/ns/net\0x")


def test_table_without_diag_module():
    """A table this kernel cannot dump, named: the error names the module (as the
    CLI's 'not supported by this kernel (no raw_diag)')."""
    missing = {}
    for kind, module in (("raw", "raw_diag"), ("sctp", "sctp_diag"), ("tipc", "tipc_diag"),
                         ("smc", "smc_diag"), ("xdp", "xsk_diag"), ("vsock", "vsock_diag"),
                         ("packet", "af_packet_diag"), ("netlink", "netlink_diag")):
        try:
            sockdiag.connections(kind)
        except OSError as e:
            missing[kind] = (module, e)
    if not missing:
        pytest.skip("SKIP(diag-modules): this kernel dumps every table tried")
    for kind, (module, e) in missing.items():
        assert e.errno in (errno.EPROTONOSUPPORT, errno.EAFNOSUPPORT), (kind, e)
        assert str(e).endswith(": not supported by this kernel (no %s)" % module), str(e)
        # kill names it the same way.
        with pytest.raises(OSError, match="no %s" % module):
            sockdiag.kill("inode = 1", kind=kind, dry_run=True)


def cgroup2_root():
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        if f[f.index("-") + 1] == "cgroup2":
            return f[4]
    return None


def test_socket_cgroup_path():
    """Socket.cgroup is the path (relative to the cgroup2 mount, as filters take it),
    cgroup_id the id; a socket made in a test cgroup names it."""
    root = cgroup2_root()
    if not root:
        pytest.skip("SKIP(cgroup2): no cgroup2 mount")
    name = "sockdiag-pytest-%s" % uuid.uuid4().hex[:12]
    cg = os.path.join(root, name)
    os.mkdir(cg)
    try:
        p = subprocess.Popen(["sh", "-c", 'echo $$ > "$1/cgroup.procs" && exec "$2" -c "$3"', "sh",
                              cg, sys.executable,
                              "import socket,sys\n"
                              "s=socket.create_server(('127.0.0.1',7911))\n"
                              "print('ready', flush=True)\n"
                              "sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "ready"
            got = sockdiag.connections("tcp", filter="sport = :7911")
            assert len(got) == 1
            s = got[0]
            assert s.cgroup == "/" + name and s.cgroup_id == os.stat(cg).st_ino
            # The path is what filters take.
            same = sockdiag.connections("tcp", filter="cgroup %s" % s.cgroup)
            assert [x.cookie for x in same] == [s.cookie]
            assert sockdiag.count_by(("cgroup", "lport"), kind="tcp",
                                     filter="sport = :7911") == {("/" + name, 7911): 1}
            assert sockdiag.count_by(("cgroup_id",), kind="tcp",
                                     filter="sport = :7911") == {s.cgroup_id: 1}
        finally:
            p.stdin.close()
            p.wait(timeout=30 * SLOW)
    finally:
        os.rmdir(cg)
    # Unix sockets carry none.
    assert all(c.cgroup is None and c.cgroup_id is None for c in sockdiag.connections("unix"))


def test_socket_repr():
    lst = socket.create_server(("127.0.0.1", 7912))
    us = None
    c = socket.create_connection(("127.0.0.1", 7912))
    a, _ = lst.accept()
    try:
        for s in sockdiag.connections("tcp", filter="sport = :7912 or dport = :7912"):
            r = repr(s)
            assert r == ("sockdiag.Socket(netid=%r, state=%r, laddr=%r, raddr=%r, cookie=%d, "
                         "fd=%d, pid=%r)" % (s.netid, s.state, s.laddr, s.raddr, s.cookie, s.fd,
                                             s.pid)), r
            assert "netid='tcp'" in r and "state='%s'" % s.state in r
        us = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        us.bind("\0sockdiag-repr-%d" % os.getpid())
        ino = os.fstat(us.fileno()).st_ino
        u = [s for s in sockdiag.connections("unix") if s.inode == ino]
        assert len(u) == 1 and repr(u[0]).startswith("sockdiag.Socket(netid='u_dgr', state=")
    finally:
        for s in (a, c, lst, us):
            if s:
                s.close()


def test_watch_read_waits_past_unmatched_events():
    """read(timeout) waits the whole timeout when the only events that arrive are ones
    the filter drops (it returned [] as soon as one such event arrived)."""
    with sockdiag.watch(filter="sport = :7921 or dport = :7921") as w:
        others = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(3)]
        for i, u in enumerate(others):
            u.bind(("127.0.0.1", 7922 + i))
        # Closed while read() waits: destroy events for ports 7922-7924, not ours.
        closer = threading.Timer(0.05, lambda: [u.close() for u in others])
        t = time.monotonic()
        closer.start()
        try:
            assert w.read(timeout=0.4) == []
            assert time.monotonic() - t >= 0.39
        finally:
            closer.join()
