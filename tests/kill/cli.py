#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests of `sockdiag kill` (run by run.sh inside a private
network namespace): exit statuses, the no-filter refusal, --dry-run, output
formats with the result field, the summary line, what owners and peers see,
a socket gone before its destroy, some sockets denied, families that cannot be destroyed, MPTCP and --mptcp-subflows, a kill in
another namespace (-N), the fatal errors. Usage: cli.py PATH-TO-SOCKDIAG."""
import errno
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernel_probe  # noqa: E402  (which diag tables this kernel dumps)

SD = sys.argv[1]
SO_COOKIE = 57
SUMMARY = re.compile(r"^destroyed (\d+), already gone (\d+), not destroyable (\d+), denied (\d+)"
                     r"(, failed (\d+))?$", re.M)
failures = []
passed = [0]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    else:
        passed[0] += 1


def run(*args, pre=(), env=None):
    p = subprocess.run(list(pre) + [SD] + list(args), capture_output=True, text=True, timeout=60,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def summary(err):
    m = SUMMARY.search(err)
    if not m:
        return None
    return tuple(int(m.group(i)) for i in (1, 2, 3, 4)) + (int(m.group(6) or 0),)


def cookie(s):
    return "%x" % int.from_bytes(s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8), "little")


def so_error(s):
    return s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)


def listener(port, family=socket.AF_INET, addr="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    return s


def pair(lst):
    c = socket.create_connection(lst.getsockname()[:2])
    a, _ = lst.accept()
    return c, a


def ndjson(out):
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def alive(c, a):
    """An established pair still carries data both ways."""
    try:
        c.sendall(b"x")
        a.settimeout(2)
        return a.recv(1) == b"x"
    except OSError:
        return False


def t_refuse_without_filter():
    l = listener(5100)
    c, a = pair(l)
    rc, out, err = run("kill", "-t")
    check(rc == 2, "no filter: exit 2 (got %d)" % rc)
    check("--all" in err, "no filter: the message names --all: " + err)
    check(alive(c, a) and so_error(l) == 0, "no filter: nothing destroyed")
    rc, out, err = run("kill", "-t", "sport = :")
    check(rc == 2, "bad filter: exit 2 (got %d)" % rc)
    rc, out, err = run("kill", "--no-such-option", "--all")
    check(rc == 2, "bad option: exit 2 (got %d)" % rc)
    check(alive(c, a) and so_error(l) == 0, "usage errors: nothing destroyed")
    for s in (l, c, a):
        s.close()


def t_dry_run():
    l = listener(5101)
    c, a = pair(l)
    rc, out, err = run("kill", "--dry-run", "-ta", "--ndjson", "sport = :5101")
    recs = ndjson(out)
    check(rc == 0, "dry-run: exit 0 (got %d: %s)" % (rc, err))
    check(sorted(r["cookie"] for r in recs) == sorted([cookie(l), cookie(a)]),
          "dry-run: lists the listener and the accepted socket: %s" % out)
    check(all(r.get("result") == "would-destroy" for r in recs), "dry-run: result would-destroy")
    check("would destroy 2" in err, "dry-run: summary: " + err)
    check(alive(c, a) and so_error(l) == 0 and so_error(a) == 0, "dry-run destroys nothing")
    # and the listener still accepts
    c2, a2 = pair(l)
    for s in (l, c, a, c2, a2):
        s.close()


def t_nothing_matched():
    l = listener(5102)
    rc, out, err = run("kill", "-ta", "sport = :5999")
    check(rc == 1, "nothing matched: exit 1 (got %d)" % rc)
    check(summary(err) == (0, 0, 0, 0, 0), "nothing matched: summary: " + err)
    check(so_error(l) == 0, "nothing matched: listener untouched")
    l.close()


def t_destroy_established():
    l = listener(5103)
    c, a = pair(l)
    other_c, other_a = pair(listener(5104))
    # The server side of port 5103's connection only (the listener is LISTEN,
    # not in the default states).
    rc, out, err = run("kill", "-t", "--ndjson", "sport = :5103")
    recs = ndjson(out)
    check(rc == 0, "established: exit 0 (got %d: %s)" % (rc, err))
    check([r["cookie"] for r in recs] == [cookie(a)], "established: exactly the server side: " + out)
    check(recs and recs[0].get("result") == "destroyed", "established: result destroyed")
    check(summary(err) == (1, 0, 0, 0, 0), "established: summary: " + err)
    try:
        a.recv(1)
        check(False, "owner: recv should fail")
    except OSError as e:
        check(e.errno == errno.ECONNABORTED, "owner: ECONNABORTED (got %s)" % e)
    try:
        c.settimeout(2)
        c.recv(1)
        check(False, "peer: recv should fail")
    except OSError as e:
        check(e.errno == errno.ECONNRESET, "peer: ECONNRESET (got %s)" % e)
    check(so_error(l) == 0, "established: listener untouched")
    check(alive(other_c, other_a), "established: other connection untouched")
    # Killing the same again: nothing left to match.
    rc, out, err = run("kill", "-t", "sport = :5103")
    check(rc == 1, "established again: exit 1 (got %d)" % rc)
    for s in (l, c, a, other_c, other_a):
        s.close()


def t_json_array():
    l = listener(5105, socket.AF_INET6, "::1")
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 5105))
    rc, out, err = run("kill", "-tua", "--json", "sport = :5105")
    check(rc == 0, "json: exit 0 (got %d: %s)" % (rc, err))
    try:
        recs = json.loads(out)
    except ValueError:
        recs = []
        check(False, "json: valid array: " + out)
    check(sorted(r["cookie"] for r in recs) == sorted([cookie(l), cookie(u)]),
          "json: the TCP listener and the UDP socket: " + out)
    check(all(r.get("result") == "destroyed" for r in recs), "json: results destroyed")
    check(so_error(l) == errno.ECONNABORTED and so_error(u) == errno.ECONNABORTED,
          "json: both owners see ECONNABORTED")
    rc, out, err = run("kill", "-tua", "sport = :5105")
    check("Result" in out.splitlines()[0] if out else False, "table: a Result column: " + out)
    l.close()
    u.close()


def t_unsupported():
    x, y = socket.socketpair()
    rc, out, err = run("kill", "-x", "--all", "--ndjson")
    recs = ndjson(out)
    check(rc == 1, "unix: exit 1, nothing destroyable (got %d)" % rc)
    mine = [r for r in recs if r["cookie"] in (cookie(x), cookie(y))]
    check(len(mine) == 2 and all(r.get("result") == "unsupported" for r in mine),
          "unix: reported unsupported: " + out)
    s = summary(err)
    check(s is not None and s[0] == 0 and s[2] == len(recs), "unix: summary: " + err)
    x.sendall(b"ok")
    check(y.recv(2) == b"ok", "unix: the pair still works")
    # A family this kernel cannot even dump (probed on the kernel: the development
    # kernel has no vsock_diag; Debian's 6.1 has no xsk_diag): said so, nothing pretended.
    # A kernel that dumps them all (6.12 with every module) has none to try.
    absent = [(o, n) for o, n in (("--vsock", "vsock"), ("--xdp", "xdp"), ("--tipc", "tipc"),
                                  ("--smc", "smc")) if not kernel_probe.diag_table(n)]
    if not absent:
        print("note: this kernel dumps vsock, xdp, tipc and smc: no undumpable table to kill")
    for opt, name in absent[:1]:
        rc, out, err = run("kill", opt, "--all")
        check(rc == 1 and "would destroy" not in err and summary(err) == (0, 0, 0, 0, 0),
              "%s: exit 1, a real (not dry) run that found nothing: %d %s" % (name, rc, err))
        check(name in err or (name == "vsock" and "v_str" in err),
              "%s: the undumpable table is named: %s" % (name, err))
    x.close()
    y.close()


def mptcp_available():
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
        s.close()
        return True
    except OSError:
        return False


def t_mptcp():
    if not mptcp_available():
        print("note: no MPTCP here, MPTCP checks skipped", file=sys.stderr)
        return
    l = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", 5106))
    l.listen(8)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
    c.connect(("127.0.0.1", 5106))
    a, _ = l.accept()
    time.sleep(0.2)
    rc, out, err = run("kill", "-M", "--ndjson", "dport = :5106")
    recs = ndjson(out)
    check(rc == 1, "mptcp: exit 1, not destroyable (got %d: %s)" % (rc, err))
    check(len(recs) == 1 and recs[0].get("result") == "unsupported",
          "mptcp: the client's MPTCP socket reported unsupported: " + out)
    check(alive(c, a), "mptcp: without --mptcp-subflows the connection lives")
    rc, out, err = run("kill", "-M", "--mptcp-subflows", "--ndjson", "dport = :5106")
    recs = ndjson(out)
    sub = [r for r in recs if r.get("proto") == "tcp"]
    check(rc == 0, "mptcp subflows: exit 0 (got %d: %s)" % (rc, err))
    check(len(sub) >= 1 and all(r.get("result") in ("destroyed", "gone") for r in sub)
          and any(r.get("result") == "destroyed" for r in sub),
          "mptcp subflows: the TCP subflows destroyed: " + out)
    check(not alive(c, a), "mptcp subflows: the connection no longer carries data")
    for s in (l, c, a):
        s.close()


def t_batch_option():
    socks = []
    for i in range(50):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 6000 + i))
        socks.append(u)
    rc, out, err = run("kill", "-ua", "--batch", "1", "sport >= :6000 and sport < :6050")
    check(rc == 0 and summary(err) == (50, 0, 0, 0, 0), "batch 1: 50 destroyed: %s" % err)
    check(all(so_error(u) == errno.ECONNABORTED for u in socks), "batch 1: every owner aborted")
    rc, out, err = run("kill", "-ua", "--batch", "0", "sport = :6000")
    check(rc == 2, "batch 0: usage error (got %d)" % rc)
    for u in socks:
        u.close()


def t_no_cap_net_admin():
    if not shutil.which("setpriv"):
        print("note: no setpriv, capability check skipped", file=sys.stderr)
        return
    l = listener(5107)
    pre = ["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", "--"]
    rc, out, err = run("kill", "-ta", "sport = :5107", pre=pre)
    check(rc == 3, "no CAP_NET_ADMIN: exit 3 (got %d: %s)" % (rc, err))
    check("CAP_NET_ADMIN" in err, "no CAP_NET_ADMIN: says so: " + err)
    check(out == "", "no CAP_NET_ADMIN: nothing printed on stdout: " + out)
    check(so_error(l) == 0, "no CAP_NET_ADMIN: nothing destroyed")
    # A dry run needs no privilege: it lists what it would destroy, and destroys nothing.
    rc, out, err = run("kill", "--dry-run", "-ta", "--ndjson", "sport = :5107", pre=pre)
    recs = ndjson(out)
    check(rc == 0, "no CAP_NET_ADMIN, dry-run: exit 0 (got %d: %s)" % (rc, err))
    check([(r["cookie"], r.get("result")) for r in recs] == [(cookie(l), "would-destroy")],
          "no CAP_NET_ADMIN, dry-run: the listener, would-destroy: " + out)
    check(err == "would destroy 1, not destroyable 0\n",
          "no CAP_NET_ADMIN, dry-run: the summary alone on stderr: %r" % err)
    c, a = pair(l)
    check(so_error(l) == 0 and alive(c, a), "no CAP_NET_ADMIN, dry-run: nothing destroyed")
    for s in (l, c, a):
        s.close()


DENIED_CHILD = ("import socket,sys\n"
                "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
                "s.bind(('127.0.0.1',5111)); s.listen(4)\n"
                "print('%x' % int.from_bytes(s.getsockopt(socket.SOL_SOCKET,57,8),'little'),"
                "flush=True); sys.stdin.readline()\n"
                "print(s.getsockopt(socket.SOL_SOCKET,socket.SO_ERROR),flush=True)\n")


def t_denied():
    """Some sockets denied, others destroyed: exit 1 (sockdiag(8), EXIT STATUS).
    kill runs without CAP_NET_ADMIN over two namespaces: OWN belongs to a user
    namespace this test made (its owner has every capability there, so its
    listener is destroyed); OTHER belongs to the initial user namespace, where
    the kill has no CAP_NET_ADMIN (its listener is denied, and stays)."""
    if not shutil.which("setpriv"):
        print("note: no setpriv, denial check skipped", file=sys.stderr)
        return
    own = subprocess.Popen(["unshare", "-U", "-r", "-n", "python3", "-c", DENIED_CHILD],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen(["unshare", "-n", "python3", "-c", DENIED_CHILD],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ck_own, ck_other = own.stdout.readline().strip(), other.stdout.readline().strip()
        check(ck_own and ck_other, "denied: both listeners up")
        pre = ["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", "--"]
        rc, out, err = run("kill", "-N", "pid:%d" % own.pid, "-N", "pid:%d" % other.pid,
                           "-ta", "--ndjson", "sport = :5111", pre=pre)
        recs = sorted((r["cookie"], r.get("result"), r.get("netns")) for r in ndjson(out))
        check(rc == 1, "denied: exit 1 when some sockets were denied (got %d: %s)" % (rc, err))
        check(recs == sorted([(ck_own, "destroyed", "pid:%d" % own.pid),
                              (ck_other, "denied", "pid:%d" % other.pid)]),
              "denied: one listener destroyed, the other denied: " + out)
        check(summary(err) == (1, 0, 0, 1, 0), "denied: summary: " + err)
        for p in (own, other):
            p.stdin.write("\n")
            p.stdin.flush()
        check(own.stdout.readline().strip() == str(errno.ECONNABORTED),
              "denied: the listener in the user namespace's netns was destroyed")
        check(other.stdout.readline().strip() == "0", "denied: the denied listener is untouched")
    finally:
        for p in (own, other):
            p.kill()
            p.wait()


def t_gone():
    """A socket that closes between the dump and its destroy is reported gone,
    not destroyed: the slowdump.so shim (SLOWDUMP_HOLD) holds kill before its
    first destroy request until the test has closed the socket; the kernel
    then answers ENOENT."""
    shim = os.environ.get("SDIAG_SLOWDUMP_SHIM")
    check(shim and os.path.exists(shim), "gone: shim built: %r" % shim)
    if not shim:
        return
    import tempfile
    l = listener(5110)
    ck = cookie(l)
    with tempfile.TemporaryDirectory() as tmp:
        hold = os.path.join(tmp, "hold")
        env = dict(os.environ, LD_PRELOAD=shim, SLOWDUMP_HOLD=hold,
                   ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") +
                                 ":verify_asan_link_order=0").lstrip(":"))
        p = subprocess.Popen([SD, "kill", "-ta", "--ndjson", "sport = :5110"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(1000):
            if os.path.exists(hold) or p.poll() is not None:
                break
            time.sleep(0.01)
        held = os.path.exists(hold)
        l.close()
        if held:
            os.unlink(hold)
        out, err = p.communicate(timeout=60)
    check(held, "gone: kill reached its destroy request (held there)")
    recs = ndjson(out)
    check(p.returncode == 1, "gone: exit 1, nothing destroyed (got %d: %s)" % (p.returncode, err))
    check([(r["cookie"], r.get("result")) for r in recs] == [(ck, "gone")],
          "gone: the listener reported gone: " + out)
    check(summary(err) == (0, 1, 0, 0, 0), "gone: summary: " + err)


def t_no_destroy_kernel():
    """A kernel built without CONFIG_INET_DIAG_DESTROY (simulated by the
    nodestroy.so shim, which answers every SOCK_DESTROY with EOPNOTSUPP as
    such a kernel does): exit 3, one line naming the option, nothing
    printed on stdout, nothing destroyed."""
    shim = os.environ.get("SDIAG_NODESTROY_SHIM")
    check(shim and os.path.exists(shim), "no-destroy kernel: shim built: %r" % shim)
    if not shim:
        return
    l = listener(5109)
    c, a = pair(l)
    env = dict(os.environ, LD_PRELOAD=shim,
               ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") +
                             ":verify_asan_link_order=0").lstrip(":"))
    rc, out, err = run("kill", "-ta", "sport = :5109 or dport = :5109", env=env)
    check(rc == 3, "no-destroy kernel: exit 3 (got %d: %s)" % (rc, err))
    check(len(err.splitlines()) == 1 and "CONFIG_INET_DIAG_DESTROY" in err,
          "no-destroy kernel: one line naming the option: %r" % err)
    check(out == "", "no-destroy kernel: nothing on stdout: %r" % out)
    check(so_error(l) == 0 and alive(c, a), "no-destroy kernel: nothing destroyed")
    # The shim is what made it fail: without it the same kill closes all 3
    # (the accepted end may be reset by its peer's destroy first: gone).
    rc, out, err = run("kill", "-ta", "sport = :5109 or dport = :5109")
    sm = summary(err)
    check(rc == 0 and sm and sm[0] >= 2 and sm[0] + sm[1] == 3 and sum(sm[2:]) == 0,
          "no-destroy kernel: control run closes all 3: %d %s" % (rc, err))
    check(so_error(l) == errno.ECONNABORTED, "no-destroy kernel: control run aborted the listener")
    for s in (l, c, a):
        s.close()


def t_other_netns():
    """-N pid:PID destroys in that namespace only."""
    here = listener(5108)
    code = ("import socket,sys,time\n"
            "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
            "s.bind(('127.0.0.1',5108)); s.listen(4)\n"
            "print('ready',flush=True); sys.stdin.readline()\n"
            "print(s.getsockopt(socket.SOL_SOCKET,socket.SO_ERROR),flush=True)\n")
    p = subprocess.Popen(["unshare", "-n", "python3", "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline().strip() == "ready", "netns: child ready")
        rc, out, err = run("kill", "-N", "pid:%d" % p.pid, "-ta", "sport = :5108")
        check(rc == 0 and summary(err) == (1, 0, 0, 0, 0), "netns: one destroyed there: " + err)
        p.stdin.write("\n")
        p.stdin.flush()
        check(p.stdout.readline().strip() == str(errno.ECONNABORTED),
              "netns: the child's listener was destroyed")
        check(so_error(here) == 0, "netns: the same port here is untouched")
    finally:
        p.kill()
        p.wait()
    here.close()


ALL_NETNS_INNER = r"""
set -eu
# A private pid and mount namespace: /proc shows only our processes, all in
# private network namespaces, and /run (named namespaces) is empty.
mount -t tmpfs none /run
L='import socket,sys; s=socket.socket(); s.bind(("127.0.0.1",5200)); s.listen(4); print("up",flush=True); sys.stdin.readline(); print(s.getsockopt(socket.SOL_SOCKET,socket.SO_ERROR),flush=True)'
exec 3> >(unshare -n python3 -c "$L" >"$TMP/x.out")
exec 4> >(unshare -n python3 -c "$L" >"$TMP/y.out")
exec 5> >(python3 -c "$L" >"$TMP/here.out")
for i in $(seq 50); do
  [ "$(cat "$TMP"/x.out "$TMP"/y.out "$TMP"/here.out 2>/dev/null | grep -c up)" = 3 ] && break
  sleep 0.1
