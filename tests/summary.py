#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How many checks ran and were skipped, from meson's test log.

  summary.py BUILDDIR [--strict]

Reads BUILDDIR/meson-logs/testlog.json (the last `meson test`) and counts,
per test: cmocka cases ("[==========] N test(s) run.", "[  SKIPPED ] N
test(s)", "[  FAILED  ] N test(s)"), or a script's own "# checks: P passed, F
failed, S skipped" lines, or else the test as one check. Every skip a test
announces as "SKIP(FEATURE): why" is listed; a test meson reports SKIP
without such a line counts as a skip of FEATURE "?".

--strict (CI, `make test CI=1`): every skipped FEATURE is probed on this
machine (tests/kernel_probe.py, in a private network namespace); a skip of a
feature the machine has, or one that cannot be probed, fails. A kernel
without raw_diag legitimately skips the raw checks; a root CI machine never
skips for want of namespaces, ss, or /etc/services."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CMOCKA_RUN = re.compile(r"^\[==========\] (?:.*: )?(\d+) test\(s\) run\.$", re.M)
CMOCKA_SKIP = re.compile(r"^\[  SKIPPED \] (?:.*: )?(\d+) test\(s\), listed below:$", re.M)
CMOCKA_FAIL = re.compile(r"^\[  FAILED  \] (?:.*: )?(\d+) test\(s\), listed below:$", re.M)
SCRIPT = re.compile(r"^# checks: (\d+) passed, (\d+) failed, (\d+) skipped$", re.M)
SKIP_LINE = re.compile(r"^SKIP\(([A-Za-z0-9_:.-]+)\): (.*)$", re.M)


def load(builddir):
    path = os.path.join(builddir, "meson-logs", "testlog.json")
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def count(t):
    """(passed, failed, skipped) checks of one test, and its skip lines."""
    out = (t.get("stdout") or "") + (t.get("stderr") or "")
    skips = SKIP_LINE.findall(out)
    runs = [int(x) for x in CMOCKA_RUN.findall(out)]
    if runs:
        sk = sum(int(x) for x in CMOCKA_SKIP.findall(out))
        fl = sum(int(x) for x in CMOCKA_FAIL.findall(out))
        # A binary that died before cmocka's summary still failed.
        if t["result"] not in ("OK", "SKIP") and not fl:
            fl = 1
        return sum(runs) - sk - fl, fl, sk, skips
    lines = SCRIPT.findall(out)
    if lines:
        p, f, s = (sum(int(x[i]) for x in lines) for i in range(3))
        if t["result"] not in ("OK", "SKIP") and not f:
            f = 1
        return p, f, s, skips
    if t["result"] == "OK":
        return 1, 0, 0, skips
    if t["result"] == "SKIP":
        return 0, 0, 1, skips or [("?", "skipped without a SKIP(FEATURE) line")]
    return 0, 1, 0, skips


def probe(features):
    """{feature: 'yes'|'no'|'unknown'}, asked in a private network namespace."""
    if not features:
        return {}
    cmd = [sys.executable, os.path.join(HERE, "kernel_probe.py")] + sorted(features)
    r = subprocess.run(["unshare", "-n"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:  # no namespaces here: only what needs no socket
        r = subprocess.run(cmd + ["netns"], capture_output=True, text=True,
                           env=dict(os.environ))
    ans = {}
    for line in r.stdout.splitlines():
        f, _, v = line.partition(" ")
        ans[f] = v.split()[0] if v else "unknown"
    return ans


def main(argv):
    if len(argv) < 2:
        print("usage: summary.py BUILDDIR [--strict]", file=sys.stderr)
        return 2
    strict = "--strict" in argv[2:]
    tests = load(argv[1])
    tot = [0, 0, 0]
    skipped = []  # (test, feature, why)
    results = {}
    for t in tests:
        p, f, s, skips = count(t)
        for i, v in enumerate((p, f, s)):
            tot[i] += v
        results[t["result"]] = results.get(t["result"], 0) + 1
        skipped += [(t["name"], feat, why) for feat, why in skips]
    for name, feat, why in skipped:
        print("skipped: %s: SKIP(%s): %s" % (name, feat, why))
    bad = []
    if strict and skipped:
        have = probe({f for _, f, _ in skipped if f != "?"})
        for name, feat, why in skipped:
            v = have.get(feat, "unknown")
            if v != "no":
                bad.append("%s skipped for %s, which this machine %s" % (
                    name, feat, "has" if v == "yes" else "cannot probe (unknown)"))
            else:
                print("skip is legitimate: %s: this machine has no %s" % (name, feat))
    print("summary: %d tests (%s): %d checks ran, %d passed, %d failed, %d skipped" % (
        len(tests), ", ".join("%d %s" % (n, r) for r, n in sorted(results.items())),
        tot[0] + tot[1], tot[0], tot[1], tot[2]))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
