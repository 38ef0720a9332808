#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The options no other test ran: -S, --udplite, -M, -B, -m, --tos, -r,
--no-kernel-filter, -F -, kill --passes, guard --check-config, --socket and
the long spelling of every short option. Each is checked against a socket
population made here, compared with ss where ss prints the same thing; a
table the kernel cannot dump (probed on the kernel, not asked of sockdiag)
must give the documented one-line error. Run by test_cli.sh inside a private
network namespace (never the host's)."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import test_cli as T  # check(), run(), ss(), the table comparison with ss
from test_cli import check, ok_run, jrun, rows_of, run, same_as_ss, diff_ss, ss, ino

kernel_probe = T.kernel_probe
SD = T.SD
IPPROTO_UDPLITE, IPPROTO_MPTCP, IPPROTO_SCTP = 136, 262, 132
P_L, P_B, P_UL, P_M, P_S = 7201, 7202, 7203, 7204, 7205


class Pop:
    pass


def populate():
    p = Pop()
    p.l = socket.socket()
    p.l.bind(("127.0.0.1", P_L))
    p.l.listen(8)
    p.c = socket.create_connection(("127.0.0.1", P_L))
    p.c.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x10)  # for --tos
    p.a, _ = p.l.accept()
    p.a.send(b"x" * 1000)  # unread data: a Recv-Q and skmem r for -m
    p.l6 = socket.socket(socket.AF_INET6)
    p.l6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, 0x20)
    p.l6.bind(("::1", P_L))
    p.l6.listen(8)
    p.u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    p.u.bind(("127.0.0.1", P_L))
    return p


def kernel_has(probe, *args):
    try:
        return probe(*args)
    except OSError as e:
        print("probe failed: %s" % e)
        return None


def unsupported(opt, name, module):
    """OPT names a table this kernel cannot dump: exit 0, no rows, one line."""
    rc, out, err = run(opt, "-an")
    check("%s on a kernel without %s: exit 0, the documented line, no rows" % (opt, module),
          rc == 0 and rows_of(out) == [] and err ==
          "sockdiag: %s: not supported by this kernel (no %s)\n" % (name, module),
          "rc %d out %r err %r" % (rc, out, err))


def test_sctp():
    has = kernel_has(kernel_probe.inet_diag_supported, socket.AF_INET, IPPROTO_SCTP)
    if not has:
        print("kernel: no sctp_diag (checked with a dump request)")
        for opt in ("-S", "--sctp"):
            unsupported(opt, "sctp", "sctp_diag")
        return
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SCTP)
    s.bind(("127.0.0.1", P_S))
    s.listen(4)
    out = ok_run("-Sln")
    check("-S: our SCTP listener, as ss -Sln shows it", "127.0.0.1:%d" % P_S in out and
          same_as_ss(out, ss("-Sln")), diff_ss(out, ss("-Sln")))
    check("--sctp is -S", ok_run("--sctp", "-ln") == out)
    s.close()


def test_udplite():
    if not kernel_probe.can_make(socket.AF_INET, socket.SOCK_DGRAM, IPPROTO_UDPLITE):
        # Linux 7.1 removed UDP-Lite (7.2 has no IPPROTO_UDPLITE sockets, checked above).
        print("kernel: no UDP-Lite (checked by making a socket)")
        rc, out, err = run("--udplite", "-an")
        check("--udplite on a kernel without UDP-Lite: exit 0, no rows, one line naming "
              "the kernel and the version that removed it", rc == 0 and rows_of(out) == [] and
              err == "sockdiag: udplite: not supported by this kernel (%s: UDP-Lite was "
              "removed in Linux 7.1)\n" % os.uname().release,
              "rc %d out %r err %r" % (rc, out, err))
        return
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, IPPROTO_UDPLITE)
    s.bind(("127.0.0.1", P_UL))
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM, IPPROTO_UDPLITE)
    s6.bind(("::1", P_UL))
    recs = jrun("--udplite", "-an")
    check("--udplite --json: exactly our two UDP-Lite sockets",
          sorted(r["inode"] for r in recs) == sorted([ino(s), ino(s6)]) and
          all(r["proto"] == "udplite" and r["netid"] == "udpl" and r["state"] == "UNCONN"
              and r["local"]["port"] == P_UL for r in recs), repr(recs))
    rows = [r.split() for r in rows_of(ok_run("--udplite", "-an"))]
    check("--udplite table: the two rows", sorted(r[3] for r in rows) ==
          ["127.0.0.1:%d" % P_UL, "[::1]:%d" % P_UL], repr(rows))
    nets = {r.split()[0] for r in rows_of(ok_run("-an", "-A", "udplite,udp"))}
    check("-A udplite,udp: udpl and udp rows", nets == {"udpl", "udp"}, repr(nets))
    check("-u does not list UDP-Lite", all(x["inode"] not in (ino(s), ino(s6))
                                           for x in jrun("-uan")))
    s.close()
    s6.close()


