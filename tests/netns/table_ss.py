#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Differential test of the table `sockdiag list` prints against `ss`'s, byte for byte:
column widths (with the header and under -H), padding, and the order of the sockets
and of the tables in a multi-protocol listing (ss: netlink, packet, unix, raw, udp,
tcp, ..., IPv4 before IPv6 in each inet table). Run by diff_ss.sh inside a private
network namespace, on diff_ss.py's population.

`diff <(ss OPTS) <(sockdiag list OPTS)` must be empty for every OPTS below: they
select only sockets on which both tools see the same data. Where the data cannot
agree (each tool's own sock_diag socket in the netlink table; udplite, which ss does
not show; raw sockets when raw_diag is not loaded, which ss reads from /proc
instead), the full `-an` listing is compared line by line with those lines left out,
whitespace aside: the order of everything else must still be ss's."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_ss  # noqa: E402  (the population)

SD = sys.argv[1]
FAILED = []
PASSED = []

# Each: (options, filter); sockdiag list gets the same ones as ss.
BYTE_CASES = [
    ("-tan", ""), ("-tn", ""), ("-tln", ""), ("-4tan", ""), ("-6tan", ""), ("-uan", ""),
    ("-un", ""), ("-uln", ""), ("-xan", ""), ("-xn", ""), ("-xln", ""), ("-0an", ""),
    ("-0n", ""), ("-0a", ""), ("-uanm", ""),
    # -m: the full listener of port 5006 counts drops as the SYN is retried.
    ("-tanm", "not sport = :5006"), ("-tanm --tos", "not sport = :5006"),
    ("-tane", "exclude syn-sent exclude time-wait"), ("-tanp", ""),
    ("-tanpe", "exclude syn-sent exclude time-wait"), ("-tuxan0", ""), ("-tuxn0", ""),
    ("-tuxln0", ""), ("-tuan", ""), ("-tu4an", ""), ("-A tcp,udp,unix,packet -an", ""),
    ("-xan", "state listening"), ("-tan", "state established"), ("-tan", "dport = :5000"),
]

# TIME-WAIT sockets live 60 s: past this, the cases leave them out (on both sides).
TW_SAFE = 40


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else "\n" + detail))
    (FAILED if not cond else PASSED).append(name)


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="surrogateescape")
    return r.returncode, r.stdout, r.stderr


def first_diff(a, b):
    al, bl = a.split("\n"), b.split("\n")
    for i in range(max(len(al), len(bl))):
        x = al[i] if i < len(al) else "<none>"
        y = bl[i] if i < len(bl) else "<none>"
        if x != y:
            return "  line %d\n  ss:       %r\n  sockdiag: %r" % (i + 1, x, y)
    return ""


def byte_cases(t0):
    for opts, filt in BYTE_CASES:
        args = opts.split()
        filt = filt.split()
        if time.monotonic() - t0 > TW_SAFE and "time-wait" not in filt:
            filt = ["exclude", "time-wait"] + filt
        for hdr in ([], ["-H"]):
            rs, ss_out, ss_err = run(["ss"] + hdr + args + filt)
            rd, sd_out, sd_err = run([SD, "list"] + hdr + args + filt)
            name = "table %s%s %s" % ("-H " if hdr else "", opts, " ".join(filt))
            if rs != 0 or rd != 0:
                check(name, False, "ss rc %d %r, sockdiag rc %d %r" % (rs, ss_err, rd, sd_err))
                continue
            if len(ss_out.splitlines()) < (1 if hdr else 2):
                check(name, False, "ss printed no socket: the population is missing")
                continue
            check(name, ss_out == sd_out, first_diff(ss_out, sd_out))


def disagreeing(tokens):
    """Lines whose data differ by design (see the module's docstring)."""
    netid = tokens[0]
    if netid == "nl" and tokens[4].split(":")[0] == "4":
        return True
    return netid in ("udpl", "raw")


def nl_block(rows):
    out = []
    for t in rows:
        if t[0] != "nl":
            out.append(t)
        elif not out or out[-1] != ["nl"]:
            out.append(["nl"])
    return out


def order_case(t0):
    filt = ["exclude", "time-wait"] if time.monotonic() - t0 > TW_SAFE else []
    rs, ss_out, _ = run(["ss", "-an"] + filt)
    rd, sd_out, _ = run([SD, "list", "-an"] + filt)
    ss_rows = [l.split() for l in ss_out.splitlines()[1:] if l[:1] not in ("", " ", "\t")]
    sd_rows = [l.split() for l in sd_out.splitlines()[1:] if l[:1] not in ("", " ", "\t")]
    # Netlink: ss calls a connect()ed socket UNCONN, prints portids signed and
    # some sockets twice (diff_ss.py Q5-Q7); there only the place of the
    # table is compared.
    ss_rows = nl_block([t for t in ss_rows if not disagreeing(t)])
    sd_rows = nl_block([t for t in sd_rows if not disagreeing(t)])
    netids = []
    for t in ss_rows:
        if not netids or netids[-1] != t[0]:
            netids.append(t[0])
    detail = ""
    if ss_rows != sd_rows:
        for i, (x, y) in enumerate(zip(ss_rows, sd_rows)):
            if x != y:
                detail = "  row %d\n  ss:       %s\n  sockdiag: %s" % (i + 1, x, y)
                break
        else:
            detail = "  ss %d rows, sockdiag %d" % (len(ss_rows), len(sd_rows))
    check("-an: every table, in ss's order (%s)" % " ".join(netids),
          rs == 0 and rd == 0 and ss_rows == sd_rows and len(netids) >= 6, detail)


def main():
    # ss -p reads every process's descriptors: in a pid namespace of our own
    # (with its /proc) that is only this test's processes, and quick.
    if os.environ.get("SDIAG_TABLE_PIDNS") != "1":
        env = dict(os.environ, SDIAG_TABLE_PIDNS="1")
        os.execvpe("unshare", ["unshare", "-p", "-f", "--mount-proc", sys.executable,
                               os.path.abspath(__file__), SD], env)
    with tempfile.TemporaryDirectory(prefix="sdiag-table-") as tmp:
        pop = diff_ss.Population(tmp)
        pop.build()
        t0 = time.monotonic()
        order_case(t0)
        byte_cases(t0)
        pop.child.stdin.close()
        pop.child.wait()
    print("# checks: %d passed, %d failed, 0 skipped" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
