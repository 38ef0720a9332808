#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the owner and the peer of a destroyed socket see, and in which order
(run by run.sh inside a private network namespace), as README.md, docs/kill.md
and sockdiag(8) say it:
 - TCP owner: data already received is read first, then ECONNABORTED once
   (to whichever call comes first, recv or send), then recv returns 0 and
   send fails with EPIPE;
 - TCP peer: a reset: its unread data first, then ECONNRESET once, then 0;
 - connected UDP owner: ECONNABORTED first, then the datagrams already
   queued, then nothing; send fails with EDESTADDRREQ.
Usage: seen.py PATH-TO-SOCKDIAG."""
import errno
import socket
import subprocess
import sys
import time

SD = sys.argv[1]
failures = []


def check(got, want, what):
    if got != want:
        failures.append(what)
        print("FAIL: %s: got %r, want %r" % (what, got, want), file=sys.stderr)


def kill(flt):
    p = subprocess.run([SD, "kill", "-tu", flt], capture_output=True, text=True, timeout=60)
    check(p.returncode, 0, "kill %s: %s" % (flt, p.stderr.strip()))


def rd(s):
    try:
        d = s.recv(65536)
        return "data %d" % len(d) if d else "eof"
    except OSError as e:
        return errno.errorcode[e.errno]


def snd(s):
    try:
        return "sent %d" % s.send(b"x")
    except OSError as e:
        return errno.errorcode[e.errno]


def tcp_pair(lst):
    c = socket.create_connection(("127.0.0.1", lst.getsockname()[1]))
    a, _ = lst.accept()
    c.setblocking(False)
    a.setblocking(False)
    return c, a


def main():
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", 7100))
    lst.listen()

    # Unread data on both sides; the client is destroyed.
    c, a = tcp_pair(lst)
    a.send(b"y" * 100)
    c.send(b"z" * 50)
    time.sleep(0.1)
    kill("sport = :%d" % c.getsockname()[1])
    check([rd(c), rd(c), rd(c), snd(c)], ["data 100", "ECONNABORTED", "eof", "EPIPE"],
          "TCP owner with unread data: recv, recv, recv, send")
    time.sleep(0.1)
    check([rd(a), rd(a), rd(a), snd(a)], ["data 50", "ECONNRESET", "eof", "EPIPE"],
          "TCP peer with unread data: recv, recv, recv, send")

    # Nothing unread: the error comes at once; to send as well as to recv.
    c, a = tcp_pair(lst)
    kill("sport = :%d" % c.getsockname()[1])
    check([rd(c), rd(c)], ["ECONNABORTED", "eof"], "TCP owner, nothing unread: recv, recv")
    c, a = tcp_pair(lst)
    kill("sport = :%d" % c.getsockname()[1])
    check([snd(c), snd(c), rd(c)], ["ECONNABORTED", "EPIPE", "eof"],
          "TCP owner, nothing unread: send, send, recv")

    # Connected UDP with a queued datagram: the error comes before the data.
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 7200))
    u.connect(("127.0.0.1", 7201))
    p = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    p.bind(("127.0.0.1", 7201))
    p.connect(("127.0.0.1", 7200))
    p.send(b"d" * 10)
    time.sleep(0.05)
    u.setblocking(False)
    kill("sport = :7200")
    check([rd(u), rd(u), rd(u), snd(u)], ["ECONNABORTED", "data 10", "EAGAIN", "EDESTADDRREQ"],
          "UDP owner with a queued datagram: recv, recv, recv, send")
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("ok: owners and peers see what the documentation says, in that order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
