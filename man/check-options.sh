#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-options.sh SOCKDIAG PAGE
# Both directions between the program and its man page:
#  1. every option that `sockdiag COMMAND --help` lists, for every command, is
#     documented in the page (as \-x or \-\-long);
#  2. every option the page documents (the tag lines of its OPTIONS, KILL,
#     WATCH, GUARD and EXPORTER sections) is accepted by the commands that
#     section is about: `sockdiag COMMAND OPTION [VALUE] --help` exits 0 with
#     the usage and no complaint. Run in a private network namespace (kill's
#     --all is among them, and --help must stop it; nothing may act here).
# Exit 0 pass, 1 fail, 77 when (2) cannot run (no private namespace).
set -eu
sd=$1
page=$2
opts=$(for c in list kill watch guard exporter; do "$sd" "$c" --help 2>&1; done |
	grep -oE '(^|[ |[])--?[a-zA-Z0-9][a-z0-9-]*' | sed 's/^[ |[]//' | sort -u)
[ -n "$opts" ] || { echo "no options found in --help"; exit 1; }
missing=""
for o in $opts; do
	esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	grep -q -e "$esc\\([^a-z0-9-]\\|\$\\)" "$page" || missing="$missing $o"
done
if [ -n "$missing" ]; then
	echo "$page: options in --help but not in the page:$missing"
	exit 1
fi
nhelp=$(echo "$opts" | wc -l)
echo "$page: all $nhelp options of --help are documented"

if ! unshare -n true 2>/dev/null; then
	echo "SKIP(netns): page -> program check needs a private network namespace (root)"
	echo "# checks: 1 passed, 0 failed, 1 skipped"
	exit 77
fi
exec unshare -n python3 - "$sd" "$page" "$nhelp" <<'EOF'
import os
import re
import subprocess
import sys

sd, page, nhelp = sys.argv[1], sys.argv[2], int(sys.argv[3])
SECTIONS = {"OPTIONS": ["list", "kill", "watch"], "KILL": ["kill"], "WATCH": ["watch"],
            "GUARD": ["guard"], "EXPORTER": ["exporter"]}
# A value for each placeholder the page uses (its first word).
VALUES = {"FAMILY": "inet", "LIST": "tcp", "NAME": "pid:%d" % os.getpid(), "FILE": "/dev/null",
          "NETNS": "pid:%d" % os.getpid(), "N": "1", "BYTES": "65536",
          "ADDR:PORT": "127.0.0.1:10113", "auto": "auto"}


def plain(line):
    """A tag line as a reader sees it: '.BR \\-f ", " \\-\\-family " \\fIFAMILY\\fR"'
    becomes '-f , --family FAMILY'."""
    line = re.sub(r"^\.B[RI]?\s+", "", line)
    line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\%", "")
    return re.sub(r"\s+", " ", line.replace('"', " ")).strip()


documented = []  # (command, option, value or None)
section = None
lines = open(page, encoding="utf-8").read().splitlines()
for i, line in enumerate(lines):
    if line.startswith(".SH "):
        section = line[4:].strip('"')
        continue
    if section not in SECTIONS or line != ".TP" or i + 1 >= len(lines):
        continue
    tag = lines[i + 1]
    if not re.match(r"\.B[RI]? \\-", tag):
        continue
    words = plain(tag).replace(" : ", ":").split()
    names = [w.rstrip(",") for w in words if w.startswith("-")]
    rest = [w for w in words if not w.startswith("-") and w not in (",", "...")]
    value = None
    if rest:
        key = rest[0].split("|")[0]
        if key not in VALUES:
            print("FAIL: %s: no value known for the placeholder %r of %s" % (page, key, names))
            sys.exit(1)
        value = VALUES[key]
    for cmd in SECTIONS[section]:
        for n in names:
            documented.append((cmd, n, value))

bad = []
for cmd, opt, value in documented:
    argv = [sd, cmd, opt] + ([value] if value else []) + ["--help"]
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=20)
    out = r.stdout + r.stderr
    if opt in ("-V", "--version"):
        ok = r.returncode == 0 and out.startswith("sockdiag ")
    else:
        ok = r.returncode == 0 and "sage: sockdiag" in out and "unknown option" not in out
    if not ok:
        bad.append("%s (exit %d: %s)" % (" ".join(argv[1:]), r.returncode,
                                        out.strip().splitlines()[0] if out.strip() else ""))
if not documented:
    print("FAIL: %s: no option found in its tag lines" % page)
    sys.exit(1)
for b in bad:
    print("FAIL: documented but refused: " + b)
print("%s: %d documented (command, option) pairs, %d accepted" % (
    page, len(documented), len(documented) - len(bad)))
print("# checks: %d passed, %d failed, 0 skipped" % (1 + len(documented) - len(bad), len(bad)))
sys.exit(1 if bad else 0)
EOF
