#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag drain against what scripts do today (a 1 s poll loop over ss), by hand:

    sudo bench/drain/run.py [SOCKDIAG] [RUNS] [IDLE] [SECONDS]

(defaults build/cli/sockdiag, 100, 10000, 10). It re-executes itself in a private network
namespace (unshare -n): every socket is its own. Two measures:

1. latency: RUNS times, 10 connections on a port, the waiter started and seen waiting,
   9 closed, then after a random 10 ms to 1 s the last one closed, timestamped
   (CLOCK_MONOTONIC) right before its close; the latency is the time from there to the waiter's exit seen by wait()
   (an upper bound: wait() returns after the exit). p50, p99, max. The ss loop gets
   RUNS // 5 runs (each takes up to a second).
2. CPU while waiting: IDLE idle connections (the server ends of IDLE pairs, the clients'
   ends in a child process), the waiter
   left waiting SECONDS, then killed (SIGTERM) and its CPU time (user + system, its
   children included: ss) taken from wait4().
3. --max-age lateness: RUNS // 5 times, one connection, `drain --max-age 300ms`; the time
   from drain's start line (written right before its first dump, whose time the age counts
   from) to the client's reset, minus 300 ms. p50, p99, max.
"""
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import time

SD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/sockdiag")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
IDLE = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
SECONDS = float(sys.argv[4]) if len(sys.argv) > 4 else 10
SS_LOOP = "while ss -Htn state established '( sport = :%d )' | grep -q .; do sleep 1; done"


def listen_on(port, backlog):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", port))
    l.listen(backlog)
    return l


def pairs(l, n):
    out = []
    for _ in range(n):
        c = socket.create_connection(l.getsockname())
        out.append((c, l.accept()[0]))
    return out


def start(kind, port):
    if kind == "drain":
        p = subprocess.Popen([SD, "drain", "--json", "sport = :%d" % port],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in p.stdout:  # the first progress line: the first dump done
            if '"progress"' in line:
                break
        return p
    p = subprocess.Popen(["sh", "-c", SS_LOOP % port])
    time.sleep(0.05)  # its first ss has run (it runs in ~5 ms): a loop has no signal
    return p


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def latency(kind, runs, port):
    l = listen_on(port, 128)
    lat = []
    for _ in range(runs):
        ps = pairs(l, 10)
        p = start(kind, port)
        for c, a in ps[:-1]:
            c.close()
            a.close()
        # The last close at a random point of the ss loop's second (a close right
        # after one of its checks is its worst case, right before its best).
        time.sleep(random.uniform(0.01, 1.0))
        if p.poll() is not None:
            raise SystemExit("%s: returned while one connection was open" % kind)
        t = time.monotonic()
        ps[-1][1].close()
        ps[-1][0].close()
        p.wait()
        lat.append((time.monotonic() - t) * 1000)
    l.close()
    return lat


def cpu(kind, port):
    """The clients in a child process: each side holds IDLE descriptors (the hard
    limit on open files may be below 2 * IDLE and not raisable)."""
    l = listen_on(port, 4096)
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(w)
        cs = [socket.create_connection(("127.0.0.1", port)) for _ in range(IDLE)]
        os.read(r, 1)  # until the parent is done
        os._exit(0 if cs else 1)
    os.close(r)
    accepted = [l.accept()[0] for _ in range(IDLE)]
    p = start(kind, port)
    time.sleep(SECONDS)
    os.kill(p.pid, signal.SIGTERM)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    for a in accepted:
        a.close()
    os.close(w)
    os.waitpid(child, 0)
    l.close()
    return (ru.ru_utime + ru.ru_stime) * 1000


def max_age(runs, port, age=0.3):
    l = listen_on(port, 16)
    late = []
    for _ in range(runs):
        (c, a), = pairs(l, 1)
        p = subprocess.Popen([SD, "drain", "--json", "--max-age", "%dms" % (age * 1000),
                              "sport = :%d" % port], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        p.stdout.readline()  # the start line
        t = time.monotonic()
        c.settimeout(5)
        try:
            c.recv(1)
            raise SystemExit("--max-age: the client saw no reset")
        except ConnectionResetError:
            late.append((time.monotonic() - t - age) * 1000)
        p.wait()
        c.close()
        a.close()
    l.close()
    return late


def main():
    if os.environ.get("SDIAG_BENCH_INNER") != "1":
        os.environ["SDIAG_BENCH_INNER"] = "1"
        os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < IDLE + 1024:
        raise SystemExit("RLIMIT_NOFILE %d: too low for %d connections" % (hard, IDLE))
    print("| waiter | runs | latency p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for kind, runs, port in (("drain", RUNS, 7100), ("ss loop (1 s)", max(RUNS // 5, 1), 7101)):
        lat = latency("drain" if kind == "drain" else "ss", runs, port)
        print("| %s | %d | %.2f | %.2f | %.2f |" % (kind, runs, pct(lat, .5), pct(lat, .99),
                                                  max(lat)))
    print()
    print("| waiter | idle connections | seconds | CPU ms | CPU ms/s |")
    print("|---|---:|---:|---:|---:|")
    for kind, port in (("drain", 7102), ("ss loop (1 s)", 7103)):
        ms = cpu("drain" if kind == "drain" else "ss", port)
        print("| %s | %d | %g | %.1f | %.2f |" % (kind, IDLE, SECONDS, ms, ms / SECONDS))
    late = max_age(max(RUNS // 5, 1), 7104)
    print()
    print("| --max-age 300ms | runs | reset after the crossing p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    print("| drain | %d | %.2f | %.2f | %.2f |" % (len(late), pct(late, .5), pct(late, .99),
                                                 max(late)))


if __name__ == "__main__":
    main()
