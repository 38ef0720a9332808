#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What this kernel offers sock_diag users, asked of the kernel itself (raw
netlink, never sockdiag), plus whether sockdiag's BPF owners iterator loads
here. One "name: value" line each; tests/kernels/matrix.py turns the lines of
several kernels into docs/kernels.md.

  features.py [PATH-TO-SOCKDIAG]

Makes sockets: run it in a private network namespace (unshare -n); the
guests of `make test-kernels` run it after loading the diag modules."""
import errno
import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernel_probe as K  # noqa: E402

SOCK_DESTROY = 21
IPPROTO_MPTCP = 262
INET_ATTRS = ["NONE", "MEMINFO", "INFO", "VEGASINFO", "CONG", "TOS", "TCLASS", "SKMEMINFO",
              "SHUTDOWN", "DCTCPINFO", "PROTOCOL", "SKV6ONLY", "LOCALS", "PEERS", "PAD", "MARK",
              "BBRINFO", "CLASS_ID", "MD5SIG", "ULP_INFO", "SK_BPF_STORAGES", "CGROUP_ID",
              "SOCKOPT"]


def nl_request(typ, payload, flags):
    hdr = struct.pack("=IHHII", 16 + len(payload), typ, flags, 1, 0)
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, K.NETLINK_SOCK_DIAG)
    nl.settimeout(5)
    nl.send(hdr + payload)
    msgs = []
    while True:
        buf = nl.recv(1 << 17)
        off = 0
        while off + 16 <= len(buf):
            ln, t = struct.unpack_from("=IH", buf, off)
            if t in (K.NLMSG_ERROR, K.NLMSG_DONE):
                err = struct.unpack_from("=i", buf, off + 16)[0] if ln >= 20 else 0
                nl.close()
                return err, msgs
            msgs.append(buf[off + 16:off + ln])
            off += (ln + 3) & ~3


def inet_req(family, proto, states, ext=0, cookie=None, sport=0, dport=0):
    sockid = struct.pack(">HH", sport, dport) + bytes(32) + struct.pack("=I", 0)
    sockid += struct.pack("=Q", cookie) if cookie is not None else struct.pack("=II", 0xffffffff,
                                                                                0xffffffff)
    req = struct.pack("=BBBBI", family, proto if proto < 256 else 0, ext, 0, states) + sockid
    if proto > 255:
        req += struct.pack("=HHI", 8, 3, proto)
    return req


def attrs(msg, start=72):
    out = {}
    off = start
    while off + 4 <= len(msg):
        ln, t = struct.unpack_from("=HH", msg, off)
        if ln < 4:
            break
        out[t & 0x3fff] = msg[off + 4:off + ln]
        off += (ln + 3) & ~3
    return out


def cookie_of(s):
    return int.from_bytes(s.getsockopt(socket.SOL_SOCKET, 57, 8), "little")


def destroy(s, family, proto):
    """The kernel's answer to SOCK_DESTROY for S: 'yes' or the errno's name."""
    raw = s.type == socket.SOCK_RAW
    # raw_diag: protocol IPPROTO_RAW, the socket's protocol in the pad byte; port = protocol.
    sport = proto if raw else s.getsockname()[1]
    req = inet_req(family, socket.IPPROTO_RAW if raw else proto, 0xffffffff,
                   cookie=cookie_of(s), sport=sport)
    if raw:
        req = req[:3] + bytes([proto]) + req[4:]
    # The full 5-tuple is needed: local address in the sockid.
    la = socket.inet_aton(s.getsockname()[0])
    try:
        pa = socket.inet_aton(s.getpeername()[0])
        dport = s.getpeername()[1]
    except OSError:
        pa, dport = bytes(4), 0
    req = req[:8] + struct.pack(">HH", sport, dport) + la + bytes(12) + pa + bytes(12) + req[44:]
    err, _ = nl_request(SOCK_DESTROY, req, 1 | 4)  # NLM_F_REQUEST | NLM_F_ACK
    return "yes" if err == 0 else errno.errorcode.get(-err, str(-err))


def destroy_row():
    res = []
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    res.append("tcp " + destroy(lst, socket.AF_INET, socket.IPPROTO_TCP))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    res.append("udp " + destroy(u, socket.AF_INET, socket.IPPROTO_UDP))
    if K.diag_table("raw"):
        r = socket.socket(socket.AF_INET, socket.SOCK_RAW, 253)
        r.bind(("127.0.0.1", 0))
        res.append("raw " + destroy(r, socket.AF_INET, 253))
    if K.diag_table("sctp"):
        sc = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_SCTP)
        sc.bind(("127.0.0.1", 0))
        sc.listen(1)
        res.append("sctp " + destroy(sc, socket.AF_INET, socket.IPPROTO_SCTP))
    try:
        m = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
        m.bind(("127.0.0.1", 0))
        m.listen(1)
        res.append("mptcp " + destroy(m, socket.AF_INET, IPPROTO_MPTCP))
    except OSError:
        pass
    return ", ".join(res)


def tcp_attrs():
    """The attributes of an established TCP socket's record with every
    extension asked for, and tcp_info's length."""
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    c = socket.create_connection(lst.getsockname())
    a, _ = lst.accept()
    err, msgs = nl_request(K.SOCK_DIAG_BY_FAMILY, inet_req(socket.AF_INET, 6, 1 << 1, ext=0xff),
                           1 | 0x300)
    seen, info = set(), 0
    for m in msgs:
        at = attrs(m)
        seen |= set(at)
        info = max(info, len(at.get(2, b"")))
    for s in (c, a, lst):
        s.close()
    names = [INET_ATTRS[t] if t < len(INET_ATTRS) else str(t) for t in sorted(seen)]
    return " ".join(names), info


