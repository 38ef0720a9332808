#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-layers.py SRCDIR [BUILDDIR]: the source tree keeps its layers.

A module is a folder of LAYERS (with its subfolders that are not in LAYERS
themselves, like lib/owners/bpf) and the headers it shows the other folders.
Checks, over the C sources of include/, util/, lib/, conntrack/, backends/,
daemon/, cli/, python/ (tests and benches may use anything):
  1. every `#include "PATH"` names a file by its path from the source root
     (the one include convention) and points to the same folder or a lower one
     in LAYERS; folders of the same rank (daemon/guard, daemon/exporter) do not
     include each other;
  2. no two headers include each other, directly or through others (a cycle);
  3. no source file is over MAX_LINES lines (the public header, the API
     manual of include/, is capped at PUBLIC_HEADER_LINES instead: one
     installed header, not several); no module shows more than MAX_EXPORTS
     headers to other folders (the headers other folders include): a module
     with more faces is two modules. How many files a folder holds is not
     capped: the module's interface is, and each file's size. A TOOLBOX
     folder (util/) is a shelf of independent helpers, each header with its
     .c a module of one face (textfile, argerr, sigfd, group, hash, inaddr):
     the cap counts modules' faces, so it does not apply to the shelf;
  4. with BUILDDIR (compile_commands.json and the objects built there): every
     symbol an object file uses from another object of these folders is
     defined in its own folder or a lower one (what the includes cannot show:
     a declaration reached through a shared header);
  5. with BUILDDIR: the objects of a PURE folder link no socket call
     (SOCKET_CALLS, mnl_socket_*), neither themselves (`nm -u`) nor through
     the project's objects whose symbols they use, followed transitively.
