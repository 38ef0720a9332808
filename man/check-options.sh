#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-options.sh SOCKDIAG PAGE
# Both directions between the program and its man page:
#  1. every option that `sockdiag COMMAND --help` lists, for every command, is
#     documented in the page (as \-x or \-\-long);
#  2. every option the page documents (the tag lines of its OPTIONS, KILL,
#     WATCH, GUARD and EXPORTER sections) is accepted by the commands that
#     section is about: `sockdiag COMMAND OPTION [VALUE] --help` exits 0 with
#     the usage and no complaint (or, for an option refused in this setting,
#     exit 2 with one line naming it: never "unknown option"); but a shared option that `watch --help`
#     does not list must be refused by watch (exit 2, one line naming it) and,
#     unless it selects a table, be named in the WATCH section.
#     Run in a private network namespace (kill's --all is among them, and
#     --help must stop it; nothing may act here).
# Exit 0 pass, 1 fail, 77 when (2) cannot run (no private namespace).
set -eu
sd=$1
page=$2
ns=unshare
if ! unshare -n true 2>/dev/null; then
	echo "SKIP(netns): page -> program check needs a private network namespace (root)"
	ns=
fi
exec ${ns:+unshare -n} python3 - "$sd" "$page" "$ns" <<'EOF'
import os
import re
import subprocess
import sys

sd, page, in_netns = sys.argv[1], sys.argv[2], sys.argv[3] != ""
text = open(page, encoding="utf-8").read()

