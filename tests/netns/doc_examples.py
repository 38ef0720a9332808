#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation's example commands, run and compared with what the docs show.

Run by diff_ss.sh in a private network namespace; this script also takes a private mount
namespace with its own /tmp. It builds the population the examples describe (a TCP listener
on 0.0.0.0:2024, the unix listeners /tmp/demo.sock and the abstract "\\0demo\\"q\\n\\xff", a
netlink socket in the link/ipv4_ifaddr/ipv6_ifaddr groups, a connection to 127.0.0.1:8080, a
listener on 127.0.0.1:22 with one connection), then runs every command of README.md's
console blocks ("# sockdiag ...") and of sockdiag(8)'s examples ("$ sockdiag ...") and
compares the output (stdout and stderr) with the block, modulo the volatile fields:
inodes, cookies, netlink portids, ephemeral ports (numbers of five digits or more), and
column widths (runs of blanks). Table rows are compared as a set (dump order is the
kernel's hash order). A "..." line means "and more lines"; lines starting "client:" are
another program's output. An example whose output depends on the kernel or that runs until
interrupted is named with the reason it is not compared."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading

SD = os.path.abspath(sys.argv[1])
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FAILED = []
PASSED = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ":\n" + detail))
    (FAILED if not cond else PASSED).append(name)


def private_tmp():
    if os.environ.get("SDIAG_DOC_INNER") != "1":
        os.environ["SDIAG_DOC_INNER"] = "1"
        os.execvp("unshare", ["unshare", "-m", "--propagation", "private", sys.executable]
                  + sys.argv)
    # The source tree or the build (a CI clone) may live under /tmp itself: each such
    # top-level directory is bound back into the new /tmp, through a descriptor of the old
    # (not canonicalized: mount(8) would resolve the path to the new, empty /tmp).
    real = [os.path.realpath(p) for p in (SRC, SD, os.getcwd())]
    keep = sorted({p.split("/")[2] for p in real if p.startswith("/tmp/")})
    old = os.open("/tmp", os.O_PATH | os.O_DIRECTORY)
    subprocess.run(["mount", "-t", "tmpfs", "none", "/tmp"], check=True)
    for top in keep:
        os.mkdir("/tmp/" + top)
        src = "/proc/%d/fd/%d/%s" % (os.getpid(), old, top)
        subprocess.run(["mount", "--no-canonicalize", "--bind", src, "/tmp/" + top],
                       check=True)
    os.close(old)


def readme_examples():
    """(command, expected lines) of README.md's console blocks."""
    ex, cur, block = [], None, False
    for line in open(os.path.join(SRC, "README.md"), encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("```console"):
            block = True
        elif line.startswith("```"):
            block, cur = False, None
        elif block and line.startswith("# "):
            cur = (line[2:], [])
            ex.append(cur)
        elif block and cur:
            cur[1].append(line)
    return ex


def man_text(s):
    return (s.replace("\\-", "-").replace("\\(aq", "'").replace("\\(dq", '"')
            .replace("\\e", "\\").replace("\\&", ""))


def man_examples():
    """(command, expected lines) of sockdiag(8)'s .EX blocks that start with "$ sockdiag"."""
    ex, cur, block = [], None, False
    for line in open(os.path.join(SRC, "man", "sockdiag.8"), encoding="utf-8"):
        line = line.rstrip("\n")
        if line == ".EX":
            block = True
        elif line == ".EE":
            block, cur = False, None
        elif block and re.match(r"^[$#] sockdiag ", man_text(line)):
            cur = (man_text(line)[2:], [])
            ex.append(cur)
        elif block and cur:
            cur[1].append(man_text(line))
    return ex


def norm(line):
    line = re.sub(r'"(inode|portid)":\d+', r'"\1":N', line)
    line = re.sub(r'"cookie":"[0-9a-f]+"', '"cookie":"H"', line)
    line = re.sub(r"\b\d{5,}\b", "N", line)
    return re.sub(r" +", " ", line.strip())


class Population:
    def __init__(self):
        self.keep = []
        self.client_error = None

    def listen(self, fam, addr, backlog=128, kind=socket.SOCK_STREAM):
        s = socket.socket(fam, kind)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1) if fam != socket.AF_UNIX else 0
        s.bind(addr)
        s.listen(backlog)
        self.keep.append(s)
        return s

    def build(self):
        self.listen(socket.AF_UNIX, "/tmp/demo.sock")
        self.listen(socket.AF_UNIX, b'\0demo"q\n\xff')
        nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        nl.bind((0, (1 << 0) | (1 << 4) | (1 << 8)))  # link, ipv4_ifaddr, ipv6_ifaddr
        self.keep.append(nl)
        self.tcp = []

    def scene(self, port):
        """The TCP sockets of one example: a listener on port (0.0.0.0:2024 alone; 8080 and
        22 on 127.0.0.1 with one connection each); the previous scene's are closed."""
        for s in self.tcp:
            s.close()
        self.tcp = []
        l = socket.socket()
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(("0.0.0.0" if port == 2024 else "127.0.0.1", port))
        l.listen(128)
        self.tcp.append(l)
        if port == 2024:
            return None
        c = socket.create_connection(("127.0.0.1", port))
        self.tcp += [c, l.accept()[0]]
        if port == 22:
            return None

        def client():
            try:
                c.recv(1)
            except OSError as e:
                self.client_error = e.errno
        t = threading.Thread(target=client, daemon=True)
        t.start()
        return t


