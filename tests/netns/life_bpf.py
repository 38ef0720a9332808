#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag life --bpf` in the private network namespace diff_ss.sh made: a TCP connection
shorter than one dump interval gets its exact start (between the test's clock before and
after connect()) and its owner (this process, its cgroup), where without --bpf it has no
start and no owner; connections ended while their owner holds them (destroyed by another
process's `sockdiag kill`, reset by the peer, timed out) have the outcome of the errno the
owner got, where without --bpf a kill says reset (an error that reached no owner, a closed
client reset by its listener's close, leaves it ok); records the ring buffer could not take
(life stopped during a burst) are counted, equal to the program's own counter; the program
is loaded only while life runs (bpftool prog show and life's fdinfo, during and after); without
CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN life says so in one line and goes on without it."""
import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

from life import Life, dump_after, errno_of  # the same runner: tests/netns/life.py

SD = sys.argv[1]
FAILED = []
PROG = "sd_life_state"


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
    if not cond:
        FAILED.append(name)


def progs(pid=None):
    """Ids of the loaded BPF programs named as life's; with pid, only those process pid holds
    (its descriptors' fdinfo: a program's or its link's prog_id), so that another checkout's
    life running at the same time cannot count."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    ids = {p["id"] for p in json.loads(out) if p.get("name") == PROG}
    if pid is None:
        return ids
    held = set()
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            info = open("/proc/%d/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        held |= {int(x.split()[1]) for x in info.splitlines() if x.startswith("prog_id:")}
    return ids & held


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


def with_bpf(L, mine):
    life = Life("--interval", "30", "--bpf")
    try:
        check("--bpf: life is subscribed", life.ready())
        during = progs(life.p.pid)
        check("--bpf: its program is loaded while it runs", len(during) == 1, during)
        mine |= during  # the caller waits for it to go
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


def held(L, life):
    """A connection to L seen alive by a dump: (client, accepted, client's port)."""
    c = socket.create_connection(L.getsockname())
    a, _ = L.accept()
    check("held: a dump saw it", dump_after(life))
    return c, a, c.getsockname()[1]


def ended_held(L, life, how):
    """A connection ended while both ends are still held, how: "kill" (destroyed by a
    separate `sockdiag kill`), "reset" (the peer closes with SO_LINGER 0) or "timeout" (the
    client's data dropped, TCP_USER_TIMEOUT). Returns (the client's errno, its records,
    the accepted side's errno, its records), the records made before either end closed."""
    c, a, port = held(L, life)
    aerr = None
    c.settimeout(20)
    if how == "kill":
        subprocess.run([SD, "kill", "sport", "=", ":%d" % port], check=True,
                       stdout=subprocess.DEVNULL)
        cerr = errno_of(c.recv, 10)
        aerr = errno_of(a.recv, 10)
    elif how == "reset":
        a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        a.close()
        cerr = errno_of(c.recv, 10)
    else:
        rule = "tcp sport %d tcp dport %d drop" % (port, L.getsockname()[1])
        subprocess.run(["nft", "-f", "-"], check=True, text=True, input=(
            "table inet life_to {\n chain out {\n type filter hook output priority 0;\n"
            " %s\n }\n}\n" % rule))
        try:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, 500)
            c.sendall(b"t" * 100)
            cerr = errno_of(c.recv, 10)
        finally:
            subprocess.run(["nft", "delete", "table", "inet", "life_to"], check=True)
    crec = life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == port)
    arec = life.wait(lambda r: r["proto"] == "tcp" and r["peer"]["port"] == port) \
        if how == "kill" else []
    c.close()
    if how != "reset":
        a.close()
    return cerr, crec, aerr, arec


def causes(L, bpf):
    """Each way a held connection ends: its one record, made while still held (seen
    closed by a dump), has the outcome of the errno its owner got; without --bpf a kill
    by another process says reset (the kernel's destroy event does not say who)."""
    tag = "--bpf" if bpf else "no --bpf"
    life = Life("--bpf") if bpf else Life()
    try:
        check(tag + ": life is subscribed", life.ready())
        kill = ended_held(L, life, "kill")
        reset = ended_held(L, life, "reset")
        timeout = ended_held(L, life, "timeout") if bpf else None
    finally:
        err = life.stop()
    check(tag + ": nothing on stderr but the summary", err.strip().splitlines()[:-1] == [],
          err)
    want = [("killed", kill[:2], errno.ECONNABORTED, "aborted" if bpf else "reset"),
            ("killed, its accepted side", kill[2:], errno.ECONNRESET, "reset"),
            ("reset by the peer", reset[:2], errno.ECONNRESET, "reset")]
    if bpf:
        want.append(("timed out", timeout[:2], errno.ETIMEDOUT, "timeout"))
    for name, (e, recs), want_errno, outcome in want:
        check("%s: %s: the owner's errno %s" % (tag, name, errno.errorcode[want_errno]),
              e == want_errno, e and errno.errorcode.get(e, e))
        check("%s: %s: one record, seen closed while held, outcome %s" % (tag, name, outcome),
              len(recs) == 1 and recs[0]["seen_closed"] and recs[0]["outcome"] == outcome,
              recs)


def killed_unseen(L):
    """A connection killed while held before any dump saw it (life stopped from its
    connect to its kill), its owner closing it only after two more dumps: recorded at its
    destroy event, aborted (the tracepoint's entry of a connection that ended with an error
    is kept until then: it was forgotten after two dumps, and the record said reset)."""
    life = Life("--bpf")
    try:
        check("unseen: life is subscribed", life.ready())
        os.kill(life.p.pid, signal.SIGSTOP)
        try:
            while pid_state(life.p.pid) != "T":
                time.sleep(0.001)
            c = socket.create_connection(L.getsockname())
            a, _ = L.accept()
            port = c.getsockname()[1]
            subprocess.run([SD, "kill", "sport", "=", ":%d" % port], check=True,
                           stdout=subprocess.DEVNULL)
        finally:
            os.kill(life.p.pid, signal.SIGCONT)
        check("unseen: two dumps after the kill", dump_after(life) and dump_after(life))
        check("unseen: nothing recorded while held",
              not [r for r in life.recs if r.get("proto") == "tcp" and
                   r["local"]["port"] == port])
        cerr = errno_of(c.recv, 10)
        c.close()
        a.close()
        rec = life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == port)
    finally:
        life.stop()
    check("unseen: the owner's errno ECONNABORTED", cerr == errno.ECONNABORTED, cerr)
    check("unseen: one record at the owner's close, aborted",
          len(rec) == 1 and not rec[0]["seen_closed"] and rec[0]["outcome"] == "aborted", rec)


def orphans_reset():
    """Clients that sent a request and closed, then were reset by their listener's close
    with them still in its accept queue: the ECONNRESET reached no one (the clients had
    closed, they saw success): ok under --bpf too, not reset."""
    life = Life("--bpf")
    recs = []
    try:
        check("orphans: life is subscribed", life.ready())
        L2 = socket.socket()
        L2.bind(("127.0.0.1", 0))
        L2.listen(16)
        queued = []
        for _ in range(5):
            c = socket.create_connection(L2.getsockname())
            c.sendall(b"req")
            queued.append((c, c.getsockname()[1]))
        for c, _ in queued:
            c.close()
        L2.close()
        for _, port in queued:
            recs += life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == port)
    finally:
        life.stop()
    check("orphans: each client once, ok", len(recs) == 5 and
          all(r["outcome"] == "ok" for r in recs), recs)


def pid_state(pid):
    return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]


