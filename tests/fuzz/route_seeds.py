#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds for fuzz_route: real rtnetlink bytes, captured in the namespace this
runs in (.ci/fuzz runs it under `unshare -n`; it refuses the host's, where it
would add links and routes). Writes into DIR, each seed the link and address
dumps of a veth pair (their NLMSG_DONE left out, so that fuzz_route's view
holds the addresses) followed by:
  seed-answer-N   the kernel's answer to one RTM_GETROUTE, as the guard asks
                  (a gateway route, a local peer, an unreachable one, IPv6,
                  with a mark and a uid, a blackhole)
  seed-events     the route events of adding and deleting routes
usage: route_seeds.py DIR"""
import os
import socket
import struct
import subprocess
import sys

NETLINK_ROUTE = 0
RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE = 18, 22, 26
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
RTA_DST, RTA_OIF, RTA_MARK, RTA_UID = 1, 4, 16, 25
GROUPS = 0x40 | 0x400  # RTMGRP_IPV4_ROUTE, RTMGRP_IPV6_ROUTE


def messages(data, drop_done=False):
    """The messages of a datagram, without NLMSG_DONE if asked."""
    out, off = b"", 0
    while off + 16 <= len(data):
        ln, typ = struct.unpack_from("=IH", data, off)
        if ln < 16:
            break
        if not (drop_done and typ == 3):
            out += data[off:off + ((ln + 3) & ~3)]
        off += (ln + 3) & ~3
    return out


def dump(kind, family):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    s.bind((0, 0))
    body = struct.pack("BxHiII", family, 0, 0, 0, 0) if kind == RTM_GETLINK \
        else struct.pack("BBBBI", family, 0, 0, 0, 0)
    s.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    out = b""
    while True:
        d = s.recv(65536)
        out += messages(d, drop_done=True)
        if messages(d) != messages(d, drop_done=True):
            break
    s.close()
    return out


def attr(typ, payload):
    ln = 4 + len(payload)
    return struct.pack("=HH", ln, typ) + payload + b"\0" * ((4 - ln % 4) % 4)


def getroute(family, dst, mark=0, oif=0, uid=None):
    """One RTM_GETROUTE as daemon/guard/route_nl.c builds it; the answer datagram."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    s.bind((0, 0))
    raw = socket.inet_pton(family, dst)
    body = struct.pack("BBBBBBBBI", family, len(raw) * 8, 0, 0, 0, 0, 0, 0, 0)
    body += attr(RTA_DST, raw)
    if mark:
        body += attr(RTA_MARK, struct.pack("=I", mark))
    if oif:
        body += attr(RTA_OIF, struct.pack("=I", oif))
    if uid is not None:
        body += attr(RTA_UID, struct.pack("=I", uid))
    s.send(struct.pack("=IHHII", 16 + len(body), RTM_GETROUTE, NLM_F_REQUEST, 7, 0) + body)
    d = s.recv(65536)
    s.close()
    return d


def ip(*args):
    subprocess.run(["ip"] + list(args), check=True, stdout=subprocess.DEVNULL)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # A new namespace has lo and nothing else; any other link means this is
    # not one (it could be the host's).
    if [n for _, n in socket.if_nameindex()] != ["lo"]:
        sys.exit("route_seeds.py: run it in a new network namespace (unshare -n)")
    out = sys.argv[1]
    ip("link", "set", "lo", "up")
    ip("link", "add", "fz0", "type", "veth", "peer", "name", "fz1")
    ip("link", "set", "fz0", "up")
    ip("link", "set", "fz1", "up")
    ip("addr", "add", "192.0.2.1/24", "dev", "fz0")
    ip("-6", "addr", "add", "2001:db8::1/64", "dev", "fz0", "nodad")
    ip("route", "add", "198.51.100.0/24", "via", "192.0.2.254")
    ip("route", "add", "blackhole", "203.0.113.0/24")
    ip("rule", "add", "fwmark", "7", "lookup", "100")
    ip("route", "add", "default", "via", "192.0.2.253", "table", "100")
    oif = socket.if_nametoindex("fz0")
    view = b"".join(dump(k, f) for k in (RTM_GETLINK, RTM_GETADDR)
                    for f in (socket.AF_INET, socket.AF_INET6))
    answers = [
        getroute(socket.AF_INET, "198.51.100.7"),
        getroute(socket.AF_INET, "192.0.2.1"),              # local
        getroute(socket.AF_INET, "10.9.9.9"),               # no route
        getroute(socket.AF_INET, "203.0.113.5"),            # blackhole
        getroute(socket.AF_INET, "8.8.8.8", mark=7, uid=1000),
        getroute(socket.AF_INET, "192.0.2.77", oif=oif),
        getroute(socket.AF_INET6, "2001:db8::99"),
        getroute(socket.AF_INET6, "2001:db9::1"),           # no route
    ]
    for i, a in enumerate(answers):
        with open(os.path.join(out, "seed-answer-%d" % i), "wb") as f:
            f.write(view + a)
    ev = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    ev.bind((0, GROUPS))
    ip("route", "add", "100.64.0.0/10", "via", "192.0.2.254")
    ip("-6", "route", "add", "2001:db8:1::/48", "via", "2001:db8::fe")
    ip("route", "del", "100.64.0.0/10")
    ip("link", "set", "fz0", "down")
    ev.setblocking(False)
    events = b""
    while True:
        try:
            events += messages(ev.recv(65536))
        except BlockingIOError:
            break
    with open(os.path.join(out, "seed-events"), "wb") as f:
        f.write(view + events)
    ip("link", "del", "fz0")


if __name__ == "__main__":
    main()
