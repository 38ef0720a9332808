#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag exporter against a real Prometheus.

usage: exporter_e2e.py SOCKDIAG SLOWDUMP.so

In a private network namespace A (loopback only) run the exporter and a real
Prometheus server (temporary storage, scraping every second); the exporter
reports the sockets of a second namespace B (-N), which holds a known
population and nothing else. Checks, through Prometheus's query API after two
scrapes: TCP sockets per state, per configured port, the accept queue of a
listener with a known backlog, the RTT histogram's count, UDP states; every
query of sockdiag(8)'s "Series and queries" runs as written and finds series
(the RTT histogram's count under the names it documents).
Also: `promtool check metrics` on the text exposition; unknown paths (404),
other methods (405), huge headers (431) and slow clients never block a
scrape; ten concurrent scrapes during one (slowed) pass share that pass; a
bad configuration on SIGHUP is refused, a good one taken.
Exit 77 (skip) without root, prometheus or promtool.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

EXPORTER = "127.0.0.1:10113"
PROM = "127.0.0.1:19090"


def population():
    """Runs inside namespace B: make the sockets, say 'ready', wait."""
    keep = []

    def listener(fam, addr, port, backlog):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        s.listen(backlog)
        keep.append(s)
        return s

    def client(port):
        c = socket.create_connection(("127.0.0.1", port))
        keep.append(c)
        return c

    l1 = listener(socket.AF_INET, "127.0.0.1", 5432, 7)
    for _ in range(3):          # never accepted: accept queue 3 of 7
        client(5432)
    l2 = listener(socket.AF_INET, "127.0.0.1", 22, 16)
    for _ in range(2):
        client(22)
        keep.append(l2.accept()[0])
    c = client(22)               # -> client FIN-WAIT-2, server CLOSE-WAIT
    srv = l2.accept()[0]
    keep.append(srv)
    c.shutdown(socket.SHUT_WR)
    listener(socket.AF_INET6, "::1", 443, 5)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 5353))
    keep.append(u)
    uc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    uc.connect(("127.0.0.1", 5353))
    keep.append(uc)
    del l1
    time.sleep(0.2)              # the FIN reaches the server
    print("ready", flush=True)
    signal.pause()


# What B holds (TCP unless said otherwise).
EXPECT = [
    ('sockdiag_sockets{family="inet",proto="tcp",state="listen"}', 2),
    ('sockdiag_sockets{family="inet6",proto="tcp",state="listen"}', 1),
    ('sockdiag_sockets{family="inet",proto="tcp",state="established"}', 10),
    ('sockdiag_sockets{family="inet",proto="tcp",state="close_wait"}', 1),
    ('sockdiag_sockets{family="inet",proto="tcp",state="fin_wait2"}', 1),
    ('sockdiag_sockets{family="inet",proto="tcp",state="time_wait"}', 0),
    ('sockdiag_sockets{family="inet",proto="udp",state="established"}', 1),
    ('sockdiag_sockets{family="inet",proto="udp",state="close"}', 1),
    ('sockdiag_port_sockets{proto="tcp",port="22",state="listen"}', 1),
    ('sockdiag_port_sockets{proto="tcp",port="22",state="established"}', 2),
    ('sockdiag_port_sockets{proto="tcp",port="22",state="close_wait"}', 1),
    ('sockdiag_port_sockets{proto="tcp",port="5432",state="established"}', 3),
    ('sockdiag_port_sockets{proto="tcp",port="5432",state="listen"}', 1),
    ('sockdiag_port_sockets{proto="tcp",port="443",state="listen"}', 1),
    ('sockdiag_port_sockets{proto="tcp",port="443",state="established"}', 0),
    ('sockdiag_port_sockets{proto="udp",port="5353",state="close"}', 1),
    ('sockdiag_accept_queue_length{address="127.0.0.1",port="5432"}', 3),
    ('sockdiag_accept_queue_limit{address="127.0.0.1",port="5432"}', 7),
    ('sockdiag_accept_queue_length{address="127.0.0.1",port="22"}', 0),
    ('sockdiag_accept_queue_limit{address="127.0.0.1",port="22"}', 16),
    ('sockdiag_accept_queue_limit{address="::1",port="443"}', 5),
    ('sockdiag_tcp_rtt_seconds_gcount', 10),
    ('sockdiag_tcp_info_sockets', 15),
]


def fail(msg):
    print("FAIL: " + msg, flush=True)
    print("# checks: %d passed, 1 failed, 0 skipped" % len(PASSED), flush=True)
    sys.exit(1)


PASSED = []


def ok(msg):
    PASSED.append(msg)
    print("ok: " + msg, flush=True)