def test_mptcp():
    if kernel_probe.sysctl("net/mptcp/enabled") != "1":
        T.skip("mptcp", "-M: net.mptcp.enabled is not 1")
        return
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    lst.bind(("127.0.0.1", P_M))
    lst.listen(4)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    c.connect(("127.0.0.1", P_M))
    a, _ = lst.accept()
    out = ok_run("-Man")
    check("-M: listener and both ends, as ss -Man", len(rows_of(out)) == 3 and
          same_as_ss(out, ss("-Man")), diff_ss(out, ss("-Man")))
    check("--mptcp is -M", ok_run("--mptcp", "-an") == out)
    recs = jrun("-Man")
    check("-M --json: proto mptcp, our inodes",
          sorted(r["inode"] for r in recs) == sorted(ino(x) for x in (lst, c, a)) and
          all(r["proto"] == "mptcp" for r in recs), repr(recs))
    for x in (a, c, lst):
        x.close()


def test_bound_inactive():
    """A socket bound and never listening; closed after (ss, compared with
    below, does not know the state)."""
    bound = socket.socket()
    bound.bind(("127.0.0.1", P_B))
    if not kernel_has(kernel_probe.bound_inactive_dumped):
        # Before 6.8 the kernel ignores the state bit: said so, never a silent nothing.
        print("kernel: no bound-inactive dump (checked with a dump request)")
        for args in (["-tBn"], ["-tn", "state", "bound-inactive"]):
            rc, out, err = run(*args)
            check("%s on a kernel without bound-inactive dumps: exit 0, no rows, the line "
                  "that says so" % " ".join(args),
                  rc == 0 and rows_of(out) == [] and re.fullmatch(
                      r"sockdiag list: this kernel \(%s\) does not dump bound-inactive "
                      r"sockets \(Linux 6\.8 and later do\)\n" % re.escape(os.uname().release),
                      err) is not None, "%d %r %r" % (rc, out, err))
        rc, out, err = run("-tan")
        check("-a on such a kernel: no note (bound-inactive is not all it asked for)",
              rc == 0 and err == "" and all(":%d " % P_B not in r for r in rows_of(out)), err)
        bound.close()
        return
    print("kernel: dumps bound-inactive sockets (checked with a dump request)")
    out = ok_run("-tBn")
    check("-B on a kernel with bound-inactive dumps: no note", run("-tBn")[2] == "")
    rows = [r.split() for r in rows_of(out)]
    # One state shown: no State column.
    check("-B: only the bound, never listening socket",
          len(rows) == 1 and rows[0][2] == "127.0.0.1:%d" % P_B and rows[0][3] == "0.0.0.0:*",
          out)
    check("--bound-inactive is -B", ok_run("-tn", "--bound-inactive") == out)
    recs = jrun("-tBn")
    check("-B --json: state BOUND-INACTIVE, our inode",
          [(r["inode"], r["state"]) for r in recs] == [(ino(bound), "BOUND-INACTIVE")],
          repr(recs))
    # ss (6.8+) counts bound-inactive among the "connected" default states.
    check("-t's default states include bound-inactive, -l's do not",
          any(":%d " % P_B in r for r in rows_of(ok_run("-tn"))) and
          all(":%d " % P_B not in r for r in rows_of(ok_run("-tln"))))
    check("with -a the bound-inactive row too", any(":%d " % P_B in r and "BOUND-INACTIVE" in r
                                                    for r in rows_of(ok_run("-tan"))))
    bound.close()