def ring_counter(prog):
    """The program's own count of records its ring had no room for: the `lost` of the
    .bss map of program id prog (bpftool)."""
    def bt(*args):
        return json.loads(subprocess.run(["bpftool", "-j", *args], capture_output=True,
                                         text=True, check=True).stdout)
    p = [x for x in bt("prog", "show") if x["id"] == prog]
    for mid in p[0].get("map_ids", []) if p else []:
        if bt("map", "show", "id", str(mid)).get("name", "").endswith(".bss"):
            v = bt("map", "lookup", "id", str(mid), "key", "0", "0", "0", "0")
            return struct.unpack("<Q", bytes(int(x, 16) for x in v["value"][:8]))[0]
    return None


def ring_overflow():
    """life stopped while N connects are refused (two ring records each: birth, end) more
    than the 4 MiB ring holds: the records it could not take are reported (stderr, the
    stream, the summary) as many as the program counted; every connection still has its
    record or a counted netlink loss (ring losses cost exactness, not records)."""
    n = 50000
    life = Life("--bpf", "--interval", "600")
    try:
        check("ring: life is subscribed", life.ready())
        mine = progs(life.p.pid)
        check("ring: its program loaded", len(mine) == 1, mine)
        base = len(life.recs)
        os.kill(life.p.pid, signal.SIGSTOP)
        try:
            while pid_state(life.p.pid) != "T":
                time.sleep(0.001)
            for _ in range(n):
                c = socket.socket()
                c.connect_ex(("127.0.0.1", 1))
                c.close()
        finally:
            os.kill(life.p.pid, signal.SIGCONT)

        def total():
            got = sum(1 for r in life.recs[base:] if r.get("proto") == "tcp")
            return got, sum(r["lost"] for r in life.recs[base:] if "lost" in r)
        end = time.monotonic() + 60
        while sum(total()) < n and time.monotonic() < end:
            life.pump(0.2)
        counted = ring_counter(min(mine)) if mine else None
    finally:
        err = life.stop()
    got, lost = total()
    shown = sum(r["bpf_lost"] for r in life.recs if "bpf_lost" in r)
    print("ring: %d connections: %d records, %d events lost, %s ring records lost (%d shown)"
          % (n, got, lost, counted, shown))
    check("ring: records + netlink losses = connections", got + lost == n, (got, lost, n))
    check("ring: some ring records lost", counted and counted > 0, counted)
    check("ring: the stream's bpf_lost objects add up to the program's counter",
          shown == counted, (shown, counted))
    check("ring: a line on stderr and the summary say so",
          "not traced (BPF ring full)" in err and
          ("%d not traced" % shown) in err.strip().splitlines()[-1], err)
    check("ring: refused all the same", all(r["outcome"] == "refused" for r in life.recs[base:]
                                            if r.get("proto") == "tcp"))


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
    causes(L, False)


