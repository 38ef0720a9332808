#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/kernels.md from the guests' results: the feature table (what
tests/kernels/features.py found on each kernel, this machine's own kernel
last) and the test results (tests/kernels/report.py's lines).

  matrix.py BUILDDIR >docs/kernels.md

Reads BUILDDIR/kernels/REL/features and report (and report-NAME with
config-NAME.env: an earlier run of the same kernel kept by hand) for every
kernel `make test-kernels` booted, and runs features.py here in a private network
namespace for the host's kernel."""
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

INTRO = """# sockdiag on the kernels people run

What each kernel offers sock_diag, as `make test-kernels` found it: Debian 12's 6.1, its
6.12 LTS (both booted in QEMU with every diag module they ship loaded) and the development
machine's kernel. Produced by `tests/kernels/matrix.py build >docs/kernels.md` after
`make test-kernels`; each value is the kernel's own answer to a raw netlink request made by
tests/kernels/features.py (never sockdiag's), except the `-p` row, which is what
`sockdiag list -p --owners=bpf -v` said.

What sockdiag does where a kernel lacks something:

- a family without its diag module (raw, SCTP, vsock, TIPC, SMC, XDP): a listing that names it
  prints `sockdiag: xdp: not supported by this kernel (no xsk_diag)` and exits 0; `kill`
  names it and exits 1; the tests of tests/families/ skip with `SKIP(xdp_diag)`.
- no bound-inactive dump (before 6.8): `list -B` says `this kernel (REL) does not dump
  bound-inactive sockets (Linux 6.8 and later do)` instead of printing nothing.
- destroy refused for a protocol (SCTP, MPTCP): `kill` reports each such socket
  `unsupported` and exits 1; MPTCP's subflows can be destroyed (`--mptcp-subflows`).
- attributes a kernel does not send (the `tcp attributes` row): the field is absent from the
  record (its `SDIAG_HAS_*` bit clear), never shown as zero.

"""


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def runs(kdir):
    """The runs of one kernel's directory: report (the last run) and report-NAME (an
    earlier run kept beside it, with its config-NAME.env), each with what it ran."""
    out = []
    for rep in sorted(glob.glob(os.path.join(kdir, "report*")),
                      key=lambda r: (os.path.basename(r) == "report", r)):  # the last run last
        suffix = os.path.basename(rep)[len("report"):]
        conf = {}
        for line in read(os.path.join(kdir, "config%s.env" % suffix)).splitlines():
            k, _, v = line.partition("=")
            conf[k] = v.strip("'\"").replace("\\ ", " ")
        what = "suites: %s" % (conf.get("SUITES") or "-")
        if conf.get("TESTS"):
            what += "; tests: %s" % conf["TESTS"]
        slow = read(os.path.join(kdir, "config%s.env" % suffix))
        if "SLOWDOWN=" in slow:
            what += "; SOCKDIAG_TEST_SLOWDOWN=%s" % slow.split("SLOWDOWN=")[1].split()[0]
        out.append("%s\n%s" % (what, read(rep).strip()))
    return out


def parse(text):
    d = {}
    for line in text.splitlines():
        k, sep, v = line.partition(": ")
        if sep:
            d[k.strip()] = v.strip()
    return d


def main(argv):
    if len(argv) != 2:
        print("usage: matrix.py BUILDDIR", file=sys.stderr)
        return 2
    cols = []
    for d in sorted(glob.glob(os.path.join(argv[1], "kernels", "*", "features"))):
        f = parse(read(d))
        if f.get("kernel"):
            cols.append((f, runs(os.path.dirname(d))))
    sd = os.path.join(argv[1], "cli", "sockdiag")
    p = subprocess.run(["unshare", "-n", sys.executable, os.path.join(HERE, "features.py"), sd],
                       capture_output=True, text=True)
    host = parse(p.stdout)
    if host.get("kernel"):
        cols.append((host, []))
    cols.sort(key=lambda c: [int(x) if x.isdigit() else 0
                             for x in c[0]["kernel"].split("-")[0].split(".")])
    keys = []
    for f, _ in cols:
        keys += [k for k in f if k not in keys and k != "kernel"]
    out = [INTRO, "| | " + " | ".join(f["kernel"] for f, _ in cols) + " |",
           "|---" * (len(cols) + 1) + "|"]
    for k in keys:
        out.append("| %s | %s |" % (k, " | ".join(f.get(k, "?") for f, _ in cols)))
    out.append("")
    out.append("## Test results per kernel (`make test-kernels`)")
    out.append("")
    out.append("Each kernel's runs in the order they were made (on a 2-core machine shared with "
               "other jobs: the durations are upper bounds); where a run failed a test, the "
               "later run of that test after its fix (see `git log`) follows it.")
    out.append("")
    for f, reps in cols:
        for rep in reps:
            out.append("```")
            out.append(rep)
            out.append("```")
            out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
