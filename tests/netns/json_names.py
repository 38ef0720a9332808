#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`sockdiag list --json/--ndjson` stays valid JSON whatever bytes a unix
socket name holds (quotes, backslashes, control characters, invalid UTF-8,
NULs inside abstract names), and every name is recoverable exactly: from
"path" (JSON-decoded, UTF-8), or from "path_hex" when the CLI gives one;
"abstract": true means a leading NUL. Run by diff_ss.sh inside a private
network namespace. Exits 1 on any failure."""
import json
import os
import socket
import subprocess
import sys
import tempfile

NAMES = [
    b'q"uote', b"back\\slash", b"new\nline", b"tab\tctl\x01\x1f\x7f",
    b"bad\xff\xfeutf8", b"trunc\xc3", b"utf8-\xc3\xa9-\xe2\x82\xac", b"<script>&amp;",
]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        fail("%s exited %d: %r" % (" ".join(argv), r.returncode, r.stderr))
    try:
        return r.stdout.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        fail("%s printed invalid UTF-8: %s" % (" ".join(argv), e))


def recover(rec):
    loc = rec.get("local", {})
    if "path_hex" in loc:
        name = bytes.fromhex(loc["path_hex"])
    elif "path" in loc:
        name = loc["path"].encode("utf-8")
    else:
        return None
    return b"\0" + name if loc.get("abstract") else name


def main():
    sockdiag = sys.argv[1]
    keep, want = [], {}
    with tempfile.TemporaryDirectory(prefix="sdiag-json-") as tmp:
        base = os.fsencode(tmp) + b"/"
        for i, n in enumerate(NAMES):
            for name, typ in ((base + n, socket.SOCK_STREAM),
                              (b"\0abs" + n + b"\0nul%d" % i, socket.SOCK_DGRAM)):
                s = socket.socket(socket.AF_UNIX, typ)
                s.bind(name)
                keep.append(s)
                want[os.fstat(s.fileno()).st_ino] = name

        recs = []
        for line in run([sockdiag, "list", "-xa", "--ndjson"]).splitlines():
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as e:
                fail("invalid JSON line (%s): %r" % (e, line))
        try:
            arr = json.loads(run([sockdiag, "list", "-xa", "--json"]))
        except json.JSONDecodeError as e:
            fail("--json output is not valid JSON: %s" % e)
        if not isinstance(arr, list) or len(arr) != len(recs):
            fail("--json gave %s records, --ndjson %d" % (len(arr), len(recs)))
        run([sockdiag, "list", "-xa"])  # the table must not fail either

        by_ino = {r.get("inode"): r for r in recs}
        bad = 0
        for ino, name in want.items():
            r = by_ino.get(ino)
            if r is None:
                print("not ok: %r (inode %d) not listed" % (name, ino))
                bad += 1
            elif recover(r) != name:
                print("not ok: %r came back as %r from %s" %
                      (name, recover(r), json.dumps(r["local"])))
                bad += 1
        print("# checks: %d passed, %d failed, 0 skipped" % (len(want) - bad, bad))
        if bad:
            return 1
        print("ok json_names: %d names valid and recoverable" % len(want))
        return 0


if __name__ == "__main__":
    sys.exit(main())
