#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag top -b end to end, inside the private network namespace test_cli.sh
made, against what the test's own processes sent and read:
  - a flow paced at 2 MB/s shows that rate within 5% (sender and receiver side),
    and each snapshot's tx_bps and rx_bps are its own bytes over the time since
    the previous snapshot, the sender's rate then within 10%;
  - a connection that opens, carries N bytes and closes between two refreshes
    is in the next snapshot with N bytes (within 1%) and closed = 1;
  - groups by pid, unit, cgroup and conn,pid over one workload (long
    connections that send, then close, inside the window): the receiver's
    RX equals what it read (counted once), each sender's TX what it sent,
    and every grouping adds up to the same per-connection sums;
  - bad --by / --sort / --count / --interval: exit 2, one line.
Usage: test_top.py PATH-TO-SOCKDIAG."""
import datetime
import json
import os
import tempfile
import subprocess
import sys
import time

SD = sys.argv[1]
SLOW = float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1") or 1)
passed, failed, skipped = [], [], []


def check(cond, what, detail=""):
    (passed if cond else failed).append(what)
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else " " + str(detail)))


def top(*args, wait=True):
    """top -b --ndjson -v ARGS, returned once it has taken its baseline (wait)."""
    p = subprocess.Popen([SD, "top", "-b", "--ndjson", "-v"] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return started(p) if wait else p


def started(p):
    line = p.stderr.readline()
    if "counting from now" not in line:
        raise SystemExit("top did not start: %r" % line)
    return p


def rows(p, timeout=120):
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0 or err:
        print("top exited %d: %s" % (p.returncode, err))
    return [json.loads(line) for line in out.splitlines()]


def py(code, *args):
    """A helper process running code; its stdin and stdout are pipes."""
    return subprocess.Popen([sys.executable, "-c", code] + [str(a) for a in args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


SERVER = r"""
import socket, sys, threading
port, n = int(sys.argv[1]), int(sys.argv[2])
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(64)
got, ths = [], []
print("ready", flush=True)
def rd(a, i):
    while True:
        d = a.recv(1 << 16)
        if not d:
            break
        got[i] += len(d)
    a.close()
for i in range(n):
    a = l.accept()[0]
    got.append(0)
    t = threading.Thread(target=rd, args=(a, i)); t.start(); ths.append(t)
for t in ths:
    t.join()
print(sum(got), flush=True)
sys.stdin.read()
"""

# Connect nconn times; on "go": send n bytes on each (paced at rate B/s over
# secs when rate > 0), close, print what was sent.
CLIENT = r"""
import os, socket, sys, time
port, nconn, n, rate, cg = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \
    float(sys.argv[4]), sys.argv[5]
log = open(sys.argv[6], "w") if len(sys.argv) > 6 else None
if cg != "-":
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
def conn():
    c = socket.socket()
    if rate:  # little unacknowledged data: sent, acknowledged and received stay close
        c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
    c.connect(("127.0.0.1", port))
    return c
lazy = nconn < 0  # connect only on "go"
cs = [] if lazy else [conn() for _ in range(nconn)]
print("ready", flush=True)
sys.stdin.readline()
if lazy:
    cs = [conn() for _ in range(-nconn)]
sent = 0
t0 = time.monotonic()
for c in cs:
    left = n
    while left:
        k = min(left, 20000)
        if rate:
            while sent + k > (time.monotonic() - t0) * rate:
                time.sleep(0.002)
        c.sendall(b"x" * k)
        left -= k
        sent += k
        if rate and len(sys.argv) > 6:
            log.write("%r %d\n" % (time.time(), sent))
            log.flush()
for c in cs:
    c.close()
