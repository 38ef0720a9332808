#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guard's dead backends (run by tests/kill/run.sh inside a private network
namespace): `dead-backends` in a Kubernetes ConfigMap layout (the file a
symlink through `..data`, swapped as the kubelet does), backend-interval = 0
(only changes act), SIGHUP, a malformed file and one above dead-backends-max
(logged, the previous list kept in force), a backend removed from the file,
an empty file, conntrack = yes (`conntrack -L` before and after), the metrics;
then backend-interval = 1s with a plain file replaced by rename: a client that
connects to a dead backend after the change is closed within one interval.
Oracle: SO_ERROR of the sockets the test made, conntrack -L.
Usage: guard_backends.py PATH-TO-SOCKDIAG."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kill"))
from backends_lib import (BACKENDS, Population, conntrack, expected_ct_removed,  # noqa: E402
                          setup_namespace)

SD = sys.argv[1]
SLOW = int(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1"))
TMP = tempfile.mkdtemp(prefix="sockdiag-guard-backends-")
failures = []
passed = [0]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    else:
        passed[0] += 1
    return cond


POP = None


def aborted(s):
    return POP.is_aborted(s)


def wait(pred, seconds):
    end = time.monotonic() + seconds * SLOW
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


class Guard:
    def __init__(self, conf, metrics=None):
        self.log = os.path.join(TMP, "guard-%d.log" % int(time.monotonic() * 1000))
        path = os.path.join(TMP, "guard.conf")
        with open(path, "w") as f:
            f.write(conf)
        args = [SD, "guard", "-c", path] + (["--metrics", metrics] if metrics else [])
        self.f = open(self.log, "w")
        self.p = subprocess.Popen(args, stderr=self.f)
        self.seen = 0

    def text(self):
        with open(self.log) as f:
            return f.read()

    def wait_line(self, pattern, seconds=5):
        """The first line matching pattern after the last one waited for."""
        rx = re.compile(pattern)

        def found():
            lines = self.text().splitlines()
            for i in range(self.seen, len(lines)):
                if rx.search(lines[i]):
                    self.seen = i + 1
                    return lines[i]
            return None
        line = None
        end = time.monotonic() + seconds * SLOW
        while time.monotonic() < end and line is None:
            line = found()
            if line is None:
                time.sleep(0.02)
        return line

    def hup(self):
        self.p.send_signal(signal.SIGHUP)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.f.close()


class ConfigMap:
    """A directory laid out as the kubelet mounts a ConfigMap: NAME ->
    ..data/NAME, ..data -> ..TIMESTAMP; an update writes a new timestamped
    directory and renames a new ..data symlink over the old one."""

    def __init__(self, name):
        self.dir = os.path.join(TMP, "configmap")
        os.mkdir(self.dir)
        self.name = name
        self.n = 0
        self.update("")
        os.symlink(os.path.join("..data", name), os.path.join(self.dir, name))

    def update(self, text):
        self.n += 1
        ts = "..2026_12_04_00_00_%02d.%d" % (self.n, os.getpid())
        os.mkdir(os.path.join(self.dir, ts))
        with open(os.path.join(self.dir, ts, self.name), "w") as f:
            f.write(text)
        tmp = os.path.join(self.dir, "..data_tmp")
        os.symlink(ts, tmp)
        os.rename(tmp, os.path.join(self.dir, "..data"))

    @property
    def path(self):
        return os.path.join(self.dir, self.name)


def metrics(addr):
    with urllib.request.urlopen("http://%s/metrics" % addr, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(sockdiag_guard_(backend|conntrack)\w*_total) (\d+)$", line)
        if m:
            out[m.group(1)] = int(m.group(3))
    return out


def phase_on_change(pop):
    """backend-interval = 0: only file changes and SIGHUP act."""
    cm = ConfigMap("backends")
    addr = "127.0.0.1:%d" % (20000 + os.getpid() % 10000)
    g = Guard("dead-backends = %s\nbackend-interval = 0\nconntrack = yes\n"
              "dead-backends-max = 20\n" % cm.path, metrics=addr)
    try:
        check(g.wait_line(r"dead-backends: 0 backends from ") is not None,
              "start: the empty file read: " + g.text())
        check(not [n for n, s, _ in pop.socks if aborted(s)], "start: nothing destroyed")
        g.wait_line(r"dead-backends: destroyed 0 sockets")  # the start's pass
        before = conntrack()
        t0 = time.monotonic()
        cm.update(BACKENDS)
        dead = [s for _, s, d in pop.socks if d]
        ok = wait(lambda: all(aborted(s) for s in dead), 2)
        ms = (time.monotonic() - t0) * 1000
        print("ConfigMap swap -> %d sockets destroyed in %.0f ms" % (len(dead), ms))
        check(ok, "ConfigMap ..data swap: every client of a dead backend destroyed")
        line = g.wait_line(r"dead-backends: destroyed ")
        check(line is not None and "destroyed %d sockets" % len(dead) in line,
              "the pass logs %d sockets: %s" % (len(dead), line))
        wrong = pop.verdicts()
        check(not wrong, "ConfigMap swap: exactly the expected sockets; wrong: %s" % wrong)
        removed = before - conntrack()
        want = expected_ct_removed(before, pop.dead_flows())
        check(removed == want and len(want) > len(dead),
              "conntrack: removed %s, expected %s" % (sorted(removed), sorted(want)))
        m = re.search(r"(\d+) conntrack entr", line or "")
        check(m is not None and int(m.group(1)) == len(removed),
              "the pass logs %d conntrack entries: %s" % (len(removed), line))

        # Interval 0: a new client of a dead backend stays until something changes.
        late = pop.new_tcp("fd00::1", 80, socket.AF_INET6)
        time.sleep(1.2)
        check(not aborted(late), "backend-interval = 0: no pass without a change")
        g.hup()
        check(wait(lambda: aborted(late), 2), "SIGHUP: a pass closes the new client")

        # A malformed file: logged with line and column, the old list stays.
        late = pop.new_tcp("10.0.0.1", 80)
        cm.update("10.0.0.1:80/tcp\n10.0.0.3:8o\n")
        line = g.wait_line(r"dead-backends: .*line 2, column 11: .*keeping the previous list")
        check(line is not None and cm.path in line,
              "malformed file: one line naming file, line, column: %s" % line)
        check(wait(lambda: aborted(late), 2),
              "malformed file: the previous list still acts (new client of 10.0.0.1:80)")
        # Above dead-backends-max: refused, the old list stays.
        late = pop.new_tcp("10.0.0.1", 80)
        cm.update("".join("10.0.1.%d:80\n" % i for i in range(21)))
        line = g.wait_line(r"more than dead-backends-max = 20")
        check(line is not None and "keeping the previous list (5 backends)" in line,
              "above the cap: refused and logged: %s" % line)
        check(wait(lambda: aborted(late), 2), "above the cap: the previous list still acts")

        # A backend removed from the file is left alone from then on.
        cm.update(BACKENDS.replace("10.0.0.1:80/tcp\n", ""))
        check(g.wait_line(r"dead-backends: 4 backends from ") is not None,
              "reload after removing a backend: " + g.text()[-300:])
        kept = pop.new_tcp("10.0.0.1", 80)
        doomed = pop.new_tcp("fd00::1", 80, socket.AF_INET6)
        g.hup()
        check(wait(lambda: aborted(doomed), 2), "SIGHUP pass after the removal ran")
        check(not aborted(kept), "a backend removed from the file: its new client left alone")

        # An empty file: nothing destroyed.
        cm.update("# no dead backends\n")
        check(g.wait_line(r"dead-backends: 0 backends from ") is not None, "empty file read")
        c = [pop.new_tcp("fd00::1", 80, socket.AF_INET6), pop.new_tcp("10.0.0.1", 82)]
        g.hup()
        time.sleep(0.5)
        check(not any(aborted(s) for s in c), "empty file: nothing destroyed")

        mt = metrics(addr)
        check(mt.get("sockdiag_guard_backend_file_errors_total") == 2,
              "metrics: 2 file errors: %s" % mt)
        check(mt.get("sockdiag_guard_backend_sockets_destroyed_total") == len(dead) + 4,
              "metrics: %d sockets destroyed: %s" % (len(dead) + 4, mt))
        check(mt.get("sockdiag_guard_backend_passes_total", 0) >= 7, "metrics: passes: %s" % mt)
        # Those of the first pass and of the 4 later clients destroyed, one entry
        # each; the client that never sent (ENOENT) is not counted.
        check(mt.get("sockdiag_guard_conntrack_entries_deleted_total") == len(removed) + 4,
              "metrics: %d conntrack entries deleted: %s" % (len(removed) + 4, mt))
    finally:
        g.stop()
        if failures:
            sys.stderr.write(g.text())


def phase_interval(pop):
    """backend-interval = 1s, a plain file replaced by rename."""
    path = os.path.join(TMP, "dead-backends")
    with open(path, "w") as f:
        f.write(BACKENDS)
    g = Guard("dead-backends = %s\nbackend-interval = 1s\n" % path)
    try:
        check(g.wait_line(r"dead-backends: 5 backends from ") is not None,
              "interval: file read at start: " + g.text())
        # A client that connects after the pass: closed within one interval.
        for attempt in range(3):
            late = pop.new_tcp("10.0.0.1", 80)
            t0 = time.monotonic()
            ok = wait(lambda: aborted(late), 1.0 + 0.5)
            ms = (time.monotonic() - t0) * 1000
            print("attempt %d: client connected after the change closed in %.0f ms" %
                  (attempt + 1, ms))
            if ok:
                break
        check(ok, "backend-interval = 1s: a later client closed within one interval")
        # An atomic rename over the file counts as a change.
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("10.0.0.1:81/tcp\n")
        os.rename(tmp, path)
        check(g.wait_line(r"dead-backends: 1 backend from ") is not None,
              "rename over the file: reloaded")
    finally:
        g.stop()


def main():
    setup_namespace()
    global POP
    pop = POP = Population(2)
    phase_on_change(pop)
    phase_interval(pop)
    pop.close()
    shutil.rmtree(TMP, ignore_errors=True)
    print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failures)))
    sys.exit(1 if failures else 0)


main()