done
"$SD" kill --all-netns -ta 'sport = :5200' >"$TMP/kill.out" 2>"$TMP/kill.err" && echo 0 >"$TMP/rc" || echo $? >"$TMP/rc"
echo >&3; echo >&4; echo >&5
exec 3>&- 4>&- 5>&-
sleep 0.5
"""


def t_all_netns():
    """--all-netns in a private pid+mount namespace: every namespace seen is ours."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, SD=os.path.abspath(SD), TMP=tmp)
        p = subprocess.run(["unshare", "-p", "-f", "-m", "--mount-proc", "bash", "-c",
                            ALL_NETNS_INNER], env=env, capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            check(False, "all-netns: harness failed: %s" % p.stderr)
            return

        def read(name):
            try:
                with open(os.path.join(tmp, name)) as f:
                    return f.read()
            except OSError:
                return ""
        rc, err = read("rc").strip(), read("kill.err")
        check(rc == "0", "all-netns: exit 0 (got %s: %s)" % (rc, err))
        per_ns = [l for l in err.splitlines() if l.startswith("netns ")]
        check(len(per_ns) >= 3, "all-netns: one summary per namespace: " + err)
        check(summary(err) == (3, 0, 0, 0, 0), "all-netns: 3 destroyed in all: " + err)
        for f in ("x.out", "y.out", "here.out"):
            check(read(f).split()[-1:] == [str(errno.ECONNABORTED)],
                  "all-netns: listener in %s destroyed: %r" % (f, read(f)))


def run_tests(tests):
    """Each test in turn (a crash fails that one only), the checks' count;
    the exit status. tests/drain uses it too."""
    for t in tests:
        n = len(failures)
        try:
            t()
        except Exception as e:  # a crash is a failure of that test, not of the run
            failures.append("%s: %r" % (t.__name__, e))
            print("FAIL:", t.__name__, repr(e), file=sys.stderr)
        print("%s %s" % ("ok  " if len(failures) == n else "FAIL", t.__name__))
    print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failures)))
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    return 0


def main():
    return run_tests((t_refuse_without_filter, t_dry_run, t_nothing_matched,
                      t_destroy_established, t_json_array, t_unsupported, t_mptcp,
                      t_batch_option, t_no_cap_net_admin, t_denied, t_gone,
                      t_no_destroy_kernel, t_other_netns, t_all_netns))


if __name__ == "__main__":
    sys.exit(main())
