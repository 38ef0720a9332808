# SPDX-License-Identifier: GPL-2.0-or-later
"""The population kill() and `sockdiag kill` are compared on: killpop.py PORT,
run in a network namespace of its own. Makes, on 127.0.0.1:
  lst     a TCP listener on PORT
  srv     the connection it accepted (local PORT)
  cli     its client (peer PORT)
  ubound  a UDP socket bound to PORT, unconnected
  uconn   a UDP socket bound to PORT, connected to upeer (SO_REUSEADDR on both)
  upeer   a UDP socket on PORT + 1
prints one JSON line {name: [cookie, proto, local, peer]} (peer "*" if none),
then for every line read from stdin one JSON line {name: errno name} (what a
non-blocking accept/recv of each socket now says: "EAGAIN" for one that is
alive and idle), until stdin closes."""
import errno
import json
import socket
import struct
import sys

SO_COOKIE = 57


def cookie(s):
    return struct.unpack("=Q", s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8))[0]


def ends(s):
    local = "%s:%d" % s.getsockname()
    try:
        peer = "%s:%d" % s.getpeername()
    except OSError:
        peer = "*"
    return local, peer


def probe(name, s):
    try:
        if name == "lst":
            s.accept()
        else:
            s.recv(1, socket.MSG_DONTWAIT)
        return "data"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno)) if e.errno != errno.EWOULDBLOCK \
            else "EAGAIN"


def main():
    port = int(sys.argv[1])
    lo = "127.0.0.1"
    lst = socket.create_server((lo, port))
    cli = socket.create_connection((lo, port))
    srv, _ = lst.accept()
    lst.setblocking(False)
    udp = []
    for _ in range(2):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        u.bind((lo, port))
        udp.append(u)
    ubound, uconn = udp
    upeer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    upeer.bind((lo, port + 1))
    uconn.connect((lo, port + 1))
    socks = {"lst": lst, "srv": srv, "cli": cli, "ubound": ubound, "uconn": uconn,
             "upeer": upeer}
    print(json.dumps({n: [cookie(s), "tcp" if s.type == socket.SOCK_STREAM else "udp",
                          *ends(s)] for n, s in socks.items()}), flush=True)
    for _ in sys.stdin:
        print(json.dumps({n: probe(n, s) for n, s in socks.items()}), flush=True)


if __name__ == "__main__":
    main()