Prints one line per violation and exits 1 if there is any, else prints a
summary and exits 0.
"""
import json
import os
import re
import subprocess
import sys

# Lowest first. Folders on one line share a rank and may not use each other.
LAYERS = [
    ['include'],
    ['util'],
    ['lib/core'],
    ['lib/family'],
    ['lib/ns'],
    ['lib/owners'],
    ['lib/filter'],
    ['lib/ops'],
    ['conntrack'],
    ['backends'],
    ['life'],
    ['daemon/common'],
    ['daemon/metrics'],
    ['daemon/guard/core'],
    ['daemon/push'],
    ['daemon/guard', 'daemon/exporter', 'daemon/kube'],
    ['cli/fmt'],
    ['cli/fields'],
    ['cli/render'],
    ['cli/count', 'cli/opts'],
    ['cli/run'],
    ['cli/top', 'cli/drain'],
    ['cli', 'python/sockdiag'],
]
ROOTS = ('include', 'util', 'lib', 'conntrack', 'backends', 'life', 'daemon', 'cli', 'python')
MAX_LINES = 800
# Folders of independent one-header modules (rule 3).
TOOLBOXES = ('util',)
PUBLIC_HEADER = 'include/sockdiag.h'
PUBLIC_HEADER_LINES = 1500
MAX_EXPORTS = 3
# Folders whose objects may not link a socket call (rule 5): the guard's decisions.
PURE = ('daemon/guard/core',)
SOCKET_CALLS = {'socket', 'socketpair', 'bind', 'connect', 'listen', 'accept', 'accept4',
                'sendmsg', 'sendmmsg', 'sendto', 'send', 'recvmsg', 'recvfrom', 'recv',
                'recvmmsg', 'setsockopt', 'getsockopt'}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Generated at build time, found in the build directory of its folder.
GENERATED = {'owners.lskel.h', 'life.lskel.h'}

RANK = {d: i for i, row in enumerate(LAYERS) for d in row}


def folder_of(path):
    """The layer folder a source path belongs to, or None (not layered)."""
    d = os.path.dirname(path)
    while d:
        if d in RANK:
            return d
        d = os.path.dirname(d)
    return None


def sources(src):
    out = []
    for root in ROOTS:
        for dirpath, _, names in os.walk(os.path.join(src, root)):
            for n in sorted(names):
                if n.endswith(('.c', '.h')):
                    out.append(os.path.relpath(os.path.join(dirpath, n), src))
    return sorted(out)


def check_includes(src, files, errors, exports):
    graph = {}
    for f in files:
        text = open(os.path.join(src, f), encoding='utf-8', errors='replace').read()
        here = folder_of(f)
        if here is None:
            errors.append(f'{f}: not in a layer folder (add its folder to LAYERS)')
            continue
        for inc in INCLUDE.findall(text):
            if inc in GENERATED:
                continue
            if inc == 'sockdiag.h':
                target = 'include/sockdiag.h'
            else:
                target = inc
            if not os.path.exists(os.path.join(src, target)):
                errors.append(f'{f}: #include "{inc}" is not a path from the source root')
                continue
            there = folder_of(target)
            if there is None:
                errors.append(f'{f}: #include "{inc}": not in a layer folder')
                continue
            if RANK[there] > RANK[here]:
                errors.append(f'{f}: #include "{inc}" goes up, from {here} to {there}')
            elif RANK[there] == RANK[here] and there != here:
                errors.append(f'{f}: #include "{inc}": {here} and {there} are siblings')
            if there != here:
                exports.setdefault(there, set()).add(target)
            if f.endswith('.h') and target.endswith('.h'):
                graph.setdefault(f, set()).add(target)
    # Header cycles: depth-first search, colouring.
    state = {}

    def visit(h, stack):
        state[h] = 1
        stack.append(h)
        for n in sorted(graph.get(h, ())):
            if state.get(n) == 1:
                cyc = stack[stack.index(n):] + [n]
                errors.append('header cycle: ' + ' -> '.join(cyc))
            elif not state.get(n):
                visit(n, stack)
        stack.pop()
        state[h] = 2

    for h in sorted(graph):
        if not state.get(h):
            visit(h, [])


def check_sizes(src, files, exports, errors):
    per_module = {}
    for f in files:
        n = sum(1 for _ in open(os.path.join(src, f), encoding='utf-8', errors='replace'))
        cap = PUBLIC_HEADER_LINES if f == PUBLIC_HEADER else MAX_LINES
        if n > cap:
            errors.append(f'{f}: {n} lines (at most {cap})')
        per_module.setdefault(folder_of(f), []).append(f)
    for d, hs in sorted(exports.items()):
        if len(hs) > MAX_EXPORTS and d not in TOOLBOXES:
            errors.append(f'{d}/: other folders include {len(hs)} of its headers '
                          f'({", ".join(sorted(hs))}; at most {MAX_EXPORTS})')
    return per_module


def nm(objs, flags):
    """{object: [(type, symbol)]} of one nm run over every object."""
    out = subprocess.run(['nm', '-A', flags] + sorted(objs), capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.split('\n'):
        obj, _, rest = line.partition(':')
        parts = rest.split()
        if len(parts) >= 2:
            syms.setdefault(obj, []).append((parts[-2], parts[-1]))
    return syms


def is_socket_call(sym):
    sym = sym.split('@')[0]
    return sym in SOCKET_CALLS or sym.startswith('mnl_socket_')


def check_pure(objs, defined_in, undefined, errors):
    """Rule 5: no object of a PURE folder reaches a socket call, itself or
    through the project's objects whose symbols it uses (breadth first: the
    shortest path to the first call found is shown)."""
    checked = 0
    for o, f in sorted(objs.items(), key=lambda x: x[1]):
        if not folder_of(f).startswith(PURE):
            continue
        checked += 1
        seen = {o: None}  # object -> (the object that used it, the symbol)
        todo = [o]
        calls, first = set(), None
        while todo:
            cur = todo.pop(0)
            for _, sym in undefined.get(cur, ()):
                if is_socket_call(sym):
                    calls.add(sym.split('@')[0])
                    if first is None:
                        first = [f'{sym.split("@")[0]}()']
                        at = cur
                        while seen[at]:
                            first.append(f'{seen[at][1]} ({objs[at]})')
                            at = seen[at][0]
                    continue
                for d in sorted(defined_in.get(sym, ())):
                    if d not in seen:
                        seen[d] = (cur, sym)
                        todo.append(d)
        if first:
            more = f' (and {len(calls) - 1} more)' if len(calls) > 1 else ''
            errors.append(f'{f}: in pure {folder_of(f)}/, links a socket call: '
                          + ' -> '.join(reversed(first)) + more)
    return checked


def check_symbols(src, build, errors):
    """Which folder defines each global symbol, and who uses it."""
    db = os.path.join(build, 'compile_commands.json')
    if not os.path.exists(db):
        errors.append(f'{db}: missing (build first)')
        return 0, 0
    objs = {}
    for e in json.load(open(db)):
        f = os.path.relpath(os.path.normpath(os.path.join(e['directory'], e['file'])), src)
        if folder_of(f) is None or f.split('/')[0] not in ROOTS:
            continue
        o = os.path.join(e['directory'], e['output'])
        if os.path.exists(o):
            objs[o] = f
    defined = {}
    defined_in = {}
    for o, syms in nm(objs, '--defined-only').items():
        for kind, sym in syms:
            if kind in 'TDBR':
                defined.setdefault(sym, set()).add(folder_of(objs[o]))
                defined_in.setdefault(sym, set()).add(o)
    checked = 0
    undefined = nm(objs, '--undefined-only')
    for o, f in sorted(objs.items(), key=lambda x: x[1]):
        here = folder_of(f)
        for _, sym in undefined.get(o, ()):
            if sym not in defined:
                continue
            checked += 1
            if not [d for d in defined[sym] if RANK[d] < RANK[here] or d == here]:
                where = ', '.join(sorted(defined[sym]))
                errors.append(f'{f}: uses {sym}, defined above it in {where}')
    return checked, check_pure(objs, defined_in, undefined, errors)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    src = sys.argv[1]
    files = sources(src)
    errors = []
    exports = {}
    check_includes(src, files, errors, exports)
    per_module = check_sizes(src, files, exports, errors)
    checked, pure = check_symbols(src, sys.argv[2], errors) if len(sys.argv) == 3 else (0, 0)
    for e in errors:
        print('FAIL: ' + e)
    # includes per file, cycles, sizes, symbols, purity
    total = len(files) + 2 + 2 * (len(sys.argv) == 3)
    print(f'# checks: {max(total - len(errors), 0)} passed, {len(errors)} failed, 0 skipped')
    if errors:
        return 1
    widest = max(((d, hs) for d, hs in exports.items() if d not in TOOLBOXES),
                 key=lambda x: len(x[1]))
    print(f'layers: {len(files)} files in {len(per_module)} modules (at most '
          f'{len(widest[1])} headers shown, {widest[0]}/; util/ a toolbox), includes point down, no header '
          f'cycle, {checked} cross-object symbol uses point down, {pure} objects of '
          f'{", ".join(p + "/" for p in PURE)} link no socket call')
    return 0


if __name__ == '__main__':
    sys.exit(main())
