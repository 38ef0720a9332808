#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag kill --dead-backends FILE [--conntrack]` (run by run.sh inside a
private network namespace). The test builds its own population on addresses
of lo: TCP and connected UDP clients of dead backends (IPv4, IPv6, v4-mapped),
of live backends, of another port of a dead address, an unconnected UDP
socket that sent to a dead backend, a UDP socket of a TCP-only backend, and a
UDP client of a DNAT'ed service address whose backend is dead, a connected
UDP client of a dead backend that never sent (no conntrack entry: its delete
is answered ENOENT and must not be counted). Its oracle:
SO_ERROR (ECONNABORTED exactly on the sockets it expects destroyed), the
cookies kill reports, and, with --conntrack, `conntrack -L` before and after
differing by exactly the entries it computes. Both the kernel-filter path and
the hash path (more backends than the bytecode takes) are run.
Usage: backends.py PATH-TO-SOCKDIAG."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

from backends_lib import (BACKENDS, Population, conntrack, cookie, expected_ct_removed,
                          setup_namespace)

SD = sys.argv[1]
failures = []
passed = [0]
TMP = None  # made after setup_namespace(), which execs


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    else:
        passed[0] += 1


def run(*args):
    p = subprocess.run([SD] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def t_pass(label, path, ct):
    pop = Population(3)
    before = conntrack() if ct else set()
    args = ["kill", "--dead-backends", path, "--ndjson"] + (["--conntrack"] if ct else [])
    rc, out, err = run(*args)
    recs = [json.loads(x) for x in out.splitlines() if x.strip()]
    check(rc == 0, "%s: exit 0 (got %d: %s)" % (label, rc, err))
    wrong = pop.verdicts()
    check(not wrong, "%s: sockets destroyed exactly as expected; wrong: %s" % (label, wrong))
    check(sorted(r["cookie"] for r in recs) == pop.dead_cookies(),
          "%s: kill reports exactly the dead backends' clients: %s" % (label, out))
    check(all(r.get("result") == "destroyed" for r in recs), label + ": every result destroyed")
    n = len(pop.dead_cookies())
    check(re.search(r"^destroyed %d, already gone 0" % n, err, re.M) is not None,
          "%s: summary counts %d sockets: %s" % (label, n, err))
    if ct:
        after = conntrack()
        removed = before - after
        want = expected_ct_removed(before, pop.dead_flows())
        check(removed == want, "%s: conntrack entries removed %s, expected %s" %
              (label, sorted(removed), sorted(want)))
        check(len(want) >= n + 1, "%s: the oracle expects entries (%d)" % (label, len(want)))
        check(len(after & before) > 0, label + ": unrelated entries remain")
        m = re.search(r"conntrack entries deleted (\d+)", err)
        check(m is not None and int(m.group(1)) == len(removed),
              "%s: summary counts %d conntrack entries: %s" % (label, len(removed), err))
    pop.close()


def t_dry_run(path):
    pop = Population(1)
    rc, out, err = run("kill", "--dead-backends", path, "--dry-run", "--ndjson")
    recs = [json.loads(x) for x in out.splitlines() if x.strip()]
    check(rc == 0, "dry run: exit 0 (got %d: %s)" % (rc, err))
    check(sorted(r["cookie"] for r in recs) == pop.dead_cookies(),
          "dry run: lists the dead backends' clients")
    check(all(r.get("result") == "would-destroy" for r in recs), "dry run: would-destroy")
    alive = [name for name, s, _ in pop.socks
             if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0]
    check(not alive, "dry run destroys nothing: %s" % alive)
    pop.close()


def t_bad_files():
    pop = Population(1)
    cases = [
        ("10.0.0.1:80/tcp\n10.0.0.2:99999\n", "line 2, column 10: port out of range"),
        ("10.0.0.1:80\nfd00::1:80\n", "line 2, column 1: an IPv6 address goes in brackets"),
        ("10.0.0.1:80 # ok\n[fd00::1]:80/sctp\n", "line 2, column 14: expected tcp or udp"),
    ]
    for i, (text, msg) in enumerate(cases):
        path = write("bad%d" % i, text)
        rc, out, err = run("kill", "--dead-backends", path)
        check(rc == 2, "malformed file %d: exit 2 (got %d)" % (i, rc))
        check(err.count("\n") == 1 and path in err and msg in err,
              "malformed file %d: one line naming file, line and column: %r" % (i, err))
    rc, out, err = run("kill", "--dead-backends", os.path.join(TMP, "missing"))
    check(rc == 2 and "cannot open" in err and err.count("\n") == 1,
          "missing file: exit 2, one line: %r" % err)
    alive = [name for name, s, _ in pop.socks
             if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0]
    check(not alive, "nothing destroyed from a malformed file: %s" % alive)
    rc, out, err = run("kill", "--dead-backends", write("empty", "# none\n\n"))
    check(rc == 1 and re.search(r"^destroyed 0,", err, re.M) is not None,
          "empty file: exit 1, nothing destroyed (%d: %r)" % (rc, err))
    rc, out, err = run("kill", "--dead-backends", write("one", "10.0.0.1:80\n"),
                       "dport = :80")
    check(rc == 2 and err.count("\n") == 1, "a FILTER too: usage error (%d: %r)" % (rc, err))
    rc, out, err = run("kill", "--conntrack", "--dead-backends", write("one", "10.0.0.1:80\n"),
                       "--all")
    check(rc == 2 and err.count("\n") == 1, "--all too: usage error (%d: %r)" % (rc, err))
    alive = [name for name, s, _ in pop.socks
             if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0]
    check(not alive, "nothing destroyed by an empty file or refused options: %s" % alive)
    pop.close()


def t_kill_conntrack():
    """kill --conntrack with a FILTER: the flows of the destroyed sockets; one whose entry
    went before the kill is not counted."""
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("10.0.0.2", 7000))
    l.listen(8)
    cs = [socket.create_connection(("10.0.0.2", 7000)) for _ in range(3)]
    acc = [l.accept()[0] for _ in cs]
    other = socket.create_connection(("10.0.0.2", 7000))
    acc.append(l.accept()[0])
    # A flow whose entry is gone before the kill (deleted here, as if it had
    # expired): its delete is answered ENOENT, not an entry deleted.
    vanished = socket.create_connection(("10.0.0.2", 7000))
    acc.append(l.accept()[0])
    gone = subprocess.run(["conntrack", "-D", "-p", "tcp", "--orig-src", "10.0.0.2",
                           "--sport", str(vanished.getsockname()[1])], capture_output=True)
    before = conntrack()
    vflow = ("tcp", "10.0.0.2", vanished.getsockname()[1], "10.0.0.2", 7000)
    check(gone.returncode == 0 and not expected_ct_removed(before, {vflow}, sweep=False),
          "kill --conntrack: conntrack -D removed the vanished flow's entry: %s" % gone.stderr)
    rc, out, err = run("kill", "-t", "--conntrack", "--ndjson",
                       "dport = :7000 and sport != :%d" % other.getsockname()[1])
    after = conntrack()
    flows = {("tcp", "10.0.0.2", c.getsockname()[1], "10.0.0.2", 7000) for c in cs}
    want = expected_ct_removed(before, flows, sweep=False)
    recs = [json.loads(x) for x in out.splitlines() if x.strip()]
    check(rc == 0, "kill --conntrack: exit 0 (%d: %s)" % (rc, err))
    check(sorted(r["cookie"] for r in recs) == sorted(cookie(c) for c in cs + [vanished]),
          "kill --conntrack: the 4 clients destroyed: %s" % out)
    check(len(want) == 3 and before - after == want,
          "kill --conntrack: exactly the 3 flows' entries: removed %s, want %s" %
          (sorted(before - after), sorted(want)))
    check(re.search(r"conntrack entries deleted 3\b", err) is not None,
          "kill --conntrack: summary counts the 3 entries deleted, not the vanished one: " + err)
    for s in cs + acc + [other, vanished, l]:
        s.close()


def main():
    global TMP
    setup_namespace()
    TMP = tempfile.mkdtemp(prefix="sockdiag-backends-")
    try:
        path = write("backends", BACKENDS)
        t_pass("kernel filter", path, False)
        t_pass("kernel filter, conntrack", path, True)
        # More backends than the bytecode takes: the hash lookup decides alone.
        filler = "".join("10.1.%d.%d:%d\n" % (i // 250, i % 250, 1000 + i) for i in range(400))
        t_pass("hash lookup, conntrack", write("many", BACKENDS + filler), True)
        t_dry_run(path)
        t_bad_files()
        t_kill_conntrack()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failures)))
    sys.exit(1 if failures else 0)


main()
