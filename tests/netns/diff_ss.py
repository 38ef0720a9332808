#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Differential test: `sockdiag list --ndjson` against iproute2's `ss`.

Run by diff_ss.sh inside a private network namespace (never the host's).
Builds a population of tcp, udp, unix, netlink and packet sockets, then for
each table compares the sockets both tools report: the same set, with the
same addresses, ports, states, inodes and queues. Exits 1 on any difference.

ss quirks normalised here (iproute2 6.1; each is ss's, not the kernel's):
  Q1 the IPv6 wildcard address is printed as "*" (IPv4's as "0.0.0.0"), a
     zero port as "*"; addresses are compared in canonical form.
  Q2 a socket bound to a device prints as ADDR%DEV; the device is compared
     with sockdiag's "ifname".
  Q3 ss prints no inode for TIME-WAIT sockets (the kernel reports 0).
  Q4 unix: the peer's name is always "*"; the peer is compared by inode
     (ss prints 0 when there is none).
  Q5 netlink: ss prints no inode and always the state UNCONN, so sockets are
     matched by (protocol, portid, peer portid, peer group, groups). For the
     same reason ss puts a connect()ed netlink socket (kernel state 1, ESTAB)
     in -l and leaves it out of the default (connected) listing, where
     sockdiag does the opposite: only -a is compared for netlink.
  Q6 netlink: the portid is printed as a signed int (autobound ports are
     "negative"); it is taken modulo 2^32.
  Q7 netlink: ss prints a bound socket that is subscribed to groups twice
     (the kernel reports it twice, ss does not deduplicate); sockdiag once.
     ss's rows are deduplicated for sockets with a non-zero portid.
  Q8 netlink: ss prints only the first 32 group bits ("groups=0x%08x");
     sockdiag's group list is cut to the same 32 bits for the comparison.
  Q9 netlink: each tool's own sock_diag socket (protocol 4, non-zero portid)
     is in its own listing only; those are left out on both sides.
  Q10 packet: ETH_P_ALL prints as "*", other protocols as "[N]"; an unbound
     device as "*".
  Q11 when the selection leaves a single state (udp without -a: ESTAB), ss
     drops the State column; the state is then the one selected.
  Q12 ss -e prints "uid:N" only for a uid other than 0 (and TIME-WAIT and
     request sockets have uid 0 in the kernel's reply).
"""
import ctypes
import errno
import ipaddress
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

ETH_P_ALL = 0x0003
SO_ATTACH_FILTER = 26
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
NETLINK_SOCK_DIAG = 4


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


# ---- population --------------------------------------------------------------


class Population:
    def __init__(self, tmpdir):
        self.keep = []
        self.child = None
        self.tmp = tmpdir
        self.expect = {"tcp": 0, "udp": 0, "unix": 0, "netlink": 0, "packet": 0}

    def build(self):
        """Every kind, as diff_ss and table_ss compare them."""
        self.tcp()
        self.udp()
        self.unix()
        self.netlink()
        self.packet()
        self.other_user()
        time.sleep(0.05)  # let the SYN-SENT socket send its first SYN

    def add(self, kind, *socks):
        self.keep.extend(socks)
        self.expect[kind] += len(socks)

    def tcp(self):
        def listener(fam, addr, port, v6only=None, dev=None, backlog=16):
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if v6only is not None:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)
            if dev:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev)
            s.bind((addr, port))
            s.listen(backlog)
            self.add("tcp", s)
            return s

        def pair(lsock, fam, addr, port):
            c = socket.socket(fam, socket.SOCK_STREAM)
            c.connect((addr, port))
            a, _ = lsock.accept()
            self.add("tcp", c, a)
            return c, a

        l4 = listener(socket.AF_INET, "127.0.0.1", 5000)
        l6 = listener(socket.AF_INET6, "::1", 5001)
        listener(socket.AF_INET, "0.0.0.0", 5002)
        dual = listener(socket.AF_INET6, "::", 5003, v6only=0)
        listener(socket.AF_INET6, "::", 5004, v6only=1)
        listener(socket.AF_INET, "127.0.0.1", 5005, dev=b"lo")
        pair(l4, socket.AF_INET, "127.0.0.1", 5000)
        pair(l6, socket.AF_INET6, "::1", 5001)
        pair(dual, socket.AF_INET, "127.0.0.1", 5003)  # v4-mapped server side
        c, a = pair(l4, socket.AF_INET, "127.0.0.1", 5000)
        c.send(b"queued")  # unread data: recv_q on the accepted side
        # TIME-WAIT: the client closes first.
        for fam, addr, lsock, port in ((socket.AF_INET, "127.0.0.1", l4, 5000),
                                       (socket.AF_INET6, "::1", l6, 5001)):
            c = socket.socket(fam, socket.SOCK_STREAM)
            c.connect((addr, port))
            a, _ = lsock.accept()
            c.close()
            a.recv(1)
            a.close()
            self.expect["tcp"] += 1
        # SYN-SENT: a listener with a full accept queue drops the SYN.
        full = listener(socket.AF_INET, "127.0.0.1", 5006, backlog=0)
        c1 = socket.create_connection(("127.0.0.1", 5006))
        c2 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c2.setblocking(False)
        if c2.connect_ex(("127.0.0.1", 5006)) not in (0, 115):  # EINPROGRESS
            fail("SYN-SENT socket: unexpected connect result")
        self.add("tcp", c1, c2)
        del full

    def other_user(self, uid=4321):
        """A tcp listener and a udp socket owned by uid, held by a child."""
        code = ("import os, socket, sys\n"
                "os.setresgid(%d, %d, %d); os.setresuid(%d, %d, %d)\n"
                "t = socket.socket(); t.bind(('127.0.0.1', 5100)); t.listen(1)\n"
                "u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); u.bind(('::1', 6100))\n"
                "print('ready', flush=True); sys.stdin.read()\n") % ((uid,) * 6)
        child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        if child.stdout.readline().strip() != "ready":
            fail("the uid %d child did not start" % uid)
        self.child = child
        self.expect["tcp"] += 1
        self.expect["udp"] += 1

    def udp(self):
        def bound(fam, addr, port):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.bind((addr, port))
            self.add("udp", s)
            return s

        bound(socket.AF_INET, "127.0.0.1", 6000)
        bound(socket.AF_INET, "0.0.0.0", 6001)
        srv6 = bound(socket.AF_INET6, "::1", 6002)
        bound(socket.AF_INET6, "::", 6003)
        c4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        c4.connect(("127.0.0.1", 6000))
        c6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        c6.connect(("::1", 6002))
        c6.send(b"x")
        self.add("udp", c4, c6)
        del srv6

    def unix(self):
        path = os.path.join(self.tmp, "stream.sock")
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(path)
        ls.listen(8)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)
        a, _ = ls.accept()
        pending = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        pending.connect(path)  # queued, not accepted
        self.add("unix", ls, c, a, pending)
        abs_l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abs_l.bind("\0sdiag-diff-abstract")
        abs_l.listen(4)
        dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        dg.bind(os.path.join(self.tmp, "dgram.sock"))
        dga = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        dga.bind("\0sdiag-diff-dgram")
        dgc = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        dgc.connect("\0sdiag-diff-dgram")
        sq = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sq.bind(os.path.join(self.tmp, "seq.sock"))
        sq.listen(2)
        self.add("unix", abs_l, dg, dga, dgc, sq)
        self.add("unix", *socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
        self.add("unix", *socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
        self.add("unix", *socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM))

    def netlink(self):
        rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        rt.bind((0, 1 | 0x10))  # groups 1 and 5: reported twice by the kernel
        # A group above 32 (beyond ss's "groups=0x%08x"): the highest of 35..33 this
        # kernel has (5.10's rtnetlink groups end at 33; EINVAL above).
        for g in (35, 34, 33):
            try:
                rt.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, g)
                break
            except OSError as e:
                if e.errno != errno.EINVAL:
                    raise
        else:
            print("kernel: no rtnetlink group above 32 (EINVAL for 33 to 35)")
        gen = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        gen.bind((0, 0))
        srv = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
        srv.bind((0, 0))
        cli = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
        cli.bind((0, 0))
        cli.connect((srv.getsockname()[0], 0))
        lst = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, socket.NETLINK_ROUTE)
        lst.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 3)  # unbound listener
        self.add("netlink", rt, gen, srv, cli, lst)

    def packet(self):
        h = socket.htons
        p_all = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, h(ETH_P_ALL))
        p_ip = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, h(ETH_P_IP))
        p_ip.bind(("lo", ETH_P_IP))
        p_v6 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, h(ETH_P_IPV6))
        p_v6.bind(("lo", ETH_P_IPV6))
        p_0 = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)
        # A filter that takes no packet ("ret #0"): the queues stay empty, so
        # the SYN-SENT socket's retransmissions cannot change Recv-Q between
        # the ss dump and sockdiag's.
        drop = struct.pack("HBBI", 0x06, 0, 0, 0)
        buf = ctypes.create_string_buffer(drop)
        prog = struct.pack("HL", 1, ctypes.addressof(buf))
        for p in (p_all, p_ip, p_v6, p_0):
            p.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, prog)
            p.setblocking(False)
            while True:  # what arrived before the filter
                try:
                    p.recv(65536)
                except BlockingIOError:
                    break
        self.add("packet", p_all, p_ip, p_v6, p_0)


# ---- running the tools ---------------------------------------------------------


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="surrogateescape")
    if r.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r.stdout


def ss_rows(args):
    """ss's rows, one token list each; continuation lines (tab) dropped."""
    rows = []
    for line in run(["ss", "-H"] + args).splitlines():
        if not line.strip() or line[0] in " \t":
            continue
        rows.append(line.split())
    return rows


def sd_records(sockdiag, args):
    recs = []
    for line in run([sockdiag, "list"] + args + ["--ndjson"]).splitlines():
        if not line.strip():
            continue
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError as e:
            fail("sockdiag printed invalid JSON (%s): %r" % (e, line))
    return recs


def extra(tokens, prefix, default=None):
    for t in tokens:
        if t.startswith(prefix):
            return t[len(prefix):]
    return default


def canon_addr(a):
    if a == "*":  # Q1
        a = "::"
    return ipaddress.ip_address(a).compressed


def split_ss_ep(ep):
    """"127.0.0.1%lo:80", "[::1]:80", "*:*" -> (addr, dev, port)."""
    addr, port = ep.rsplit(":", 1)
    if addr.startswith("["):
        addr = addr[1:-1]
    dev = None
    if "%" in addr:  # Q2
        addr, dev = addr.split("%", 1)
    return canon_addr(addr), dev, 0 if port == "*" else int(port)


def need(rec, *keys):
    v = rec
    for k in keys:
        if not isinstance(v, dict) or k not in v:
            fail("sockdiag record lacks %s: %s" % (".".join(keys), json.dumps(rec)))
        v = v[k]
    return v


# ---- per-table keys ---------------------------------------------------------------


def inet_ss(rows, implied_state=None):
    keys = []
    for t in rows:
        if t[0].isdigit():  # Q11
            t = [implied_state] + t
        state, local, peer = t[0], t[3], t[4]
        la, dev, lp = split_ss_ep(local)
        pa, _, pp = split_ss_ep(peer)
        ino = int(extra(t[5:], "ino:", "0"))  # Q3
        uid = int(extra(t[5:], "uid:", "0"))  # Q12
        keys.append((state, la, lp, dev, pa, pp, ino, int(t[1]), int(t[2]), uid))
    return keys


def inet_sd(recs):
    keys = []
    for r in recs:
        keys.append((need(r, "state"),
                     canon_addr(need(r, "local", "addr")), need(r, "local", "port"),
                     r.get("ifname"),
                     canon_addr(need(r, "peer", "addr")), need(r, "peer", "port"),
                     r.get("inode", 0), need(r, "recv_q"), need(r, "send_q"),
                     r.get("uid", 0)))
    return keys


def unix_ss(rows):
    keys = []
    for t in rows:
        netid, state, path, ino, peer_ino = t[0], t[1], t[4], int(t[5]), int(t[7])
        keys.append((netid, state, None if path == "*" else path, ino, peer_ino,  # Q4
                     int(t[2]), int(t[3])))
    return keys


def unix_sd(recs):
    keys = []
    for r in recs:
        loc = need(r, "local")
        path = loc.get("path")
        if path is not None and loc.get("abstract"):
            path = "@" + path
        keys.append((need(r, "netid"), need(r, "state"), path, need(r, "inode"),
                     r.get("peer", {}).get("inode", 0), need(r, "recv_q"), need(r, "send_q")))
    return keys


def nl_ss(rows):
    keys, seen = [], set()
    for t in rows:
        local, peer = t[3], t[4]
        proto, portid = local.split(":", 1)
        portid = int(portid) & 0xFFFFFFFF  # Q6
        dst_group, dst_portid = (0, 0)
        if peer != "*":
            g, p = peer.split(":", 1)
            dst_group, dst_portid = int(g), int(p) & 0xFFFFFFFF
        groups = int(extra(t[5:], "groups=", "0x0"), 16)
        key = (int(proto), portid, dst_portid, dst_group, groups)
        if int(proto) == NETLINK_SOCK_DIAG and portid:  # Q9
            continue
        if portid and key in seen:  # Q7
            continue
        seen.add(key)
        keys.append(key)
    return keys


def nl_sd(recs):
    keys = []
    for r in recs:
        portid = need(r, "local", "portid")
        proto = need(r, "protocol")
        if proto == NETLINK_SOCK_DIAG and portid:  # Q9
            continue
        low = 0
        for g in r.get("groups", []):
            if 1 <= g <= 32:  # Q8
                low |= 1 << (g - 1)
        keys.append((proto, portid, r.get("peer", {}).get("portid", 0),
                     r.get("peer", {}).get("group", 0), low))
    return keys


def pkt_ss(rows):
    keys = []
    for t in rows:
        if t[1].isdigit():  # Q11
            t = t[:1] + ["UNCONN"] + t[1:]
        netid, local = t[0], t[4]
        proto, dev = local.rsplit(":", 1)
        proto = ETH_P_ALL if proto == "*" else int(proto.strip("[]"))  # Q10
        keys.append((netid, proto, None if dev == "*" else dev,
                     int(extra(t[5:], "ino:", "0")), int(t[2]), int(t[3])))
    return keys


def pkt_sd(recs):
    keys = []
    for r in recs:
        keys.append((need(r, "netid"), need(r, "local", "protocol"),
                     r["local"].get("ifname"), need(r, "inode"), need(r, "recv_q"),
                     need(r, "send_q")))
    return keys


def compare(name, ss_keys, sd_keys, minimum):
    ss_sorted = sorted(ss_keys, key=repr)
    sd_sorted = sorted(sd_keys, key=repr)
    if len(ss_keys) < minimum:
        fail("%s: ss shows %d sockets, the population alone has %d" %
             (name, len(ss_keys), minimum))
    if ss_sorted == sd_sorted:
        print("ok %s: %d sockets identical" % (name, len(ss_keys)))
        return True
    missing = [k for k in ss_sorted if ss_sorted.count(k) > sd_sorted.count(k)]
    extra_ = [k for k in sd_sorted if sd_sorted.count(k) > ss_sorted.count(k)]
    print("not ok %s: ss %d, sockdiag %d" % (name, len(ss_keys), len(sd_keys)))
    for k in sorted(set(missing), key=repr):
        print("  only in ss:       %s" % (k,))
    for k in sorted(set(extra_), key=repr):
        print("  only in sockdiag: %s" % (k,))
    return False


def udp_conn_ss(rows):
    return inet_ss(rows, "ESTAB")


def cases(pop):
    """(name, ss options, sockdiag options, ss parser, sockdiag parser, at
    least this many sockets). The state and family selections (default =
    connected, -l, -a, -4, -6) must agree as well as the records."""
    e = pop.expect
    return [
        ("tcp -a", ["-tan", "-e"], ["-tan"], inet_ss, inet_sd, e["tcp"]),
        ("tcp connected", ["-tn", "-e"], ["-tn"], inet_ss, inet_sd, 9),
        ("tcp -l", ["-tln", "-e"], ["-tln"], inet_ss, inet_sd, 7),
        ("tcp -4", ["-4tan", "-e"], ["-4tan"], inet_ss, inet_sd, 10),
        ("tcp -6", ["-6tan", "-e"], ["-6tan"], inet_ss, inet_sd, 7),
        ("udp -a", ["-uan", "-e"], ["-uan"], inet_ss, inet_sd, e["udp"]),
        ("udp connected", ["-un", "-e"], ["-un"], udp_conn_ss, inet_sd, 2),
        ("udp -l", ["-uln", "-e"], ["-uln"], inet_ss, inet_sd, 4),
        ("unix -a", ["-xan"], ["-xan"], unix_ss, unix_sd, e["unix"]),
        # 7 stream and seqpacket ones; connected datagram sockets count only where the
        # kernel calls them ESTAB (5.10 reports them UNCONN, ss -x then hides them).
        ("unix connected", ["-xn"], ["-xn"], unix_ss, unix_sd, 7),
        ("unix -l", ["-xln"], ["-xln"], unix_ss, unix_sd, 3),
        ("netlink -a", ["-A", "netlink", "-an", "-e"], ["-A", "netlink", "-an"], nl_ss, nl_sd,
         e["netlink"]),
        ("netlink --netlink", ["-A", "netlink", "-an", "-e"], ["--netlink", "-an"], nl_ss,
         nl_sd, e["netlink"]),
        ("packet -a", ["-0an", "-e"], ["-0an"], pkt_ss, pkt_sd, e["packet"]),
        ("packet --packet", ["-0an", "-e"], ["--packet", "-an"], pkt_ss, pkt_sd,
         e["packet"]),
        ("packet default", ["-0n", "-e"], ["-0n"], pkt_ss, pkt_sd, e["packet"]),
    ]


def main():
    if len(sys.argv) != 2:
        print("usage: diff_ss.py SOCKDIAG", file=sys.stderr)
        return 2
    sockdiag = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="sdiag-diff-") as tmp:
        pop = Population(tmp)
        pop.build()
        ok, n, bad = True, 0, 0
        for name, ss_args, sd_args, ss_fn, sd_fn, minimum in cases(pop):
            one = compare(name, ss_fn(ss_rows(ss_args)), sd_fn(sd_records(sockdiag, sd_args)),
                          minimum)
            n += 1
            bad += not one
            ok &= one
        print("# checks: %d passed, %d failed, 0 skipped" % (n - bad, bad))
        pop.child.stdin.close()
        pop.child.wait()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
