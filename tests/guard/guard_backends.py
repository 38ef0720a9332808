#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guard's dead backends (run by tests/kill/run.sh inside a private network
namespace): writers that write slowly in pieces (a new file, an in-place
O_TRUNC rewrite while a sibling file changes, a delete then a slow create),
sibling files written often (no pass, no line),
the exemptions, a deleted file, the directory missing at start and removed and
made again, a symlink out of the directory, a token that is not an address;
`dead-backends` in a Kubernetes ConfigMap layout (the file a
symlink through `..data`, swapped as the kubelet does), backend-interval = 0
(only changes act), SIGHUP, a malformed file and one above dead-backends-max
(logged, the previous list kept in force), a backend removed from the file,
an empty file, conntrack = yes (`conntrack -L` before and after), the metrics;
then backend-interval = 1s with a plain file replaced by rename: a client that
connects to a dead backend after the change is closed within one interval.
Oracle: SO_ERROR of the sockets the test made, conntrack -L; the guard's
passes counter (exact) tells when a pass has run.
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
SO_MARK = 36
TMP = None  # made after setup_namespace(), which execs
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
        self.addr = metrics
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

    def metrics(self):
        return metrics(self.addr)

    def passes(self):
        try:
            return self.metrics().get("sockdiag_guard_backend_passes_total", 0)
        except OSError:  # not listening yet
            return -1

    def wait_passes(self, n, seconds=5):
        """Until the passes counter reaches n; True if it is exactly n then."""
        wait(lambda: self.passes() >= n, seconds)
        return self.passes() == n

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


def kept_by_reason(addr):
    with urllib.request.urlopen("http://%s/metrics" % addr, timeout=5) as r:
        text = r.read().decode()
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r'^sockdiag_guard_kept_sockets_total\{reason="([a-z-]+)"\} (\d+)$', text,
                        re.M)}


def write_slowly(path, first, rest, flags, sibling=None):
    """first, then rest 150 ms later, in one open of path (a writer that
    writes in pieces); sibling: a file of the same directory written between."""
    fd = os.open(path, os.O_WRONLY | flags, 0o644)
    try:
        os.write(fd, first.encode())
        if sibling:
            with open(sibling, "w") as f:
                f.write("x\n")
        time.sleep(0.15)  # the gap of a slow writer: the scenario, not a wait
        os.write(fd, rest.encode())
    finally:
        os.close(fd)


def replace(path, text):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def read_complete(g, passes, live, what):
    """After a slow write of "10.0.0.2:80" + "8x": the complete file read
    (one backend, 10.0.0.2:808x), one pass, the live 10.0.0.2:80 kept."""
    check(g.wait_line(r"dead-backends: 1 backend from ") is not None and
          g.wait_line(r"dead-backends: destroyed 0 sockets") is not None and
          g.wait_passes(passes), "%s: read once complete, one pass: %s" % (what, g.text()))
    check(not any(aborted(s) for s in live),
          "%s: nothing destroyed from the first piece (10.0.0.2:80)" % what)


def dead_lines(g):
    return [l for l in g.text().splitlines() if "dead-backends" in l]


def phase_missing_dir(pop):
    """The directory missing at start, made later (backend-interval = 0)."""
    d = os.path.join(TMP, "later")
    path = os.path.join(d, "dead")
    g = Guard("dead-backends = %s\nbackend-interval = 0\n" % path)
    try:
        check(g.wait_line(r"dead-backends: 0 backends") is not None and "cannot" not in g.text(),
              "start, no directory: 0 backends, no error: " + g.text())
        late = pop.new_tcp("10.0.0.1", 80)
        os.mkdir(d)
        replace(path, "10.0.0.1:80/tcp\n")
        check(wait(lambda: aborted(late), 5), "the directory made later: the file read")
        check(g.wait_line(r"dead-backends: 1 backend from ") is not None, "read: " + g.text())
    finally:
        g.stop()