def degraded(L):
    drop = "-bpf,-perfmon,-sys_admin"
    life = Life("--interval", "30", "--bpf",
                pre=["setpriv", "--bounding-set=" + drop, "--inh-caps=" + drop, "--"])
    try:
        check("no CAP_BPF: life is subscribed all the same", life.ready())
        check("no CAP_BPF: nothing loaded", not progs(life.p.pid), progs(life.p.pid))
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


def kernel_cannot():
    """Why this kernel cannot run life's program, or None: no BTF (CO-RE), or older than
    5.17 (the light skeleton's loader has the kernel apply CO-RE relocations)."""
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        return "no kernel BTF"
    rel = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    return "Linux %d.%d" % rel if rel < (5, 17) else None


def degraded_kernel(L, why):
    """A kernel that cannot load the program: life --bpf says why in one line and records
    all the same, starts first seen."""
    life = Life("--interval", "30", "--bpf")
    try:
        check("%s: life --bpf is subscribed" % why, life.ready())
        _, _, (cport, _) = short_connection(L)
        client = records(life, cport)
    finally:
        err = life.stop()
    lines = err.strip().splitlines()
    check("%s: one line says --bpf cannot load, then the summary" % why,
          len(lines) == 2 and "--bpf: cannot load" in lines[0] and "records" in lines[1], err)
    check("%s: the record says start not exact" % why,
          len(client) == 1 and client[0]["start_exact"] is False, client)


def main():
    for tool in ("bpftool", "setpriv", "nft"):
        if subprocess.run(["sh", "-c", "command -v " + tool], capture_output=True).returncode:
            print("SKIP(tool:%s): not installed" % tool, file=sys.stderr)
            return 77
    L = socket.socket()
    L.bind(("127.0.0.1", 0))
    L.listen(16)
    why = kernel_cannot()
    if why:
        degraded_kernel(L, why)
        without_bpf(L)
        print("life_bpf: %d failed (%s: the program's checks not run)" % (len(FAILED), why))
        return 1 if FAILED else 0
    mine = set()
    with_bpf(L, mine)
    # The kernel frees a program after an RCU grace period once its last descriptor
    # closed: wait for life's to go (one left after 10 s stays loaded).
    end = time.monotonic() + 10
    while progs() & mine and time.monotonic() < end:
        time.sleep(0.05)
    check("--bpf: no program left loaded after life exits", mine and not progs() & mine,
          (mine, progs()))
    causes(L, True)
    killed_unseen(L)
    orphans_reset()
    ring_overflow()
    without_bpf(L)
    degraded(L)
    print("life_bpf: %d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
