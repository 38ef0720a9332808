#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag list -T` (threads) against `ss -T`: a process with named threads holds a
listener; both tools must list the same (comm, pid, tid, fd) owners for it, one per
thread, each thread under its own name. Also -T --json (a tid per owner), -T without
-p (as ss: the owners are shown), and --owners=bpf -v (the /proc walk, said so).
Run by diff_ss.sh in a private network namespace; re-runs itself in a private pid
namespace with its own /proc, so that both tools read only this test's processes."""
import json
import os
import re
import socket
import subprocess
import sys
import threading

SD = sys.argv[1]
FAILED = []
PASSED = []
PORT = 7401
OWNER = re.compile(r'\("([^"]*)",pid=(\d+),tid=(\d+),fd=(\d+)\)')


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    (FAILED if not cond else PASSED).append(name)


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


def owners(text, ordered=False):
    """The owner tuples of the line of our listener (sorted unless ordered)."""
    for line in text.splitlines():
        if ":%d " % PORT in line:
            found = OWNER.findall(line)
            return found if ordered else sorted(found)
    return None


def named_threads(n, stop):
    import ctypes
    libc = ctypes.CDLL(None)
    started = threading.Barrier(n + 1)

    def body(i):
        libc.prctl(15, b"sdworker%d" % i, 0, 0, 0)  # PR_SET_NAME: the thread's comm
        started.wait()
        stop.wait()

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    started.wait()
    return ts


def main():
    if os.environ.get("SDIAG_THREADS_PIDNS") != "1":
        env = dict(os.environ, SDIAG_THREADS_PIDNS="1")
        os.execvpe("unshare", ["unshare", "-p", "-f", "--mount-proc", sys.executable,
                               os.path.abspath(__file__), SD], env)
    l = socket.socket()
    l.bind(("127.0.0.1", PORT))
    l.listen(1)
    stop = threading.Event()
    ts = named_threads(2, stop)
    try:
        rc, ss_out, err = run(["ss", "-tlnT"])
        want = owners(ss_out)
        names = sorted({o[0] for o in want or []})
        check("ss -T: an owner per thread, by the thread's name", rc == 0 and want is not None
              and len(want) == 3 and names == ["python3", "sdworker0", "sdworker1"]
              and len({o[2] for o in want}) == 3, repr(ss_out))
        for args in (["-tlnT"], ["-tlnpT"], ["-tlnT", "--threads"], ["-tlnTp", "--owners=proc"]):
            rc, out, err = run([SD, "list"] + args)
            got = owners(out)
            check("list %s: ss -tlnT's owners" % " ".join(args), rc == 0 and got == want,
                  "ss %r, sockdiag %r (rc %d, %r)" % (want, got, rc, err))
        rc, out, err = run([SD, "list", "-tlnT"])
        check("-T: the owners in ss's order", owners(out, True) == owners(ss_out, True),
              "ss %r, sockdiag %r" % (owners(ss_out, True), owners(out, True)))
        rc, out, err = run([SD, "list", "-tlnT", "--json"])
        recs = json.loads(out) if rc == 0 else []
        procs = [p for r in recs if r["local"]["port"] == PORT for p in r.get("processes", [])]
        got = sorted((p["comm"], str(p["pid"]), str(p["tid"]), str(p["fd"])) for p in procs)
        check("-T --json: comm, pid, tid, fd of each thread", got == want, repr((got, want)))
        rc, out, err = run([SD, "list", "-tlnp", "--json"])
        check("without -T: no tid", rc == 0 and '"tid"' not in out and
              '"pid"' in out, out)
        rc, out, err = run([SD, "list", "-tlnT", "--owners=bpf", "-v"])
        check("-T --owners=bpf: the /proc walk per thread, and -v says so",
              rc == 0 and owners(out) == want and "owners: /proc walk, per thread (-T: not the "
              "BPF iterator" in err, "rc %d err %r" % (rc, err))
    finally:
        stop.set()
        for t in ts:
            t.join()
        l.close()
    print("# checks: %d passed, %d failed, 0 skipped" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