def run(cmd, cwd):
    env = dict(os.environ, PATH=os.path.dirname(SD) + ":" + os.environ["PATH"])
    r = subprocess.run(["sh", "-c", cmd.replace("sockdiag ", SD + " ", 1) if
                        cmd.startswith("sockdiag ") else cmd],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                       timeout=60)
    return r.stdout.decode("utf-8", "replace").split("\n")[:-1]


def compare(where, cmd, want, got):
    want = [norm(l) for l in want if not l.startswith("client:")]
    got = [norm(l) for l in got]
    if "..." in want:
        head = want[:want.index("...")]
        ok = all(l in got for l in head)
    elif want and (want[0].startswith("State") or want[0].startswith("Netid") or
                   want[0].startswith("Result") or want[0].startswith("Recv-Q")):
        ok = want[:1] == got[:1] and sorted(want[1:]) == sorted(got[1:])
    else:
        ok = want == got
    check("%s: %s" % (where, cmd), ok, "  docs: %r\n  got:  %r" % (want, got))


def main():
    private_tmp()
    tmp = tempfile.mkdtemp()
    with open(os.path.join(tmp, "exporter.conf"), "w") as f:
        f.write("ports = 22\nephemeral-ports = yes\n")
    with open(os.path.join(tmp, "my.filter"), "w") as f:
        f.write("sport = :22\n  or dst 300.1.1.1\n")
    with open(os.path.join(tmp, "dead-backends"), "w") as f:
        f.write("127.0.0.1:8080/tcp\n")
    pop = Population()
    pop.build()
    web, scene = None, None
    examples = [("README.md", c, w) for c, w in readme_examples()] + \
               [("sockdiag(8)", c, w) for c, w in man_examples()]
    check("examples found (README and sockdiag(8))", len(examples) >= 10, repr(examples))
    raw = run("sockdiag list -w", tmp)
    for where, cmd, want in examples:
        if cmd == "sockdiag list -w" and not any("no raw_diag" in l for l in raw):
            print("not compared (this kernel has raw_diag; the example shows one without): "
                  + cmd)
            continue
        if cmd.startswith("sockdiag watch"):
            print("not compared (runs until interrupted; its events are timed): " + cmd)
            continue
        port = (8080 if "8080" in cmd or "dead-backends" in cmd or cmd == "sockdiag list -tn"
                else 22 if "exporter" in cmd else 2024)
        if port != scene or "dead-backends" in cmd:  # a fresh connection to kill
            t = pop.scene(port)
            web = web or t
            scene = port
        got = run(cmd, tmp)
        compare(where, cmd, want, got)
    if web:
        web.join(5)
        check("the kill example's client got ECONNABORTED", pop.client_error == 103,
              repr(pop.client_error))
    print("# checks: %d passed, %d failed, 0 skipped" % (len(PASSED), len(FAILED)))
    if FAILED:
        sys.exit(1)


if __name__ == "__main__":
    main()