def phase_writers(pop):
    """backend-interval = 0, a plain directory, the file missing at start."""
    d = os.path.join(TMP, "dir")
    path = os.path.join(d, "dead")
    os.mkdir(d)
    addr = "127.0.0.1:%d" % (20001 + os.getpid() % 10000)
    g = Guard("dead-backends = %s\nbackend-interval = 0\nexempt-mark = 0x99\n" % path,
              metrics=addr)
    try:
        # Missing: no dead backends, not an error.
        check(g.wait_passes(1), "start: one pass: %s" % g.metrics())
        check("cannot" not in g.text() and
              g.metrics().get("sockdiag_guard_backend_file_errors_total") == 0,
              "start, no file: no error logged or counted: " + g.text())
        live = [pop.new_tcp("10.0.0.2", 80) for _ in range(2)]
        replace(path, "10.0.0.2:8080\n")
        check(g.wait_line(r"dead-backends: 1 backend from ") is not None and
              g.wait_line(r"dead-backends: destroyed 0 sockets") is not None and
              g.wait_passes(2), "a file made later: read, one pass: " + g.text())

        # A new file written in two pieces, 150 ms apart: "10.0.0.2:80" (a
        # live backend with clients) must never be taken for the list.
        os.unlink(path)
        check(g.wait_line(r"dead-backends: 0 backends") is not None and
              g.wait_line(r"dead-backends: destroyed 0 sockets") is not None and
              g.wait_passes(3), "file deleted: 0 backends, one pass: " + g.text())
        write_slowly(path, "10.0.0.2:80", "80\n", os.O_CREAT | os.O_EXCL)
        read_complete(g, 4, live, "slow new file")
        # The same in place (O_TRUNC) while a sibling file changes.
        write_slowly(path, "10.0.0.2:80", "81\n", os.O_TRUNC, os.path.join(d, "sibling"))
        read_complete(g, 5, live, "slow O_TRUNC rewrite + sibling")
        # Deleted and at once written again, slowly (a save by unlink and create):
        # the deletion's read must not find the new file's first piece.
        os.unlink(path)
        write_slowly(path, "10.0.0.2:80", "82\n", os.O_CREAT | os.O_EXCL)
        read_complete(g, 6, live, "unlink + slow create")

        # Sibling files written often (the sidecar's temporary file): no
        # reload, no pass, no line; then one change: one pass, two lines.
        n_lines, n_passes = len(dead_lines(g)), g.passes()
        for i in range(5):
            with open(os.path.join(d, "sibling.%d" % i), "w") as f:
                f.write("x\n")
            time.sleep(0.1)  # the sidecar's pace: the scenario, not a wait
        doomed = pop.new_tcp("10.0.0.1", 80)
        marked = pop.new_tcp("10.0.0.1", 80)
        marked.setsockopt(socket.SOL_SOCKET, SO_MARK, 0x99)
        replace(path, "10.0.0.1:80/tcp\n")
        line = g.wait_line(r"dead-backends: destroyed ")
        check(g.wait_passes(n_passes + 1),
              "sibling writes: no pass of their own (%d passes before, %s now)" %
              (n_passes, g.metrics()))
        check(len(dead_lines(g)) == n_lines + 2,
              "sibling writes: no line of their own: " + "\n".join(dead_lines(g)[n_lines:]))
        # The pass keeps what the exemptions keep.
        check(line is not None and "destroyed 1 socket " in line and "kept 1: mark 1)" in line,
              "exempt-mark: one destroyed, one kept, the reason said: %s" % line)
        check(kept_by_reason(g.addr).get("mark") == 1,
              "exempt-mark: the kept counter's reason=\"mark\": %s" % kept_by_reason(g.addr))
        check(aborted(doomed) and not aborted(marked),
              "exempt-mark: the marked client of a dead backend kept")
        check(not any(aborted(s) for s in live), "the live backend's clients kept")

        # A deleted file: no dead backends, also after SIGHUP.
        os.unlink(path)
        check(g.wait_line(r"dead-backends: 0 backends") is not None and
              g.wait_line(r"dead-backends: destroyed 0 sockets") is not None and
              g.wait_passes(n_passes + 2), "deleted: 0 backends, one pass: " + g.text())
        late = pop.new_tcp("10.0.0.1", 80)
        g.hup()
        check(g.wait_passes(n_passes + 3), "SIGHUP: one pass")
        check(not aborted(late), "a deleted file destroys nothing, after SIGHUP too")

        # The directory removed and made again: watched again.
        shutil.rmtree(d)
        os.mkdir(d)
        replace(path, "10.0.0.1:80/tcp\n")
        check(wait(lambda: aborted(late), 5),
              "the directory made again: the file read, the pass made")
        check(g.wait_line(r"dead-backends: destroyed 1 socket ") is not None,
              "the directory made again: the pass logged")  # after its count
        n_passes = g.passes()

        # A symlink out of the directory: refused, the list stays.
        outside = os.path.join(TMP, "outside")
        with open(outside, "w") as f:
            f.write("[fd00::1]:80\n")
        v6 = pop.new_tcp("fd00::1", 80, socket.AF_INET6)
        tmp = path + ".lnk"
        os.symlink("../outside", tmp)
        os.rename(tmp, path)
        line = g.wait_line(r"dead-backends: .*keeping the previous list \(1 backend\)")
        check(line is not None, "a symlink out of the directory: refused: " + g.text())
        g.hup()
        check(g.wait_line(r"dead-backends: .*keeping the previous list") is not None and
              g.wait_passes(n_passes + 1), "SIGHUP after the symlink: refused, one pass")
        check(not aborted(v6), "a symlink out of the directory: its list not used")

        # A token that is not an address: the error names the place, not the bytes.
        replace(path, "10.0.0.1:80/tcp\nhunter2-secret:80\n")
        line = g.wait_line(r"dead-backends: .*keeping the previous list")
        check(line is not None and "line 2, column 1: expected an IPv4 address" in line,
              "a token that is not an address: line, column, what was expected: %s" % line)
        check("hunter2" not in g.text(), "the file's bytes are not quoted in the log")
        mt = g.metrics()
        check(mt.get("sockdiag_guard_backend_file_errors_total") == 3 and
              mt.get("sockdiag_guard_backend_sockets_destroyed_total") == 2 and
              mt.get("sockdiag_guard_backend_passes_total") == n_passes + 1,
              "metrics exactly: 3 file errors, 2 destroyed, %d passes: %s" % (n_passes + 1, mt))
    finally:
        g.stop()
        if failures:
            sys.stderr.write(g.text())


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
        check(g.wait_passes(2), "start and the swap: 2 passes: %s" % g.metrics())
        late = pop.new_tcp("fd00::1", 80, socket.AF_INET6)
        time.sleep(1.2)  # a time without events: no pass may come
        check(not aborted(late) and g.passes() == 2,
              "backend-interval = 0: no pass without a change")
        g.hup()
        check(wait(lambda: aborted(late), 2), "SIGHUP: a pass closes the new client")
        check(g.wait_passes(3), "SIGHUP: one pass")

        # A malformed file: logged with line and column, the old list stays.
        late = pop.new_tcp("10.0.0.1", 80)
        cm.update("10.0.0.1:80/tcp\n10.0.0.3:8o\n")
        line = g.wait_line(r"dead-backends: .*line 2, column 11: .*keeping the previous list")
        check(line is not None and cm.path in line,
              "malformed file: one line naming file, line, column: %s" % line)
        check(g.passes() == 3, "a refused file: no pass of its own")
        g.hup()  # reads the refused file again, then a pass with the list in force
        check(wait(lambda: aborted(late), 2),
              "malformed file: the previous list still acts (new client of 10.0.0.1:80)")
        check(g.wait_passes(4), "SIGHUP: one pass")
        # Above dead-backends-max: refused, the old list stays.
        late = pop.new_tcp("10.0.0.1", 80)
        cm.update("".join("10.0.1.%d:80\n" % i for i in range(21)))
        line = g.wait_line(r"more than dead-backends-max = 20")
        check(line is not None and "keeping the previous list (5 backends)" in line,
              "above the cap: refused and logged: %s" % line)
        g.hup()
        check(wait(lambda: aborted(late), 2), "above the cap: the previous list still acts")
        check(g.wait_passes(5), "SIGHUP: one pass")

        # A backend removed from the file is left alone from then on.
        cm.update(BACKENDS.replace("10.0.0.1:80/tcp\n", ""))
        check(g.wait_line(r"dead-backends: 4 backends from ") is not None,
              "reload after removing a backend: " + g.text()[-300:])
        kept = pop.new_tcp("10.0.0.1", 80)
        doomed = pop.new_tcp("fd00::1", 80, socket.AF_INET6)
        check(g.wait_passes(6), "the reload: one pass")
        g.hup()
        check(wait(lambda: aborted(doomed), 2), "SIGHUP pass after the removal ran")
        check(g.wait_passes(7), "SIGHUP: one pass")
        check(not aborted(kept), "a backend removed from the file: its new client left alone")

        # An empty file: nothing destroyed.
        cm.update("# no dead backends\n")
        check(g.wait_line(r"dead-backends: 0 backends from ") is not None, "empty file read")
        check(g.wait_passes(8), "the reload: one pass")
        c = [pop.new_tcp("fd00::1", 80, socket.AF_INET6), pop.new_tcp("10.0.0.1", 82)]
        g.hup()
        check(g.wait_passes(9), "SIGHUP: one pass")
        check(not any(aborted(s) for s in c), "empty file: nothing destroyed")

        # Exactly: each refused file read twice (its event, then SIGHUP); the
        # swap's sockets and 4 later clients; their flows' conntrack entries.
        mt = metrics(addr)
        check(mt.get("sockdiag_guard_backend_file_errors_total") == 4,
              "metrics: 4 file errors: %s" % mt)
        check(mt.get("sockdiag_guard_backend_sockets_destroyed_total") == len(dead) + 4,
              "metrics: %d sockets destroyed: %s" % (len(dead) + 4, mt))
        check(mt.get("sockdiag_guard_backend_passes_total") == 9, "metrics: 9 passes: %s" % mt)
        # The client that never sent (its delete answered ENOENT) is not counted.
        check(mt.get("sockdiag_guard_conntrack_entries_deleted_total") == len(removed) + 4,
              "metrics: %d conntrack entries: %s" % (len(removed) + 4, mt))
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