print(sent, flush=True)
sys.stdin.read()
"""


def start(code, *args):
    p = py(code, *args)
    line = p.stdout.readline().strip()
    if line != "ready":
        raise SystemExit("helper did not start: %r" % line)
    return p


def stop(*ps):
    for p in ps:
        try:
            p.stdin.close()
        except OSError:
            pass
        p.wait(timeout=30)


def sent_between(log, t0, t1):
    """Bytes the sender's log says were sent between t0 and t1 (interpolated)."""
    def at(t):
        if t <= log[0][0]:
            return 0
        prev = (log[0][0], 0)
        for ts, n in log:
            if ts >= t:
                return prev[1] + (n - prev[1]) * (t - prev[0]) / max(ts - prev[0], 1e-9)
            prev = (ts, n)
        return log[-1][1]
    return at(t1) - at(t0)


def stamp(r):
    t = datetime.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def test_rate(tmp):
    srv = start(SERVER, 7101, 1)
    cli = start(CLIENT, 7101, 1, int(2e6 * 60 * SLOW), 2e6, "-", tmp + "/log")
    cli.stdin.write("go\n")
    cli.stdin.flush()
    p = top("--interval", "1s", "--count", "6", "--by", "conn", "sport = :7101 or dport = :7101")
    got = rows(p)
    cli.kill()
    cli.wait()
    log = [(float(t), int(n)) for t, n in (line.split() for line in open(tmp + "/log"))
           if n.isdigit()]
    snd = [r for r in got if r["rport"] == 7101]
    rcv = [r for r in got if r["lport"] == 7101]
    secs = sum(r["interval_us"] for r in snd) / 1e6
    rate = sum(r["tx_bytes"] for r in snd) / max(secs, 1e-9)
    # Against the sender's own log, over the six intervals together (their
    # ends are where a dump read the counters: a loaded machine moves each by
    # a few milliseconds).
    want = sent_between(log, stamp(snd[0]) - snd[0]["interval_us"] / 1e6, stamp(snd[-1]))
    total = sum(r["tx_bytes"] for r in snd)
    check(len(snd) == 6 and abs(total - want) <= 0.05 * want,
          "a flow paced at 2 MB/s: top's TX/s (%d B/s) is what the sender's log says it "
          "sent then (%d B/s), within 5%%" % (rate, want / max(secs, 1e-9)))
    if abs(want / max(secs, 1e-9) - 2e6) > 0.05 * 2e6:
        print("note: the sender kept %d B/s, not 2 MB/s (a loaded machine)"
              % (want / max(secs, 1e-9)))
    total_rx = sum(r["rx_bytes"] for r in rcv)
    # Both ends are read by the same dump, but not at the same moment: the walk
    # covers the host's whole TCP hash (every namespace), in chunks, and a busy
    # machine may run others between two chunks. Exact sums: test_groups.
    check(len(rcv) == 6 and abs(total_rx - total) <= 0.1 * total,
          "the receiving end's RX: the sender's TX, within 10%% (%d, %d)" % (total_rx, total))
    check(all(r["conns"] == 1 and r["closed"] == 0 for r in got),
          "one live connection per row, none closed", got[:2])
    # Each snapshot on its own, from the second on: its interval is the time since
    # the previous one (their stamps: a rate over the time since the start gave a
    # steady flow 1.0M, 494k, 336k, 250k), and each end's rate is its own bytes
    # over that interval (tx_bps from the receive rate passed), what the sender's
    # log says it sent then (within 10%).
    for rs, field, bps in ((snd, "tx_bytes", "tx_bps"), (rcv, "rx_bytes", "rx_bps")):
        bad = []
        for prev, r in zip(rs, rs[1:]):
            dt = stamp(r) - stamp(prev)
            sec = r["interval_us"] / 1e6
            want_bps = sent_between(log, stamp(prev), stamp(r)) / max(dt, 1e-9)
            if abs(sec - dt) > 0.01 or \
               abs(r[bps] - r[field] / max(sec, 1e-9)) > 2 + 1e-5 * r[bps] or \
               abs(r[bps] - want_bps) > 0.1 * want_bps:
                bad.append((round(dt, 4), sec, r[field], r[bps], int(want_bps)))
        check(len(rs) == 6 and not bad,
              "%s, snapshot by snapshot: the interval since the previous one, %s = %s / "
              "interval = the sender's rate then, within 10%%" % (bps, bps, field),
              bad or rs)
    srv.kill()
    srv.wait()


