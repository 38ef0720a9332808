#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Python module's benchmark (issue 27), run by pybench.sh inside a private
namespace holding mkpairs' sockets: pybench.py BUILD_PYTHON_DIR SOCKDIAG RUNS.

Times, interleaved round-robin after one untimed warm-up, each way of getting
the namespace's TCP sockets into Python: sockdiag.connections("tcp") (and
iter_connections, count_by), psutil.net_connections("tcp"), pyroute2's
DiagSocket dump of both families, and `sockdiag list -tan --ndjson` (the CLI
writing to /dev/null, fork+exec included). Prints a markdown table with wall
minimum and median and each one's ratio to connections("tcp").

Environment: PYBENCH_BASE, the python/ directory of another build: its
connections("tcp") and iter_connections run too (cases base_connections,
base_iter), each in a child interpreter that times the call itself (two
modules named sockdiag cannot share a process), so before and after are
measured in one run. PYBENCH_SKIP: case names to leave out ("psutil
pyroute2": a few seconds each)."""
import gc
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, sys.argv[1])
import sockdiag  # noqa: E402
import psutil  # noqa: E402
from pyroute2 import DiagSocket  # noqa: E402
from socket import AF_INET, AF_INET6  # noqa: E402

CLI = sys.argv[2]
RUNS = int(sys.argv[3])


def pyroute2_tcp():
    with DiagSocket() as ds:
        ds.bind()
        return len(ds.get_sock_stats(family=AF_INET)) + len(ds.get_sock_stats(family=AF_INET6))


BASE = os.environ.get("PYBENCH_BASE")
SKIP = set(os.environ.get("PYBENCH_SKIP", "").split())
# VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's peak.
TIMED = """import sys, time
sys.path.insert(0, sys.argv[1])
import sockdiag
def hwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
r0 = hwm()
t = time.perf_counter()
n = %s
t = time.perf_counter() - t
print(n, t, hwm() - r0)"""
RSS = {}  # expr, pydir -> the peak RSS growths (KiB) of its children


def in_child(pydir, expr):
    """(sockets, seconds) of expr, timed inside a child interpreter; the growth
    of the child's peak RSS during the call is kept in RSS."""
    out = subprocess.run([sys.executable, "-c", TIMED % expr, pydir], check=True,
                         stdout=subprocess.PIPE, text=True).stdout.split()
    RSS.setdefault((expr, pydir), []).append(int(out[2]))
    return int(out[0]), float(out[1])


CASES = [
    ("connections", 'sockdiag.connections("tcp")', lambda: len(sockdiag.connections("tcp"))),
    ("iter", 'sum(1 for _ in sockdiag.iter_connections("tcp"))',
     lambda: sum(1 for _ in sockdiag.iter_connections("tcp"))),
    ("count_by", 'sockdiag.count_by("status", "tcp")',
     lambda: sum(sockdiag.count_by("status", "tcp").values())),
    ("cli", "`sockdiag list -tan --ndjson >/dev/null`",
     lambda: subprocess.run([CLI, "list", "-tan", "--ndjson"], stdout=subprocess.DEVNULL,
                            check=True) and None),
    ("psutil", 'psutil.net_connections("tcp")', lambda: len(psutil.net_connections("tcp"))),
    ("pyroute2", "pyroute2 DiagSocket.get_sock_stats(AF_INET) + (AF_INET6)", pyroute2_tcp),
    ("child_connections", 'connections("tcp") in a child interpreter, timed there',
     lambda: in_child(sys.argv[1], 'len(sockdiag.connections("tcp"))')),
    ("child_iter", 'sum(1 for _ in iter_connections("tcp")) in a child, timed there',
     lambda: in_child(sys.argv[1], 'sum(1 for _ in sockdiag.iter_connections("tcp"))')),
]
if BASE:
    CASES += [
        ("base_connections", 'connections("tcp") of PYBENCH_BASE, in a child, timed there',
         lambda: in_child(BASE, 'len(sockdiag.connections("tcp"))')),
        ("base_iter", 'sum(1 for _ in iter_connections("tcp")) of PYBENCH_BASE, in a child',
         lambda: in_child(BASE, 'sum(1 for _ in sockdiag.iter_connections("tcp"))')),
    ]
CASES = [c for c in CASES if c[0] not in SKIP]


def main():
    times = {name: [] for name, _, _ in CASES}
    counts = {}
    for rnd in range(RUNS + 1):
        for name, _, fn in CASES:
            if name in ("psutil", "pyroute2") and rnd > 3:
                continue  # slow: 3 timed runs are enough
            gc.collect()  # nobody pays for another case's garbage
            t = time.perf_counter()
            n = fn()
            t = time.perf_counter() - t
            if isinstance(n, tuple):
                n, t = n  # timed by the child
            counts[name] = n
            if rnd:
                times[name].append(t)
    base = min(times["connections"])
    print("| case | what | sockets | runs | wall min s | wall median s | x connections (min) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, desc, _ in CASES:
        ts = times[name]
        print("| %s | %s | %s | %d | %.4f | %.4f | %.2f |" % (
            name, desc, counts[name] if counts[name] is not None else "-", len(ts), min(ts),
            statistics.median(ts), min(ts) / base))
    if RSS:
        print()
        print("| child | build | peak RSS growth during the call, KiB: min | median | max |")
        print("|---|---|---:|---:|---:|")
        for (expr, pydir), v in RSS.items():
            print("| %s | %s | %d | %d | %d |" % (expr, pydir, min(v), statistics.median(v),
                                                 max(v)))


if __name__ == "__main__":
    main()
