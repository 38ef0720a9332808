#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests of cgroups and units in `sockdiag list` and `kill` (run by
run.sh inside a private network namespace). Two "services", a.service and
b.service (their names prefixed with this run's own tag) under a unique test slice below the cgroup2 mount (found in
/proc/self/mountinfo), each a process holding a TCP listener, connections to
it and a UDP socket: --count-by unit,state matches the population, cgroup and
unit filters select exactly theirs, cgroup/unit on unix sockets is refused,
a removed cgroup shows its id, and `kill unit a.service` leaves b's sockets
alive. The slice is removed afterwards. Usage: cgroup.py PATH-TO-SOCKDIAG."""
import json
import os
import re
import subprocess
import sys
import time

SD = sys.argv[1]
# Unit names of this run's own: `-N unit:NAME`, `unit NAME` and `kill` act on
# every cgroup of that name on the host, so another checkout's run of this
# test (or a leftover) must never share them.
# Short: a -N cgroup:PATH label holds 63 bytes (longer paths keep their end).
TAG = "k" + os.urandom(3).hex()
A, B, C, D = (TAG + n for n in ("a.service", "b.service", "c.service", "d.service"))
# A cgroup whose path does not fit a namespace label (64 bytes).
DEEP = "container-" + "0123456789abcdef" * 4 + ".scope"
failures = []
passes = []

CHILD = r"""
import os, socket, sys
cg, port, nconn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(os.path.join(cg, "cgroup.procs"), "w") as f:
    f.write(str(os.getpid()))
if os.environ.get("OWN_NETNS"):   # a "container": its own network namespace
    import ctypes, subprocess
    if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0:
        sys.exit("unshare failed")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
keep = []
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(16); keep.append(l)
for _ in range(nconn):
    keep.append(socket.create_connection(("127.0.0.1", port)))
    keep.append(l.accept()[0])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", port)); keep.append(u)
