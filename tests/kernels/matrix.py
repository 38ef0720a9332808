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
sys.path.insert(0, HERE)
import report  # noqa: E402  (report.tests_of: a run's tests; report.SKIP_LINE)

INTRO = """# sockdiag on the kernels people run

What each kernel offers sock_diag and what sockdiag's commands do there, as `make
test-kernels` found it: Debian 11's 5.10, Debian 12's 6.1 and its 6.12 LTS, sid's 7.2 (all
booted in QEMU with every diag module their packages ship loaded) and the development
machine's kernel. Produced by `tests/kernels/matrix.py build >docs/kernels.md` after
`make test-kernels`; each value is the kernel's own answer to a raw netlink request made by
tests/kernels/features.py (never sockdiag's), except the `list -p` row, which is what
`sockdiag list -p --owners=bpf -v` said. yes: works; no (why): the kernel lacks it, and what
sockdiag says; degraded (how): works another way.

What sockdiag does where a kernel lacks something:

- a family without its diag handler (raw, SCTP, vsock, TIPC, SMC, XDP, MPTCP): a listing that
  names it prints `sockdiag: xdp: not supported by this kernel (no xsk_diag)` and exits 0;
  `kill` names it and exits 1; the tests of tests/families/ skip with `SKIP(xdp_diag)`.
- no UDP-Lite (Linux 7.1 removed it: commit 56520b398e5e "ipv4: Retire UDP-Lite." and its
  IPv6 twin, merged from net-next for 7.1; 7.0 still has it): `--udplite` says `sockdiag:
  udplite: not supported by this kernel (REL: UDP-Lite was removed in Linux 7.1)`.
- no TIME-WAIT destroy (before 6.0, commit af9784d007d8 "tcp: diag: add support for
  TIME_WAIT sockets to tcp_abort()"): `kill` reports each TIME-WAIT socket `unsupported`
  with `this kernel cannot destroy TIME-WAIT sockets (Linux 6.0 and later can)`, exit 1 if
  nothing else was destroyed.
- no bound-inactive dump (before 6.8): `list -B` says `this kernel (REL) does not dump
  bound-inactive sockets (Linux 6.8 and later do)` instead of printing nothing.
- destroy refused for a protocol (SCTP, MPTCP): `kill` reports each such socket
  `unsupported` and exits 1; MPTCP's subflows can be destroyed (`--mptcp-subflows`).
- no BPF owners iterator (its loader needs Linux 5.14 and BTF): `-p --owners=bpf` says
  `--owners=bpf: this kernel (REL) cannot load the BPF iterator (REASON; Linux 5.14 and later
  with BTF can): walking /proc instead`; the default `--owners=auto` walks /proc silently.
- attributes a kernel does not send (the `tcp attributes` row): the field is absent from the
  record (its `SDIAG_HAS_*` bit clear), never shown as zero.

How each column was made, and the history of these runs: docs/kernels-history.md.

"""

COMMANDS_INTRO = """What each command did in the guest's run of the `live`, `netns` and `families` suites:
yes when every test behind the row passed, no (TEST failed), degraded (TEST: what it skipped,
each skip naming a feature the kernel was asked for and lacks), not run (a run of a subset)."""

RESULTS_INTRO = """The runs of each kernel booted for this page, `make test-kernels` (one guest at a
time, TCG on a 2-core machine shared with other jobs: the durations are upper bounds). Where a
full run failed tests that were fixed after it, the run of those tests on the fixed tree
follows it (the Commands table counts each test's last run). The cloud flavour's
family_sctp failure is 5.10's SCTP check in tests/families/live.py, fixed separately. A skip
line names the feature the kernel lacks, as the test asked it. What each run found and how it was fixed:
docs/kernels-history.md."""

FAMILIES = ["tcp", "udp", "udplite", "raw", "sctp", "mptcp", "unix", "packet", "netlink",
            "tipc", "vsock", "smc", "xdp"]


def family_cell(f, fam):
    if fam in f.get("families", "").split():
        return "yes"
    if fam == "udplite":
        return "no (removed in Linux 7.1: `--udplite` says so)"
    return "no (no %s diag handler: a listing says so, exit 0)" % fam


def destroy_cell(f, proto):
    got = dict(x.split(" ", 1) for x in f.get("destroy", "").split(", ") if " " in x)
    if proto not in got:
        return "no (no %s here)" % proto
    if got[proto] == "yes":
        return "yes"
    return "no (%s: each socket reported `unsupported`, exit 1)" % got[proto]


def owners_cell(f):
    v = f.get("owners -p", "?")
    if v == "BPF iterator":
        return "yes (BPF iterator)"
    why = v.partition("BPF iterator: ")[2].rstrip(")")
    if why:
        return "degraded (owners from a /proc walk: the BPF iterator does not load, %s; " \
               "it needs Linux 5.14 and BTF)" % why
    return "degraded (%s)" % v


ROWS = [("`list`: %s" % fam, lambda f, fam=fam: family_cell(f, fam)) for fam in FAMILIES] + [
    ("`list -B` (bound-inactive)", lambda f: "yes" if f.get("bound-inactive dump") == "yes"
     else "no (before 6.8: `list -B` says so)"),
] + [("`kill` %s" % p, lambda f, p=p: destroy_cell(f, p))
     for p in ("tcp", "udp", "raw", "sctp", "mptcp")] + [
    ("`kill` TIME-WAIT", lambda f: {"yes": "yes", "": "?"}.get(
        f.get("destroy time-wait", ""),
        "no (before 6.0: each reported `unsupported`, naming 6.0)")),
    ("rtnetlink groups above 32 (`-A netlink` groups)",
     lambda f: {"yes": "yes", "no": "no (before 5.8)"}.get(f.get("rtnetlink groups above 32"),
                                                            "?")),
] + [
    ("`watch` (TCP destroy events)", lambda f: "yes" if f.get("destroy events") == "yes"
     else "no (%s)" % f.get("destroy events", "?")),
    ("`list -p` owners", owners_cell),
    ("cgroup ids (`cgroup` filters)", lambda f: f.get("cgroup ids", "?")),
    ("tcp attributes", lambda f: f.get("tcp attributes", "?")),
    ("tcp_info bytes", lambda f: f.get("tcp_info bytes", "?")),
]