def test_short():
    """A connection that lives inside one interval: started right after a
    snapshot (an idle pair on port 7105 makes each snapshot print a line)."""
    n = 3000000
    anchor = start(SERVER, 7105, 1)
    idle = start(CLIENT, 7105, 1, 0, 0, "-")
    srv = start(SERVER, 7102, 1)
    cli = start(CLIENT, 7102, -1, n, 0, "-")
    p = top("--interval", "%gs" % (2 * SLOW), "--count", "2", "--by", "conn",
            "sport = :7102 or dport = :7102 or dport = :7105")
    first = p.stdout.readline()  # the first snapshot has begun
    cli.stdin.write("go\n")
    cli.stdin.flush()
    sent = int(cli.stdout.readline())
    srv.stdin.close()
    read = int(srv.stdout.readline())
    got = [json.loads(first)] + rows(p)
    stop(cli, srv)
    for k in (idle, anchor):
        k.kill()
        k.wait()
    snd = [r for r in got if r["rport"] == 7102]
    rcv = [r for r in got if r["lport"] == 7102 and r["rport"]]
    check(len(snd) == 1 and snd[0]["closed"] == 1 and snd[0]["conns"] == 0 and
          abs(snd[0]["tx_bytes"] - sent) <= 0.01 * sent,
          "a connection born and closed between refreshes: TX %d bytes in one snapshot"
          % sent, snd)
    check(len(rcv) == 1 and rcv[0]["closed"] == 1 and
          abs(rcv[0]["rx_bytes"] - read) <= 0.01 * read,
          "its receiving end: RX = the %d bytes read, closed = 1" % read, rcv)


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"]:
                return left.split()[4]
    return None


def test_groups():
    root = cgroup2_mount()
    base = unit = None
    if root:
        base = os.path.join(root, "sdtop%d.slice" % os.getpid())
        unit = os.path.join(base, "sender%d.service" % os.getpid())
        try:
            os.mkdir(base)
            os.mkdir(unit)
        except OSError as e:
            print("SKIP(cgroup2): cannot create test cgroups: %s" % e)
            skipped.append("groups")
            for d in (unit, base):
                if os.path.isdir(d):
                    os.rmdir(d)
            return
    else:
        print("SKIP(cgroup2): no cgroup2 mount")
        skipped.append("groups")
        return
    kids = []
    try:
        srv = start(SERVER, 7103, 3)
        a = start(CLIENT, 7103, 2, 700000, 0, unit)
        b = start(CLIENT, 7103, 1, 1100000, 0, "-")
        kids = [srv, a, b]
        keys = ["pid", "unit", "cgroup", "conn,pid"]
        # Started together, the traffic once each has its baseline, all of it
        # inside every one's window.
        tops = [started(p) for p in [top("--interval", "%gs" % (3 * SLOW), "--count", "2",
                                         "--by", k, "sport = :7103 or dport = :7103",
                                         wait=False) for k in keys]]
        for c in (a, b):
            c.stdin.write("go\n")
            c.stdin.flush()
        sent_a, sent_b = int(a.stdout.readline()), int(b.stdout.readline())
        srv.stdin.close()
        read = int(srv.stdout.readline())
        res = dict(zip(keys, (rows(p) for p in tops)))
    finally:
        for p in kids:
            p.kill()
            p.wait()
        for d in (unit, base):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.1)

    def sums(rs, key, field):
        out = {}
        for r in rs:
            out[r[key]] = out.get(r[key], 0) + r[field]
        return out

    pid_rx, pid_tx = sums(res["pid"], "pid", "rx_bytes"), sums(res["pid"], "pid", "tx_bytes")
    conn_rx = sums(res["conn,pid"], "pid", "rx_bytes")
    conn_tx = sums(res["conn,pid"], "pid", "tx_bytes")
    # Each closed connection adds its FIN (one sequence number) to the counters.
    check(read <= pid_rx.get(srv.pid, 0) <= read + 3,
          "by pid: the receiver's RX is what it read, once (%d)" % read, pid_rx)
    check(sent_a <= pid_tx.get(a.pid, 0) <= sent_a + 2 and
          sent_b <= pid_tx.get(b.pid, 0) <= sent_b + 1,
          "by pid: each sender's TX is what it sent (%d, %d)" % (sent_a, sent_b), pid_tx)
    check(conn_rx == pid_rx and conn_tx == pid_tx,
          "by conn,pid: the connections add up to the pid groups",
          (conn_rx, pid_rx, conn_tx, pid_tx))
    check(sum(1 for r in res["conn,pid"] if r["closed"]) == 6,
          "by conn,pid: six connection ends closed", res["conn,pid"])
    uname = os.path.basename(unit)
    unit_tx = sums(res["unit"], "unit", "tx_bytes")
    cg_tx = sums(res["cgroup"], "cgroup", "tx_bytes")
    rel = "/" + os.path.relpath(unit, root)
    check(unit_tx.get(uname) == pid_tx.get(a.pid) and sent_a <= unit_tx[uname] <= sent_a + 2,
          "by unit: %s's TX is its process's, what it sent" % uname, (unit_tx, pid_tx))
    check(cg_tx.get(rel) == pid_tx.get(a.pid),
          "by cgroup: %s's TX is its process's" % rel, cg_tx)
    check(sum(unit_tx.values()) == sum(pid_tx.values()) == sum(cg_tx.values()),
          "every grouping adds up to the same TX", (unit_tx, pid_tx, cg_tx))


