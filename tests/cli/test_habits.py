#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ss habits and truthful help, end to end, in the private network namespace test_cli.sh
made: a FILTER or -K/-E without a command, --tcp=1, malformed addresses, -F FILE errors,
each command's --help listing exactly what it accepts and refusing the rest,
`sockdiag help COMMAND`, kill's {FILTER|--all|--dead-backends FILE}."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SD = sys.argv[1]
FAILED = []
PASSED = []
PORT = 7101


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    (FAILED if not cond else PASSED).append(name)


def run(*args):
    r = subprocess.run([SD] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def usage_error(args, want):
    """args exit 2 with nothing on stdout and exactly the line want on stderr."""
    rc, out, err = run(*args)
    check("%s: exit 2, '%s'" % (" ".join(args), want),
          rc == 2 and out == "" and err == want + "\n", "rc %d out %r err %r" % (rc, out, err))


def opts_in_help(cmd):
    rc, out, _ = run(cmd, "--help")
    return rc, out, set(re.findall(r"(?:^|[ |\[])(--?[a-zA-Z0-9][a-z0-9-]*)", out, re.M))


def pair(port=PORT):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", port))
    l.listen(4)
    c = socket.create_connection(("127.0.0.1", port))
    a, _ = l.accept()
    return l, c, a


def alive(s):
    try:
        s.send(b"x")
        return True
    except OSError:
        return False


def test_first_word(l):
    ref = run("list", "-tn", "state", "listening")
    for args in (["state", "listening", "-tn"], ["-tn", "state", "listening"]):
        got = run(*args)
        check("`sockdiag %s` is `sockdiag list -tn state listening`" % " ".join(args),
              got == ref and ":%d" % PORT in ref[1], repr(got))
    ref = run("list", "-tn", "sport", "=", ":%d" % PORT)
    got = run("sport", "=", ":%d" % PORT, "-tn")
    check("`sockdiag sport = :N` is list", got == ref and ref[0] == 0 and
          len(ref[1].splitlines()) == 2, repr(got))
    got = run("!(sport = :%d)" % PORT, "-tn")
    check("`sockdiag '!(...)'` is list", got[0] == 0 and ":%d " % PORT not in got[1].split(
        "\n", 1)[0], repr(got))
    usage_error(["frobnicate"], "sockdiag: unknown command 'frobnicate' (try 'sockdiag help')")


def test_kill_events():
    l, c, a = pair(PORT + 2)
    rc, out, err = run("-tnK", "dport", "=", ":%d" % (PORT + 2))
    check("-tnK FILTER is kill: the client destroyed", rc == 0 and out.startswith("Result") and
          "destroyed 1," in err and not alive(c), "rc %d out %r err %r" % (rc, out, err))
    a.close()
    c.close()
    l2, c2, a2 = pair(PORT + 1)
    rc, out, err = run("--kill", "-t", "sport", "=", ":%d" % (PORT + 1), "--dry-run", "-n")
    check("--kill is kill (--dry-run: would-destroy)", rc == 0 and "would-destroy" in out and
          alive(c2), "rc %d out %r err %r" % (rc, out, err))
    rc, out, err = run("-K", "--all", "dport", "=", ":1")
    check("-K --all FILTER refused like kill's", rc == 2 and
          err == "sockdiag kill: --all and a FILTER: give one or the other\n", repr(err))
    rc, out, err = run("-E", "--help")
    check("-E is watch", rc == 0 and out.startswith("Usage: sockdiag watch "), repr(out[:60]))
    usage_error(["-Ex"], "sockdiag watch: option '-x' (--unix) is not accepted by watch "
                "(see sockdiag watch --help)")
    for s in (l, l2, c2, a2):
        s.close()
    l.close()


def test_long_values():
    for args, want in ((["--tcp=1"], "option '--tcp' takes no value"),
                       (["--json=1"], "option '--json' takes no value"),
                       (["--help=x"], "option '--help' takes no value"),
                       (["--tc=1"], "option '--tcp' takes no value"),
                       (["--no=1"], "ambiguous option '--no' (--no-header, --no-queues, "
                        "--no-kernel-filter; see 'sockdiag list --help')"),
                       (["--frob"], "unknown option '--frob' (see 'sockdiag list --help')"),
                       (["--jsno"], "unknown option '--jsno' (did you mean '--json'? see "
                        "'sockdiag list --help')"),
                       (["--count-bu", "x"], "unknown option '--count-bu' (did you mean "
                        "'--count-by'? see 'sockdiag list --help')"),
                       (["-A", "tcp6"], "unknown socket table \"tcp6\" (-A takes no family: "
                        "-A tcp -6)")):
        usage_error(["list"] + args, "sockdiag list: " + want)
    usage_error(["kill", "--dry-run=yes", "dport = :1"],
                "sockdiag kill: option '--dry-run' takes no value")
    # A missing value names the option as typed, a long one by its full name (these
    # were "-\x02" and "-" for options without a short form); a short option refused
    # inside a bundle is not blamed on the word before it.
    for args, want in ((["--count-by"], "option '--count-by' requires an argument"),
                       (["--interval"], "option '--interval' requires an argument"),
                       (["--qu"], "option '--query' requires an argument"),
                       (["-tN"], "option '-N' requires an argument"),
                       (["--tcp", "-Xt"], "unknown option '-X' (see 'sockdiag list --help')"),
                       (["-N", "pid:\x1b"], "-N 'pid:\\x1b': PID must be a process id (a "
                        "positive number) (-N NAME|PATH|pid:PID|cgroup:PATH|unit:NAME)")):
        usage_error(["list"] + args, "sockdiag list: " + want)
    # The daemons parse alike (they said "unknown option '-d'" for --dry-run=1).
    for cmd, args, want in (
            ("guard", ["--dry-run=1"], "option '--dry-run' takes no value"),
            ("guard", ["--all-netns=yes"], "option '--all-netns' takes no value"),
            ("guard", ["--metr"], "option '--metrics' requires an argument"),
            ("guard", ["-c"], "option '-c' requires an argument"),
            ("guard", ["--frob"], "unknown option '--frob' (see 'sockdiag guard --help')"),
            ("guard", ["--dry-rn"], "unknown option '--dry-rn' (did you mean '--dry-run'? "
             "see 'sockdiag guard --help')"),
            ("guard", ["-x"], "unknown option '-x' (see 'sockdiag guard --help')"),
            ("guard", ["extra"], "unexpected argument 'extra'"),
            ("guard", ["--metrics", "\x1b[2J"],
             "--metrics '\\x1b[2J': no port (expected HOST:PORT, [ADDR6]:PORT or :PORT)"),
            ("guard", ["-N", "pid:0"], "-N 'pid:0': PID must be a process id (a positive "
             "number) (-N NAME|PATH|pid:PID)"),
            ("exporter", ["--once=1"], "option '--once' takes no value"),
            ("exporter", ["--check-config=x"], "option '--check-config' takes no value"),
            ("exporter", ["--listen"], "option '--listen' requires an argument"),
            ("exporter", ["--frob=1"], "unknown option '--frob' (see 'sockdiag exporter "
             "--help')"),
            ("exporter", ["--lisen", "x"], "unknown option '--lisen' (did you mean "
             "'--listen'? see 'sockdiag exporter --help')"),
            ("exporter", ["extra"], "unexpected argument 'extra'"),
            ("exporter", ["--listen", "\x7f"],
             "--listen '\\x7f': no port (expected HOST:PORT, [ADDR6]:PORT or :PORT)"),
            ("exporter", ["--listen", "127.0.0.1:http"], "--listen '127.0.0.1:http': port "
             "'http' is not a number from 1 to 65535 (expected HOST:PORT, [ADDR6]:PORT or "
             ":PORT)"),
            ("exporter", ["--listen", "::1:80"], "--listen '::1:80': an IPv6 address goes "
             "in brackets: [::1]:80 (expected HOST:PORT, [ADDR6]:PORT or :PORT)"),
            ("exporter", ["-N", ""], "-N '': empty name (-N NAME|PATH|pid:PID)")):
        usage_error([cmd] + args, "sockdiag %s: %s" % (cmd, want))


def test_addresses():
    for addr in ("300.1.1.1", "1.2.3.4.5", "10.0.0.256"):
        rc, out, err = run("list", "dst", addr)
        lines = err.splitlines()
        check("dst %s: malformed address with a caret, exit 2" % addr,
              rc == 2 and out == "" and lines == [
                  "sockdiag: filter: malformed IPv4 address '%s'" % addr, "dst " + addr,
                  "    ^" + "~" * (len(addr) - 1)], repr(err))


def test_filter_file():
    with tempfile.NamedTemporaryFile("w", suffix=".filter", delete=False) as f:
        f.write("sport = :22\n  or dst 300.1.1.1\n")
    rc, out, err = run("list", "-F", f.name)
    check("-F FILE: file and line named, caret on that line", rc == 2 and err.splitlines() == [
        "sockdiag: filter: %s:2: malformed IPv4 address '300.1.1.1'" % f.name,
        "  or dst 300.1.1.1", "         ^~~~~~~~~"], repr(err))
    with open(f.name, "w") as g:
        g.write("state listening\n\tand sport = :%d\n" % PORT)
    ref = run("list", "-tn", "state", "listening", "and", "sport", "=", ":%d" % PORT)
    got = run("list", "-tn", "-F", f.name)
    check("-F FILE over several lines is the same filter", got == ref and ref[0] == 0,
          repr((got, ref)))
    os.unlink(f.name)


def test_help():
    rc, out, err = run("help", "kill")
    check("`sockdiag help kill` is `sockdiag kill --help`", (rc, out, err) == run("kill", "--help"))
    rc, out, err = run("help", "frob")
    check("help frob: exit 2, one line naming the commands", rc == 2 and out == "" and
          re.fullmatch(r"sockdiag help: unknown command 'frob' \(list, kill, watch, life, top, guard"
                       r"(, [a-z]+)*\)\n", err) is not None, repr(err))
    rc, out, _ = run("help")
    check("top-level help: exit status 3", rc == 0 and re.search(r"\b3 kill/guard: no "
          r"CAP_NET_ADMIN", out) is not None, out)
    rc, out, opts = opts_in_help("kill")
    check("kill --help: {FILTER|--all|--dead-backends FILE}",
          out.startswith("Usage: sockdiag kill [OPTIONS] {FILTER|--all|--dead-backends FILE}\n"),
          out[:80])
    rc, out, opts = opts_in_help("watch")
    refused = {"-p", "--processes", "--all-netns", "-x", "--unix", "-a", "-l", "--listening",
               "-A", "--query", "-w", "--raw"}
    check("watch --help lists none of the options watch refuses", not (opts & refused),
          repr(opts & refused))
    check("watch --help lists what it accepts", {"-t", "-u", "-4", "-6", "-n", "--json",
          "-N", "-F", "--count", "--rcvbuf"} <= opts, repr(opts))
    for o in sorted(refused):
        rc, out, err = run("watch", "-t", *([o, "tcp"] if o in ("-A", "--query") else [o]))
        check("watch -t %s: refused, exit 2" % o, rc == 2 and out == "" and
              "is not accepted by watch" in err and len(err.splitlines()) == 1, repr(err))
    rc, out, err = run("watch", "-t", "-f", "unix")
    check("watch -t -f unix: refused", rc == 2 and "only TCP and UDP" in err, repr(err))
    rc, out, opts = opts_in_help("guard")
    check("guard --help lists its options like the others", out.startswith(
          "Usage: sockdiag guard [OPTIONS]\n") and {"-c", "--config", "-N", "--netns",
          "--dry-run", "--check-config", "--rtnl-rcvbuf", "-h", "--help"} <= opts, out)
    # What each command's --help lists, it accepts (no "unknown option").
    for cmd in ("list", "kill", "watch", "top"):
        _, _, opts = opts_in_help(cmd)
        bad = []
        for o in sorted(opts):
            rc, out, err = run(cmd, o, "--help") if o not in ("-h", "--help", "-V",
                                                               "--version") else (0, "", "")
            if "unknown option" in err or "not accepted" in err:
                bad.append(o)
        check("%s accepts every option its --help lists" % cmd, not bad, repr(bad))


def test_help_layout():
    """The six commands' --help in one layout: 'Usage: sockdiag CMD ...' first; then
    the option block, every line a 'Group:' label padded to column 10 or a continuation
    indented 10, none wider than 80 columns; a sentence without options may come
    before or after the block; -h|--help in every one."""
    for cmd in ("list", "kill", "watch", "top", "guard", "exporter"):
        rc, out, _ = run(cmd, "--help")
        _, out_h, _ = run(cmd, "-h")
        lines = out.splitlines()
        bad = ["%d: %r" % (i + 1, l) for i, l in enumerate(lines) if len(l) > 80]
        block = [i for i, l in enumerate(lines)
                 if i and re.match(r"^([A-Z][A-Za-z]*:|\s)", l)]
        if not block or block != list(range(block[0], block[-1] + 1)):
            bad.append("not one option block: lines %s" % [i + 1 for i in block])
        for i in block:
            l = lines[i]
            if not re.match(r"^([A-Z][A-Za-z]*: *| {10})\S", l) or len(
                    re.match(r"^([A-Z][A-Za-z]*: *| *)", l).group(0)) != 10:
                bad.append("%d: %r: not at column 10" % (i + 1, l))
        for i, l in enumerate(lines):
            if i and i not in block and re.search(r"(^| )--?[a-z]", l):
                bad.append("%d: %r: an option outside the block" % (i + 1, l))
        check("%s --help: the common layout" % cmd,
              rc == 0 and re.match(r"Usage: sockdiag %s \S" % cmd, out) is not None and
              len(block) > 1 and "-h|--help" in out and out_h == out and not bad,
              "rc %d %s\n%s" % (rc, bad, out))


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
          "--"]
