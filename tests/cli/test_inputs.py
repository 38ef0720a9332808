#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Bad input gets a clear error, never a hang, a flood or a cut: -N on
something that is no network namespace, -F and guard -c on FIFOs, devices,
huge files and files with a NUL byte, watch --count -1, COLUMNS, control
characters and whole files echoed in messages, the longest filter message;
a reader going away (EPIPE) from list, watch and kill; descriptors 0-2
closed; kill --dead-backends with a table option; kill --json that
exits 3. Run by test_inputs.sh inside a private network namespace."""
import atexit
import fcntl
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SD = sys.argv[1]
FAILED = []
PASSED = []
F_SETPIPE_SZ = 1031


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    (FAILED if not cond else PASSED).append(name)


def run(args, timeout=10, env=None, stdin=subprocess.DEVNULL):
    try:
        r = subprocess.run([SD] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env, stdin=stdin)
    except subprocess.TimeoutExpired:
        return None, b"", b"(timed out)"
    return r.returncode, r.stdout, r.stderr


def expect(name, args, rc, err_has, lines=1, **kw):
    """args exits rc within the timeout, prints nothing on stdout, `lines`
    stderr lines (a filter error: message, excerpt, marker) containing
    err_has, no control bytes."""
    got, out, err = run(args, **kw)
    detail = "rc %r, stdout %r, stderr %r" % (got, out[:200], err[:300])
    check(name + ": exit %d" % rc, got == rc, detail)
    check(name + ": nothing on stdout", out == b"", detail)
    check(name + ": message", err_has.encode() in err and err.count(b"\n") == lines, detail)
    check(name + ": no control characters",
          not any((c < 0x20 and c != 10) or c == 0x7f for c in err),
          detail)
    return err


tmp = tempfile.mkdtemp(prefix="sdin")
atexit.register(shutil.rmtree, tmp, True)  # also when a check raises
fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
plain = os.path.join(tmp, "plain")
with open(plain, "w") as f:
    f.write("not a namespace\n")

# ---- -N: only a network namespace file is ever opened -------------------------------
for target in (fifo, "/dev/zero", plain):
    for cmd in (["list"], ["watch"], ["kill", "--all"], ["guard", "--dry-run"]):
        extra = ["-c", plain + ".conf"] if cmd[0] == "guard" else []
        if extra:
            open(plain + ".conf", "w").close()
        expect("%s -N %s" % (cmd[0], os.path.basename(target)), cmd + extra + ["-N", target],
               1, "not a network namespace")
expect("list -N missing", ["list", "-N", "nosuch-netns-sd"], 1, "no such network namespace")

# ---- -F and guard -c: regular files of at most 1 MiB, no NUL --------------------------
big = os.path.join(tmp, "big")
with open(big, "w") as f:
    f.write("sport = 1 or " * 100000 + "sport = 2\n")
nul = os.path.join(tmp, "nul")
with open(nul, "wb") as f:
    f.write(b"sport = 7001\n  \0and dport = 9\n")
cnul = os.path.join(tmp, "cnul")
with open(cnul, "wb") as f:
    f.write(b"exempt-uid = 1\ntcp-states = established\0\n")
for path, why in ((fifo, "not a regular file (a FIFO)"),
                  ("/dev/zero", "not a regular file (a character device)"),
                  (tmp, "not a regular file (a directory)"),
                  (big, "larger than 1024 KiB"),
                  (nul, "a NUL byte at line 2, column 3")):
    expect("list -F %s" % os.path.basename(path), ["list", "-F", path], 2, why)
for path, why in ((fifo, "not a regular file (a FIFO)"),
                  ("/dev/zero", "not a regular file (a character device)"),
                  (big, "larger than 1024 KiB"),
                  (cnul, "a NUL byte at line 2, column 25")):
    expect("guard -c %s" % os.path.basename(path), ["guard", "-c", path, "--check-config"],
           2, why)
# -F - reads stdin, with the same cap: /dev/zero as stdin ends, it does not eat memory.
with open("/dev/zero", "rb") as z:
    expect("list -F - from /dev/zero", ["list", "-F", "-"], 2, "a NUL byte at line 1, column 1",
           stdin=z)

# A NUL in a kill -F file: refused, nothing destroyed (the connection lives).
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 7001))
srv.listen(8)
cli = socket.create_connection(("127.0.0.1", 7001))
acc, _ = srv.accept()
expect("kill -F with a NUL", ["kill", "-F", nul], 2, "a NUL byte at line 2, column 3")


def alive(sock):
    """Whether a connection is still open: recv would block (not EOF, not an error)."""
    sock.setblocking(False)
    try:
        sock.recv(1)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


check("kill -F with a NUL: the connection was not destroyed", alive(cli))

# ---- numbers and sizes ------------------------------------------------------------------
for v in ("-1", "0", "+3", " 3", "18446744073709551616"):
    expect("watch --count %r" % v, ["watch", "--count", v], 2, "is not a positive number")

# COLUMNS on a terminal: clamped (it was 857 MB for 8 sockets at 100000000).
pid, fd = pty.fork()
if pid == 0:
    os.environ["COLUMNS"] = "100000000"
    os.execv(SD, [SD, "list", "-ta"])
total = 0
deadline = time.time() + 10
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 1)
    if not r:
        continue
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    total += len(chunk)
    if total > 1 << 20:
        break
_, status = os.waitpid(pid, 0) if total <= 1 << 20 else (os.kill(pid, 9), os.waitpid(pid, 0))[1]
check("COLUMNS=100000000 on a terminal: bounded output", 0 < total < 64 * 1024,
      "%d bytes" % total)

# ---- what messages echo ----------------------------------------------------------------
err = expect("filter with an escape sequence", ["list", "\x1b[2Jsport", "=", "1"], 2,
             "\\x1b[2Jsport", lines=3)
longline = os.path.join(tmp, "longline")
with open(longline, "w") as f:
    f.write("root:$y$j9T$" + "A" * 3000 + ":19000:0:99999:7:::\n" + "x" * 5000 + "\n")
err = expect("-F of a shadow-like file", ["list", "-F", longline], 2, "expected a condition", lines=3)
check("-F of a shadow-like file: a short excerpt", len(err) < 400 and b"A" * 40 not in err,
      "%d bytes: %r" % (len(err), err[:400]))
err = expect("unknown option with control characters", ["list", "--\x07\x1b]0;x"], 2,
             "unknown option")
conf = os.path.join(tmp, "esc.conf")
with open(conf, "w") as f:
    f.write("exempt-uid = \x1b[31m" + "9" * 500 + "\n")
err = expect("guard -c with an escape sequence", ["guard", "-c", conf, "--check-config"], 2,
             "line 1: exempt-uid")
check("guard -c: a short excerpt", len(err) < 300, "%d bytes" % len(err))
# A cgroup or unit name is resolved after parsing: its message escapes it too (the
# guard_config fuzzer found a raw DEL in `reap = unit ...`).
expect("unit with control characters", ["list", "unit", "e\x7fx\x1b[2J.service"], 2,
       "no cgroup named 'e\\x7fx\\x1b[2J.service'", lines=3)
expect("cgroup with control characters", ["list", "cgroup", "/e\x7fx\x1b[2J"], 2,
       "no cgroup '/e\\x7fx\\x1b[2J'", lines=3)
conf = os.path.join(tmp, "reap.conf")
with open(conf, "w") as f:
    f.write("reap = unit e\x7fx\x1b[2J.service\n")
expect("guard -c: reap with control characters", ["guard", "-c", conf, "--check-config"], 2,
       "line 1: reap: no cgroup named 'e\\x7fx\\x1b[2J.service'")
err = expect("the longest filter message", ["list", "state", "nosuch" * 40], 2,
             "bucket, big)", lines=3)

# Every option value of every command, as each --help lists them (a new option is
# covered once documented), given an escape sequence, a "pid:" one and 300 bytes:
# refused (2, or 1 for a namespace that does not exist) in one short escaped line.
# This found --count-by's key, --owners, -N 'pid:...', the guard's --metrics and
# the exporter's --listen, -c and -N echoed raw.
for cmd in ("list", "kill", "watch", "top", "guard", "exporter"):
    _, usage, _ = run([cmd, "--help"])
    opts = sorted(set(re.findall(rb"(--?[a-zA-Z][a-z0-9-]*)[ =](?:[A-Z]|[a-z]+\|)", usage)))
    check("%s --help lists options with values" % cmd, len(opts) >= 3, repr(opts))
    bad = []
    for o in opts:
        for v in ("\x1b[2Jx", "pid:\x1b[2J", "\x7f" + "y" * 300):
            got, out, err = run([cmd, o.decode(), v])
            ok = (got == 2 or (got == 1 and o in (b"-N", b"--netns"))) and out == b"" and \
                err.count(b"\n") == 1 and len(err) < 400 and \
                not any((c < 0x20 and c != 10) or c == 0x7f for c in err)
            if not ok:
                bad.append((o, v[:8], got, err[:200]))
    check("%s: every option value echoed escaped, in one short line (%d options)"
          % (cmd, len(opts)), not bad, repr(bad))

# ---- the reader goes away (EPIPE) --------------------------------------------------------
def small_pipe_run(args, lines=1, before=None):
    """Run args with a 4 KiB stdout pipe, read a few lines, close it. The pipe
    is shrunk before the command starts: once it holds more than 4 KiB,
    F_SETPIPE_SZ fails with EBUSY (about one run in four, when it was shrunk
    after the start)."""
    rd, wr = os.pipe()
    fcntl.fcntl(wr, F_SETPIPE_SZ, 4096)
    try:
        p = subprocess.Popen([SD] + args, stdout=wr, stderr=subprocess.PIPE)
    finally:
        os.close(wr)
    out = os.fdopen(rd, "rb")
    if before:
        before()
    for _ in range(lines):
        out.readline()
    out.close()
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        return None, b"(timed out)"
    return p.returncode, err


pairs = [socket.socketpair() for _ in range(400)]
rc, err = small_pipe_run(["list", "-x"])
check("list | head -1: exit 0", rc == 0, "rc %r, stderr %r" % (rc, err[:300]))
check("list | head -1: no error message", err == b"", repr(err[:300]))
for p in pairs:
    p[0].close()
    p[1].close()

udps = []


def close_udps():
    for _ in range(300):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        u.close()


# 600 events, far more than the pipe holds: watch is blocked writing when
# the reader leaves after two lines.
rc, err = small_pipe_run(["watch", "-u"], lines=2,
                         before=lambda: (time.sleep(0.5), close_udps(), close_udps()))
check("watch | head -2: exit 0", rc == 0, "rc %r, stderr %r" % (rc, err[:300]))
check("watch | head -2: the summary", b"sockdiag watch: " in err and b" lost" in err,
      repr(err[:300]))

# kill: keeps destroying after the reader left, summary and status as usual.
kill_socks = []
for i in range(300):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 20000 + i))
    u.connect(("127.0.0.1", 7001))
    kill_socks.append(u)
rc, err = small_pipe_run(["kill", "-u", "sport >= 20000 and sport < 20300"])
check("kill | head -1: exit 0", rc == 0, "rc %r, stderr %r" % (rc, err[:300]))
check("kill | head -1: summary says all 300 destroyed", b"destroyed 300," in err,
      repr(err[:300]))

# ---- kill --json exiting 3 writes [] ------------------------------------------------------
nocap = ["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", "--", SD]
r = subprocess.run(nocap + ["kill", "--json", "-t", "sport = 7001"], stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, timeout=10)
check("kill --json without CAP_NET_ADMIN: exit 3", r.returncode == 3,
      "rc %d %r" % (r.returncode, r.stderr))
check("kill --json without CAP_NET_ADMIN: []", r.stdout.strip() == b"[]", repr(r.stdout))

# ---- descriptors 0-2 closed ----------------------------------------------------------------
# A closed stdout was the first free descriptor: watch's netlink socket became its
# stdout (the table written into it, exit 0), top -b said "Invalid argument". Now a
# closed stdout or stderr is refused, naming it, before anything is opened or
# destroyed; a closed stdin is /dev/null.
def closed_run(args, fds, timeout=10):
    def close():
        for fd in fds:
            os.close(fd)
    try:
        r = subprocess.run([SD] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout, preexec_fn=close)
    except subprocess.TimeoutExpired:
        return None, b"", b"(timed out)"
    return r.returncode, r.stdout, r.stderr


for cmd in (["list"], ["watch", "--count", "1"], ["top", "-b", "--count", "1"],
            ["kill", "--all", "-t"], ["guard", "--dry-run"], ["exporter", "--once"]):
    rc, out, err = closed_run(cmd, [1])
    check("%s with stdout closed: exit 1, one line naming it" % cmd[0],
          rc == 1 and err == b"sockdiag: standard output (descriptor 1) is closed: refusing to "
          b"run (redirect it to /dev/null to discard the output)\n",
          "rc %r, stderr %r" % (rc, err[:300]))
    rc, out, err = closed_run(cmd, [2])
    check("%s with stderr closed: exit 1, nothing written" % cmd[0], rc == 1 and out == b"",
          "rc %r, stdout %r" % (rc, out[:300]))
# The connection of the -F check above is alive: kill with stdout closed destroyed nothing.
check("kill --all with stdout closed: nothing destroyed", alive(cli))
rc, out, err = closed_run(["list", "-tan"], [0])
check("list with stdin closed: runs (stdin is /dev/null)",
      rc == 0 and b"127.0.0.1:7001" in out and err == b"", "rc %r, %r %r" % (rc, out[:200], err))
rc, out, err = closed_run(["list", "-F", "-"], [0])
check("list -F - with stdin closed: an empty filter, the sockets listed",
      rc == 0 and b"127.0.0.1:7001" in out, "rc %r, %r %r" % (rc, out[:200], err))

# ---- kill --dead-backends picks its own tables ---------------------------------------------
backends = os.path.join(tmp, "backends")
with open(backends, "w") as f:
    f.write("127.0.0.9:80\n")
for opt in ("-x", "-t", "-u", "-w", "-A unix", "--vsock"):
    expect("kill --dead-backends FILE %s" % opt, ["kill", "--dead-backends", backends] +
           opt.split(), 2, "--dead-backends acts on TCP and connected UDP sockets: no table "
           "options")

# ---- one rule for --count-by's list; --openmetrics needs --once ---------------------------
for keys, msg in (("state,state", "key 'state' given twice"),
                  ("proto,state,proto", "key 'proto' given twice"),
                  ("state,", "an empty key in 'state,'"),
                  (",,,state", "an empty key in ',,,state'"),
                  ("state,,proto", "an empty key in 'state,,proto'"),
                  ("", "no key given")):
    expect("list --count-by '%s'" % keys, ["list", "--count-by", keys], 2, msg)
rc, out, err = run(["list", "-H", "--count-by", "state,proto"])
check("list --count-by state,proto: accepted", rc == 0 and err == b"", "rc %r %r" % (rc, err))
expect("exporter --openmetrics without --once", ["exporter", "--openmetrics"], 2,
       "--openmetrics needs --once")

# ---- -N cgroup: of a cgroup without a process: the error alone, no header --------------------
cgroot = None
with open("/proc/self/mountinfo") as f:
    for line in f:
        fields = line.split()
        if fields[fields.index("-") + 1] == "cgroup2":
            cgroot = fields[4]
            break
if cgroot:
    cg = "sdin%d_%s" % (os.getpid(), os.urandom(3).hex())
    os.mkdir(os.path.join(cgroot, cg))
    try:
        expect("list -N cgroup:<empty cgroup>", ["list", "-N", "cgroup:/" + cg], 1,
               "no process in those cgroups, no namespace")
        # kill takes the same set (cli/run/): the error alone, no empty pass
        # (no summary line, no JSON array), the same status.
        expect("kill -N cgroup:<empty cgroup>", ["kill", "-N", "cgroup:/" + cg, "--all"], 1,
               "no process in those cgroups, no namespace")
        expect("kill --json -N cgroup:<empty cgroup>",
               ["kill", "--json", "-N", "cgroup:/" + cg, "--all"], 1,
               "no process in those cgroups, no namespace")
    finally:
        os.rmdir(os.path.join(cgroot, cg))
else:
    print("SKIP(cgroup2): no cgroup v2 hierarchy for -N cgroup:")

print("# checks: %d passed, %d failed, 0 skipped" % (len(PASSED), len(FAILED)))
sys.exit(1 if FAILED else 0)