def phase_exempt_warning(pop):
    """A listed backend the configuration exempts (127.0.0.1:80 with the
    default exempt-loopback = yes): one warning per load of the file or of
    the configuration, naming the line and the exemption, never the file's
    text; nothing else exempt is warned about."""
    path = os.path.join(TMP, "dead-exempt")
    conf = os.path.join(TMP, "guard.conf")
    with open(path, "w") as f:
        f.write("# dead\n10.0.0.1:81/tcp\n\n127.0.0.1:80\n[::1]:80/udp\n")
    g = Guard("dead-backends = %s\nbackend-interval = 0\n" % path)

    def warned(line):
        return len([l for l in g.text().splitlines() if "line %d lists" % line in l])
    try:
        check(g.wait_line(r"dead-backends: 3 backends from ") is not None,
              "exempt warning: file read: " + g.text())
        w4 = g.wait_line(r"dead-backends: line 4 lists a backend that exempt-loopback exempts")
        w5 = g.wait_line(r"dead-backends: line 5 lists a backend that exempt-loopback exempts")
        check(w4 is not None and w5 is not None and "127.0.0.1" not in g.text() and
              "::1" not in g.text(), "exempt warning: lines 4 and 5, by exempt-loopback, "
              "without the file's text: " + g.text())
        check(warned(2) == 0, "exempt warning: 10.0.0.1:81 is not exempt: " + g.text())
        # The file again, the same configuration: one warning each again.
        with open(path, "a") as f:
            f.write("10.0.0.1:82/tcp\n")
        check(g.wait_line(r"dead-backends: 4 backends from ") is not None,
              "exempt warning: file read again: " + g.text())
        check(wait(lambda: warned(4) == 2 and warned(5) == 2, 5),
              "exempt warning: once per load (2 loads): %d, %d lines: %s" %
              (warned(4), warned(5), g.text()))
        # A new configuration: loopback no longer exempt, 10.0.0.0/8 is.
        with open(conf, "w") as f:
            f.write("dead-backends = %s\nbackend-interval = 0\nexempt-loopback = no\n"
                    "exempt-dst = 10.0.0.0/8\n" % path)
        g.hup()
        check(g.wait_line(r"dead-backends: line 2 lists a backend that exempt-dst exempts")
              is not None and g.wait_line(r"dead-backends: line 6 lists .*exempt-dst")
              is not None, "exempt warning: after SIGHUP, by exempt-dst: " + g.text())
        check(warned(4) == 2 and warned(5) == 2,
              "exempt warning: loopback no longer exempt, not warned: " + g.text())
    finally:
        g.stop()


def main():
    setup_namespace()
    global POP, TMP
    TMP = tempfile.mkdtemp(prefix="sockdiag-guard-backends-")
    try:
        pop = POP = Population(2)
        phase_on_change(pop)
        phase_interval(pop)
        phase_exempt_warning(pop)
        phase_writers(pop)  # last: they check only the sockets they make
        phase_missing_dir(pop)
        pop.close()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failures)))
    sys.exit(1 if failures else 0)


main()