NO_NET_ADMIN = ["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", "--"]


def run_as(pre, *args, timeout=20):
    r = subprocess.run(pre + [SD] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_messages_say_the_fix():
    """Messages that name the fix, not only the problem (issue 24)."""
    rc, out, err = run("list", "-A", "frob")
    check("-A frob: the table names listed", rc == 2 and re.search(
          r"takes all, inet, unix, packet, vsock, tcp, udp, .*, smc; !NAME excludes\)\n$", err)
          is not None, repr(err))
    rc, out, err = run("list", "-tan", "idle")
    check("'idle' alone (idle > 10 unquoted): suggests quoting or gt", rc == 2 and
          "quote the filter" in err and "'idle gt N'" in err, repr(err))
    rc, out, err = run("list", "-tan", "idle 10m")
    check("'idle 10m': no quoting hint (something follows)", rc == 2 and
          "quote" not in err and "needs a comparison" in err, repr(err))
    if not shutil.which("setpriv"):
        check("setpriv installed (util-linux)", False)
        return
    l = socket.socket()
    l.bind(("127.0.0.1", 7193))
    l.listen(1)
    try:
        rc, out, err = run_as(NO_NET_ADMIN, "kill", "-t", "sport = :7193")
        check("kill without CAP_NET_ADMIN: exit 3, says to run as root or grant it", rc == 3
              and "run it as root, or grant it CAP_NET_ADMIN" in err and
              len(err.splitlines()) == 1, repr(err))
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
            os.chmod(conf.name, 0o644)
            rc, out, err = run_as(NO_NET_ADMIN, "guard", "-c", conf.name)
        check("guard without CAP_NET_ADMIN: exit 3, says to run as root or grant it",
              rc == 3 and "run it as root, or grant it CAP_NET_ADMIN" in err, repr(err))
        rc, out, err = run_as(NOBODY, "list", "-tn", "--owners=bpf", "-p")
        check("--owners=bpf as nobody: suggests --owners=proc", rc == 1 and
              "--owners=proc walks /proc instead" in err, "rc %d %r" % (rc, err))
        note = ("sockdiag list: note: not root (no CAP_SYS_PTRACE): the owners of other "
                "users' sockets are not shown\n")
        rc, out, err = run_as(NOBODY, "list", "-tanp", "--owners=proc", "--interval", "50ms",
                              "--count", "2")
        check("-tanp as nobody: one note on stderr (two snapshots)", rc == 0 and err == note
              and out.count(":7193") == 2, "rc %d %r %r" % (rc, err, out))
        rc, out, err = run("list", "-tanp", "--owners=proc")
        check("-tanp as root: no note", rc == 0 and err == "" and ":7193" in out, repr(err))
    finally:
        l.close()


def test_ss_extras():
    """-b against ss; -Z/-z refused with their reasons."""
    import ctypes
    import struct
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    insns = [(0x28, 0, 0, 12), (0x15, 0, 1, 0x0800), (0x06, 0, 0, 0xffff), (0x06, 0, 0, 0)]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in insns))
    s.setsockopt(socket.SOL_SOCKET, 26, struct.pack("HL", len(insns), ctypes.addressof(buf)))
    want = "\tbpf filter (4):  0x28 0 0 12, 0x15 0 1 2048, 0x06 0 0 65535, 0x06 0 0 0,"
    ss = subprocess.run(["ss", "-0b"], stdout=subprocess.PIPE, text=True).stdout
    rc, out, err = run("-0b")
    check("-b: the packet socket's filter, the line ss prints", rc == 0 and
          out.splitlines()[2:] == [want] and want in ss.splitlines(), repr((out, ss)))
    rc, out2, err = run("-0")
    check("without -b: no filter line", rc == 0 and "bpf filter" not in out2, repr(out2))
    ss = subprocess.run(["ss", "-0bem"], stdout=subprocess.PIPE, text=True).stdout
    rc, out, err = run("-0bem")
    check("-bem: the rows ss -0bem prints (bpf before skmem)", rc == 0 and
          out.splitlines()[1:] == ss.splitlines()[1:], repr((out, ss)))
    rc, out, err = run("-0b", "--json")
    check("-b --json: bpf_filter [[code,jt,jf,k],...]", rc == 0 and '"bpf_filter":[[40,0,0,12],'
          '[21,0,1,2048],[6,0,0,65535],[6,0,0,0]]' in out, out)
    s.close()
    # -T itself: tests/netns/threads_ss.py, against ss.
    if not os.path.exists("/sys/fs/selinux/enforce"):
        for o in ("-Z", "-z", "--context"):
            c = "Z" if o == "--context" else o[1]
            usage_error([o], "sockdiag list: -%s: SELinux is not enabled on this system (no "
                        "/sys/fs/selinux): there are no security contexts to show" % c)
    else:
        rc, out, err = run("-Z")
        check("-Z with SELinux: refused, one line", rc == 2 and len(err.splitlines()) == 1)


