#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The exporter's per-destination metrics, connection ends and the Grafana dashboard,
against a real Prometheus.

usage: exporter_metrics.py SOCKDIAG

In a private network namespace A run the exporter (-N B: ephemeral-ports, udp-drops,
destinations = cgroup, life = yes), the guard (-N B, --metrics) and a real Prometheus
scraping both every second. Namespace B holds a population this test builds, with
ip_local_port_range set to 41000-41999 (1000 ports) and nothing else in it. Checks, through
Prometheus's query API, against what the test made:
  - ephemeral ports: 25 connections from ephemeral ports to 127.0.0.1:5432 (one more
    from the fixed port 30000, outside the range, is not counted), 3 to :6379; the range
    size is 1000; the documented headroom query gives 25/1000;
  - UDP drops: a socket with a tiny receive buffer that nobody reads gets 300 datagrams;
    the metric equals the drops column of B's /proc/net/udp (the kernel's count);
  - destinations: 26 connections to :5432 (the fixed-port one too), 3 to :6379;
  - a cap: with max-series = 2 (--once, destinations = comm) the two largest
    destinations are the series and the 4 other connections are counted in
    sockdiag_dropped_sockets_total{grouping="ephemeral"|"destination"};
  - connection ends (life's generator: ok with known payloads, refused, timeout, reset,
    a listener closed with connections in its queue): counts per outcome and port, bytes,
    durations;
  - guard actions: an address removed in B, its connection destroyed (2 sockets);
  - the queries of sockdiag(8)'s "Per-destination series and connection ends" run and
    find series;
  - deploy/grafana/sockdiag.json: the fields Grafana's import needs, and every panel's
    query, run over the test's time range, returns data.
Exit 77 (skip) without root, prometheus or promtool.
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_e2e as e2e  # noqa: E402  (its HTTP, query and report helpers)
from exporter_e2e import fail, http, ok, query, wait  # noqa: E402

EXPORTER = "127.0.0.1:10113"
CAPPED = "127.0.0.1:10117"  # a second exporter: life = yes, max-series = 3
GUARD = "127.0.0.1:10116"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RANGE = (41000, 41999)
DATAGRAMS = 300
GUARD_ADDR = "10.11.0.1"


def population():
    """Runs inside namespace B: make the sockets, say 'ready'; 'ends' makes the ends."""
    open("/proc/self/comm", "w").write("sdpop")
    keep = []

    def listener(port, addr="127.0.0.1", backlog=128):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        s.listen(backlog)
        keep.append(s)
        return s

    def clients(lst, n, src=None):
        for _ in range(n):
            c = socket.socket()
            if src:
                c.bind(src)
            c.connect(lst.getsockname())
            keep.append(c)
            keep.append(lst.accept()[0])

    clients(listener(5432), 25)
    clients(keep[0], 1, ("127.0.0.1", 30000))   # a fixed port: not ephemeral
    clients(listener(6379), 3)
    for port in (7001, 7002, 7003):
        clients(listener(port), 1)
    clients(listener(7100, GUARD_ADDR), 1, (GUARD_ADDR, 0))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    u.bind(("127.0.0.1", 5353))
    keep.append(u)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(DATAGRAMS):
        s.sendto(b"d" * 1000, ("127.0.0.1", 5353))
    keep.append(s)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "ends":
            make_ends()
        elif line.strip() == "more":
            ok_and_refused(1)
        print("done", flush=True)


def listener(port, backlog=16):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(backlog)
    return s


def ok_and_refused(n):
    """n ok connections to :6000, held 2.5 s (dumps see them start), 1000 bytes out,
    500 back; then 2 refused connects."""
    L = listener(6000)
    pairs = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", 6000))
        pairs.append((c, L.accept()[0]))
    time.sleep(2.5)
    for c, a in pairs:
        c.sendall(b"x" * 1000)
        a.recv(1000, socket.MSG_WAITALL)
        a.sendall(b"y" * 500)
        c.recv(500, socket.MSG_WAITALL)
        c.close()
        a.recv(10)
        a.close()
    L.close()
    for _ in range(2):
        c = socket.socket()
        try:
            c.connect(("127.0.0.1", 1))
        except OSError:
            pass
        c.close()