# 1. --help -> page.
helps = ""
for c in ("list", "kill", "watch", "top", "guard", "exporter", "drain"):
    r = subprocess.run([sd, c, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    helps += r.stdout
opts = sorted({m for m in re.findall(r"(?:^|(?<=[ |\[]))(--?[a-zA-Z0-9][a-z0-9-]*)", helps, re.M)})
if not opts:
    print("no options found in --help")
    sys.exit(1)
missing = [o for o in opts
           if not re.search(re.escape(o.replace("-", "\\-")) + r"([^a-z0-9-]|$)", text, re.M)]
if missing:
    print("%s: options in --help but not in the page: %s" % (page, " ".join(missing)))
    sys.exit(1)
print("%s: all %d options of --help are documented" % (page, len(opts)))
if not in_netns:
    print("# checks: 1 passed, 0 failed, 1 skipped")
    sys.exit(77)

# 2. page -> program.
SECTIONS = {"OPTIONS": ["list", "kill", "watch"], "KILL": ["kill"], "WATCH": ["watch"],
            "DRAIN": ["drain"],
            "TOP": ["top"], "GUARD": ["guard"], "EXPORTER": ["exporter"]}
# A value for each placeholder the page uses (its first word).
VALUES = {"FAMILY": "inet", "LIST": "tcp", "NAME": "pid:%d" % os.getpid(), "FILE": "/dev/null",
          "NETNS": "pid:%d" % os.getpid(), "N": "1", "BYTES": "65536",
          "HOST:PORT": "127.0.0.1:10113", "auto": "auto", "DURATION": "1s",
          "KEY[,KEY...]": "state", "COLUMN": "rx", "DIR": "/run/netns",
          "URL": "http://127.0.0.1:9/"}


def plain(line):
    """A tag line as a reader sees it: '.BR \\-f ", " \\-\\-family " \\fIFAMILY\\fR"'
    becomes '-f , --family FAMILY'."""
    line = re.sub(r"^\.B[RI]?\s+", "", line)
    line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\%", "")
    return re.sub(r"\s+", " ", line.replace('"', " ")).strip()


documented = []  # (command, option, value or None)
tables = set()  # the OPTIONS section's table options (its "Sockets" subsection)
spellings = {}  # option -> every spelling of it on its tag line (-A, --query, --socket)
section = sub = None
lines = text.splitlines()
for i, line in enumerate(lines):
    if line.startswith(".SH "):
        section, sub = line[4:].strip('"'), None
        continue
    if line.startswith(".SS "):
        sub = line[4:].strip('"')
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
        key = rest[0] if rest[0] in VALUES else rest[0].split("|")[0]
        if key not in VALUES:
            print("FAIL: %s: no value known for the placeholder %r of %s" % (page, key, names))
            sys.exit(1)
        value = VALUES[key]
    if section == "OPTIONS" and sub == "Sockets":
        tables.update(names)
    if section == "OPTIONS":
        for n in names:
            spellings[n] = names
    cmds = SECTIONS[section]
    m = re.search(r"\(([a-z, ]+)\)$", sub or "")  # ".SS Snapshots (list)": those only
    if m:
        cmds = [c for c in cmds if c in re.split(r"[, ]+", m.group(1))]
    for cmd in cmds:
        for n in names:
            documented.append((cmd, n, value))

# watch takes only some of the shared options, and its section says so: other
# tables "are a usage error", and it names the other options it refuses. So
# for watch, a shared option that `watch --help` does not list must be refused
# (exit 2, one line naming it) and be a table option or named in WATCH.
r = subprocess.run([sd, "watch", "--help"], stdout=subprocess.PIPE, text=True)
watch_help = set(re.findall(r"(?:^|(?<=[ |\[]))(--?[a-zA-Z0-9][a-z0-9-]*)", r.stdout, re.M))
watch_text = text[text.index("\n.SH WATCH"):]
watch_text = watch_text[:watch_text.index("\n.SH ", 1)]
refused = [(c, o, v) for c, o, v in documented if c == "watch" and o not in watch_help]
documented = [x for x in documented if x not in refused]

def accepted(cmd, pairs):
    """Does `sockdiag CMD OPT [VALUE]... --help` exit 0 with the usage?"""
    argv = [sd, cmd]
    for opt, value in pairs:
        argv += [opt] + ([value] if value else [])
    version = any(o in ("-V", "--version") for o, _ in pairs)
    r = subprocess.run(argv + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=20)
    out = r.stdout + r.stderr
    if version:
        ok = r.returncode == 0 and out.startswith("sockdiag ")
    else:
        ok = r.returncode == 0 and "sage: sockdiag" in out and "unknown option" not in out
    if not ok and len(pairs) == 1 and r.returncode == 2 and len(r.stderr.splitlines()) == 1:
        # Known but refused here, saying why in one line (kill -s, -Z without
        # SELinux): the program knows the option; only "unknown option" fails.
        names = spellings.get(pairs[0][0], [pairs[0][0]])
        ok = "unknown option" not in r.stderr and any(
            re.search(r"(^|[ '(])%s([ ':)]|$)" % re.escape(n), r.stderr) for n in names)
    first = out.strip().splitlines()[0] if out.strip() else ""
    return ok, "%s (exit %d: %s)" % (" ".join(argv[1:] + ["--help"]), r.returncode, first)


# All of a command's options in one run (--help stops the parse, so nothing is
# ever acted on); only when that fails, one run per option names the culprit.
bad = []
for cmd in sorted({c for c, _, _ in documented}):
    pairs = [(o, v) for c, o, v in documented if c == cmd and o not in ("-V", "--version")]
    if accepted(cmd, pairs)[0]:
        continue
    for p in pairs:
        ok, why = accepted(cmd, [p])
        if not ok:
            bad.append(why)
for cmd, opt, value in refused:
    argv = [sd, cmd, opt] + ([value] if value else []) + ["--help"]
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=20)
    names = spellings.get(opt, [opt])
    named = opt in tables or any(re.search(re.escape(n.replace("-", "\\-")) + r"([^a-z0-9-]|$)",
                                           watch_text, re.M) for n in names)
    said = any(re.search(r"'%s'|\(%s\)" % (re.escape(n), re.escape(n)), r.stderr) for n in names)
    if not named:
        bad.append("watch refuses %s, which its section does not name" % opt)
    if not (r.returncode == 2 and len(r.stderr.splitlines()) == 1 and said):
        bad.append("%s: refused by watch without saying so (exit %d: %r; in WATCH: %s)" % (
            opt, r.returncode, r.stderr, bool(named)))
for cmd, opt, value in documented:
    if opt in ("-V", "--version"):
        ok, why = accepted(cmd, [(opt, value)])
        if not ok:
            bad.append(why)
if not documented:
    print("FAIL: %s: no option found in its tag lines" % page)
    sys.exit(1)
for b in bad:
    print("FAIL: documented but refused: " + b)
print("%s: %d documented (command, option) pairs accepted, %d refused by watch as documented,"
      " %d wrong" % (page, len(documented), len(refused), len(bad)))
print("# checks: %d passed, %d failed, 0 skipped" % (
    1 + len(documented) + len(refused) - len(bad), len(bad)))
sys.exit(1 if bad else 0)
EOF