def scrape(family, addr, port):
    """GET /metrics from addr:port, retried for 5 s (the server starts): the body or None."""
    deadline = time.monotonic() + 5 * float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1"))
    while True:
        try:
            with socket.socket(family) as s:
                s.settimeout(5)
                s.connect((addr, port))
                s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        return data.decode(errors="replace")
                    data += chunk
        except OSError:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)


def test_listen():
    """exporter --listen HOST:PORT (a name, resolved) and :PORT (every address, IPv4 and
    IPv6); what was wrong with a bad one is checked in test_long_values."""
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
        for spec, where in (("localhost:7191", [(socket.AF_INET, "127.0.0.1")]),
                            (":7192", [(socket.AF_INET, "127.0.0.1"),
                                       (socket.AF_INET6, "::1")])):
            p = subprocess.Popen([SD, "exporter", "--listen", spec, "-c", conf.name],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                port = int(spec.rsplit(":", 1)[1])
                for fam, addr in where:
                    body = scrape(fam, addr, port)
                    check("exporter --listen %s: serves on %s" % (spec, addr),
                          body is not None and " 200 " in body.split("\n")[0] and
                          "sockdiag_sockets" in body, repr(body)[:200])
            finally:
                p.terminate()
                _, err = p.communicate(timeout=10)
            check("exporter --listen %s: stopped cleanly" % spec, p.returncode == 0,
                  "rc %s: %s" % (p.returncode, err.decode()[-300:]))


def main():
    test_listen()
    l, c, a = pair()
    test_first_word(l)
    for s in (l, c, a):
        s.close()
    test_kill_events()
    test_long_values()
    test_addresses()
    test_filter_file()
    test_help()
    test_help_layout()
    test_messages_say_the_fix()
    test_ss_extras()
    print("# checks: %d passed, %d failed, 0 skipped" % (len(PASSED), len(FAILED)))
    if FAILED:
        sys.exit(1)


if __name__ == "__main__":
    main()
