#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag exporter pushing into a real Prometheus (remote write).

usage: push_prometheus.py SOCKDIAG

In a private network namespace A: Prometheus with its remote-write receiver on
(2.42: --enable-feature=remote-write-receiver; later ones
--web.enable-remote-write-receiver) and nothing to scrape, and the exporter
with remote-write-url and push-interval = 1s, reporting a second namespace B
with exporter_e2e.py's population. Through Prometheus's query API: every
series exporter_e2e.py checks after scrapes arrives by push with the same value,
with job="sockdiag" and instance=the host name; the series count equals the
exposition's; the scrape endpoint keeps answering alongside and counts the
pushes (sockdiag_push_requests_total{result="ok"}).
Exit 77 (skip) without root or prometheus.
"""
import os
import re
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_e2e as e2e  # noqa: E402  (its population, EXPECT, query helpers)
import pushlib  # noqa: E402

EXPORTER = "127.0.0.1:10113"


def receiver_flag():
    out = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
    m = re.search(r"version (\d+)\.(\d+)", out.stdout + out.stderr)
    if m and (int(m.group(1)), int(m.group(2))) < (2, 33):
        return None
    if m and (int(m.group(1)), int(m.group(2))) < (2, 45):
        return "--enable-feature=remote-write-receiver"
    return "--web.enable-remote-write-receiver"


class Test(e2e.Test):
    def start_prometheus(self):
        cfg = os.path.join(self.tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1m\n")
        log = open(os.path.join(self.tmp, "prometheus.log"), "w")
        self.spawn(["prometheus", "--config.file=" + cfg, receiver_flag(),
                    "--storage.tsdb.path=" + os.path.join(self.tmp, "data"),
                    "--web.listen-address=" + e2e.PROM], stdout=log, stderr=log)

        def ready():
            try:
                return e2e.http("http://%s/-/ready" % e2e.PROM, timeout=2)[0] == 200
            except OSError:
                return False
        e2e.wait("Prometheus to be ready", ready, 60)

    def start_exporter(self):
        self.conf = os.path.join(self.tmp, "exporter.conf")
        with open(self.conf, "w") as f:
            f.write("ports = 22, 443, 5432\nports = 5353\ngroup-by-cgroup = yes\n"
                    "remote-write-url = http://%s/api/v1/write\npush-interval = 1s\n"
                    % e2e.PROM)
        log = open(os.path.join(self.tmp, "exporter.log"), "w")
        self.exp = self.spawn([self.sd, "exporter", "--listen", EXPORTER, "-c", self.conf,
                               "-N", self.ns], stderr=log)

        def pushed():
            r = e2e.query('count_over_time(sockdiag_scrape_passes_total{job="sockdiag"}[1m])')
            return r and float(r[0]["value"][1]) >= 2
        e2e.wait("two pushes to arrive", pushed, 60)
        e2e.ok("the exporter pushed twice into Prometheus (remote write)")

    def check_pushed(self):
        host = socket.gethostname()
        for sel, want in e2e.EXPECT:
            sel = e2e.with_netns(sel, self.ns).replace(
                "{", '{job="sockdiag",instance="%s",' % host, 1)
            r = e2e.query("last_over_time(%s[1m])" % sel)
            if len(r) != 1:
                e2e.fail("%s: %d series (want 1): %s" % (sel, len(r), r))
            if float(r[0]["value"][1]) != want:
                e2e.fail("%s = %s, expected %d" % (sel, r[0]["value"][1], want))
        e2e.ok("%d values pushed equal the population, with job and instance"
               % len(e2e.EXPECT))
        # One series per sample of the exposition (the push's own metrics included).
        st, _, body = e2e.http("http://%s/metrics" % EXPORTER, headers={
            "Accept": "application/openmetrics-text;version=1.0.0"})
        if st != 200:
            e2e.fail("the scrape endpoint beside the push: HTTP %d" % st)
        samples = [ln for ln in body.splitlines() if ln and not ln.startswith("#")]
        r = e2e.query('count({job="sockdiag",instance="%s"})' % host)
        got = int(float(r[0]["value"][1])) if r else 0
        if got != len(samples):
            e2e.fail("%d series pushed, the exposition has %d samples" % (got, len(samples)))
        okv = e2e.scrape_value(body, 'sockdiag_push_requests_total{target="remote_write",'
                                     'result="ok"}')
        if okv < 2:
            e2e.fail("sockdiag_push_requests_total{result=ok} = %s" % okv)
        e2e.ok("%d series = the exposition's samples; /metrics answers beside the push "
               "(%d pushes accepted)" % (got, okv))

    def run(self):
        try:
            self.setup_population()
            self.start_prometheus()
            self.start_exporter()
            self.check_pushed()
        finally:
            self.cleanup()


def main():
    if shutil.which("prometheus") and not receiver_flag():
        print("SKIP(prometheus): older than 2.33, no remote-write receiver")
        return 77
    return pushlib.main(__doc__, 1, lambda: Test(os.path.abspath(sys.argv[1]), None).run(),
                        tools=("prometheus",))


if __name__ == "__main__":
    sys.exit(main())
