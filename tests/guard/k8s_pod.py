#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A pod of the simulated node (tests/guard/k8s_node.py), run inside the pod's
network namespace: loopback up, the service backend's address 10.0.0.1 on it,
conntrack made to track (an nftables `ct state` rule), servers on
10.0.0.1:8080 (the backend the test marks dead) and 10.0.0.1:8081 (a live
one). Each line "connect" on stdin opens one client connection to each and
answers "connected" once both are accepted and have carried a byte (so
conntrack has seen them established). Exits at EOF on stdin."""
import socket
import subprocess
import sys

subprocess.run("ip link set lo up; ip addr add 10.0.0.1/32 dev lo; "
               "nft add table inet sdk8s && "
               "nft add chain inet sdk8s o '{ type filter hook output priority 0; }' && "
               "nft add rule inet sdk8s o ct state new,established accept",
               shell=True, check=True)
servers = {}
for port in (8080, 8081):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.0.0.1", port))
    s.listen(16)
    servers[port] = s
keep = []
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() != "connect":
        continue
    for port, srv in servers.items():
        c = socket.create_connection(("10.0.0.1", port), timeout=5)
        a, _ = srv.accept()
        c.sendall(b"x")
        a.recv(1)
        a.sendall(b"y")
        c.recv(1)
        keep += [c, a]
    print("connected", flush=True)
