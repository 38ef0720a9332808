#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One kernel's summary line, from what its guest left in OUTDIR.

  report.py REL OUTDIR SECONDS QEMU_STATUS

Prints "kernel REL: P passed, F failed, S skipped of N tests, C checks (Ss);
families: ..." (the checks counted as tests/summary.py counts them), then one
line per failed or skipped test (skips with their SKIP(FEATURE) reason); exits
1 when a test failed or the guest did not finish (no OUTDIR/rc)."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import summary  # noqa: E402  (tests/summary.py: checks per test)

SKIP_LINE = summary.SKIP_LINE


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def tests_of(out):
    """{test name: meson's record} of the run kept in OUT (its testlog-*.json): a test run
    twice (in a suite and by name) counts once, its last run."""
    byname = {}
    for log in sorted(glob.glob(os.path.join(out, "testlog-*.json"))):
        for line in read(log).splitlines():
            if line.strip():
                t = json.loads(line)
                byname[t["name"]] = t
    return byname


def main(argv):
    rel, out, secs, qrc = argv[1], argv[2], argv[3], argv[4]
    fam = read(os.path.join(out, "families")).strip()
    fam = fam.partition("families: ")[2] or "unknown (%s)" % (fam or "no answer")
    rc = read(os.path.join(out, "rc")).strip()
    tests = list(tests_of(out).values())
    res = {"OK": [], "FAIL": [], "SKIP": []}
    for t in tests:
        r = t["result"]
        res["OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"].append(t)
    checks = [0, 0, 0]
    for t in tests:
        for i, v in enumerate(summary.count(t)[:3]):
            checks[i] += v
    print("kernel %s: %d passed, %d failed, %d skipped of %d tests (checks: %d passed, "
          "%d failed, %d skipped) in %ss; families: %s" % (
              rel, len(res["OK"]), len(res["FAIL"]), len(res["SKIP"]), len(tests),
              checks[0], checks[1], checks[2], secs, fam))
    for t in res["FAIL"]:
        print("  FAIL %s (%s)" % (t["name"], t["result"]))
    for t in res["SKIP"] + res["OK"]:
        out_ = (t.get("stdout") or "") + (t.get("stderr") or "")
        for feat, why in sorted(set(SKIP_LINE.findall(out_))):
            print("  %s %s: SKIP(%s): %s" % ("skip" if t in res["SKIP"] else "part",
                                             t["name"], feat, why))
    if not rc:
        print("  FAIL guest did not finish (qemu exit %s); see %s/console.log and guest.log" % (qrc, out))
        return 1
    if rc != "0" and not res["FAIL"]:
        print("  FAIL the guest's run exited %s; see %s/guest.log" % (rc, out))
    if res["FAIL"] or rc != "0":
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
