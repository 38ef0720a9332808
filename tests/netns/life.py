#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag life` against the test's own load generator, in the private network namespace
diff_ss.sh made: every connection of a known mix appears once, its payload bytes exact and its
outcome agreeing with the client's errno; short successful connections and a listener closed
with connections in its accept queue give no false failures."""
import errno
import json
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import time

SD = sys.argv[1]
FAILED = []
FAILURES = ("refused", "timeout", "reset", "aborted")


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
    if not cond:
        FAILED.append(name)


class Life:
    """sockdiag life --ndjson -t -u --interval 0.2 --dump-budget off EXTRA... (a later
    option wins; budget=True leaves the default budget, which at 0.2 s is 0.5 ms a dump: a
    loaded machine would space the dumps other tests wait for), run under the command
    prefix pre (e.g. setpriv); also life_bpf.py's."""
    def __init__(self, *extra, pre=(), budget=False):
        self.p = subprocess.Popen([*pre, SD, "life", "--ndjson", "-t", "-u", "--interval", "0.2",
                                   *(() if budget else ("--dump-budget", "off")), *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.recs = []
        self.buf = ""

    def pump(self, timeout):
        poller = select.poll()  # select() cannot take descriptors past 1023
        poller.register(self.p.stdout, select.POLLIN)
        if not poller.poll(timeout * 1000):
            return False
        chunk = os.read(self.p.stdout.fileno(), 65536).decode()
        self.buf += chunk
        *lines, self.buf = self.buf.split("\n")
        self.recs += [json.loads(x) for x in lines if x]
        return bool(chunk)

    def wait(self, pred, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            hit = [r for r in self.recs if "proto" in r and pred(r)]
            if hit:
                return hit
            self.pump(0.1)
        return []

    def ready(self):
        # Subscribed once a sentinel's record comes back.
        for _ in range(100):
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.bind(("127.0.0.1", 0))
            port = u.getsockname()[1]
            u.close()
            if self.wait(lambda r: r["proto"] == "udp" and r["local"]["port"] == port, 0.3):
                return True
        return False

    def stop(self):
        self.p.terminate()
        out, err = self.p.communicate(timeout=10)
        self.buf += out
        self.recs += [json.loads(x) for x in self.buf.split("\n") if x]
        return err


def errno_of(f, *args):
    """The errno f(*args) fails with, 0 if it does not."""
    try:
        f(*args)
        return 0
    except OSError as e:
        return e.errno


def exchange(listener, out, back):
    """A connection to listener: out bytes sent, back bytes returned, the client closes
    first, then the accepted side. Returns the client's port."""
    c = socket.create_connection(listener.getsockname())
    a, _ = listener.accept()
    for src, dst, n in ((c, a, out), (a, c, back)):
        src.sendall(b"x" * n)
        got = 0
        while got < n:
            got += len(dst.recv(65536))
    port = c.getsockname()[1]
    c.close()
    a.recv(10)
    a.close()
    return port


def cookie_of(sock):
    """The socket's cookie as records print it (SO_COOKIE, 57)."""
    return "%x" % struct.unpack("=Q", sock.getsockopt(socket.SOL_SOCKET, 57, 8))[0]


def by_cookie(recs, cookie):
    return [r for r in recs if r.get("proto") == "tcp" and r["cookie"] == cookie]


def by_port(recs, port, peer=None):
    """TCP records of local port PORT (and peer port PEER): an ephemeral port comes back
    for another connection to another peer within one test (seen: a short connection's
    port reused by an accept-queue client, counted twice by a port-only match)."""
    return [r for r in recs if r.get("proto") == "tcp" and r["local"]["port"] == port and
            (peer is None or r["peer"]["port"] == peer)]


def netlink_drops(pid):
    """The drops of pid's NETLINK_SOCK_DIAG sockets (/proc/net/netlink, by inode)."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    rows = [x.split() for x in open("/proc/net/netlink").read().splitlines()[1:]]
    return sum(int(f[8]) for f in rows if f[1] == "4" and f[9] in inodes)


def burst():
    """More ends than the receive buffer holds, read late: records + losses = ends."""
    life = Life("--rcvbuf", "4096", "--interval", "600")
    ports = set()
    try:
        check("burst: life is subscribed", life.ready())
        base = len(life.recs)
        os.kill(life.p.pid, signal.SIGSTOP)
        try:
            # Stopped for sure (state T) before the burst: then nothing reads it.
            while open("/proc/%d/stat" % life.p.pid).read().rsplit(")", 1)[1].split()[0] != "T":
                time.sleep(0.001)
            socks = []
            for _ in range(2000):
                u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                u.bind(("127.0.0.1", 0))
                ports.add(u.getsockname()[1])
                socks.append(u)
            for u in socks:
                u.close()
            # The kernel announces the ends from a work queue: wait until it has and the
            # stopped reader's socket dropped some (/proc/net/netlink), else a late
            # worker would hand the events to the resumed reader one by one.
            end = time.monotonic() + 10
            while not netlink_drops(life.p.pid) and time.monotonic() < end:
                time.sleep(0.01)
        finally:
            os.kill(life.p.pid, signal.SIGCONT)

        def total():
            got = [r for r in life.recs[base:] if "proto" in r and r["local"]["port"] in ports]
            lost = sum(r["lost"] for r in life.recs[base:] if "lost" in r)
            return len(got), lost
        end = time.monotonic() + 20
        while sum(total()) < len(ports) and time.monotonic() < end:
            life.pump(0.2)
    finally:
        err = life.stop()
    n, lost = total()
    check("burst: some events lost (the buffer was too small)", lost > 0, (n, lost))
    check("burst: records + losses = ends", n + lost == len(ports), (n, lost, len(ports)))
    # The summary counts every loss of the run, also any before the burst (a slow
    # first dump on a loaded host lets a few older ends overflow 4 KiB).
    every = sum(r["lost"] for r in life.recs if "lost" in r)
    check("burst: the losses on stderr and in the summary",
          "events lost" in err and (", %d lost" % every) in err, (every, err))


def proc_udp_drops(port):
    """The drops column of /proc/net/udp for the socket bound to 127.0.0.1:port."""
    for line in open("/proc/net/udp").read().splitlines()[1:]:
        f = line.split()
        if f[1] == "0100007F:%04X" % port:
            return int(f[12])
    return None


def dump_after(life):
    """Wait until life has dumped since now: a sentinel opened now whose record has a start
    (a dump saw it alive) proves one ran. Returns False if none did."""
    for _ in range(100):
        t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t.bind(("127.0.0.1", 0))
        tport = t.getsockname()[1]
        life.pump(0.3)
        t.close()
        got = life.wait(lambda r: r["proto"] == "udp" and r["local"]["port"] == tport)
        if got and got[0]["start"] is not None:
            return True
    return False


def fin_wait2(L):
    """A client that closes while the server holds its end: the kernel frees the client's
    socket (its destroy event: the record) and keeps a FIN-WAIT-2 timewait socket with the
    same cookie, which dumps show; when the server closes it goes. One record, not a second
    one 'seen closed' by a dump (bench/life.sh found 1 extra record in 198,585)."""
    life = Life()
    try:
        check("fin-wait-2: life is subscribed", life.ready())
        c = socket.create_connection(L.getsockname())
        a, _ = L.accept()
        port = c.getsockname()[1]
        c.close()
        life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == port)
        check("fin-wait-2: dumps saw the timewait socket", dump_after(life) and
              dump_after(life))
        a.close()
        life.wait(lambda r: r["proto"] == "tcp" and r["peer"]["port"] == port)
        check("fin-wait-2: a dump after the server's close", dump_after(life))
    finally:
        life.stop()
    got = by_port(life.recs, port)
    check("fin-wait-2: the client recorded once, ok", len(got) == 1 and got[0]["outcome"] == "ok",
          got)


def udp_drops():
    """Datagrams sent into a small receive buffer nobody reads, then closed: the record's
    drops are what /proc/net/udp's drops column showed just before the close."""
    life = Life()
    rec = []
    try:
        check("udp drops: life is subscribed", life.ready())
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(50):
            s.sendto(b"d" * 500, ("127.0.0.1", port))
        s.close()
        drops = proc_udp_drops(port)
        check("udp drops: a dump ran after the drops", dump_after(life))
        u.close()
        rec = life.wait(lambda r: r["proto"] == "udp" and r["local"]["port"] == port)
    finally:
        life.stop()
    check("udp drops: some datagrams dropped", drops and drops > 0, drops)
    check("udp drops: the record's drops are /proc/net/udp's",
          len(rec) == 1 and rec[0].get("drops") == drops, (drops, rec))


def behind_schedule():
    """Dumps slower than the interval (here 1 ms): life still answers SIGTERM at once (it
    ran dump after dump without looking at its signals, and never stopped)."""
    life = Life("--interval", "0.001")
    try:
        check("behind schedule: life is subscribed", life.ready())
        life.p.terminate()
        try:
            life.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        check("behind schedule: SIGTERM ends it within 5 s", life.p.returncode == 0,
              life.p.returncode)
    finally:
        if life.p.returncode is None:
            life.p.kill()
        life.p.communicate()


def cpu_ticks(pid):
    """utime + stime of pid, in clock ticks (/proc/PID/stat fields 14 and 15)."""
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def budget_values():
    """--dump-budget takes a percentage (0.001 to 100), off or 0; anything else is exit 2
    and one line naming the option, before anything is read."""
    for bad in ("5x", "0.0001", "101", "-1", ""):
        p = subprocess.run([SD, "life", "--dump-budget", bad], capture_output=True, text=True,
                           timeout=10)
        check("--dump-budget %r refused" % bad, p.returncode == 2 and
              p.stderr.count("\n") == 1 and "--dump-budget" in p.stderr, (p.returncode, p.stderr))
    for good in ("0.5", "100", "off", "0", "1%"):
        p = subprocess.run([SD, "life", "--dump-budget", good, "--help"], capture_output=True,
                           text=True, timeout=10)
        check("--dump-budget %r accepted" % good, p.returncode == 0, (p.returncode, p.stderr))


def dump_budget(L):
    """Dumps dearer than the budget come later. With 3,000 idle connections (6,000 sockets)
    and --interval 0.05, life with the default budget spends a fraction of the CPU it spends
    with --dump-budget off, spaces its dumps out at most ten intervals (0.5 s) and says so at
    exit; a connection destroyed while held is still recorded by the next dump."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20000), hard))
    pairs, cpu, errs = [], {}, {}
    try:
        for _ in range(3000):
            c = socket.create_connection(L.getsockname())
            pairs.append((c, L.accept()[0]))
        for mode in ("off", "default"):
            life = Life("--interval", "0.05", budget=mode == "default")
            try:
                check("budget %s: life is subscribed" % mode, life.ready())
                t0 = cpu_ticks(life.p.pid)
                life.wait(lambda r: False, 2.0)
                cpu[mode] = cpu_ticks(life.p.pid) - t0
                if mode == "default":
                    c, a = pairs.pop()
                    port = c.getsockname()[1]
                    subprocess.run([SD, "kill", "sport", "=", ":%d" % port], check=False,
                                   stdout=subprocess.DEVNULL)
                    t = time.monotonic()
                    held = life.wait(lambda r: r["proto"] == "tcp" and
                                     r["local"]["port"] == port, 5)
                    late = time.monotonic() - t
                    check("budget: killed while held, recorded by a later dump",
                          len(held) == 1 and held[0]["seen_closed"], held)
                    check("budget: within the longest gap (0.5 s, and 1 s of slack)", late < 1.5,
                          late)
                    c.close()
                    a.close()
            finally:
                errs[mode] = life.stop()
    finally:
        for c, a in pairs:
            c.close()
            a.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print("budget: life's CPU over 2 s (ticks): %s" % cpu)
    check("budget: the dumps cost a third or less of what they cost every interval",
          "off" in cpu and "default" in cpu and 3 * cpu["default"] <= cpu["off"] and
          cpu["off"] > 0, cpu)
    check("budget: the exit summary says how far apart the dumps came",
          "dumps up to 0.5 s apart instead of 0.05 s" in errs.get("default", ""), errs)
    check("budget off: no such line", "dumps up to" not in errs.get("off", "x"), errs)


def main():
    subprocess.run(["sysctl", "-qw", "net.ipv4.tcp_syn_retries=1"], check=True)
    subprocess.run(["ip", "route", "add", "10.9.0.0/24", "dev", "lo"], check=True)
    L = socket.socket()
    L.bind(("127.0.0.1", 0))
    L.listen(128)
    lport = L.getsockname()[1]
    life = Life()
    try:
        check("life is subscribed", life.ready())
        life.wait(lambda r: False, 0.5)  # the listener seen by a dump
        # ok: 12345 bytes out, 6789 back, both close.
        ok_port = exchange(L, 12345, 6789)
        # refused
        c = socket.socket()
        ref_errno = errno_of(c.connect, ("127.0.0.1", 1))
        ref_cookie = cookie_of(c)
        c.close()
        # timeout (tcp_syn_retries=1; 10.9.0.2 routed to lo, never answered)
        c = socket.socket()
        to_errno = errno_of(c.connect, ("10.9.0.2", 80))
        to_cookie = cookie_of(c)
        c.close()
        # reset by the peer (SO_LINGER 0)
        c = socket.create_connection(("127.0.0.1", lport))
        a, _ = L.accept()
        c.sendall(b"z" * 100)
        a.recv(100)
        a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        a.close()
        rst_errno = errno_of(c.recv, 10)
        rst_cookie = cookie_of(c)
        c.close()
        # destroyed by `sockdiag kill` while held: recorded while still held, once.
        c = socket.create_connection(("127.0.0.1", lport))
        a, _ = L.accept()
        kill_port = c.getsockname()[1]
        life.wait(lambda r: False, 0.5)  # seen alive by a dump
        subprocess.run([SD, "kill", "sport", "=", ":%d" % kill_port], check=False,
                       stdout=subprocess.DEVNULL)
        kill_errno = errno_of(c.recv, 10)
        held = life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == kill_port)
        check("killed while held: recorded before the owner closes it",
              len(held) == 1 and held[0]["seen_closed"], held)
        check("killed while held: client's errno ECONNABORTED", kill_errno == errno.ECONNABORTED,
              kill_errno)
        check("killed while held: a failure outcome", held and held[0]["outcome"] in
              ("reset", "aborted"), held)
        check("killed while held: seen by a dump, so its owner is this process",
              held and held[0]["owner"] and held[0]["owner"]["pid"] == os.getpid(), held)
        c.close()
        a.close()
        # UDP
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(b"u", ("127.0.0.1", 9))
        udp_port = u.getsockname()[1]
        u.close()
        # 9 ms successful connections every 30 ms (coroot#373)
        short = []
        for _ in range(20):
            c = socket.create_connection(("127.0.0.1", lport))
            a, _ = L.accept()
            c.sendall(b"q")
            a.recv(1)
            a.sendall(b"r")
            c.recv(1)
            time.sleep(0.009)
            short.append(c.getsockname()[1])
            c.close()
            a.close()
            time.sleep(0.021)
        # a listener no dump sees (made, used and closed at once): its accepted side ok too
        L4 = socket.socket()
        L4.bind(("127.0.0.1", 0))
        L4.listen(1)
        l4 = L4.getsockname()[1]
        exchange(L4, 3000, 40)
        L4.close()
        # a listener closed with connections in its accept queue (clients done)
        L2 = socket.socket()
        L2.bind(("127.0.0.1", 0))
        L2.listen(16)
        l2 = L2.getsockname()[1]
        queued = []
        for _ in range(5):
            c = socket.create_connection(("127.0.0.1", l2))
            c.sendall(b"req")
            queued.append((c, c.getsockname()[1]))
        for c, _ in queued:
            c.close()
        L2.close()
        life.wait(lambda r: r["proto"] == "udp" and r["local"]["port"] == udp_port)
        life.wait(lambda r: r["proto"] == "tcp" and r["local"]["port"] == queued[-1][1])
        life.wait(lambda r: False, 0.5)
    finally:
        err = life.stop()
    recs = life.recs
    check("exit summary on stderr", "records, 0 lost" in err, err)
    ok = by_port(recs, ok_port)
    check("ok: once", len(ok) == 1, ok)
    if ok:
        check("ok: outcome", ok[0]["outcome"] == "ok", ok[0])
        check("ok: bytes exact", (ok[0]["bytes_acked"], ok[0]["bytes_received"]) ==
              (12345, 6789), ok[0])
    # By cookie: an ephemeral port comes back (6.12: the timed-out connect's port was a
    # short connection's later, two records for "once").
    for name, cookie, err_, want in (("refused", ref_cookie, ref_errno, errno.ECONNREFUSED),
                                     ("timeout", to_cookie, to_errno, errno.ETIMEDOUT),
                                     ("reset", rst_cookie, rst_errno, errno.ECONNRESET)):
        got = by_cookie(recs, cookie)
        check("%s: client errno" % name, err_ == want, err_)
        check("%s: once, outcome %s" % (name, name), len(got) == 1 and
              got[0]["outcome"] == name, got)
    check("reset: bytes exact", by_cookie(recs, rst_cookie)[:1] and
          by_cookie(recs, rst_cookie)[0]["bytes_acked"] == 100, by_cookie(recs, rst_cookie))
    check("killed: once in all", len(by_port(recs, kill_port)) == 1, by_port(recs, kill_port))
    udp = [r for r in recs if r.get("proto") == "udp" and r["local"]["port"] == udp_port]
    check("udp: once", len(udp) == 1, udp)
    bad = [r for p in short for r in by_port(recs, p, lport) if r["outcome"] != "ok"]
    seen = [p for p in short if len(by_port(recs, p, lport)) == 1]
    check("short connections: each once", len(seen) == len(short), (len(seen), len(short)))
    check("short connections: 0 false failures", not bad, bad)
    srv = [r for r in recs if r.get("proto") == "tcp" and r["local"]["port"] == lport and
           r["peer"]["port"] in short]
    check("short connections: the accepted side each once, ok, 1 byte each way",
          len(srv) == len(short) and all(r["outcome"] == "ok" and r["bytes_acked"] == 1 and
                                         r["bytes_received"] == 1 for r in srv), srv)
    fresh = [r for r in recs if r.get("proto") == "tcp" and r["local"]["port"] == l4]
    check("listener no dump saw: accepted side ok, bytes exact", len(fresh) == 1 and
          fresh[0]["outcome"] == "ok" and (fresh[0]["bytes_acked"], fresh[0]["bytes_received"]) ==
          (40, 3000), fresh)
    qrec = [r for _, p in queued for r in by_port(recs, p, l2)]
    check("accept queue: each client once, ok", len(qrec) == 5 and
          all(r["outcome"] == "ok" for r in qrec), qrec)
    srv = [r for r in recs if r.get("proto") == "tcp" and r["local"]["port"] == l2]
    check("accept queue: the dropped children no failure",
          not [r for r in srv if r["outcome"] in FAILURES], srv)
    burst()
    udp_drops()
    fin_wait2(L)
    behind_schedule()
    budget_values()
    dump_budget(L)
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
