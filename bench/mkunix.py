#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""mkunix: N connected unix stream socket pairs (2N sockets) plus 100 named
listeners, in the current network namespace, for bench/unix.sh.

The hard open-file limit is 20000 per process, so workers of at most 9000
pairs each hold them. Prints "ready N" when every worker is done, then waits
for standard input to close; workers die with it (SIGKILL from the parent,
and they are in the benchmark's private pid namespace anyway)."""
import os
import resource
import socket
import sys


def main():
    n = int(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    per = min(9000, (hard - 200) // 2)
    kids, made = [], 0
    while made < n:
        k = min(per, n - made)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            keep = [s for _ in range(k) for s in socket.socketpair()]
            os.write(w, b"x")
            os.close(w)
            sys.stdin.read()
            os._exit(0 if keep else 1)
        os.close(w)
        if os.read(r, 1) != b"x":
            sys.exit("mkunix: a worker failed")
        os.close(r)
        kids.append(pid)
        made += k
    keep = []
    for i in range(100):
        s = socket.socket(socket.AF_UNIX)
        s.bind("\0sockdiag-bench-%d" % i)
        s.listen()
        keep.append(s)
    print("ready %d" % (2 * n + len(keep)), flush=True)
    sys.stdin.read()
    for pid in kids:
        os.kill(pid, 9)


if __name__ == "__main__":
    main()
