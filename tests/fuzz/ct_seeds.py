#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds for fuzz_ct: a real ctnetlink dump (IPCTNL_MSG_CT_GET), captured in the
namespace this runs in (.ci/fuzz runs it under `unshare -n`; it refuses the
host's, where it would load rules and make connections). The namespace gets
what tests/kill/backends_lib.py sets up (nftables rules that make its loopback
traffic tracked, a DNAT), then flows:
TCP and UDP over IPv4 and IPv6, a UDP flow DNAT'ed (its reply tuple differs),
ICMP echo. Writes into DIR, in fuzz_ct's input format (datagrams, each behind
a 2-byte little-endian length):
  seed-dump    the whole reply, every datagram as read
  seed-one     its first entry, then NLMSG_DONE in a datagram of its own
usage: ct_seeds.py DIR"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kill"))
from backends_lib import setup_namespace  # noqa: E402

NETLINK_NETFILTER = 12
CT_GET = (1 << 8) | 1  # NFNL_SUBSYS_CTNETLINK, IPCTNL_MSG_CT_GET
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
SEQ = 7


def messages(d):
    off = 0
    while off + 16 <= len(d):
        ln, typ = struct.unpack_from("=IH", d, off)
        if ln < 16:
            return
        yield off, ln, typ
        off += (ln + 3) & ~3


def dump():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    req = struct.pack("=IHHII", 20, CT_GET, NLM_F_REQUEST | NLM_F_DUMP, SEQ, 0) + \
        struct.pack("=BBH", socket.AF_UNSPEC, 0, 0)
    s.send(req)
    grams = []
    while True:
        d = s.recv(65536)
        grams.append(d)
        if any(t in (NLMSG_DONE, NLMSG_ERROR) for _, _, t in messages(d)):
            s.close()
            return grams


def framed(grams):
    out = b""
    for g in grams:
        assert len(g) < 65536
        out += struct.pack("<H", len(g)) + g
    return out


def flows():
    """Connections whose packets conntrack sees; returns what keeps them open."""
    keep = []
    for fam, addr in ((socket.AF_INET, "10.0.0.1"), (socket.AF_INET6, "fd00::1")):
        lis = socket.socket(fam, socket.SOCK_STREAM)
        lis.bind((addr, 80))
        lis.listen(4)
        c = socket.create_connection((addr, 80))
        keep += [lis, c, lis.accept()[0]]
        srv = socket.socket(fam, socket.SOCK_DGRAM)
        srv.bind((addr, 53))
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.connect((addr, 53))
        u.send(b"q")
        srv.recvfrom(16)
        keep += [srv, u]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # DNAT'ed to 10.0.0.1:53
    u.connect(("10.96.0.10", 53))
    u.send(b"q")
    keep.append(u)
    icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    echo = struct.pack("!BBHHH", 8, 0, 0, 0x5344, 1) + b"sockdiag"
    icmp.sendto(echo[:2] + struct.pack("!H", checksum(echo)) + echo[4:], ("10.0.0.1", 0))
    keep.append(icmp)
    return keep


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if [n for _, n in socket.if_nameindex()] != ["lo"]:
        sys.exit("ct_seeds.py: run it in a new network namespace (unshare -n)")
    outdir = sys.argv[1]
    # The dead-backend tests' addresses and rules (tracked loopback, the DNAT),
    # here, in this namespace (no second unshare).
    os.environ["SDIAG_BACKENDS_INNER"] = "1"
    setup_namespace()
    keep = flows()
    grams = dump()
    entries = [(g, off, ln) for g in grams for off, ln, t in messages(g)
               if t not in (NLMSG_DONE, NLMSG_ERROR)]
    if len(entries) < 6:
        sys.exit("ct_seeds.py: %d conntrack entries dumped, want at least 6" % len(entries))
    done = [g[off:off + ln] for g in grams for off, ln, t in messages(g) if t == NLMSG_DONE]
    with open(os.path.join(outdir, "seed-dump"), "wb") as f:
        f.write(framed(grams))
    g, off, ln = entries[0]
    with open(os.path.join(outdir, "seed-one"), "wb") as f:
        f.write(framed([g[off:off + ln], done[0]]))
    for s in keep:
        s.close()
    print("ct_seeds.py: %d entries in %d datagrams" % (len(entries), len(grams)))


if __name__ == "__main__":
    main()