def make_ends():
    """life's generator (tests/netns/life.py): each outcome on a port of its own."""
    ok_and_refused(3)
    R = listener(6001)
    c = socket.socket()     # timeout: tcp_syn_retries = 1, 10.9.0.2 routed to lo
    try:
        c.connect(("10.9.0.2", 80))
    except OSError:
        pass
    c.close()
    c = socket.create_connection(("127.0.0.1", 6001))   # reset by the peer (SO_LINGER 0)
    a = R.accept()[0]
    c.sendall(b"z" * 100)
    a.recv(100)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    a.close()
    try:
        c.recv(10)
    except OSError:
        pass
    c.close()
    Q = listener(6002)      # a listener closed with 2 connections in its queue
    queued = [socket.create_connection(("127.0.0.1", 6002)) for _ in range(2)]
    for c in queued:
        c.sendall(b"req")
        c.close()
    Q.close()
    R.close()


CONF = ("tables = tcp udp\nephemeral-ports = yes\nudp-drops = yes\ndestinations = cgroup\n"
        "life = yes\n")

# (selector, value) after the population is built; "range" and "udp" filled in later.
STATIC = [
    ('sockdiag_ephemeral_port_connections{local_address="127.0.0.1",'
     'peer_address="127.0.0.1",peer_port="5432"}', 25),
    ('sockdiag_ephemeral_port_connections{peer_port="6379"}', 3),
    ('sockdiag_ephemeral_port_connections{local_address="%s",peer_port="7100"}' % GUARD_ADDR, 1),
    ('sockdiag_ephemeral_port_range_size', RANGE[1] - RANGE[0] + 1),
    ('sum(sockdiag_destination_connections{peer_address="127.0.0.1",peer_port="5432"})', 26),
    ('sum(sockdiag_destination_connections{peer_port="6379"})', 3),
    ('sockdiag_udp_drop_sockets{address="127.0.0.1",port="5353"}', 1),
]

# The ends make_ends() makes: (selector, value). Both sides of an ok connection end ok,
# port 6000 each (the client's peer port, the server's local port); the accepted side of
# the reset one was cleared with SO_LINGER 0: "dropped", as the 2 children the closed
# listener never accepted, whose clients had closed first (ok); a refused connect no dump
# saw has its peer cleared by the kernel: port 0.
ENDS = [
    ('sockdiag_connection_ends_total{outcome="ok",port="6000"}', 6),
    ('sockdiag_connection_end_sent_bytes_total{outcome="ok",port="6000"}', 4500),
    ('sockdiag_connection_end_received_bytes_total{outcome="ok",port="6000"}', 4500),
    ('sockdiag_connection_duration_seconds_count{outcome="ok",port="6000"}', 6),
    ('sockdiag_connection_ends_total{outcome="refused",port="0"}', 2),
    ('sockdiag_connection_ends_total{outcome="timeout",port="80"}', 1),
    ('sockdiag_connection_ends_total{outcome="reset",port="6001"}', 1),
    ('sockdiag_connection_end_sent_bytes_total{outcome="reset",port="6001"}', 100),
    ('sockdiag_connection_ends_total{outcome="dropped",port="6001"}', 1),
    ('sockdiag_connection_ends_total{outcome="dropped",port="6002"}', 2),
    ('sockdiag_connection_ends_total{outcome="ok",port="6002"}', 2),
    ('sockdiag_connection_end_events_lost_total', 0),
    ('sockdiag_connection_end_errors_total', 0),
]


def last(sel):
    r = query("last_over_time(%s[1m:1s])" % sel if sel.startswith("sum(")
              else "last_over_time(%s[1m])" % sel)
    return [float(x["value"][1]) for x in r]