def time_wait():
    """A TIME-WAIT socket of our own where none is left (test_mptcp makes one, but 5.10's
    Debian kernel has no MPTCP): closed first by the client, on its own port (7206);
    waits, on ss's word, until only the TIME-WAIT socket is left of it."""
    if "TIME-WAIT" in ss("-tan"):
        return
    with socket.socket() as lst:
        lst.bind(("127.0.0.1", 7206))
        lst.listen(1)
        c = socket.create_connection(("127.0.0.1", 7206))
        a, _ = lst.accept()
    c.close()
    a.close()
    deadline = time.monotonic() + 10 * float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1"))
    while time.monotonic() < deadline:
        rows = [r for r in ss("-tanH").splitlines() if ":7206 " in r]
        if rows and all(r.startswith("TIME-WAIT") for r in rows):
            return
        time.sleep(0.01)
    print("no TIME-WAIT socket on 7206 within the deadline: %r" % rows)


def test_details_vs_ss():
    time_wait()
    for args in (["-tanm"], ["-tan", "--tos"], ["-tar"], ["-uanm"], ["-tanr", "--tos"]):
        out = ok_run(*args)
        ref = ss(*args)
        check("%s: what ss %s prints" % (" ".join(args), " ".join(args)),
              same_as_ss(out, ref), diff_ss(out, ref))
    out = ok_run("-tanm")
    recs = [l for l in out.splitlines()[1:] if not l.startswith("\t")]
    # ss pads the line to the column's width; a TIME-WAIT socket has no memory
    # to show, and ss prints its line empty.
    mem = [l.rstrip(" ") for l in out.splitlines() if l.startswith("\t")]
    empty = [m for m in mem if m == "\t"]
    mem = [m for m in mem if m != "\t"]
    check("-m: an empty line under each TIME-WAIT socket, as ss",
          len(empty) == len([r for r in recs if r.startswith("TIME-WAIT")]) >= 1, out)
    recs = [r for r in recs if not r.startswith("TIME-WAIT")]
    check("-m: an skmem line under every full socket", len(mem) == len(recs) == 4 and
          all(re.fullmatch(r"\t skmem:\(r\d+,rb\d+,t\d+,tb\d+,f\d+,w\d+,o\d+,bl\d+,d\d+\)", m)
              for m in mem), out)
    check("-m: the unread 1000 bytes are in r of the reading end",
          any(re.match(r"\t skmem:\(r[1-9]", m) for m in mem), out)
    out = ok_run("-tan", "--tos")
    check("--tos: tos 0x10 on the client, tclass 0x20 on the v6 listener",
          "tos:0x10" in out and re.search(r"\[::1\]:%d .*tclass:0x20" % P_L, out), out)
    out = ok_run("-tar")
    check("-r: loopback resolved to localhost", "localhost:%d" % P_L in out and
          "127.0.0.1" not in out, out)
    check("--resolve is -r", ok_run("-ta", "--resolve") == out)


FILTERS = ["sport = :%d" % P_L, "dport = :%d" % P_L, "src 127.0.0.1", "not dst [::1]",
           "state listening", "( sport >= :7000 and sport < :7300 ) or dport = :1",
           "src [::1] and sport = :%d" % P_L, "sport >= :%d and sport <= :%d" % (P_L, P_L),
           "dport > :%d or sport < :%d" % (P_L - 1, P_L + 1)]


def test_no_kernel_filter():
    for f in FILTERS:
        k = ok_run("-tuan", f)
        u = ok_run("-tuan", "--no-kernel-filter", f)
        ref = ss("-tuan", *f.split())
        check("--no-kernel-filter %r: same rows as with the kernel filter, as ss" % f,
              sorted(rows_of(k)) == sorted(rows_of(u)) and same_as_ss(u, ref) and
              len(rows_of(u)) > 0, diff_ss(u, ref) + "\nkernel-filtered:\n" + k)


