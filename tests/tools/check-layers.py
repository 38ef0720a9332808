#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-layers.py SRCDIR [BUILDDIR]: the source tree keeps its layers.

Checks, over the C sources of util/, lib/, conntrack/, backends/, daemon/, cli/, python/ (tests and benches may
use anything):
  1. every `#include "PATH"` names a file by its path from the source root
     (the one include convention) and points to the same folder or a lower one
     in LAYERS; folders of the same rank (daemon/guard, daemon/exporter) do not
     include each other;
  2. no two headers include each other, directly or through others (a cycle);
  3. no source file is over MAX_LINES lines, no folder holds more than
     MAX_FILES source files;
  4. with BUILDDIR (compile_commands.json and the objects built there): every
     symbol an object file uses from another object of these folders is
     defined in its own folder or a lower one (what the includes cannot show:
     a declaration reached through a shared header).
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
    ['daemon/common'],
    ['daemon/metrics'],
    ['daemon/guard/core'],
    ['daemon/guard', 'daemon/exporter'],
    ['cli/fmt'],
    ['cli/fields'],
    ['cli/render'],
    ['cli/count', 'cli/opts'],
    ['cli/top'],
    ['cli', 'python/sockdiag'],
]
ROOTS = ('util', 'lib', 'conntrack', 'backends', 'daemon', 'cli', 'python')
MAX_LINES = 800
MAX_FILES = 15
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Generated at build time, found in the build directory of its folder.
GENERATED = {'owners.lskel.h'}

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


def check_includes(src, files, errors):
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


def check_sizes(src, files, errors):
    per_folder = {}
    for f in files:
        n = sum(1 for _ in open(os.path.join(src, f), encoding='utf-8', errors='replace'))
        if n > MAX_LINES:
            errors.append(f'{f}: {n} lines (at most {MAX_LINES})')
        per_folder.setdefault(os.path.dirname(f), []).append(f)
    for d, fs in sorted(per_folder.items()):
        if len(fs) > MAX_FILES:
            errors.append(f'{d}/: {len(fs)} source files (at most {MAX_FILES})')
    return per_folder


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


def check_symbols(src, build, errors):
    """Which folder defines each global symbol, and who uses it."""
    db = os.path.join(build, 'compile_commands.json')
    if not os.path.exists(db):
        errors.append(f'{db}: missing (build first)')
        return 0
    objs = {}
    for e in json.load(open(db)):
        f = os.path.relpath(os.path.normpath(os.path.join(e['directory'], e['file'])), src)
        if folder_of(f) is None or f.split('/')[0] not in ROOTS:
            continue
        o = os.path.join(e['directory'], e['output'])
        if os.path.exists(o):
            objs[o] = f
    defined = {}
    for o, syms in nm(objs, '--defined-only').items():
        for kind, sym in syms:
            if kind in 'TDBR':
                defined.setdefault(sym, set()).add(folder_of(objs[o]))
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
    return checked


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    src = sys.argv[1]
    files = sources(src)
    errors = []
    check_includes(src, files, errors)
    per_folder = check_sizes(src, files, errors)
    checked = check_symbols(src, sys.argv[2], errors) if len(sys.argv) == 3 else 0
    for e in errors:
        print('FAIL: ' + e)
    total = len(files) + 2 + (len(sys.argv) == 3)  # includes per file, cycles, sizes, symbols
    print(f'# checks: {max(total - len(errors), 0)} passed, {len(errors)} failed, 0 skipped')
    if errors:
        return 1
    widest = max(per_folder.items(), key=lambda x: len(x[1]))
    print(f'layers: {len(files)} files in {len(per_folder)} folders (at most '
          f'{len(widest[1])}, {widest[0]}/), includes point down, no header cycle, '
          f'{checked} cross-object symbol uses point down')
    return 0


if __name__ == '__main__':
    sys.exit(main())