class Test(e2e.Test):
    def __init__(self, sd):
        super().__init__(sd, None)
        self.ns = "sdm%db" % os.getpid()
        self.t0 = time.time()

    def inb(self, *cmd, **kw):
        return subprocess.run(["ip", "netns", "exec", self.ns] + list(cmd), check=True, **kw)

    def setup(self):
        self.make_netns()
        self.inb("sysctl", "-qw", "net.ipv4.ip_local_port_range=%d %d" % RANGE)
        self.inb("sysctl", "-qw", "net.ipv4.tcp_syn_retries=1")
        self.inb("ip", "route", "add", "10.9.0.0/24", "dev", "lo")
        self.inb("ip", "addr", "add", GUARD_ADDR + "/32", "dev", "lo")
        self.pop = self.spawn(["ip", "netns", "exec", self.ns, sys.executable, __file__,
                               "--population"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
        if self.pop.stdout.readline().strip() != "ready":
            fail("population did not start")
        self.conf = os.path.join(self.tmp, "exporter.conf")
        with open(self.conf, "w") as f:
            f.write(CONF)
        self.log = os.path.join(self.tmp, "exporter.log")
        self.exp = self.spawn([self.sd, "exporter", "--listen", EXPORTER, "-c", self.conf,
                               "-N", self.ns], stderr=open(self.log, "w"))
        cconf = os.path.join(self.tmp, "capped.conf")
        with open(cconf, "w") as f:
            f.write("tables = tcp\nlife = yes\nmax-series = 3\n")
        self.spawn([self.sd, "exporter", "--listen", CAPPED, "-c", cconf, "-N", self.ns],
                   stderr=subprocess.DEVNULL)
        gconf = os.path.join(self.tmp, "guard.conf")
        with open(gconf, "w") as f:
            f.write("exempt-loopback = yes\n")
        self.glog = os.path.join(self.tmp, "guard.log")
        self.spawn([self.sd, "guard", "-c", gconf, "-N", self.ns, "--metrics", GUARD],
                   stderr=open(self.glog, "w"))
        for addr in (EXPORTER, CAPPED, GUARD):
            wait(addr, lambda a=addr: self.get_at(a, "/")[0] == 200, 10)

    def get_at(self, addr, path):
        try:
            return http("http://%s%s" % (addr, path))
        except OSError:
            return (0, None, "")

    def start_prometheus(self):
        e2e.start_prometheus(self.tmp, self.spawn, {"sockdiag": EXPORTER, "guard": GUARD})

        def scraped():
            r = query('min(sum_over_time(up[1m]))')
            return r and float(r[0]["value"][1]) >= 2
        wait("two scrapes of the exporter and of the guard", scraped, 60)
        ok("Prometheus scraped the exporter and the guard twice")

    def expect(self, what, table, seconds=1):
        """Each selector's last value equals its number (waiting up to seconds)."""
        end = time.time() + seconds
        while True:
            bad = [(s, w, last(s)) for s, w in table if last(s) != [w]]
            if not bad or time.time() > end:
                break
            time.sleep(0.5)
        if bad:
            fail("%s: %s" % (what, "; ".join("%s = %s, expected [%s]" % b for b in bad)))
        ok("%s: %d values equal what the test made" % (what, len(table)))

    def udp_drops_oracle(self):
        """The drops column of B's /proc/net/udp for 127.0.0.1:5353."""
        out = self.inb("cat", "/proc/net/udp", capture_output=True, text=True).stdout
        for line in out.splitlines()[1:]:
            f = line.split()
            if f[1] == "0100007F:14E9":
                return int(f[-1])
        fail("no 127.0.0.1:5353 in B's /proc/net/udp")

    def check_static(self):
        drops = self.udp_drops_oracle()
        if not 0 < drops < DATAGRAMS:
            fail("the kernel dropped %d of %d datagrams: the test needs some" %
                 (drops, DATAGRAMS))
        self.expect("ephemeral ports, UDP drops, destinations", STATIC + [
            ('sockdiag_udp_receive_drops{address="127.0.0.1",port="5353"}', drops)])
        ok("UDP drops = %d, /proc/net/udp's drops column" % drops)

    def check_cap(self):
        conf = os.path.join(self.tmp, "cap.conf")
        with open(conf, "w") as f:
            f.write("tables = tcp\nephemeral-ports = yes\ndestinations = comm\n"
                    "max-series = 2\n")
        out = subprocess.run([self.sd, "exporter", "-c", conf, "-N", self.ns, "--once"],
                             capture_output=True, text=True, check=True).stdout
        series = {}
        for line in out.splitlines():
            if not line.startswith("#"):
                name = line.split("{")[0].split(" ")[0]
                series.setdefault(name, []).append(line)
        want = {
            "sockdiag_ephemeral_port_connections": ['peer_port="5432"} 25',
                                                    'peer_port="6379"} 3'],
            "sockdiag_destination_connections": ['comm="sdpop",peer_address="127.0.0.1",'
                                                 'peer_port="5432"} 26',
                                                 'peer_port="6379"} 3'],
        }
        for name, ends in want.items():
            got = series.get(name, [])
            if len(got) != 2 or not all(any(g.endswith(e) for g in got) for e in ends):
                fail("max-series = 2: %s: %s, want the two largest %s" % (name, got, ends))
        for g in ("ephemeral", "destination"):
            line = 'sockdiag_dropped_sockets_total{grouping="%s"} 4' % g
            if line not in out.splitlines():
                fail("max-series = 2: no '%s' (7001-7003 and 7100 left out)" % line)
        ok("max-series = 2: the two largest sets kept, the 4 other connections counted")

    def command(self, what):
        self.pop.stdin.write(what + "\n")
        self.pop.stdin.flush()
        if self.pop.stdout.readline().strip() != "done":
            fail("the population did not make the %s" % what)

    def check_ends(self):
        self.command("ends")
        self.expect("connection ends", ENDS, 15)
        s = last('sockdiag_connection_duration_seconds_sum{outcome="ok",port="6000"}')
        # Held 2.5 s; their start is when a dump (every second) first saw them.
        if len(s) != 1 or not 6 * 1.3 <= s[0] <= 6 * 4:
            fail("ok connections' durations sum %s, want 6 x 1.3..4 s" % s)
        ok("ok connections' durations: %.1f s for 6 ends held 2.5 s" % s[0])

    def check_more_ends(self):
        """A second batch, so that rates and quantiles over the series have an increase."""
        self.command("more")
        self.expect("a second batch of ends", [
            ('sockdiag_connection_ends_total{outcome="ok",port="6000"}', 8),
            ('sockdiag_connection_duration_seconds_count{outcome="ok",port="6000"}', 8),
            ('sockdiag_connection_ends_total{outcome="refused",port="0"}', 4)], 15)

    def check_ends_cap(self):
        """The same ends through an exporter with max-series = 3: three label sets and
        the others under port="other", the total whole (sum of ENDS' counts)."""
        total = sum(w for sel, w in ENDS if sel.startswith("sockdiag_connection_ends_total"))

        def capped():
            lines = [l for l in self.get_at(CAPPED, "/metrics")[2].splitlines()
                     if l.startswith("sockdiag_connection_ends_total{")]
            named = [l for l in lines if 'port="other"' not in l]
            return len(named), sum(float(l.split()[-1]) for l in lines), lines
        end = time.time() + 10
        while capped()[1] != total and time.time() < end:
            time.sleep(0.2)
        named, got, lines = capped()
        if named != 3 or got != total or not any('port="other"' in l for l in lines):
            fail("max-series = 3: %d label sets, %d ends (want 3, %d, and port=other): %s"
                 % (named, got, total, lines))
        ok("max-series = 3: 3 label sets of ends, the rest under port=\"other\", %d in all"
           % total)

    def check_reload(self):
        """SIGHUP with the ends' thread running: reloaded (the thread blocks the
        signals as the others do), and a change of life-by is said to need a restart."""
        with open(self.conf, "w") as f:
            f.write(CONF + "life-by = comm\n")
        self.exp.send_signal(signal.SIGHUP)
        wait("the reload's log line", lambda: "reloaded" in open(self.log).read(), 10)
        if self.exp.poll() is not None:
            fail("SIGHUP ended the exporter (status %s)" % self.exp.returncode)
        if "life and life-by need a restart" not in open(self.log).read():
            fail("a reload changing life-by did not say it needs a restart")
        if self.get_at(EXPORTER, "/metrics")[0] != 200:
            fail("no scrape after the reload")
        ok("SIGHUP with life = yes: reloaded, life-by's change needs a restart (logged)")

    def check_guard(self):
        self.inb("ip", "addr", "del", GUARD_ADDR + "/32", "dev", "lo")
        self.expect("guard actions", [
            ('sockdiag_guard_sockets_total{outcome="destroyed"}', 2),
            ('sockdiag_guard_events_total{kind="address_removed"}', 1)], 15)

    def check_documented(self):
        queries = e2e.man_queries("Per\\-destination series and connection ends")
        if len(queries) < 5:
            fail("sockdiag(8): %d queries in the section, want one per family" % len(queries))
        for q in queries:
            if not self.range_query(q):
                fail("documented query %r found no series" % q)
        r = query('last_over_time((sockdiag_ephemeral_port_connections{peer_port="5432"} '
                  '/ on (netns) group_left sockdiag_ephemeral_port_range_size)[5m:1s])')
        if len(r) != 1 or float(r[0]["value"][1]) != 25 / 1000:
            fail("ephemeral headroom of :5432: %s, want 0.025" % r)
        ok("the %d queries of sockdiag(8)'s section find series; headroom 25/1000" %
           len(queries))

    def range_query(self, expr):
        """Samples of expr over the test's time (step 1 s, to a second from now: the
        last scrape's samples are in), NaN left out."""
        now = time.time() + 1
        url = "http://%s/api/v1/query_range?%s" % (e2e.PROM, urllib.parse.urlencode(
            {"query": expr, "start": "%.3f" % self.t0, "end": "%.3f" % now, "step": "1"}))
        st, _, body = http(url)
        if st != 200:
            fail("query %s: HTTP %d %s" % (expr, st, body))
        return [v for s in json.loads(body)["data"]["result"] for _, v in s["values"]
                if v != "NaN"]

    def check_dashboard(self):
        path = os.path.join(ROOT, "deploy", "grafana", "sockdiag.json")
        d = json.load(open(path))
        for key in ("title", "uid", "schemaVersion", "panels", "templating"):
            if key not in d:
                fail("dashboard: no %s" % key)
        if not isinstance(d["schemaVersion"], int) or not d["panels"]:
            fail("dashboard: schemaVersion %r, %d panels" % (d["schemaVersion"],
                                                             len(d["panels"])))
        tvars = {v["name"]: v for v in d["templating"]["list"]}
        ds = [v for v in tvars.values() if v["type"] == "datasource"]
        if len(ds) != 1 or ds[0]["query"] != "prometheus":
            fail("dashboard: no datasource variable of type prometheus: %s" % tvars)
        dsref = "${%s}" % ds[0]["name"]
        ids, titles = set(), set()
        need = {"sockets by state": "sockdiag_sockets", "accept": "sockdiag_accept_queue",
                "rtt": "sockdiag_tcp_rtt_seconds_bucket",
                "retransmit": "sockdiag_tcp_retransmitted",
                "ephemeral": "sockdiag_ephemeral_port", "ends": "sockdiag_connection_ends",
                "guard": "sockdiag_guard_sockets"}
        exprs = []
        for p in d["panels"]:
            for key in ("id", "type", "title", "datasource", "targets", "gridPos"):
                if key not in p:
                    fail("dashboard: panel %s has no %s" % (p.get("title"), key))
            if p["id"] in ids or p["datasource"].get("uid") != dsref:
                fail("dashboard: panel %r: id %s twice or datasource %s" %
                     (p["title"], p["id"], p["datasource"]))
            ids.add(p["id"])
            titles.add(p["title"].lower())
            for t in p["targets"]:
                if not t.get("expr") or not t.get("refId") or \
                        t.get("datasource", {}).get("uid") != dsref:
                    fail("dashboard: panel %r: target %s" % (p["title"], t))
                exprs.append((p["title"], t["expr"]))
        for word, metric in need.items():
            if not any(word in t for t in titles) or not any(metric in e for _, e in exprs):
                fail("dashboard: no panel for %s (%s)" % (word, metric))
        for title, expr in exprs:
            q = expr.replace("$netns", ".*").replace("$__rate_interval", "1m")
            if "$" in q:
                fail("dashboard: %r: a variable the test does not know: %s" % (title, q))
            if not self.range_query(q):
                fail("dashboard: panel %r: %s returned no data" % (title, q))
        ok("dashboard: Grafana's import fields; the %d queries of %d panels return data" %
           (len(exprs), len(d["panels"])))

    def run(self):
        try:
            self.setup()
            self.start_prometheus()
            self.check_static()
            self.check_cap()
            self.check_ends()
            self.check_ends_cap()
            self.check_reload()
            self.check_guard()
            self.check_more_ends()
            self.check_documented()
            self.check_dashboard()
        except SystemExit:
            for f in (self.log, self.glog):
                print("--- %s:\n%s" % (f, open(f).read()))
            raise
        finally:
            self.cleanup()


def main():
    return e2e.test_main(__doc__, 1, population, lambda sd: Test(sd).run())


if __name__ == "__main__":
    sys.exit(main())