def stdin_run(data, *args):
    r = subprocess.run([SD, "list"] + list(args), input=data.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_filter_stdin():
    f = "sport = :%d" % P_L
    rc, out, err = stdin_run(f + "\n", "-tan", "-F", "-")
    check("-F -: the filter read from stdin", rc == 0 and out == ok_run("-tan", f) and
          len(rows_of(out)) == 3, "rc %d err %r out %r" % (rc, err, out))
    rc, out2, err = stdin_run("sport =\n:%d\n" % P_L, "-tan", "--filter", "-")
    check("--filter - over two lines", rc == 0 and out2 == out, "rc %d err %r" % (rc, err))
    rc, out, err = stdin_run("sport = :nosuchservice\n", "-tan", "-F", "-")
    check("-F - with a bad filter: exit 2, the message names it", rc == 2 and
          "nosuchservice" in err and out == "", "rc %d err %r" % (rc, err))


def same_rows(a, b):
    """Two outputs with the same rows: numbers that differ from run to run
    (sockdiag's own netlink socket, timers, tcp_info), so the column widths,
    and TIME-WAIT rows aside."""
    def norm(out):
        out = re.sub(r"sk:[0-9a-f]+", "sk:X", out)
        # A TIME-WAIT socket (of test_mptcp) may expire between the two runs.
        return sorted({re.sub(r"\s+", " ", re.sub(r"\d+", "N", l)).strip()
                       for l in out.splitlines() if "TIME-WAIT" not in l})
    return norm(a) == norm(b)


def test_smc_xdp_tipc():
    """--smc, --xdp, --tipc for list and kill. On a kernel without the family's
    diag module (asked of the kernel with a dump request): list exits 0 with
    the documented line and no rows; kill --all exits 1, names the table it
    skipped and destroys nothing. With the module: no error, and kill destroys
    nothing (these families cannot be destroyed)."""
    for opt, name, module in (("--smc", "smc", "smc_diag"), ("--xdp", "xdp", "xsk_diag"),
                              ("--tipc", "tipc", "tipc_diag")):
        has = kernel_has(kernel_probe.family_diag_supported, module)
        rc, out, err = run("kill", opt, "--all", sub=False)
        summary = "destroyed 0, already gone 0, not destroyable %d, denied 0\n"
        if has is False:
            print("kernel: no %s (checked with a dump request)" % module)
            unsupported(opt, name, module)
            check("kill %s --all on a kernel without %s: exit 1, the table named, "
                  "nothing destroyed" % (opt, module),
                  rc == 1 and rows_of(out) == [] and err ==
                  "sockdiag kill: %s: the kernel cannot dump these sockets (%s); skipped\n"
                  % (name, os.strerror(97)) + summary % 0,
                  "rc %d out %r err %r" % (rc, out, err))
        else:
            lrc, lout, lerr = run(opt, "-an")
            check("%s on a kernel with %s: exit 0, no error" % (opt, module),
                  lrc == 0 and lerr == "", "rc %d err %r" % (lrc, lerr))
            n = len(rows_of(out))
            check("kill %s --all: exit 1, %d listed, none destroyed" % (opt, n),
                  rc == 1 and err.endswith(summary % n), "rc %d err %r" % (rc, err))


def test_socket_alias():
    for q in ("tcp,udp", "all,!tcp", "udp"):
        ref = ok_run("-an", "-A", q)
        check("--socket %s and --query %s are -A %s" % (q, q, q),
              same_rows(ok_run("-an", "--socket", q), ref) and
              same_rows(ok_run("-an", "--query", q), ref), ref)


def help_pairs():
    """(short, long) pairs as --help lists them, e.g. ('-t', '--tcp')."""
    rc, out, _ = run("--help")
    return sorted(set(re.findall(r"(?<![\w-])(-[\w])\|(--[\w-]+)", out)))


# Arguments for the options that take one (-f FAMILY, -A LIST, ...).
ARGS = {"-f": ["inet"], "-A": ["tcp"], "-N": None, "-F": None}


def test_long_spellings():
    pairs = help_pairs()
    check("--help lists short|long pairs", len(pairs) >= 25, repr(pairs))
    fil = tempfile.NamedTemporaryFile("w", suffix=".filter", delete=False)
    fil.write("sport = :%d\n" % P_L)
    fil.close()
    ARGS["-F"] = [fil.name]
    other = T.OtherNetns().__enter__()
    ARGS["-N"] = ["pid:%d" % other.pid]
    for short, long_ in pairs:
        arg = ARGS.get(short, [])
        if short in ("-h", "-V"):
            a, b = run(short), run(long_)
        else:
            # -a: every state, so that every option has sockets to act on.
            a, b = run("-a", short, *arg), run("-a", long_, *arg)
        # Same status, same message, same rows (a refusal, as -Z without
        # SELinux, must be the same refusal).
        check("%s is %s" % (long_, short), a[0] == b[0] and a[2] == b[2] and
              same_rows(a[1], b[1]) and (a[1] != "" or a[0] != 0), "%r vs %r" % (a, b))
        if short == "-N":
            # Both spellings list the other namespace: its listener, none of ours.
            check("-N pid:PID and %s list that namespace only" % long_,
                  ":%d " % T.OTHER_NS_PORT in a[1] and ":%d " % P_L not in a[1], repr(a[1]))
    other.__exit__()
    os.unlink(fil.name)


def kill_dumps(passes, *args):
    """Run kill under strace; return (exit status, dump requests sent, rows)."""
    # LeakSanitizer cannot run under ptrace (an ASan build): no leak check in this run.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(o for o in [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]
                                   if o)
    with tempfile.NamedTemporaryFile(suffix=".strace") as tr:
        r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=sendto,sendmsg", "-o", tr.name,
                            SD, "kill", "--ndjson", "--passes", str(passes)] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        trace = open(tr.name).read()
    dumps = len(re.findall(r"nlmsg_type=SOCK_DIAG_BY_FAMILY, nlmsg_flags=NLM_F_REQUEST\|NLM_F_DUMP",
                           trace))
    return r.returncode, dumps, [l for l in r.stdout.splitlines() if l.strip()], r.stderr


