#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Slow clients against the metrics server of `sockdiag exporter` and `guard --metrics`.

usage: http_slow.py SOCKDIAG [--slow N] [--seconds S] [--only exporter|guard]
                             [--gets N] [--hold N]
(make test: --slow 200 --seconds 8 --hold 2100, about 25 s; by hand, bench/RESULTS.md:
--slow 1000 --seconds 30 --gets 5000)

Runs itself again in a private network namespace (unshare -n; loopback only) and there,
for each daemon:
  - N slow clients (default 200) from 127.0.1.0/24 addresses (8 per address, under the
    per-address cap) each send one byte of a request every 2 s, and reconnect when
    closed; meanwhile a well-behaved client scrapes /metrics every 0.25 s: at least 99%
    of its scrapes must be answered (200) within 2 s (x SOCKDIAG_TEST_SLOWDOWN), none
    may fail;
  - a slow client is closed by the whole-request deadline (headers within 5 s), well
    before the 10 s idle timeout that it keeps resetting;
  - connections over the per-address cap (32) are closed at once, while another
    address is still served;
  - with --hold N (the exporter only: the same http.c serves both): N connections
    (more than the server's limit, 2048) held open without a byte: a scrape made then
    waits in the listen queue and is answered (not reset) once the deadline frees a
    slot;
  - with --gets N (by hand): N concurrent GETs from many addresses, none refused.
Exit 77 (skip) without root or unshare.
"""
import argparse
import os
import resource
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

SLOWDOWN = max(1.0, float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1") or 1))
PORT = 10140
PER_ADDR = 8           # slow clients per source address (the cap is 32)
CAP = 32               # http.c PER_ADDR_LIMIT
DEADLINE = 5.0         # http.c HEADER_DEADLINE_S
REQ = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000

NPASS = 0


def fail(msg):
    print("FAIL: " + msg, flush=True)
    print("# checks: %d passed, 1 failed, 0 skipped" % NPASS, flush=True)
    sys.exit(1)


def ok(msg):
    global NPASS
    NPASS += 1
    print("ok: " + msg, flush=True)


def src(i):
    """The i-th source address of the slow clients: 127.0.1.1, 127.0.1.2, ..."""
    return "127.%d.%d.%d" % (1 + i // 65025, 1 + (i // 255) % 255, 1 + i % 255)


def get(path="/metrics", timeout=2.0, source="127.0.0.1"):
    """One request on a fresh connection: (status, seconds) or (0, seconds) on failure."""
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout,
                                     source_address=(source, 0))
        s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        st = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else 0
        return st, time.monotonic() - t0
    except (OSError, ValueError, IndexError):
        return 0, time.monotonic() - t0


class Slow(threading.Thread):
    """N connections that each send a byte every `every` s, reconnecting when closed."""

    def __init__(self, n, every):
        super().__init__(daemon=True)
        self.n, self.every, self.stop = n, every, False
        self.conns = {}         # fd -> [socket, index, bytes sent, opened at]
        self.closed = 0
        self.lifetimes = []     # seconds from connect to being closed by the server
        self.sel = selectors.DefaultSelector()

    def open(self, i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((src(i // PER_ADDR), 0))
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", PORT))
        except BlockingIOError:
            pass
        self.conns[s.fileno()] = [s, i, 0, time.monotonic()]
        self.sel.register(s, selectors.EVENT_READ)

    def drop(self, fd):
        s, i, _, t = self.conns.pop(fd)
        self.sel.unregister(s)
        s.close()
        self.closed += 1
        self.lifetimes.append(time.monotonic() - t)
        return i

    def run(self):
        for i in range(self.n):
            self.open(i)
        nxt = time.monotonic()
        while not self.stop:
            for key, _ in self.sel.select(timeout=0.1):
                fd = key.fileobj.fileno()
                try:
                    if key.fileobj.recv(4096):
                        continue
                except OSError:
                    pass
                self.open(self.drop(fd))
            if time.monotonic() >= nxt:
                nxt += self.every
                for fd, c in list(self.conns.items()):
                    try:
                        c[0].send(REQ[c[2]:c[2] + 1])
                        c[2] += 1
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        self.open(self.drop(fd))
        for fd in list(self.conns):
            self.conns[fd][0].close()


class Daemon:
    def __init__(self, sd, kind, tmp):
        self.kind = kind
        log = open(os.path.join(tmp, kind + ".log"), "w")
        if kind == "exporter":
            argv = [sd, "exporter", "--listen", "127.0.0.1:%d" % PORT]
        else:
            conf = os.path.join(tmp, "guard.conf")
            open(conf, "w").close()
            argv = [sd, "guard", "-c", conf, "--metrics", "127.0.0.1:%d" % PORT]
        self.log = log.name
        self.p = subprocess.Popen(argv, stderr=log, stdout=log)
        t0 = time.monotonic()
        while get(timeout=1)[0] != 200:
            if self.p.poll() is not None or time.monotonic() - t0 > 20 * SLOWDOWN:
                fail("%s did not start: %s" % (kind, open(log.name).read()))
            time.sleep(0.1)

    def close(self):
        """SIGTERM: a clean exit, status 0 (the sanitizers' reports fail it)."""
        self.p.terminate()
        try:
            rc = self.p.wait(10 * SLOWDOWN)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("%s did not stop on SIGTERM" % self.kind)
        if rc != 0:
            with open(self.log) as f:
                fail("%s exited %d on SIGTERM: %s" % (self.kind, rc, f.read()[-3000:]))


def check_starve(kind, nslow, seconds):
    slow = Slow(nslow, 2.0)
    slow.start()
    time.sleep(1.0)
    lim = 2.0 * SLOWDOWN
    res = []
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        res.append(get(timeout=lim + 3))
        time.sleep(0.25)
    slow.stop = True
    slow.join()
    n = len(res)
    good = sum(1 for st, dt in res if st == 200 and dt <= lim)
    bad = [r for r in res if r[0] != 200]
    worst = max(dt for _, dt in res)
    print("# %s: %d slow clients, %d scrapes in %d s: %d answered within %.1f s, "
          "%d failed, slowest %.2f s; slow connections closed by the server: %d"
          % (kind, nslow, n, seconds, good, lim, len(bad), worst, slow.closed), flush=True)
    if bad or good < 0.99 * n:
        fail("%s: %d of %d scrapes within %.1f s, %d failed (%s) with %d slow clients"
             % (kind, good, n, lim, len(bad), bad[:5], nslow))
    ok("%s: %d of %d scrapes answered within %.1f s with %d slow clients attached"
       % (kind, good, n, lim, nslow))
    if seconds >= DEADLINE + 3:
        early = [t for t in slow.lifetimes if t < DEADLINE - 0.5]
        if not slow.lifetimes or early:
            fail("%s: slow clients closed after %s s (want ~%.0f s, the request deadline)"
                 % (kind, sorted(slow.lifetimes)[:5], DEADLINE))
        late = max(slow.lifetimes)
        if late > DEADLINE + 2.5 * SLOWDOWN:
            fail("%s: a slow client lived %.1f s (deadline %.0f s)" % (kind, late, DEADLINE))
        ok("%s: %d slow clients closed by the request deadline after %.1f-%.1f s"
           % (kind, len(slow.lifetimes), min(slow.lifetimes), late))


def check_cap(kind):
    held = []
    for _ in range(CAP):
        held.append(socket.create_connection(("127.0.0.1", PORT), timeout=2,
                                             source_address=("127.0.2.1", 0)))
    time.sleep(0.2)
    over = socket.create_connection(("127.0.0.1", PORT), timeout=2,
                                    source_address=("127.0.2.1", 0))
    over.settimeout(1.0 * SLOWDOWN)
    try:
        closed = over.recv(1) == b""
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    st, _ = get(timeout=2 * SLOWDOWN)
    alive = 0
    for s in held:
        s.setblocking(False)
        try:
            alive += s.recv(1) != b""
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    for s in held + [over]:
        s.close()
    if not closed or st != 200 or alive != CAP:
        fail("%s: connection %d from one address %s; %d of %d held alive; scrape %d"
             % (kind, CAP + 1, "closed" if closed else "kept", alive, CAP, st))
    ok("%s: connection %d from one address closed at once, its %d others kept, "
       "another address served" % (kind, CAP + 1, CAP))


def check_hold(kind, n, pid):
    """n idle connections (more than the limit): a scrape waits, it is not reset."""
    held = []
    for i in range(n):
        s = socket.socket()
        s.bind((src(10000 + i // (CAP - 1)), 0))
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", PORT))
        except BlockingIOError:
            pass
        held.append(s)
    time.sleep(1.0)
    print("# %s with %d idle connections: threads %s, RSS %s" % ((kind, n) + threads_of(pid)),
          flush=True)
    st, dt = get(timeout=DEADLINE * 3 * SLOWDOWN)
    for s in held:
        s.close()
    if st != 200:
        fail("%s: with %d idle connections a scrape failed after %.1f s" % (kind, n, dt))
    ok("%s: with %d idle connections a scrape waited %.1f s and was answered" % (kind, n, dt))


def check_gets(kind, n):
    res = [None] * n
    go = threading.Event()

    def one(i):
        go.wait()
        res[i] = get(timeout=60, source=src(20000 + i // (CAP - 1)))

    th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in th:
        t.start()
    t0 = time.monotonic()
    go.set()
    for t in th:
        t.join()
    bad = sum(1 for st, _ in res if st != 200)
    print("# %s: %d concurrent GETs in %.1f s: %d not answered 200, slowest %.2f s"
          % (kind, n, time.monotonic() - t0, bad, max(dt for _, dt in res)), flush=True)
    if bad:
        fail("%s: %d of %d concurrent GETs refused or failed" % (kind, bad, n))
    ok("%s: %d concurrent GETs, none refused" % (kind, n))


def threads_of(pid):
    """(threads, RSS) of a process."""
    st = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            st[k] = v.strip()
    return st.get("Threads"), st.get("VmRSS")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sockdiag")
    ap.add_argument("--slow", type=int, default=200)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--only")
    ap.add_argument("--gets", type=int, default=0)
    ap.add_argument("--hold", type=int, default=0)
    ap.add_argument("--inner", action="store_true")
    a = ap.parse_args()
    if not a.inner:
        if os.geteuid() != 0 or not shutil.which("unshare"):
            print("SKIP(netns): needs root and unshare")
            sys.exit(77)
        os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv + ["--inner"])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("exporter", "guard"):
            if a.only and a.only != kind:
                continue
            d = Daemon(a.sockdiag, kind, tmp)
            try:
                check_starve(kind, a.slow, a.seconds)
                print("# %s after the slow clients: threads %s, RSS %s"
                      % ((kind,) + threads_of(d.p.pid)), flush=True)
                if a.gets:
                    check_gets(kind, a.gets)
                    print("# %s after the GETs: threads %s, RSS %s"
                          % ((kind,) + threads_of(d.p.pid)), flush=True)
                check_cap(kind)
                if a.hold and kind == "exporter":     # the same http.c serves both
                    check_hold(kind, a.hold, d.p.pid)
            except BaseException:
                d.p.kill()
                raise
            d.close()
    print("# checks: %d passed, 0 failed, 0 skipped" % NPASS, flush=True)


if __name__ == "__main__":
    main()