def destroy_events():
    """A TCP socket's destruction broadcast on SKNLGRP_INET_TCP_DESTROY."""
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, K.NETLINK_SOCK_DIAG)
    nl.settimeout(3)
    nl.bind((0, 0))
    try:
        nl.setsockopt(270, 1, 1)  # SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, INET_TCP_DESTROY
    except OSError as e:
        return "no (%s)" % errno.errorcode.get(e.errno, e.errno)
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    c = socket.create_connection(lst.getsockname())
    a, _ = lst.accept()
    c.close()
    a.close()
    lst.close()
    try:
        return "yes" if nl.recv(65536) else "no"
    except socket.timeout:
        return "no (nothing within 3 s)"
    finally:
        nl.close()


def owners_bpf(sd):
    if not sd:
        return "not asked"
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    p = subprocess.run([sd, "list", "-tln", "-p", "--owners=bpf", "-v"], capture_output=True,
                       text=True, timeout=120)
    lst.close()
    for line in p.stderr.splitlines():
        if "owners:" in line:
            return line.partition("owners: ")[2]
    return "exit %d: %s" % (p.returncode, p.stderr.strip())


def main(argv):
    sd = argv[1] if len(argv) > 1 else None
    subprocess.run(["ip", "link", "set", "lo", "up"])
    yes, no = K.families()
    print("kernel: %s" % os.uname().release)
    print("families: %s" % " ".join(yes))
    print("families absent: %s" % (" ".join(no) or "none"))
    print("bound-inactive dump: %s" % ("yes" if K.bound_inactive_dumped() else "no"))
    names, info = tcp_attrs()
    print("tcp attributes: %s" % names)
    print("tcp_info bytes: %d" % info)
    print("cgroup ids: %s" % ("yes" if "CGROUP_ID" in names.split() else "no"))
    print("destroy: %s" % destroy_row())
    print("destroy time-wait: %s" % ("yes" if K.time_wait_destroyed() else "EOPNOTSUPP"))
    print("rtnetlink groups above 32: %s" % ("yes" if K.rtnl_high_group() else "no"))
    print("destroy events: %s" % destroy_events())
    print("owners -p: %s" % owners_bpf(sd))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