def kill_population():
    socks = []
    for port in range(7301, 7305):
        s = socket.socket()
        s.bind(("127.0.0.1", port))
        s.listen(1)
        socks.append(s)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", port))
        socks.append(u)
    return socks


def test_kill_passes():
    for bad in ("0", "101", "x"):
        rc, out, err = run("kill", "-tu", "--all", "--passes", bad, sub=False)
        check("kill --passes %s: exit 2, one line naming --passes" % bad,
              rc == 2 and len(err.splitlines()) == 1 and "--passes" in err, repr(err))
    if not shutil.which("strace"):
        T.skip("tool:strace", "kill --passes: counting dump requests needs strace")
        return
    filt = "sport >= :7301 and sport <= :7304"
    results = {}
    for passes in (1, 2, 4):
        socks = kill_population()
        rc, dumps, rows, err = kill_dumps(passes, "-tua", filt)
        destroyed = len([r for r in rows if '"result":"destroyed"' in r])
        gone = [s for s in socks if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0]
        results[passes] = dumps
        check("kill --passes %d: every matched socket destroyed once (%d dumps)" % (passes, dumps),
              rc == 0 and destroyed == 8 and len(rows) == 8 and len(gone) == 8,
              "rc %d rows %r err %r" % (rc, rows, err))
        for s in socks:
            s.close()
    # One pass dumps each table once; a second pass dumps again each one in
    # which something was destroyed; the third finds nothing new to re-dump for.
    check("kill --passes: 1 pass dumps less than 2, and 4 stop when nothing is left",
          0 < results[1] < results[2] == results[4], repr(results))


