#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests of `sockdiag` (list): options and exit codes, the aligned
table, --json and --ndjson, against a socket population this process
creates. Run by test_cli.sh inside a private network namespace (never the
host's). Prints one line per check; exits 1 if any check failed."""
import atexit
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernel_probe  # noqa: E402  (tests/kernel_probe.py: asks the kernel, not sockdiag)

SD = sys.argv[1]
FAILED = []
PASSED = []
SKIPPED = []
PORT_L4, PORT_L6, PORT_U = 7001, 7002, 7003


def check(name, cond, detail=""):
    if cond:
        print("ok   " + name)
        PASSED.append(name)
    else:
        print("FAIL " + name + (": " + detail if detail else ""))
        FAILED.append(name)


def run(*args, sub=True):
    argv = [SD] + (["list"] if sub else []) + list(args)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode("utf-8", "strict"), r.stderr.decode("utf-8", "replace")


def skip(feature, why):
    """A check that cannot run here: named, counted (exit 77 if nothing failed)."""
    print("SKIP(%s): %s" % (feature, why))
    SKIPPED.append(why)


def ok_run(*args, sub=True):
    rc, out, err = run(*args, sub=sub)
    if rc != 0:
        check("exit 0: sockdiag %s" % " ".join(args), False, "rc %d, stderr %r" % (rc, err))
    return out


def jrun(*args):
    out = ok_run(*args, "--json")
    try:
        v = json.loads(out)
    except ValueError as e:
        check("valid JSON: %s" % " ".join(args), False, str(e))
        return []
    check("JSON is an array: %s" % " ".join(args), isinstance(v, list))
    return v


# ---- population ------------------------------------------------------------------

class Pop:
    pass


def populate():
    p = Pop()
    p.l4 = socket.socket()
    p.l4.bind(("127.0.0.1", PORT_L4))
    p.l4.listen(16)
    p.c4 = socket.create_connection(("127.0.0.1", PORT_L4))
    p.c4.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)  # a timer for -o
    p.a4, _ = p.l4.accept()
    p.l6 = socket.socket(socket.AF_INET6)
    p.l6.bind(("::1", PORT_L6))
    p.l6.listen(8)
    p.u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    p.u.bind(("127.0.0.1", PORT_U))
    p.uc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    p.uc.connect(("127.0.0.1", PORT_U))
    # unix: a nasty abstract name, a nasty path, a socketpair
    p.abstract = b'\0q"uo\\te\nnl\x01\xff\xfeend'
    p.ua = socket.socket(socket.AF_UNIX)
    p.ua.bind(p.abstract)
    p.ua.listen(1)
    p.tmp = tempfile.mkdtemp(prefix="sdcli")
    atexit.register(shutil.rmtree, p.tmp, True)  # also when a check raises
    p.path = os.fsencode(p.tmp) + b"/s\xc3(\tx"
    p.up = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    p.up.bind(p.path)
    p.sp1, p.sp2 = socket.socketpair()
    # netlink: route socket in the link group (RTNLGRP_LINK = 1)
    p.nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    p.nl.bind((0, 1))
    return p


def ino(s):
    return os.fstat(s.fileno()).st_ino


OTHER_NS_PORT = 7399
OTHER_NS_CODE = (
    "import os, socket, sys\n"
    "s = socket.socket(); s.bind(('0.0.0.0', %d)); s.listen(1)\n"
    "print('ready', os.fstat(s.fileno()).st_ino, flush=True); sys.stdin.read()\n" % OTHER_NS_PORT)


