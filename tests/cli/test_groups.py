#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One grouping engine, three frontends: over one population (tests/python/holder.py's
TCP pairs over 127.0.0.1, ::1 and a dual-stack listener with an IPv4 client, whose
peer is ::ffff:127.0.0.1), for every key the CLI and Python share and every spelling
of it (aliases: netid, comm, lip, rip, peer),
  sockdiag list -t --count-by K --json,
  sockdiag top -b -t --by K --count 1 --json (a group's "conns"), and
  Python's sockdiag.count_by(K, kind="tcp")
give the same groups with the same counts (JSON null and Python None alike, a
family's name for Python's AddressFamily), and these groups are those the test
computes itself from `sockdiag list -t -p --json`'s records; a single key's groups
are plain values in Python, several keys' tuples.
Run by test_cli.sh in a private network namespace. Usage: test_groups.py SOCKDIAG PYDIR."""
import atexit
import collections
import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

SD, PYDIR = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
FILTER = "state established"
passed, failed = [], []

sys.path.insert(0, PYDIR)
try:
    import sockdiag
except ImportError as e:
    print("SKIP(python): the module is not built (%s)" % e)
    sys.exit(77)

# The keys every frontend offers, with their other spellings.
KEYS = {"state": [], "proto": ["netid"], "family": [], "cgroup": [], "process": ["comm"],
        "lport": [], "rport": [], "laddr": ["lip"], "raddr": ["rip", "peer"], "pid": [],
        "uid": [], "cgroup_id": []}
FAMILY = {socket.AF_INET: "inet", socket.AF_INET6: "inet6", socket.AF_UNIX: "unix"}


def check(cond, what, detail=""):
    (passed if cond else failed).append(what)
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else " " + str(detail)))


def run(args):
    p = subprocess.run([SD] + args, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return p.stdout, p.stderr


def norm(v):
    return FAMILY.get(v, v) if isinstance(v, int) and not isinstance(v, bool) and \
        isinstance(v, socket.AddressFamily) else v


def cli_list(keys):
    out, err = run(["list", "-t", "--count-by", ",".join(keys), "--json", FILTER])
    if out is None:
        return err
    return {tuple(g[k] for k in canon(keys)): g["count"] for g in json.loads(out)}


def cli_top(keys):
    out, err = run(["top", "-b", "-t", "--by", ",".join(keys), "--count", "1", "--interval",
                    "100ms", "--json", FILTER])
    if out is None:
        return err
    top_name = {"process": "comm"}
    return {tuple(g[top_name.get(k, k)] for k in canon(keys)): g["conns"]
            for g in json.loads(out)}


def py(keys):
    try:
        got = sockdiag.count_by(keys if len(keys) > 1 else keys[0], kind="tcp", filter=FILTER)
    except Exception as e:  # noqa: BLE001 (an exception is the answer to compare)
        return "%s: %s" % (type(e).__name__, e)
    if len(keys) == 1:
        if any(isinstance(k, tuple) for k in got):
            return "1-tuples: %r" % list(got)[:3]
        return {(norm(k),): n for k, n in got.items()}
    return {tuple(norm(v) for v in k): n for k, n in got.items()}


def canon(keys):
    return [next((c for c, al in KEYS.items() if k == c or k in al), k) for k in keys]


def ip(a):
    """An address as a key shows it: a v4-mapped one as IPv4."""
    x = ipaddress.ip_address(a)
    return str(x.ipv4_mapped) if x.version == 6 and x.ipv4_mapped else str(x)


def oracle(records):
    """Each key's groups from the records themselves."""
    def val(r, k):
        proc = (r.get("processes") or [{}])[0]
        return {"state": r["state"], "proto": r["netid"], "family": r["family"],
                "cgroup": r.get("cgroup"), "process": proc.get("comm"), "pid": proc.get("pid"),
                "lport": r["local"]["port"], "rport": r["peer"]["port"],
                "laddr": ip(r["local"]["addr"]), "raddr": ip(r["peer"]["addr"]),
                "uid": r.get("uid"), "cgroup_id": r.get("cgroup_id")}[k]
    return {k: collections.Counter((val(r, k),) for r in records) for k in KEYS}


TMP = tempfile.mkdtemp(prefix="sd-groups-")
atexit.register(shutil.rmtree, TMP, True)  # also when a check raises
holder = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "python", "holder.py"),
                           "7300", TMP],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
try:
    if holder.stdout.readline().strip() != "ready":
        raise SystemExit("holder.py did not start")
    out, err = run(["list", "-t", "-p", "-e", "--json", FILTER])
    recs = json.loads(out)
    print("# %d established TCP sockets" % len(recs))
    want = oracle(recs)
    check(any(r["peer"]["addr"].startswith("::ffff:") for r in recs),
          "the population has a v4-mapped peer")
    for key, aliases in KEYS.items():
        for spelling in [key] + aliases:
            got = {"list": cli_list([spelling]), "top": cli_top([spelling]),
                   "count_by": py([spelling])}
            for fe, g in got.items():
                check(g == dict(want[key]), "%s %s: the groups of %s" % (fe, spelling, key),
                      "got %r want %r" % (g, dict(want[key])))
    pair = ["raddr", "state"]
    lg, tg, pg = cli_list(pair), cli_top(pair), py(pair)
    check(isinstance(lg, dict) and lg == tg == pg and len(lg) > 1,
          "raddr,state: the same tuples in list, top and count_by", (lg, tg, pg))
finally:
    holder.stdin.close()
    holder.wait(timeout=60)

print("# checks: %d passed, %d failed, 0 skipped" % (len(passed), len(failed)))
sys.exit(1 if failed else 0)