def test_guard_check_config():
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good.conf")
        with open(good, "w") as f:
            f.write("exempt-uid = 4242\ntcp-states = established\n")
        bad = os.path.join(d, "bad.conf")
        with open(bad, "w") as f:
            f.write("exempt-uid = 4242\n\nbogus = 1\n")
        r = subprocess.run([SD, "guard", "--check-config", "-c", good], capture_output=True,
                           text=True, timeout=10)
        check("guard --check-config on a good file: exit 0, 'FILE: ok', nothing started",
              r.returncode == 0 and (r.stdout + r.stderr).strip() == "%s: ok" % good,
              repr((r.returncode, r.stdout, r.stderr)))
        r = subprocess.run([SD, "guard", "--check-config", "--config", bad], capture_output=True,
                           text=True, timeout=10)
        check("guard --check-config on a bad file: exit 2, one line with the line number",
              r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
              "line 3: unknown key 'bogus'" in r.stderr, repr((r.returncode, r.stderr)))


def test_count_by_v4_mapped():
    """A dual-stack listener's IPv4 clients, seen from an IPv4 socket (127.0.0.1) and
    from IPv6 ones (::ffff:127.0.0.1), are one peer: --count-by raddr/laddr fold the
    v4-mapped form (they were two groups)."""
    l = socket.socket(socket.AF_INET6)
    l.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    l.bind(("::", 7290))
    l.listen(8)
    c4 = socket.create_connection(("127.0.0.1", 7290))
    c6 = socket.socket(socket.AF_INET6)
    c6.connect(("::ffff:127.0.0.1", 7290))
    acc = [l.accept()[0] for _ in range(2)]
    try:
        rows = jrun("-t", "--count-by", "raddr,laddr", "sport = :7290 or dport = :7290")
        got = sorted((r["raddr"], r["laddr"], r["count"]) for r in rows)
        check("--count-by raddr,laddr: v4-mapped addresses are their IPv4 address",
              got == [("127.0.0.1", "127.0.0.1", 4)], repr(got))
    finally:
        for x in [l, c4, c6] + acc:
            x.close()


def test_owners_bpf():
    """--owners=bpf shows the owner on every kernel: where the iterator cannot load (its
    loader needs Linux 5.14, and BTF), one line says so and /proc is walked instead."""
    if not kernel_probe.probe("bpf_owners"):
        skip("bpf_owners", "no BPF owners iterator here (no BTF, not root or no bpftool)")
        return
    loads = kernel_has(kernel_probe.bpf_syscall_prog)
    print("kernel: %s BPF_PROG_TYPE_SYSCALL programs (checked with bpf(2))" %
          ("loads" if loads else "does not load"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        rc, out, err = run("-tlnp", "--owners=bpf", "sport = :%d" % s.getsockname()[1])
    check("-p --owners=bpf: exit 0, our listener with its owner (this pid)",
          rc == 0 and "pid=%d," % os.getpid() in out, "rc %d out %r err %r" % (rc, out, err))
    if loads:
        check("-p --owners=bpf where the iterator loads: nothing on stderr", err == "", err)
    else:
        check("-p --owners=bpf where it cannot load: one line naming the kernel and 5.14",
              re.fullmatch(r"sockdiag list: --owners=bpf: this kernel \(%s\) cannot load the "
                           r"BPF iterator \([^\n]+; Linux 5\.14 and later with BTF can\): "
                           r"walking /proc instead\n" % re.escape(os.uname().release), err),
              err)


def main():
    p = populate()
    test_owners_bpf()
    test_sctp()
    test_udplite()
    test_mptcp()
    test_bound_inactive()
    test_details_vs_ss()
    test_no_kernel_filter()
    test_filter_stdin()
    test_socket_alias()
    test_smc_xdp_tipc()
    test_long_spellings()
    test_kill_passes()
    test_guard_check_config()
    test_count_by_v4_mapped()
    print("# checks: %d passed, %d failed, %d skipped" % (len(T.PASSED), len(T.FAILED),
                                                          len(T.SKIPPED)))
    if T.FAILED:
        print("%d checks failed" % len(T.FAILED))
        sys.exit(1)
    if T.SKIPPED:
        sys.exit(77)
    print("all checks passed")


if __name__ == "__main__":
    main()
