#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds for fuzz_rtnl: real rtnetlink bytes, captured in the namespace this
runs in (.ci/fuzz runs it under `unshare -n`; it refuses the host's, where it
would add links). Writes into DIR:
  seed-dump     link and address dumps (IPv4, IPv6), every reply datagram
  seed-events   the events of: a veth pair up, IPv4/IPv6 addresses added and
                removed, a link down, the pair deleted
  seed-resync   dump, an NLMSG_NOOP (fuzz_rtnl's "overflow: this is the dump"),
                the events, another NOOP
usage: rtnl_seeds.py DIR"""
import os
import socket
import struct
import subprocess
import sys

NETLINK_ROUTE = 0
RTM_GETLINK, RTM_GETADDR = 18, 22
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
GROUPS = 0x1 | 0x10 | 0x100  # RTMGRP_LINK, IPV4_IFADDR, IPV6_IFADDR


def dump(kind, family):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    s.bind((0, 0))
    body = struct.pack("BxHiII", family, 0, 0, 0, 0) if kind == RTM_GETLINK \
        else struct.pack("BBBBI", family, 0, 0, 0, 0)
    s.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    out = b""
    while True:
        d = s.recv(65536)
        out += d
        off = 0
        done = False
        while off + 16 <= len(d):
            ln, typ = struct.unpack_from("=IH", d, off)
            if typ in (2, 3):
                done = True
            off += (ln + 3) & ~3
        if done:
            return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # A new namespace has lo and nothing else; any other link means this is
    # not one (it could be the host's).
    if [n for _, n in socket.if_nameindex()] != ["lo"]:
        sys.exit("rtnl_seeds.py: run it in a new network namespace (unshare -n)")
    outdir = sys.argv[1]
    ev = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    ev.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    ev.bind((0, GROUPS))
    ip = ["ip"]
    for cmd in ("link set lo up", "link add sdfa type veth peer name sdfb",
                "link set sdfa up", "link set sdfb up",
                "addr add 10.1.2.3/24 dev sdfa", "addr add 10.1.2.4/32 dev sdfa",
                "addr add fd00::3/64 dev sdfa nodad", "addr add 169.254.1.1/16 dev sdfb"):
        subprocess.run(ip + cmd.split(), check=True)
    d = dump(RTM_GETLINK, 0) + dump(RTM_GETADDR, socket.AF_INET) + \
        dump(RTM_GETADDR, socket.AF_INET6)
    for cmd in ("addr del 10.1.2.4/32 dev sdfa", "addr del fd00::3/64 dev sdfa",
                "addr add 10.1.2.4/32 dev sdfb", "link set sdfa down",
                "addr flush dev sdfb", "link del sdfa"):
        subprocess.run(ip + cmd.split(), check=True)
    ev.setblocking(False)
    events = b""
    try:
        while True:
            events += ev.recv(65536)
    except BlockingIOError:
        pass
    noop = struct.pack("=IHHII", 16, 1, 0, 0, 0)
    for name, data in (("dump", d), ("events", events), ("resync", d + noop + events + noop)):
        with open(os.path.join(outdir, "seed-" + name), "wb") as f:
            f.write(data)


main()
