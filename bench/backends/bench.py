#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Dead-backend benchmarks (bench/backends/run.sh runs this in a private network
namespace with large per-namespace hash tables; never on the host).

  sockets  N TCP pairs to B backends 10.0.0.1:1000.. (N/B each), D of them dead:
           one pass (`kill --dead-backends --dry-run`, then a real one), its bytes
           read from the kernel (strace) against one dump per dead backend,
           unfiltered (as Cilium) and filtered; the hash path (>128 backends).
  change   the guard (backend-interval = 0), C file changes: each makes one more
           backend dead (PAIRS pairs each); time from the rename to the destroy of a
           probe client.
  conntrack E UDP conntrack entries, 1% to 10 dead backends: `kill --conntrack
           --dead-backends` against `conntrack -D` per backend; entries removed.

usage: bench.py SOCKDIAG {sockets N B D RUNS | change C PAIRS | conntrack E RUNS}"""
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pipe, Process

SD = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="sockdiag-bench-backends-")


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def worker(conn, ports, per_port):
    """per_port pairs to each port (listeners made by the worker): sleeps until killed."""
    keep = []
    for p in ports:
        l = socket.socket()
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        l.bind(("10.0.0.1", p))
        l.listen(4096)
        keep.append(l)
        for _ in range(per_port):
            # No bind(): connect() picks a port unique for the 4-tuple (a
            # bind to port 0 searches the whole range, slower as it fills).
            c = socket.socket()
            c.connect(("10.0.0.1", p))
            keep.append(c)
            keep.append(l.accept()[0])
    conn.send(len(keep))
    signal.pause()


def population(n_pairs, n_backends):
    """n_pairs pairs over n_backends ports, in processes of <= 9000 pairs."""
    per_port = n_pairs // n_backends
    ports = list(range(1000, 1000 + n_backends))
    per_worker = max(1, 9000 // per_port)
    procs = []
    for i in range(0, len(ports), per_worker):
        a, b = Pipe()
        p = Process(target=worker, args=(b, ports[i:i + per_worker], per_port), daemon=True)
        p.start()
        procs.append((p, a))
    total = sum(a.recv() for _, a in procs)
    return procs, total


def stop(procs):
    for p, _ in procs:
        p.terminate()
        p.join()


def timed(args, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(args, capture_output=True, text=True)
        out.append((time.perf_counter() - t) * 1000)
    return out, r


def bytes_read(args):
    """Bytes recv() returned to the process (strace), and its stderr."""
    log = os.path.join(TMP, "strace")
    r = subprocess.run(["strace", "-f", "-e", "trace=recvfrom,recvmsg", "-o", log] + args,
                       capture_output=True, text=True)
    total = 0
    with open(log) as f:
        for line in f:
            m = re.search(r"\) = (\d+)$", line)
            if m:
                total += int(m.group(1))
    return total, r


def write(name, lines):
    path = os.path.join(TMP, name)
    with open(path + ".tmp", "w") as f:
        f.write("".join(l + "\n" for l in lines))
    os.rename(path + ".tmp", path)
    return path


def ms(v):
    return "median %.1f ms (min %.1f, max %.1f, %d runs)" % (statistics.median(v), min(v),
                                                              max(v), len(v))


def bench_sockets(n_pairs, n_backends, n_dead, runs):
    procs, total = population(n_pairs, n_backends)
    print("population: %d sockets (%d pairs over %d backends), %d backends dead" %
          (total, n_pairs, n_backends, n_dead))
    dead = ["10.0.0.1:%d/tcp" % (1000 + i) for i in range(n_dead)]
    f = write("dead", dead)
    t, r = timed([SD, "kill", "--dry-run", "--dead-backends", f], runs)
    print("pass, kernel filter (%d backends), dry run: %s; %s" % (n_dead, ms(t),
                                                                r.stderr.strip()))
    filler = ["10.9.%d.%d:80/tcp" % (i // 250, i % 250) for i in range(200)]
    fh = write("dead-hash", dead + filler)
    th, r = timed([SD, "kill", "--dry-run", "--dead-backends", fh], runs)
    print("pass, hash lookup (%d backends), dry run: %s; %s" % (n_dead + 200, ms(th),
                                                              r.stderr.strip()))
    b_ours, _ = bytes_read([SD, "kill", "--dry-run", "--dead-backends", f])
    b_hash, _ = bytes_read([SD, "kill", "--dry-run", "--dead-backends", fh])
    # One unfiltered dump per backend reads the same bytes each time: one is
    # measured and multiplied. The filtered ones differ: each is run.
    b_one, _ = bytes_read([SD, "list", "-tuan"])
    b_full = b_one * n_dead
    b_filt = 0
    t0 = time.perf_counter()
    for i in range(n_dead):
        b, _ = bytes_read([SD, "list", "-tuan", "dst 10.0.0.1:%d" % (1000 + i)])
        b_filt += b
    t_filt = (time.perf_counter() - t0) * 1000
    tf, _ = timed([SD, "list", "-tuan"], runs)
    print("bytes read from the kernel: one pass %d (hash path %d); one dump per backend: "
          "unfiltered %d x %d = %d (%.0fx ours; one such dump takes %s), filtered %d "
          "(%.2fx ours, %.0f ms for the %d under strace)" %
          (b_ours, b_hash, b_one, n_dead, b_full, b_full / b_ours, ms(tf), b_filt,
           b_filt / b_ours, t_filt, n_dead))
    t, r = timed([SD, "kill", "--dead-backends", f], 1)
    print("pass, destroying: %.1f ms; %s" % (t[0], r.stderr.strip()))
    stop(procs)


def bench_change(changes, per_backend):
    """The guard, interval 0: each change lists one more backend; a probe per backend."""
    n_backends = changes
    procs, total = population(per_backend * n_backends, n_backends)
    probes = []
    for i in range(n_backends):
        c = socket.socket()
        c.connect(("10.0.0.1", 1000 + i))
        probes.append(c)
    path = write("dead", [])
    conf = os.path.join(TMP, "guard.conf")
    with open(conf, "w") as f:
        f.write("dead-backends = %s\nbackend-interval = 0\n" % path)
    log = open(os.path.join(TMP, "guard.log"), "w")
    g = subprocess.Popen([SD, "guard", "-c", conf], stderr=log)
    time.sleep(1)
    lat = []
    for i in range(changes):
        t0 = time.perf_counter()
        write("dead", ["10.0.0.1:%d/tcp" % (1000 + j) for j in range(i + 1)])
        while probes[i].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 103:
            time.sleep(0.0005)
            if time.perf_counter() - t0 > 10:
                break
        lat.append((time.perf_counter() - t0) * 1000)
    g.send_signal(signal.SIGTERM)
    g.wait()
    lat.sort()
    print("population: %d sockets; %d changes, each one more dead backend (%d pairs)" %
          (total, changes, per_backend))
    print("file change -> probe destroyed: p50 %.1f ms, p99 %.1f ms, max %.1f ms" %
          (lat[len(lat) // 2], lat[max(0, int(len(lat) * 0.99) - 1)], lat[-1]))
    stop(procs)


def ct_count():
    r = subprocess.run(["conntrack", "-C"], capture_output=True, text=True)
    return int(r.stdout.strip())


def ct_population(n):
    """n UDP entries to 10.1.0.0/16:53, 1% of them to the 10 dead backends."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dead = n // 100
    for i in range(n - dead):
        a = 256 + i % 60000
        s.sendto(b"x", ("10.1.%d.%d" % (a // 256, a % 256), 53 + i // 60000))
    socks = []
    for i in range(dead):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(b"x", ("10.1.255.%d" % (1 + i % 10), 53))
        socks.append(u)
    for u in socks:
        u.close()
    s.close()


def bench_conntrack(n, runs):
    sh("ip route add local 10.1.0.0/16 dev lo")
    sh("sysctl -qw net.netfilter.nf_conntrack_udp_timeout=600")
    sh("nft add table inet t && nft add chain inet t o '{ type filter hook output priority 0; }'"
       " && nft add rule inet t o ct state new,established accept")
    dead = ["10.1.255.%d:53/udp" % i for i in range(1, 11)]
    f = write("dead", dead)
    ours, theirs = [], []
    for run in range(runs):
        for mode in ("ours", "conntrack -D"):
            sh("conntrack -F 2>/dev/null")
            ct_population(n)
            before = ct_count()
            t0 = time.perf_counter()
            if mode == "ours":
                r = subprocess.run([SD, "kill", "--conntrack", "--dead-backends", f],
                                   capture_output=True, text=True)
            else:
                for d in dead:
                    subprocess.run(["conntrack", "-D", "-p", "udp", "--orig-dst",
                                    d.split(":")[0], "--dport", "53"], capture_output=True)
            dt = (time.perf_counter() - t0) * 1000
            after = ct_count()
            (ours if mode == "ours" else theirs).append(dt)
            print("run %d %s: %.1f ms, %d entries -> %d (removed %d)%s" %
                  (run + 1, mode, dt, before, after, before - after,
                   "; " + r.stderr.strip() if mode == "ours" else ""))
    print("kill --conntrack --dead-backends: %s; conntrack -D x10: %s" % (ms(ours), ms(theirs)))


def main():
    what = sys.argv[2]
    if what == "sockets":
        bench_sockets(*(int(x) for x in sys.argv[3:7]))
    elif what == "change":
        bench_change(int(sys.argv[3]), int(sys.argv[4]))
    elif what == "conntrack":
        bench_conntrack(int(sys.argv[3]), int(sys.argv[4]))
    else:
        print(__doc__)
        sys.exit(2)
    shutil.rmtree(TMP, ignore_errors=True)


main()