class OtherNetns:
    """A process in a network namespace of its own (unshare -n), holding one
    TCP listener on OTHER_NS_PORT that the caller's namespace does not have:
    with -N pid:PID its sockets, and only those, must be listed."""

    def __enter__(self):
        self.p = subprocess.Popen(["unshare", "-n", sys.executable, "-c", OTHER_NS_CODE],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        word, inode = (self.p.stdout.readline().split() + ["", ""])[:2]
        if word != "ready":
            raise RuntimeError("the process in another namespace did not start")
        self.pid, self.inode = self.p.pid, int(inode)
        return self

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(timeout=10)


# ---- checks ----------------------------------------------------------------------

def test_usage():
    cases = [
        (["--bogus"], "--bogus"),
        (["-Z"], "-Z"),
        (["-A", "nosuchtable"], "nosuchtable"),
        (["-A", "tcp,!bogustable"], "bogustable"),
        (["-f", "nosuchfam"], "nosuchfam"),
        (["-f"], "-f"),
    ]
    for args, word in cases:
        rc, out, err = run(*args)
        lines = err.splitlines()
        check("usage %s: exit 2" % args, rc == 2, "rc %d" % rc)
        check("usage %s: one line naming it" % args,
              len(lines) == 1 and word in lines[0] and out == "", repr(err))
    rc, out, err = run("frobnicate", sub=False)
    check("unknown command: exit 2, one line",
          rc == 2 and len(err.splitlines()) == 1 and "frobnicate" in err, repr(err))
    rc, out, err = run("-t", "sport", "=", ":nosuchservice")
    lines = err.splitlines()
    check("bad filter: exit 2", rc == 2, "rc %d" % rc)
    ok = (len(lines) == 3 and lines[0].startswith("sockdiag: filter: ")
          and lines[1] == "sport = :nosuchservice"
          and re.fullmatch(r" *\^~*", lines[2]) is not None
          and lines[2].index("^") < len(lines[1]))
    check("bad filter: message, expression, caret", ok, repr(err))
    rc, out, _ = run("--help")
    check("--help: exit 0 with usage", rc == 0 and "Usage" in out)
    rc, out, _ = run("--version", sub=False)
    check("--version: exit 0", rc == 0 and out.startswith("sockdiag "))


def ss(*args):
    r = subprocess.run(["ss"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.stdout.decode("utf-8", "replace")


def norm_table(out, ignore=None):
    """A table as ss and sockdiag both print it: ss pads every line and adds
    an empty Process column (glued to the last heading when that is wider)
    and dumps IPv4 before IPv6 (records are sorted,
    a tab-indented line staying with its row); IGNORE (a regex) hides values
    that tick."""
    head, recs = None, []
    for l in out.splitlines():
        l = l.rstrip()
        if ignore:
            l = re.sub(ignore, "<>", l)
        if head is None:
            head = re.sub(r"\s*Process$", "", l)
        elif l == "":  # ss's empty detail line (-m of a TIME-WAIT socket)
            continue
        elif l.startswith("\t") and recs:
            recs[-1] += "\n" + l
        else:
            recs.append(l)
    return [head] + sorted(recs)


def same_as_ss(out, ssout, ignore=None):
    return norm_table(out, ignore) == norm_table(ssout, ignore) and len(out.splitlines()) > 1


def diff_ss(out, ssout):
    return "sockdiag:\n%s\nss:\n%s" % (out, ssout)


def rows_of(out):
    return [l for l in out.splitlines()[1:] if l and not l.startswith("\t")]


def test_table(p):
    out = ok_run("-tan")
    lines = out.splitlines()
    head = lines[0].split()
    check("-tan header: ss's columns without Netid",
          head[:3] == ["State", "Recv-Q", "Send-Q"] and "Address:Port" in lines[0]
          and "Netid" not in lines[0], lines[0])
    rows = [l.split() for l in lines[1:]]
    want = {
        ("LISTEN", "127.0.0.1:%d" % PORT_L4, "0.0.0.0:*"),
        # bound to a specific address, so v6only: the wildcard peer is "[::]"
        ("LISTEN", "[::1]:%d" % PORT_L6, "[::]:*"),
        ("ESTAB", "127.0.0.1:%d" % PORT_L4, "127.0.0.1:%d" % p.c4.getsockname()[1]),
        ("ESTAB", "127.0.0.1:%d" % p.c4.getsockname()[1], "127.0.0.1:%d" % PORT_L4),
    }
    got = {(r[0], r[3], r[4]) for r in rows if len(r) >= 5}
    check("-tan rows: listeners and the pair", got == want and len(rows) == 4,
          "got %r" % sorted(got))
    lst = [r for r in rows if r[0] == "LISTEN" and r[3].startswith("127.")]
    check("-tan listener queues: 0 and backlog 16", lst and lst[0][1:3] == ["0", "16"],
          repr(lst))
    # Right-aligned local address: the ':' before every local port lines up
    # with the one in the header's "Local Address:Port".
    col = lines[0].index("Local Address:Port") + len("Local Address")
    check("-tan local ports aligned",
          all(l[col] == ":" and l[:col].rstrip().endswith(l[:col].split()[-1])
              for l in lines[1:]), out)
    same = ok_run("-tan", sub=False)
    check("`sockdiag -tan` is `sockdiag list -tan`", same == out)

    rows = rows_of(ok_run("-tn"))
    check("-tn (connected states): only the pair", len(rows) == 2 and
          all(r.split()[0] == "ESTAB" for r in rows), repr(rows))
    rows = rows_of(ok_run("-tln"))
    check("-tln: only listeners", len(rows) == 2 and
          all(r.split()[0] == "LISTEN" for r in rows), repr(rows))
    out = ok_run("-tn", "state", "listening")
    check("one state: State column hidden", out.splitlines()[0].split()[0] == "Recv-Q"
          and len(out.splitlines()) == 3, out)
    out = ok_run("-an")
    check("several tables: Netid column", out.splitlines()[0].startswith("Netid State"))
    n4, n6, n46 = (len(rows_of(ok_run("-tan", *f))) for f in (["-4"], ["-6"], ["-4", "-6"]))
    check("-4, -6 and both (ss keeps only the last)", (n4, n6, n46) == (3, 1, 4),
          repr((n4, n6, n46)))
    nets = {l.split()[0] for l in rows_of(ok_run("-an", "-A", "tcp,udp"))}
    check("-A tcp,udp: exactly those tables", nets == {"tcp", "udp"}, repr(nets))
    nets = {l.split()[0] for l in rows_of(ok_run("-an", "-A", "all,!tcp"))}
    check("-A all,!tcp: no tcp", "tcp" not in nets and "udp" in nets and "u_str" in nets,
          repr(nets))
    rows = rows_of(ok_run("-an", "-f", "inet"))
    check("-f inet: inet tables, IPv4 only", rows and all(r.split()[0] in ("tcp", "udp")
                                                          and "[" not in r for r in rows),
          repr(rows))
    nets = {l.split()[0] for l in rows_of(ok_run("-n"))}
    check("no options: every table, connected states", {"tcp", "udp", "u_str"} <= nets
          and "nl" not in nets, repr(nets))
    with tempfile.NamedTemporaryFile("w", suffix=".filter") as ff:
        ff.write("sport = :%d\n" % PORT_L4)
        ff.flush()
        rows = rows_of(ok_run("-tan", "-F", ff.name))
        check("-F FILE: the filter from a file", len(rows) == 2 and
              all(r.split()[3] == "127.0.0.1:%d" % PORT_L4 for r in rows), repr(rows))
        rc, out, err = run("-tan", "-F", ff.name, "dport", "=", ":1")
        check("-F FILE and FILTER arguments: exit 2", rc == 2 and len(err.splitlines()) == 1,
              repr(err))
    out = ok_run("-tln", "--inet-sockopt")
    check("--inet-sockopt: ss's line", out.count("inet-sockopt: ( is_icsk") == 2, out)
    out = ok_run("-tanH")
    check("-H: no header", len(out.splitlines()) == 4 and "State" not in out)
    out = ok_run("-tanQ")
    check("-Q: no queue columns", "Recv-Q" not in out and "Send-Q" not in out
          and len(out.splitlines()) == 5)

    recs = {r["inode"]: r for r in jrun("-tan", "-e")}
    out = ok_run("-tane")
    good = 0
    for l in out.splitlines()[1:]:
        m = re.search(r" ino:(\d+) sk:([0-9a-f]+)", l)
        if m and int(m.group(1)) in recs and recs[int(m.group(1))]["cookie"] == m.group(2):
            good += 1
    check("-e: ino: and sk: agree with JSON inode and cookie", good == 4, out)

    out = ok_run("-tani")
    tabs = [l for l in out.splitlines() if l.startswith("\t")]
    check("-i: details on a tab-indented second line", len(tabs) == 4 and
          all(" rtt:" in t or " cwnd:" in t for t in tabs), out)
    # -o: the client end has SO_KEEPALIVE (populate), so it alone has a timer.
    ka = "127.0.0.1:%d" % p.c4.getsockname()[1]
    timer = r"timer:\(keepalive,[0-9]+min,0\)"
    out = ok_run("-tano")
    rows = rows_of(out)
    check("-o: the keepalive timer on the client end, no timer elsewhere",
          len(rows) == 4 and all(bool(re.search(timer, r)) == (r.split()[3] == ka)
                                 for r in rows) and out.count("timer:") == 1, out)
    check("-o: what ss -o prints (timer expiry aside)",
          same_as_ss(out, ss("-tano"), timer), diff_ss(out, ss("-tano")))
    check("--options is -o", re.sub(timer, "", ok_run("-tan", "--options")) ==
          re.sub(timer, "", out), out)
    out = ok_run("-tanio")
    tabs = [l for l in out.splitlines() if l.startswith("\t")]
    check("-io: both the timer and the details", len(tabs) == 4 and
          len(re.findall(timer, out)) == 1 and all(" cwnd:" in t for t in tabs), out)
    out1 = ok_run("-taniO")
    check("-O: one line per socket", len(out1.splitlines()) == 5 and "\t" not in out1 and
          " cwnd:" in out1, out1)

    try:
        svc = socket.getservbyport(22, "tcp")
    except OSError:
        svc = None
    if svc:
        s22 = socket.socket()
        s22.bind(("127.0.0.1", 22))
        s22.listen(1)
        out = ok_run("-tl")
        check("service names resolved without -n", "127.0.0.1:%s" % svc in out, out)
        out = ok_run("-tln")
        check("-n: numeric ports", "127.0.0.1:22 " in out, out)
        s22.close()
    else:
        skip("services", "service-name check: no /etc/services entry for 22/tcp (netbase)")


def test_json(p):
    recs = jrun("-tan")
    check("--json: 4 tcp records", len(recs) == 4, repr(recs))
    need = ["family", "netid", "proto", "state", "local", "peer", "recv_q", "send_q",
            "inode", "cookie"]
    check("--json: every record has the base fields",
          all(all(k in r for k in need) for r in recs), repr(recs))
    check("--json: cookie is lowercase hex",
          all(re.fullmatch(r"[0-9a-f]+", r["cookie"]) for r in recs))
    by_ino = {r["inode"]: r for r in recs}
    r = by_ino.get(ino(p.l4), {})
    check("--json: v4 listener", r.get("family") == "inet" and r.get("proto") == "tcp"
          and r.get("state") == "LISTEN"
          and r.get("local") == {"addr": "127.0.0.1", "port": PORT_L4}
          and r.get("peer") == {"addr": "0.0.0.0", "port": 0} and r.get("send_q") == 16, repr(r))
    r = by_ino.get(ino(p.l6), {})
    check("--json: v6 listener", r.get("family") == "inet6"
          and r.get("local") == {"addr": "::1", "port": PORT_L6}, repr(r))
    r = by_ino.get(ino(p.c4), {})
    check("--json: client end of the pair", r.get("state") == "ESTAB"
          and r.get("local", {}).get("port") == p.c4.getsockname()[1]
          and r.get("peer") == {"addr": "127.0.0.1", "port": PORT_L4}, repr(r))

    nd = ok_run("-tan", "--ndjson").splitlines()
    objs = [json.loads(l) for l in nd]
    check("--ndjson: one object a line, same records",
          sorted((o["inode"], o["cookie"]) for o in objs) ==
          sorted((o["inode"], o["cookie"]) for o in recs))

    out = ok_run("-tan", "--json", "sport", "=", ":1")
    check("--json with nothing selected: []", json.loads(out) == [], out)

    recs = {r["inode"]: r for r in jrun("-uan")}
    r = recs.get(ino(p.u), {})
    check("--json udp unconnected", r.get("state") == "UNCONN" and r.get("proto") == "udp"
          and r.get("local", {}).get("port") == PORT_U, repr(r))
    r = recs.get(ino(p.uc), {})
    check("--json udp connected", r.get("state") == "ESTAB"
          and r.get("peer") == {"addr": "127.0.0.1", "port": PORT_U}, repr(r))

    recs = jrun("-tani")
    check("-i --json: tcp_info and cong", all("tcp_info" in r and "rtt" in r["tcp_info"]
                                              and "cong" in r for r in recs), repr(recs[:1]))
    check("--json without -i: no tcp_info", all("tcp_info" not in r for r in jrun("-tan")))


def recover(loc):
    if "path_hex" in loc:
        name = bytes.fromhex(loc["path_hex"])
    else:
        name = loc["path"].encode("utf-8")
    return b"\0" + name if loc.get("abstract") else name


def test_unix(p):
    recs = {r["inode"]: r for r in jrun("-xan")}
    r = recs.get(ino(p.ua), {})
    loc = r.get("local", {})
    check("unix abstract nasty name: marked, recoverable from path_hex",
          loc.get("abstract") is True and "path_hex" in loc and recover(loc) == p.abstract,
          repr(r))
    check("unix abstract name: path is valid text with U+FFFD",
          loc.get("path", "").startswith('q"uo\\te\nnl\x01') and "\ufffd" in loc.get("path", ""),
          repr(loc))
    r = recs.get(ino(p.up), {})
    loc = r.get("local", {})
    check("unix path with invalid UTF-8 and a tab: path_hex recovers it",
          recover(loc) == p.path and "abstract" not in loc, repr(r))
    r1, r2 = recs.get(ino(p.sp1), {}), recs.get(ino(p.sp2), {})
    check("unix socketpair: no path, peer inode", r1.get("local") == {}
          and r1.get("peer") == {"inode": ino(p.sp2)} and r2.get("peer") == {"inode": ino(p.sp1)},
          repr((r1, r2)))
    nd = ok_run("-xan", "--ndjson")
    check("unix --ndjson parses line by line", len([json.loads(l) for l in nd.splitlines()]) ==
          len(recs))
    out = ok_run("-xan")
    row = [l for l in out.splitlines() if " %d " % ino(p.ua) in l]
    check("unix table: abstract name with @ and escapes on one line",
          len(row) == 1 and '@q"uo\\te\\x0anl\\x01\\xff\\xfeend' in row[0], out)


def test_netlink(p):
    recs = jrun("-A", "netlink", "-ane")
    mine = [r for r in recs if r.get("inode") == ino(p.nl)]
    r = mine[0] if mine else {}
    check("netlink --json: one record for our route socket", len(mine) == 1, repr(mine))
    check("netlink --json: family, proto, protocol, portid, groups",
          r.get("family") == "netlink" and r.get("proto") == "route" and r.get("protocol") == 0
          and r.get("local", {}).get("portid") == p.nl.getsockname()[0]
          and r.get("groups") == [1] and r.get("group_names") == ["link"], repr(r))
    out = ok_run("-A", "netlink", "-an")
    check("netlink table: numeric proto:portid with -n",
          "0:%d" % p.nl.getsockname()[0] in out, out)


def test_unsupported():
    """-w's expectation comes from the kernel: a -w that prints nothing fails
    either way."""
    rc, out, err = run("-wan")
    if not kernel_probe.has_raw_diag():
        print("kernel: no raw_diag (checked with a dump request)")
        check("-w on a kernel without raw_diag: exit 0, one named line",
              rc == 0 and err.strip() ==
              "sockdiag: raw: not supported by this kernel (no raw_diag)", repr(err))
        check("-w on a kernel without raw_diag: no rows", rows_of(out) == [], out)
        rc, out, err = run("-an")
        check("implicit selection stays quiet about raw", rc == 0 and "raw" not in err, err)
    else:
        print("kernel: raw_diag present (checked with a dump request)")
        with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as r:
            rc, out, err = run("-wan")
            check("-w on a kernel with raw_diag: no error", rc == 0 and err == "", repr(err))
            recs = [x for x in jrun("-wan") if x["inode"] == ino(r)]
            check("-w: our raw ICMP socket, protocol 1",
                  len(recs) == 1 and recs[0].get("proto") == "raw", repr(recs))


def test_processes_netns(p):
    recs = jrun("-tanp")
    r = [x for x in recs if x["inode"] == ino(p.l4)]
    procs = r[0].get("processes", []) if r else []
    check("-p --json: our listener's owner", any(x.get("pid") == os.getpid() and
                                                 x.get("fd") == p.l4.fileno() for x in procs),
          repr(r))
    out = ok_run("-tanp")
    check("-p table: users:((...))", 'users:(("python3",pid=%d,fd=%d))' % (
        os.getpid(), p.l4.fileno()) in out or "pid=%d,fd=%d" % (os.getpid(), p.l4.fileno())
        in out, out)
    with OtherNetns() as other:
        recs = jrun("-N", "pid:%d" % other.pid, "-tan")
    inodes = [x["inode"] for x in recs]
    check("-N pid:PID lists that namespace: its listener, none of ours",
          inodes == [other.inode] and ino(p.l4) not in inodes, repr(recs))


def test_many():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 7000
    if hard < want + 100:
        skip("nofile", "block test: open file limit %d" % hard)
        return
    resource.setrlimit(resource.RLIMIT_NOFILE, (want + 100, hard))
    pairs = [socket.socketpair() for _ in range(want // 2)]
    out = ok_run("-xn")
    lines = out.splitlines()
    # The population's own socketpair is connected too.
    check("table across blocks: every socket, one line each", len(lines) == 3 + 2 * len(pairs),
          "%d lines" % len(lines))
    # Widths only grow: the peer column starts at the same place on every line.
    cols = {l.rindex("* ") for l in lines[1:]}
    check("table across blocks: columns stay aligned", len(cols) == 1, repr(sorted(cols)[:5]))
    recs = jrun("-xn")
    check("--json across blocks", len(recs) == 2 + 2 * len(pairs))
    nd = ok_run("-xn", "--ndjson").splitlines()
    check("--ndjson across blocks", len(nd) == 2 + 2 * len(pairs) and
          all(l.startswith("{") and l.endswith("}") for l in nd))
    for a, b in pairs:
        a.close()
        b.close()


def main():
    p = populate()
    test_usage()
    test_table(p)
    test_json(p)
    test_unix(p)
    test_netlink(p)
    test_unsupported()
    test_processes_netns(p)
    test_many()
    print("# checks: %d passed, %d failed, %d skipped" % (len(PASSED), len(FAILED), len(SKIPPED)))
    if FAILED:
        print("%d checks failed" % len(FAILED))
        sys.exit(1)
    if SKIPPED:
        sys.exit(77)
    print("all checks passed")


if __name__ == "__main__":
    main()