def http(url, method="GET", headers=None, timeout=10, data=None):
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def query(expr):
    url = "http://%s/api/v1/query?%s" % (PROM, urllib.parse.urlencode({"query": expr}))
    st, _, body = http(url)
    if st != 200:
        fail("query %s: HTTP %d %s" % (expr, st, body))
    return json.loads(body)["data"]["result"]


def wait(what, cond, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return
        time.sleep(0.2)
    fail("timed out waiting for " + what)


def with_netns(sel, ns):
    """Add netns="ns" to a selector: metric{a="b"} or metric."""
    if "{" in sel:
        return sel.replace("{", '{netns="%s",' % ns, 1)
    return '%s{netns="%s"}' % (sel, ns)


def scrape_value(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    fail("no %s in the exposition" % name)


def man_queries(title):
    """The queries of sockdiag(8)'s section title (.SS, groff's escapes as in the page):
    the lines of its .EX blocks, unescaped."""
    page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "man",
                        "sockdiag.8")
    text = open(page).read()
    try:
        sec = text.split(".SS %s\n" % title, 1)[1]
    except IndexError:
        fail("sockdiag(8) has no '%s' section" % title)
    sec = sec.split("\n.SS ", 1)[0].split("\n.SH ", 1)[0]
    queries, inside = [], False
    for line in sec.splitlines():
        if line in (".EX", ".EE"):
            inside = line == ".EX"
        elif inside:
            queries.append(line.replace("\\-", "-").replace("\\(dq", '"')
                           .replace("\\e", "\\"))
    return queries


def start_prometheus(tmp, spawn, jobs):
    """A Prometheus scraping jobs ({name: HOST:PORT}) every second, storage in tmp, started
    with spawn(args, **popen_kw); returns once it is ready."""
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
        for name, target in jobs.items():
            f.write("  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n"
                    % (name, target))
    r = subprocess.run(["promtool", "check", "config", cfg], capture_output=True, text=True)
    if r.returncode != 0:
        fail("promtool check config: " + r.stdout + r.stderr)
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    spawn(["prometheus", "--config.file=" + cfg,
           "--storage.tsdb.path=" + os.path.join(tmp, "data"),
           "--web.listen-address=" + PROM], stdout=log, stderr=log)

    def ready():
        try:
            return http("http://%s/-/ready" % PROM, timeout=2)[0] == 200
        except OSError:
            return False
    wait("Prometheus to be ready", ready, 60)


def enter(argv):
    """The checks every test here makes (root, tools) and its private network namespace
    (argv run again inside): an exit status to end with, or None once inside."""
    if os.geteuid() != 0:
        print("SKIP(netns): needs root (network namespaces)")
        return 77
    for tool in ("prometheus", "promtool", "ip", "unshare"):
        if not shutil.which(tool):
            print("SKIP(tool:%s): not installed (Debian: prometheus, iproute2)" % tool)
            return 77
    if not os.environ.get("SD_EXPORTER_INNER"):
        env = dict(os.environ, SD_EXPORTER_INNER="1")
        return subprocess.run(["unshare", "-n", sys.executable, argv[0]] + argv[1:],
                              env=env).returncode
    return None


class Test:
    def __init__(self, sd, slowdump):
        self.sd, self.slowdump = sd, slowdump
        self.tmp = tempfile.mkdtemp(prefix="sdexp")
        self.ns = "sdx%db" % os.getpid()
        self.procs = []

    def spawn(self, args, env=None, **kw):
        p = subprocess.Popen(args, env=env, **kw)
        self.procs.append(p)
        return p

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        subprocess.run(["ip", "netns", "del", self.ns], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def exporter_log(self):
        with open(os.path.join(self.tmp, "exporter.log")) as f:
            return f.read()

    def make_netns(self):
        """Loopback up here (A), and namespace B (self.ns) with its loopback up."""
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        # B gets TCP and UDP hash tables of its own (set here, in A, for the
        # namespaces A creates): otherwise every pass walks the sockets of
        # every namespace of a busy host, and a scrape can outlast its 1 s.
        for knob in ("net.ipv4.tcp_child_ehash_entries=1024",
                     "net.ipv4.udp_child_hash_entries=256"):
            subprocess.run(["sysctl", "-qw", knob], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "add", self.ns], check=True)
        subprocess.run(["ip", "-n", self.ns, "link", "set", "lo", "up"], check=True)

    def setup_population(self):
        """Namespace B with the population (the push tests use it too)."""
        self.make_netns()
        self.pop = self.spawn(["ip", "netns", "exec", self.ns, sys.executable,
                               os.path.abspath(__file__), "--population"],
                              stdout=subprocess.PIPE, text=True)
        if self.pop.stdout.readline().strip() != "ready":
            fail("population did not start")

    def setup(self):
        self.setup_population()
        self.conf = os.path.join(self.tmp, "exporter.conf")
        with open(self.conf, "w") as f:
            f.write("# the per-port view\nports = 22, 443, 5432\nports = 5353\n"
                    "group-by-cgroup = yes\n")
        log = open(os.path.join(self.tmp, "exporter.log"), "w")
        self.exp = self.spawn([self.sd, "exporter", "--listen", EXPORTER, "-c", self.conf,
                               "-N", self.ns], stderr=log)
        wait("the exporter", lambda: self.get("/")[0] == 200, 10)

    def get(self, path, **kw):
        try:
            return http("http://%s%s" % (EXPORTER, path), **kw)
        except OSError:
            return (0, None, "")

    def check_promtool(self):
        st, hdr, body = self.get("/metrics")
        if st != 200 or not hdr["Content-Type"].startswith("text/plain; version=0.0.4"):
            fail("text exposition: HTTP %d %s" % (st, hdr and hdr["Content-Type"]))
        r = subprocess.run(["promtool", "check", "metrics"], input=body, text=True,
                           capture_output=True)
        if r.returncode != 0:
            fail("promtool check metrics: %s%s" % (r.stdout, r.stderr))
        st, hdr, om = self.get("/metrics", headers={
            "Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"})
        if not hdr["Content-Type"].startswith("application/openmetrics-text; version=1.0.0") \
                or not om.endswith("# EOF\n"):
            fail("OpenMetrics exposition: %s" % hdr["Content-Type"])
        ok("promtool check metrics passes; OpenMetrics on request")

    def start_prometheus(self):
        start_prometheus(self.tmp, self.spawn, {"sockdiag": EXPORTER})

        def two_scrapes():
            r = query('sum_over_time(up{job="sockdiag"}[1m])')
            return r and float(r[0]["value"][1]) >= 2
        wait("two successful scrapes", two_scrapes, 60)
        ok("Prometheus scraped the exporter twice")

    def check_values(self):
        for sel, want in EXPECT:
            # The last value scraped: on a loaded machine the latest scrape
            # may have timed out (its series are then marked stale).
            expr = "last_over_time(%s[1m])" % with_netns(sel, self.ns)
            r = query(expr)
            if len(r) != 1:
                fail("%s: %d series (want 1): %s" % (expr, len(r), r))
            got = float(r[0]["value"][1])
            if got != want:
                fail("%s = %s, expected %d" % (expr, got, want))
        ok("%d values through Prometheus equal the population" % len(EXPECT))

    def check_documented_queries(self):
        """Each query in sockdiag(8)'s "Series and queries" (the .EX blocks), as written."""
        queries = man_queries("Series and queries")
        if len(queries) < 12:
            fail("sockdiag(8): %d queries in 'Series and queries', want one per family"
                 % len(queries))
        for q in queries:
            r = query(q)    # fails on a query Prometheus refuses
            # May be none: the unsupported tables (a kernel with every module), the
            # comm grouping (off here: its /proc walk makes a pass 5x slower on a
            # busy host, and scrapes here time out after 1 s).
            if not r and "table_unsupported" not in q and "comm_sockets" not in q:
                fail("documented query %r found no series" % q)
        # The names the section gives for the RTT histogram's count.
        for q, want in (("sum(sockdiag_tcp_rtt_seconds_gcount)", 10),
                        ('sum(sockdiag_tcp_rtt_seconds_bucket{le="+Inf"})', 10)):
            r = query("last_over_time(%s[1m:1s])" % q)
            if len(r) != 1 or float(r[0]["value"][1]) != want:
                fail("%s: %s, want %d" % (q, r, want))
        if query("sockdiag_tcp_rtt_seconds_count"):
            fail("sockdiag_tcp_rtt_seconds_count exists: the page says OpenMetrics has none")
        ok("the %d queries of sockdiag(8)'s 'Series and queries' run and find series"
           % len(queries))

    def check_bad_requests(self):
        if self.get("/nope")[0] != 404:
            fail("unknown path: not 404")
        if self.get("/metrics", method="POST")[0] != 405:
            fail("POST: not 405")
        # With a body: answered before it is read (a 405 from the handler's
        # second call, as GETs are answered, was never sent: the connection
        # closed); a GET's body is read and dropped.
        st = self.get("/metrics", method="POST", data=b"x=" + b"y" * 100000)[0]
        if st != 405:
            fail("POST with a body: %d, not 405" % st)
        st = self.get("/metrics", data=b"x=1", headers={"Content-Type": "text/plain"})[0]
        if st != 200:
            fail("GET with a body: %d, not 200" % st)
        if self.get("/metrics", headers={"X-Big": "a" * 40000})[0] != 431:
            fail("huge header: not 431")
        # Slow clients: connections that send half a request and stall.
        slow = []
        for _ in range(5):
            s = socket.create_connection(EXPORTER.split(":") and ("127.0.0.1", 10113))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(s)
        t0 = time.time()
        st, _, _ = self.get("/metrics", timeout=5)
        dt = time.time() - t0
        if st != 200 or dt > 3:
            fail("scrape with 5 stalled clients: HTTP %d after %.1f s" % (st, dt))
        for s in slow:
            s.close()
        ok("404, 405 (with a body too), 431; a scrape with 5 stalled clients took %.2f s" % dt)

    def check_shared_pass(self):
        """Ten requests during one slowed pass are answered by that pass."""
        env = dict(os.environ, LD_PRELOAD=self.slowdump, SLOWDUMP_MS="60")
        if "ASAN_OPTIONS" in env or "address" in os.environ.get("SOCKDIAG_SANITIZE", ""):
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
        self.spawn([self.sd, "exporter", "--listen", "127.0.0.1:10114", "-N", self.ns],
                   env=env, stderr=subprocess.DEVNULL)
        url = "http://127.0.0.1:10114/metrics"

        def get():
            try:
                return http(url, timeout=30)
            except OSError:
                return (0, None, "")
        wait("the slowed exporter", lambda: get()[0] == 200, 30)
        base = get()[2]
        p0 = scrape_value(base, "sockdiag_scrape_passes_total")
        bodies = [None] * 10
        first = threading.Thread(target=lambda: bodies.__setitem__(0, get()))
        first.start()
        time.sleep(0.2)          # the pass is under way (18 tables x 60 ms)
        th = [threading.Thread(target=lambda i=i: bodies.__setitem__(i, get()))
              for i in range(1, 10)]
        for t in th:
            t.start()
        for t in [first] + th:
            t.join()
        if any(b[0] != 200 for b in bodies):
            fail("concurrent scrapes: %s" % [b[0] for b in bodies])
        stamps = {scrape_value(b[2], "sockdiag_scrape_timestamp_seconds") for b in bodies}
        p1 = scrape_value(get()[2], "sockdiag_scrape_passes_total")
        if len(stamps) != 1 or p1 - p0 != 2:
            fail("10 concurrent scrapes: %d distinct passes, passes counter +%d (want 1, +2)"
                 % (len(stamps), p1 - p0))
        ok("10 concurrent scrapes were answered by one pass")

    def check_reload(self):
        with open(self.conf, "w") as f:
            f.write("ports = 22\n\nports = 70000\n")
        self.exp.send_signal(signal.SIGHUP)
        wait("a refused reload", lambda: "line 3: ports: '70000'" in self.exporter_log(), 5)
        st, _, body = self.get("/metrics")
        if ',port="5432",state' not in body or scrape_value(
                body, 'sockdiag_config_reloads_total{result="refused"}') != 1:
            fail("a refused reload changed the configuration")
        with open(self.conf, "w") as f:
            f.write("ports = 22\n")
        self.exp.send_signal(signal.SIGHUP)
        wait("a reload", lambda: "reloaded" in self.exporter_log(), 5)
        body = self.get("/metrics")[2]
        if ',port="5432",state' in body or ',port="22",state' not in body:
            fail("the reloaded configuration is not in use")
        ok("SIGHUP: a bad file is refused (line named), a good one taken")

    def run(self):
        try:
            self.setup()
            self.check_promtool()
            self.start_prometheus()
            self.check_values()
            self.check_documented_queries()
            self.check_bad_requests()
            self.check_shared_pass()
            self.check_reload()
        finally:
            self.cleanup()


def test_main(doc, nargs, population, run):
    """The main of a test here: --population runs population(); else nargs arguments
    (paths), the checks and the namespace of enter(), then run(*paths)."""
    if len(sys.argv) > 1 and sys.argv[1] == "--population":
        population()
        return 0
    if len(sys.argv) != nargs + 1:
        print(doc)
        return 2
    r = enter(sys.argv)
    if r is not None:
        return r
    run(*[os.path.abspath(a) for a in sys.argv[1:]])
    print("# checks: %d passed, 0 failed, 0 skipped" % len(PASSED))
    return 0


def main():
    return test_main(__doc__, 2, population, lambda sd, slow: Test(sd, slow).run())


if __name__ == "__main__":
    sys.exit(main())
