# SPDX-License-Identifier: GPL-2.0-or-later
"""A process holding a known population of sockets (the tests' oracle is
what this made): holder.py BASEPORT UNIXDIR. Prints one line, "ready", when
every socket exists, then waits until stdin closes.

From BASEPORT b: a TCP listener 127.0.0.1:b with 3 connections, one [::1]:b+1
with 2, a dual-stack [::]:b+2 with an IPv4 client (::ffff:127.0.0.1), a
CLOSE_WAIT/FIN_WAIT2 pair on b+3 (the client closed), a TIME-WAIT left by a
pair on b+4 (owned by nobody); UDP 127.0.0.1:b, [::1]:b+1, a UDP socket
connected to 127.0.0.1:b; unix: a stream listener UNIXDIR/s.sock with one
connection, an abstract datagram socket, a socketpair."""
import os
import socket
import sys
import time


def pairs(listener, family, addr, n, keep):
    for _ in range(n):
        c = socket.socket(family, socket.SOCK_STREAM)
        c.connect(addr)
        a, _ = listener.accept()
        keep += [c, a]


def main():
    b = int(sys.argv[1])
    udir = sys.argv[2]
    keep = []
    l4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    l4.bind(("127.0.0.1", b))
    l4.listen(16)
    keep.append(l4)
    pairs(l4, socket.AF_INET, ("127.0.0.1", b), 3, keep)
    l6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    l6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    l6.bind(("::1", b + 1))
    l6.listen(16)
    keep.append(l6)
    pairs(l6, socket.AF_INET6, ("::1", b + 1), 2, keep)
    ld = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ld.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ld.bind(("::", b + 2))
    ld.listen(16)
    keep.append(ld)
    pairs(ld, socket.AF_INET, ("127.0.0.1", b + 2), 1, keep)
    # CLOSE_WAIT (server) / FIN_WAIT2 (client)
    lc = socket.socket()
    lc.bind(("127.0.0.1", b + 3))
    lc.listen(4)
    c = socket.create_connection(("127.0.0.1", b + 3))
    a, _ = lc.accept()
    c.shutdown(socket.SHUT_WR)
    keep += [lc, c, a]
    # TIME-WAIT: the client closes first, then the server.
    lt = socket.socket()
    lt.bind(("127.0.0.1", b + 4))
    lt.listen(4)
    c = socket.create_connection(("127.0.0.1", b + 4))
    a, _ = lt.accept()
    c.close()
    time.sleep(0.05)
    a.close()
    keep.append(lt)
    u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u4.bind(("127.0.0.1", b))
    u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u6.bind(("::1", b + 1))
    uc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    uc.connect(("127.0.0.1", b))
    keep += [u4, u6, uc]
    us = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    us.bind(os.path.join(udir, "s.sock"))
    us.listen(4)
    uc2 = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    uc2.connect(os.path.join(udir, "s.sock"))
    ua, _ = us.accept()
    ud = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ud.bind("\0sockdiag-test-%d" % b)
    keep += [us, uc2, ua, ud] + list(socket.socketpair())
    # Let the TIME-WAIT transition and the FIN settle before anyone looks.
    time.sleep(0.1)
    print("ready", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