# What each command row stands on: the tests of the guest's run that exercise it
# (tests/*/meson.build). A cell is yes when they all passed, no (TEST failed) when one failed,
# degraded (TEST: why) when one skipped part or all with a SKIP(FEATURE) line, and "not run"
# when the run did not include them (a CI subset).
COMMANDS = [
    ("`list` (every table, against ss; filters; options)",
     ["diff_ss", "table_ss", "json_names", "list_order", "summary_ss", "threads_ss", "list_live",
      "inet_live", "local_live", "netlink_dup_live", "tcpinfo_live", "dump_pull", "filter_live",
      "cgroup_live", "rtnl_intr_live", "cli", "cli_options", "cli_habits", "cli_inputs",
      "list_interval"]),
    ("`list -p` (owners, /proc and BPF)", ["procs_live", "procs_cli", "owners_bpf"]),
    ("`kill` (selectors, cgroups)", ["kill_cli", "kill_diff", "kill_seen", "kill_cgroup",
                                     "destroy", "destroy_ops"]),
    ("`kill --dead-backends` (conntrack)", ["kill_backends"]),
    ("`watch` (destroy events)", ["watch_burst", "watch_filter"]),
    ("`top` (batch and screen)", ["top_batch", "top_ui"]),
    ("`drain`", ["drain_core", "drain_nginx", "drain_haproxy"]),
    ("`life`", ["life"]),
    ("families (raw, SCTP, vsock, TIPC, SMC, XDP, MPTCP live)",
     ["family_raw", "family_sctp", "family_vsock", "family_tipc", "family_smc", "family_xdp",
      "family_mptcp"]),
    ("`guard`: addresses, links, routes, reap, exemptions", ["guard_e2e", "guard_policies_e2e"]),
    ("`guard`: resync, interrupted dumps, cgroups", ["guard_resync", "guard_intr",
                                                     "guard_cgroup", "guard_race"]),
    ("`guard`: dead backends, conntrack", ["guard_backends"]),
    ("`guard --all-netns`, `life --all-netns`", ["guard_allnetns", "guard_allnetns_gone",
                                                 "guard_allnetns_caps", "life_allns"]),
    ("`exporter` (HTTP, namespaces)", ["exporter_e2e", "exporter_netns", "exporter_config",
                                       "http_slow", "guard_metrics"]),
    ("Python module", ["python", "groups"]),
]


def command_cell(tests, names):
    tests = {k.rpartition(" / ")[2]: t for k, t in tests.items()}
    ran = [n for n in names if n in tests]
    if not ran:
        return "not run"
    failed = [n for n in ran if tests[n]["result"] not in ("OK", "SKIP", "EXPECTEDFAIL")]
    if failed:
        return "no (%s failed)" % ", ".join(failed)
    why = []
    for n in ran:
        if tests[n]["result"] != "SKIP":
            continue  # a passed test's own SKIP line marks a check moot here, not a lack
        out = (tests[n].get("stdout") or "") + (tests[n].get("stderr") or "")
        for feat, text in sorted(set(report.SKIP_LINE.findall(out))):
            why.append("%s: %s" % (n, text.rstrip(".")))
    if why:
        return "degraded (%s)" % "; ".join(why)
    return "yes" if len(ran) == len(names) else "yes (%s run)" % ", ".join(ran)


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
    cols = []  # (features, reports, tests) per kernel
    for d in sorted(glob.glob(os.path.join(argv[1], "kernels", "*", "features"))):
        f = parse(read(d))
        if f.get("kernel"):
            kdir = os.path.dirname(d)
            cols.append((f, runs(kdir), report.tests_of(kdir)))
    sd = os.path.join(argv[1], "cli", "sockdiag")
    p = subprocess.run(["unshare", "-n", sys.executable, os.path.join(HERE, "features.py"), sd],
                       capture_output=True, text=True)
    host = parse(p.stdout)
    if host.get("kernel"):
        cols.append((host, [], None))
    cols.sort(key=lambda c: [int(x) if x.isdigit() else 0
                             for x in c[0]["kernel"].split("-")[0].split(".")])
    head = ["| | " + " | ".join(f["kernel"] for f, _, _ in cols) + " |",
            "|---" * (len(cols) + 1) + "|"]
    out = [INTRO, "## Families and kernel features", ""] + head
    for label, cell in ROWS:
        out.append("| %s | %s |" % (label, " | ".join(cell(f) for f, _, _ in cols)))
    out += ["", "## Commands", "", COMMANDS_INTRO, ""] + head
    for label, names in COMMANDS:
        out.append("| %s | %s |" % (label, " | ".join(
            "`make test`" if t is None else command_cell(t, names)
            for _, _, t in cols)))
    out += ["", "## Test results per kernel (`make test-kernels`)", "", RESULTS_INTRO, ""]
    for f, reps, _ in cols:
        for rep in reps:
            out.append("```")
            out.append(rep)
            out.append("```")
            out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
