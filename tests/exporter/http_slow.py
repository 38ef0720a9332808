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
  - 40 slow clients from the scraper's own address (127.0.0.1), more than the
    per-address cap (32): 15 scrapes from that address all answered within 2 s;
  - a kept-alive connection (after "/" and after "/metrics") whose next request
    trickles in is closed by the header deadline, 5 s after the response;
  - at the per-address cap (32 silent connections from one address), one more
    connection from it that sends its request is answered, and the oldest silent
    one, only it, is closed for it;
  - with --hold N (the exporter only: the same http.c serves both): N connections
    (more than the server's limit, 2048) held open without a byte: a scrape made then
    waits in the listen queue and is answered (not reset) once the deadline frees a
    slot;
  - with --gets N (by hand): N concurrent GETs from many addresses, none refused.
Exit 77 (skip) without root or unshare.
"""
import argparse
import os
import re
import resource
import selectors
import shutil
import signal
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
    """N connections that each send a byte every `every` s, reconnecting when closed; from
    127.0.1.0/24 (PER_ADDR per address), or all from `source`."""

    def __init__(self, n, every, source=None):
        super().__init__(daemon=True)
        self.n, self.every, self.stop, self.source = n, every, False, source
        self.conns = {}         # fd -> [socket, index, bytes sent, opened at]
        self.closed = 0
        self.lifetimes = []     # seconds from connect to being closed by the server
        self.sel = selectors.DefaultSelector()

    def open(self, i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((self.source or src(i // PER_ADDR), 0))
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
    """CAP silent connections from one address, then one more from it that sends its request:
    it is answered, and the oldest silent one (only it) is closed for it."""
    held = []
    for _ in range(CAP):
        held.append(socket.create_connection(("127.0.0.1", PORT), timeout=2,
                                             source_address=("127.0.2.1", 0)))
    time.sleep(0.2)
    st_over, _ = get(timeout=2 * SLOWDOWN, source="127.0.2.1")
    alive = []
    for s in held:
        s.setblocking(False)
        try:
            alive.append(s.recv(1) != b"")
        except BlockingIOError:
            alive.append(True)
        except OSError:
            alive.append(False)
    st, _ = get(timeout=2 * SLOWDOWN)
    for s in held:
        s.close()
    if st_over != 200 or alive != [False] + [True] * (CAP - 1) or st != 200:
        fail("%s: connection %d from one address got %d; of the %d silent ones before it, "
             "alive: %s (want all but the first); another address got %d"
             % (kind, CAP + 1, st_over, CAP, "".join("1" if x else "0" for x in alive), st))
    ok("%s: connection %d from one address served, the oldest of its %d silent ones closed "
       "for it, the others kept" % (kind, CAP + 1, CAP))


def slow_process(n, every, source):
    """Slow clients in a child process (its own interpreter lock: their reconnections never
    hold the scraper up between its connect and its request). Returns its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            Slow(n, every, source).run()
        finally:
            os._exit(0)
    return pid


def read_response(s):
    """One response on a kept-alive connection: its status (0: none)."""
    data = b""
    while b"\r\n\r\n" not in data:
        b = s.recv(65536)
        if not b:
            return 0
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    want = int(m.group(1)) if m else 0
    while len(body) < want:
        b = s.recv(65536)
        if not b:
            return 0
        body += b
    return int(head.split(b" ", 2)[1])


def keepalive_dribble(path, source, out):
    """A first request answered on a kept-alive connection, then the next one dribbled (a
    byte every 0.5 s): out gets (status of the first, seconds from its response until the
    server closed the connection, or None when it was still open after DEADLINE + 6 s)."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5 * SLOWDOWN,
                                 source_address=(source, 0))
    try:
        s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        st = read_response(s)
        t0 = time.monotonic()
        s.settimeout(0.5)
        for i in range(int((DEADLINE + 6) / 0.5)):
            try:
                s.send(REQ[i:i + 1])
                if s.recv(4096) == b"":
                    out.append((st, time.monotonic() - t0))
                    return
            except socket.timeout:
                pass
            except OSError:
                out.append((st, time.monotonic() - t0))
                return
        out.append((st, None))
    finally:
        s.close()


def check_keepalive_start():
    """The header deadline of the next request on a kept-alive connection, after "/" and
    after "/metrics" (suspended, rendered by a scrape thread): threads, joined by
    check_keepalive_end()."""
    res = {}
    th = []
    for i, path in enumerate((b"/", b"/metrics")):
        res[path] = []
        th.append(threading.Thread(target=keepalive_dribble, daemon=True,
                                   args=(path, "127.0.3.%d" % (i + 1), res[path])))
        th[-1].start()
    return th, res


def check_keepalive_end(kind, started):
    th, res = started
    for t in th:
        t.join()
    for path, r in res.items():
        st, dt = r[0] if r else (0, None)
        if st != 200 or dt is None or dt < DEADLINE - 0.5 or dt > DEADLINE + 2.5 * SLOWDOWN:
            fail("%s: kept-alive connection after %s (status %d): the next request dribbled "
                 "was %s (want closed %.0f s after the response, the header deadline)"
                 % (kind, path.decode(), st,
                    "never closed" if dt is None else "closed after %.1f s" % dt, DEADLINE))
        ok("%s: kept alive after %s, the next request's headers dribbled: closed %.1f s "
           "after the response" % (kind, path.decode(), dt))


def check_same_addr(kind, nslow, nscrapes):
    """nslow slow clients from the scraper's own address (127.0.0.1: a proxy's SNAT, a process
    on the Prometheus host), more than its cap: every scrape is answered within 2 s."""
    pid = slow_process(nslow, 2.0, "127.0.0.1")
    res = []
    try:
        time.sleep(1.0)
        lim = 2.0 * SLOWDOWN
        for _ in range(nscrapes):
            res.append(get(timeout=lim + 3))
            time.sleep(0.3)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    good = sum(1 for st, dt in res if st == 200 and dt <= lim)
    print("# %s: %d slow clients from 127.0.0.1: %d of %d scrapes from it answered within "
          "%.1f s, slowest %.2f s" % (kind, nslow, good, len(res), lim,
                                      max(dt for _, dt in res)), flush=True)
    if good != len(res):
        fail("%s: with %d slow clients on the scraper's address, %d of %d scrapes answered "
             "within %.1f s: %s" % (kind, nslow, good, len(res), lim, res))
    ok("%s: %d slow clients on the scraper's own address: %d of %d scrapes answered"
       % (kind, nslow, good, len(res)))


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
    ap.add_argument("--same-addr", type=int, default=40)
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
                ka = check_keepalive_start()
                check_same_addr(kind, a.same_addr, 15)
                check_keepalive_end(kind, ka)
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