if len(sys.argv) > 4:      # then leave the cgroup, so that it can be removed
    with open(os.path.join(sys.argv[4], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
print("ready", flush=True)
sys.stdin.read()
"""


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    else:
        passes.append(what)


def run(*args):
    p = subprocess.run([SD] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    return None


def spawn(cg, port, nconn, leave_to=None, own_netns=False):
    args = [sys.executable, "-c", CHILD, cg, str(port), str(nconn)] + ([leave_to] if leave_to else [])
    env = dict(os.environ, OWN_NETNS="1") if own_netns else None
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    check(p.stdout.readline().strip() == "ready", "child in %s did not start" % cg)
    return p


def counts(*extra):
    rc, out, err = run("list", "-tuan", "--json", *extra)
    check(rc == 0, "list %s: exit %d %s" % (extra, rc, err))
    return {tuple(v for k, v in row.items() if k != "count"): row["count"]
            for row in json.loads(out)}


def cookies(*args):
    rc, out, err = run("list", "-tuan", "--json", *args)
    check(rc == 0, "list %s: exit %d %s" % (args, rc, err))
    return sorted(s["cookie"] for s in json.loads(out))


def main():
    root = cgroup2_mount()
    if not root:
        print("SKIP(cgroup2): no cgroup2 mount")
        return 77
    slice_ = TAG + ".slice"
    base = os.path.join(root, slice_)
    dirs = [base] + [os.path.join(base, d) for d in (A, B, C, "rest", D, DEEP)]
    kids = []
    try:
        for d in dirs:
            os.mkdir(d)
    except OSError as e:
        print("SKIP(cgroup2): cannot create test cgroups: %s" % e)
        for d in reversed(dirs):
            if os.path.isdir(d):
                os.rmdir(d)
        return 77
    try:
        kids.append(spawn(dirs[1], 8001, 3))
        kids.append(spawn(dirs[2], 8002, 2))
        netns_checks(slice_, dirs, kids)
        run_checks(slice_, dirs, kids)
    finally:
        for k in kids:
            k.kill()
            k.wait()
        for d in reversed(dirs):
            if os.path.isdir(d):
                os.rmdir(d)
    return 1 if failures else 0


def run_checks(slice_, dirs, kids):
    a_rel, b_rel = "/%s/%s" % (slice_, A), "/%s/%s" % (slice_, B)

    # --count-by unit,state is exactly the population.
    want = {(A, "LISTEN"): 1, (A, "ESTAB"): 6, (A, "UNCONN"): 1,
            (B, "LISTEN"): 1, (B, "ESTAB"): 4, (B, "UNCONN"): 1}
    got = counts("--count-by", "unit,state")
    check(got == want, "count-by unit,state: %s" % got)
    got = counts("--count-by", "cgroup")
    check(got == {(a_rel,): 8, (b_rel,): 6}, "count-by cgroup: %s" % got)
    got = counts("--count-by", "unit,state", "unit " + B)
    check(got == {k: v for k, v in want.items() if k[0] == B},
          "count-by with a filter: %s" % got)
    rc, out, err = run("list", "-tuan", "--count-by", "unit,state")
    rows = [l.split() for l in out.splitlines()]
    check(rc == 0 and rows[0] == ["UNIT", "STATE", "COUNT"] and
          [A, "ESTAB", "6"] in rows and len(rows) == 7, "count-by table: %r" % out)

    # Filters: exact, subtree, unit, kernel and user space alike.
    a = cookies("cgroup", a_rel)
    b = cookies("unit " + B)
    check(len(a) == 8 and len(b) == 6 and not set(a) & set(b), "a %s b %s" % (a, b))
    check(cookies("--no-kernel-filter", "cgroup", a_rel) == a, "user space: cgroup a")
    check(cookies("cgroup", "/%s/**" % slice_) == sorted(a + b), "subtree")
    check(cookies("--no-kernel-filter", "cgroup", "/%s/**" % slice_) == sorted(a + b),
          "subtree, user space")
    check(cookies("cgroup", "/" + slice_) == [], "exact slice: nobody lives there")
    check(cookies("unit", slice_) == sorted(a + b), "unit slice")

    # Errors: exit 2, one clear line.
    rc, _, err = run("list", "-x", "unit " + A)
    check(rc == 2 and "unix sockets carry no cgroup" in err, "unix + unit: %d %s" % (rc, err))
    rc, _, err = run("list", "-t", "unit no-such-%d.service" % os.getpid())
    check(rc == 2 and "no cgroup named" in err, "unknown unit: %d %s" % (rc, err))
    rc, _, err = run("kill", "-t", "cgroup /no/such/cgroup/%d" % os.getpid())
    check(rc == 2 and "no cgroup '/no/such" in err, "kill, unknown cgroup: %d %s" % (rc, err))

    # --cgroup and -e: "cgroup" (the path) and "cgroup_id" in JSON, cgroup:PATH in text.
    for opt in ("--cgroup", "-e"):
        rc, out, err = run("list", "-tuan", "--json", opt, "unit " + A)
        socks = json.loads(out) if rc == 0 else []
        check(len(socks) == 8 and all(s["cgroup"] == a_rel and s["cgroup_id"] ==
                                      os.stat(dirs[1]).st_ino for s in socks),
              "%s JSON: %d %s %s" % (opt, rc, out[:300], err))
    rc, out, err = run("list", "-tln", "--cgroup", "unit " + B)
    check(rc == 0 and out.splitlines()[1].endswith("cgroup:" + b_rel), "--cgroup text: %r" % out)
    rc, out, err = run("list", "-tln", "--json", "unit " + B)
    check(rc == 0 and '"cgroup' not in out, "no cgroup without --cgroup or -e: %r" % out)

    # A removed cgroup shows its id.
    kids.append(spawn(dirs[3], 8003, 0, leave_to=dirs[4]))
    c_id = os.stat(dirs[3]).st_ino
    os.rmdir(dirs[3])
    got = counts("--count-by", "cgroup", "sport = :8003")
    check(list(got) == [(str(c_id),)], "removed cgroup by id: %s" % got)
    rc, out, err = run("list", "-tuan", "--json", "--cgroup", "sport = :8003")
    socks = json.loads(out) if rc == 0 else []
    check(len(socks) == 2 and all(s["cgroup"] == str(c_id) for s in socks),
          "--cgroup of a removed cgroup: %s" % out)

    # kill unit a.service: a's sockets are gone, b's all alive.
    # (Destroying one end of a connection closes the other: "already gone".)
    rc, out, err = run("kill", "-tuan", "unit " + A)
    m = re.match(r"destroyed (\d+), already gone (\d+),", err)
    m = [int(m.group(1)), int(m.group(2))] if m else []
    check(rc == 0 and len(m) == 2 and sum(m) == 8, "kill unit a.service: %d %s" % (rc, err))
    time.sleep(0.05)
    got = counts("--count-by", "unit,state", "unit %s or unit %s" % (A, B))
    check({k: v for k, v in got.items() if k[0] == B} ==
          {k: v for k, v in want.items() if k[0] == B}, "b after kill: %s" % got)
    # What stays of a: its bound UDP socket (the kernel keeps it hashed) and
    # the bound, closed listener; nothing listens or is connected.
    check(not [k for k in got if k[0] == A and k[1] in ("ESTAB", "LISTEN")],
          "a after kill: %s" % got)
    check(cookies("unit " + B) == b, "b's sockets are the same ones")


def netns_checks(slice_, dirs, kids):
    """-N cgroup:PATH / unit:NAME: the namespaces of the processes there."""
    kids.append(spawn(dirs[5], 8004, 2, own_netns=True))
    d_rel = "/%s/%s" % (slice_, D)
    rc, out, err = run("list", "-tan", "--json", "-N", "cgroup:" + d_rel)
    socks = json.loads(out) if rc == 0 else []
    check(rc == 0 and len(socks) == 5 and
          all(s["netns"].startswith("cgroup:%s pid:" % d_rel) for s in socks) and
          all(8004 in (s["local"]["port"], s["peer"]["port"]) for s in socks),
          "-N cgroup:d: %d %s %s" % (rc, out, err))
    # A path longer than the label: the label keeps "cgroup:" and the path's end,
    # the part that tells containers apart.
    kids.append(spawn(dirs[6], 8005, 1, own_netns=True))
    e_rel = "/%s/%s" % (slice_, DEEP)
    rc, out, err = run("list", "-tan", "--json", "-N", "cgroup:" + e_rel)
    socks = json.loads(out) if rc == 0 else []
    labels = {s["netns"] for s in socks}
    want = re.compile(r"^cgroup:\.\.\.[-0-9a-z]*%s pid:%d$" % (re.escape(DEEP[-20:]),
                                                          kids[-1].pid))
    check(rc == 0 and len(socks) == 3 and len(labels) == 1 and
          all(want.match(l) and len(l) == 63 for l in labels),
          "-N cgroup:<%d bytes>: label %s (%d %s)" % (len(e_rel), labels, rc, err))
    # Two -N: the test's namespace (a.service lives there) and d's.
    rc, out, err = run("list", "-tan", "--json", "--count-by", "netns,unit",
                       "-N", "unit:" + A, "-N", "unit:" + D,
                       "unit %s or unit %s" % (A, D))
    got = {(r["unit"], r["count"]) for r in json.loads(out)} if rc == 0 else set()
    check(got == {(A, 7), (D, 5)}, "-N twice: %d %s %s" % (rc, out, err))
    rc, _, err = run("list", "-tan", "-N", "cgroup:/no/such/%d" % os.getpid())
    check(rc == 2 and "no such cgroup" in err, "-N unknown cgroup: %d %s" % (rc, err))
    rc, _, err = run("kill", "-ta", "-N", "unit:no-such-%d.service" % os.getpid(), "--all")
    check(rc == 2 and "no such cgroup" in err, "kill -N unknown unit: %d %s" % (rc, err))
    rc, out, err = run("kill", "-t", "-N", "unit:" + D, "sport = :8004")
    check(rc == 0 and "destroyed 2," in err, "kill -N unit:%s: %d %s" % (D, rc, err))
    rc, out, err = run("list", "-tn", "-H", "-N", "unit:" + D, "sport = :8004")
    check(rc == 0 and out.strip() == "", "after kill in d: %r" % out)


if __name__ == "__main__":
    rc = main()
    if rc != 77:
        print("# checks: %d passed, %d failed, 0 skipped" % (len(passes), len(failures)))
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(rc)
