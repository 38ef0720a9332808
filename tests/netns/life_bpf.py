#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag life --bpf` in the private network namespace diff_ss.sh made: a TCP connection
shorter than one dump interval gets its exact start (between the test's clock before and
after connect()) and its owner (this process, its cgroup), where without --bpf it has no
start and no owner; the program is loaded only while life runs (bpftool prog show before,
during, after); without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN life says so in one line and
goes on without it."""
import json
import os
import socket
import subprocess
import sys
import time

from life import Life  # the same runner: tests/netns/life.py

SD = sys.argv[1]
FAILED = []
PROG = "sd_life_state"


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
    if not cond:
        FAILED.append(name)


def progs():
    """Ids of the loaded BPF programs named as life's."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    return {p["id"] for p in json.loads(out) if p.get("name") == PROG}


def my_cgroup_id():
    """The inode of this process's cgroup2 directory: the kernel's cgroup id."""
    path = [x for x in open("/proc/self/cgroup").read().splitlines() if x.startswith("0::")]
    for line in open("/proc/self/mountinfo"):
        left, right = line.split(" - ")
        if right.split()[0] == "cgroup2" and path:
            return os.stat(left.split()[4] + path[0][3:]).st_ino
    return None


def short_connection(listener):
    """A connection of a few ms, much shorter than life's interval: (t0, t1) around
    connect(), the client's and the accepted side's ports."""
    t0 = time.time()
    c = socket.create_connection(listener.getsockname())
    t1 = time.time()
    a, _ = listener.accept()
    c.sendall(b"x" * 100)
    a.recv(100)
    ports = c.getsockname()[1], a.getpeername()[1]
    c.close()
    a.recv(10)
    a.close()
    return t0, t1, ports


def start_s(rec):
    s = rec["start"]
    return time.mktime(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone + \
        int(s[20:23]) / 1000


def records(life, port):
    return life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == port)


def with_bpf(L, before):
    life = Life("--interval", "30", "--bpf")
    try:
        check("--bpf: life is subscribed", life.ready())
        during = progs()
        check("--bpf: its program is loaded while it runs", len(during - before) == 1,
              (before, during))
        t0, t1, (cport, aport) = short_connection(L)
        client, accepted = records(life, cport), records(life, aport)
        c = socket.socket()
        r0 = time.time()
        try:
            c.connect(("127.0.0.1", 1))
        except ConnectionRefusedError:
            pass
        r1 = time.time()
        rport = c.getsockname()[1]
        c.close()
        refused = life.wait(lambda r: r["proto"] == "tcp" and r["outcome"] == "refused" and
                            r["local"]["port"] == rport)
    finally:
        err = life.stop()
    check("--bpf: no message on stderr but the summary",
          err.strip().splitlines()[:-1] == [], err)
    check("--bpf: one record per side", len(client) == 1 and len(accepted) == 1,
          (client, accepted))
    if not client or not accepted:
        return
    c = client[0]
    check("--bpf: start exact", c["start_exact"] is True, c)
    # Truncated to the millisecond: between t0 (floored) and t1.
    check("--bpf: start between the test's clock before and after connect()",
          int(t0 * 1000) / 1000 - 0.002 <= start_s(c) <= t1 + 0.002, (t0, t1, c["start"]))
    check("--bpf: duration shorter than the interval", c["duration_ms"] < 5000, c)
    check("--bpf: the client's owner is this process",
          c["owner"] == {"pid": os.getpid(), "comm": open("/proc/self/comm").read().strip()},
          c)
    check("--bpf: the accepted side's owner (its close) is this process",
          accepted[0]["owner"] and accepted[0]["owner"]["pid"] == os.getpid(), accepted)
    check("--bpf: the accepted side born exactly, after the client",
          accepted[0]["start_exact"] and start_s(accepted[0]) >= int(t0 * 1000) / 1000,
          accepted)
    cg = my_cgroup_id()
    check("--bpf: the cgroup is this process's", cg is None or c.get("cgroup_id") == cg,
          (cg, c))
    check("--bpf: a refused connect, exact and owned",
          len(refused) == 1 and refused[0]["start_exact"] and
          refused[0]["owner"]["pid"] == os.getpid() and
          int(r0 * 1000) / 1000 - 0.002 <= start_s(refused[0]) <= r1 + 0.002, refused)


def without_bpf(L):
    life = Life("--interval", "30")
    try:
        check("no --bpf: life is subscribed", life.ready())
        _, _, (cport, _) = short_connection(L)
        client = records(life, cport)
    finally:
        life.stop()
    check("no --bpf: the short connection recorded, no start, no owner",
          len(client) == 1 and client[0]["start_exact"] is False and
          client[0]["start"] is None and client[0]["owner"] is None, client)


def degraded(L, before):
    drop = "-bpf,-perfmon,-sys_admin"
    life = Life("--interval", "30", "--bpf",
                pre=["setpriv", "--bounding-set=" + drop, "--inh-caps=" + drop, "--"])
    try:
        check("no CAP_BPF: life is subscribed all the same", life.ready())
        check("no CAP_BPF: nothing loaded", progs() == before, (before, progs()))
        _, _, (cport, _) = short_connection(L)
        client = records(life, cport)
    finally:
        err = life.stop()
    lines = err.strip().splitlines()
    check("no CAP_BPF: one line says --bpf cannot load, then the summary",
          len(lines) == 2 and "--bpf: cannot load" in lines[0] and "not permitted" in lines[0]
          and "records" in lines[1], err)
    check("no CAP_BPF: the record says start not exact",
          len(client) == 1 and client[0]["start_exact"] is False, client)


def main():
    for tool in ("bpftool", "setpriv"):
        if subprocess.run(["sh", "-c", "command -v " + tool], capture_output=True).returncode:
            print("SKIP(tool:%s): not installed" % tool, file=sys.stderr)
            return 77
    L = socket.socket()
    L.bind(("127.0.0.1", 0))
    L.listen(16)
    before = progs()
    with_bpf(L, before)
    # The kernel frees a program after an RCU grace period once its last descriptor
    # closed: wait for it to go (one left after 10 s stays loaded).
    end = time.monotonic() + 10
    while progs() != before and time.monotonic() < end:
        time.sleep(0.05)
    check("--bpf: no program left loaded after life exits", progs() == before,
          (before, progs()))
    without_bpf(L)
    degraded(L, before)
    print("life_bpf: %d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
