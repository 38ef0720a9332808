#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-completions.py SOCKDIAG DIR: the completions in DIR (sockdiag.bash, _sockdiag,
sockdiag.fish) against the program, in each shell that is installed (the scripts run in
the real bash, zsh and fish; zsh's completion builtins are stood in for by functions that
print what they are given):

 1. `sockdiag <TAB>` offers every command `sockdiag --help` lists, `sockdiag help <TAB>`
    every one but help;
 2. `sockdiag COMMAND -<TAB>` offers every option `sockdiag COMMAND --help` lists;
 3. after an option that takes a value (in --help, followed by its placeholder: DURATION,
    FILE, auto|bpf|proc...), `sockdiag COMMAND OPTION <TAB>` offers neither options nor
    the filter's keywords (a value goes there: its values, files, or nothing).

Exit 0 pass, 1 fail, 77 when no shell is installed.
"""
import os
import re
import shutil
import subprocess
import sys

sd, cdir = os.path.abspath(sys.argv[1]), sys.argv[2]
env = dict(os.environ, PATH=os.path.dirname(sd) + os.pathsep + os.environ.get("PATH", ""),
           HOME=os.environ.get("HOME", "/tmp"))
KEYWORDS = {"dport", "sport", "exclude", "fwmark", "autobound"}  # the filter's; no option's values


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env=env, timeout=60, **kw).stdout


def bash(words):
    """What bash's _sockdiag puts in COMPREPLY for words (the last: the word completed)."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
              '_sockdiag 2>/dev/null; printf "%s\\n" "${COMPREPLY[@]}"')
    return run(["bash", "-c", script, "_", os.path.join(cdir, "sockdiag.bash"), sd] + words)


ZSH_STUBS = r'''
compadd() {
	local -a out
	while (( $# )); do
		case $1 in
		-a) shift; out+=("${(@P)1}") ;;
		-[SPJXtWFo]) shift ;;
		-*) ;;
		*) out+=("$1") ;;
		esac
		shift
	done
	print -rl -- $out
}
_describe() { compadd -a ${@[-1]}; }
compset() { return 1; }
_files() { print -r -- '<files>'; }
_path_files() { print -r -- '<files>'; }
_users() { print -r -- '<users>'; }
'''


def zsh(words):
    script = (ZSH_STUBS + 'eval "_sockdiag_t() { $(<$1) }"; shift; words=("$@"); CURRENT=$#; '
              'PREFIX=${words[CURRENT]}; _sockdiag_t')
    return run(["zsh", "-f", "-c", script, "_", os.path.join(cdir, "_sockdiag"), sd] + words)


def fish(words):
    line = " ".join(["sockdiag"] + words)
    script = 'source $argv[1]; complete -C $argv[2]'
    out = run(["fish", "--no-config", "-c", script, os.path.join(cdir, "sockdiag.fish"), line])
    return "\n".join(l.split("\t")[0] for l in out.splitlines())


SHELLS = {"bash": bash, "zsh": zsh, "fish": fish}


def offered(shell, words):
    return set(SHELLS[shell](words).split())


def commands():
    out = run([sd, "--help"])
    block = out.split("Commands:", 1)[1].split("\n\n", 1)[0]
    return [l.split()[0] for l in block.splitlines() if l.strip()]


def options(cmd):
    """The options of `sockdiag cmd --help`, and those of them that take a value."""
    opts, valued = set(), set()
    for line in run([sd, cmd, "--help"]).splitlines():
        # The option spellings of one entry: -N|--netns NAME: both take the value.
        for m in re.finditer(r"(?:^|(?<=[ \[]))((?:--?[a-zA-Z0-9][a-z0-9-]*\|)*"
                             r"--?[a-zA-Z0-9][a-z0-9-]*)( [^-( ][^ ]*)?", line):
            names = m.group(1).split("|")
            opts.update(names)
            if m.group(2) and not m.group(2).strip().startswith(("(", "FILTER")):
                valued.update(names)
    return opts, valued


failures, checks, skipped = [], 0, 0
shells = [s for s in SHELLS if shutil.which(s)]
for s in SHELLS:
    if s not in shells:
        print("SKIP(tool:%s): not installed" % s)
        skipped += 1
if not shells:
    sys.exit(77)

cmds = commands()
if len(cmds) < 5:
    print("FAIL: `sockdiag --help` lists %d commands: %s" % (len(cmds), cmds))
    sys.exit(1)
table = {c: options(c) for c in cmds if c != "help"}
for shell in shells:
    # 1. commands.
    got = offered(shell, [""])
    missing = [c for c in cmds if c not in got]
    checks += 1
    if missing:
        failures.append("%s: `sockdiag <TAB>` does not offer %s" % (shell, " ".join(missing)))
    got = offered(shell, ["help", ""])
    missing = [c for c in cmds if c != "help" and c not in got]
    checks += 1
    if missing:
        failures.append("%s: `sockdiag help <TAB>` does not offer %s" % (shell, " ".join(missing)))
    for cmd, (opts, valued) in table.items():
        # 2. options.
        got = offered(shell, [cmd, "-"])
        missing = sorted(o for o in opts if o not in got)
        checks += 1
        if missing:
            failures.append("%s: `sockdiag %s -<TAB>` does not offer %s"
                            % (shell, cmd, " ".join(missing)))
        # 3. an option's value.
        wrong = []
        for o in sorted(valued):
            got = offered(shell, [cmd, o, ""])
            if got & KEYWORDS or any(w.startswith("-") for w in got):
                wrong.append(o)
        checks += 1
        if wrong:
            failures.append("%s: `sockdiag %s OPTION <TAB>` offers options or filter keywords "
                            "where OPTION's value goes: %s" % (shell, cmd, " ".join(wrong)))
    print("%s: %d commands, %d options (%d with a value) checked"
          % (shell, len(cmds), sum(len(o) for o, _ in table.values()),
             sum(len(v) for _, v in table.values())))
for f in failures:
    print("FAIL: " + f)
print("# checks: %d passed, %d failed, %d skipped" % (checks - len(failures), len(failures),
                                                      skipped))
sys.exit(1 if failures else 0)
