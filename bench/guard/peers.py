#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/guard/peers.py: N TCP connections from SRC to P distinct peers
(10.30.<i/250>.<i%250+1>, port 7000, N/P connections each), for the
route-change benchmark. Runs only inside the private namespaces
bench/guard/route.sh creates. Prints "ready N", then holds them until stdin
closes. Usage: peers.py SRC N P"""
import resource
import socket
import sys

src, n, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks = []
for i in range(n):
    k = i % p
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("10.30.%d.%d" % (k // 250, k % 250 + 1), 7000))
    socks.append(s)
print("ready %d" % len(socks), flush=True)
sys.stdin.read()