def test_udp():
    """UDP has no byte counters in sock_diag: a connected UDP socket shows its queue."""
    import socket
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.bind(("127.0.0.1", 7104))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.1", 7104))
    r.connect(s.getsockname())
    p = top("-u", "--interval", "%gs" % (0.5 * SLOW), "--count", "2", "--by", "conn",
            "sport = :7104")
    for _ in range(10):
        s.send(b"z" * 1000)  # queued, never read
    got = rows(p)[-1:]  # the last snapshot: after the sends
    r.close()
    s.close()
    check(len(got) == 1 and got[0]["proto"] == "udp" and got[0]["rqueue"] > 0 and
          got[0]["rx_bytes"] == 0 and got[0]["tx_bytes"] == 0 and got[0]["rtt_us"] is None,
          "UDP: the receive queue, no bytes (sock_diag has no UDP counters)", got)


def test_usage():
    for args, what in ((["--by", "nosuch"], "unknown key"), (["--sort", "x"], "unknown column"),
                       (["--count", "0"], "not a positive number"),
                       (["--interval", "0"], "not a duration"),
                       (["--bpf"], "not accepted"), (["-x"], "not accepted"),
                       # the rule of list --count-by's keys: none empty, none twice
                       (["--by", "pid,pid"], "key 'pid' given twice"),
                       (["--by", "conn,rport"], "key 'rport' given twice (conn has it)"),
                       (["--by", "conn,conn"], "key 'conn' given twice"),
                       (["--by", "pid,"], "an empty key in 'pid,'"),
                       (["--by", ",pid"], "an empty key in ',pid'"),
                       (["--by", "pid,,comm"], "an empty key in 'pid,,comm'"),
                       (["--by", ""], "no key given"),
                       (["--by", "pid,nosuch"], "unknown key 'nosuch'")):
        p = subprocess.run([SD, "top", "-b"] + args, capture_output=True, text=True)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and what in p.stderr
              and not p.stdout, "top %s: exit 2, one line" % " ".join(args),
              (p.returncode, p.stderr))


def main():
    test_usage()
    with tempfile.TemporaryDirectory() as tmp:
        test_rate(tmp)
    test_short()
    test_udp()
    test_groups()
    print("# checks: %d passed, %d failed, %d skipped" % (len(passed), len(failed),
                                                           len(skipped)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
