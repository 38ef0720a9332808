#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag-kube-backends' memory and CPU for a cluster of SLICES EndpointSlices
of ENDPOINTS endpoints each (two ports: TCP and UDP), listed in pages of 500 from
a stand-in API server (plain HTTP on loopback, in a private network namespace),
then EVENTS watch events (one endpoint of a slice stops serving, by turns): the
peak RSS (VmHWM), the CPU time (utime + stime), and how long after the last event
the file lists it. Usage: run.py SIDECAR [SLICES ENDPOINTS EVENTS]
(default 5000 10 2000). The deploy/kubernetes manifest's requests come from this."""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

if os.environ.get("SDIAG_BENCH_INNER") != "1":
    os.environ["SDIAG_BENCH_INNER"] = "1"
    os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
SIDECAR = os.path.abspath(sys.argv[1])
SLICES, EPS, EVENTS = (int(x) for x in (sys.argv[2:5] if len(sys.argv) > 4 else (5000, 10, 2000)))


def sl(i, down=-1, rv=1):
    return {"metadata": {"uid": "u%d" % i, "name": "s%d" % i, "namespace": "ns",
                         "resourceVersion": str(rv)},
            "addressType": "IPv4",
            "ports": [{"port": 8080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            "endpoints": [{"addresses": ["10.%d.%d.%d" % (i // 250, i % 250, e + 1)],
                           "conditions": {"ready": e != down, "serving": e != down}}
                          for e in range(EPS)]}


done = threading.Event()


class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        if "watch" not in q:
            start = int(q.get("continue", 0))
            end = min(start + 500, SLICES)
            md = {"resourceVersion": "1"}
            if end < SLICES:
                md["continue"] = str(end)
            body = json.dumps({"metadata": md, "items": [sl(i) for i in range(start, end)]})
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())
            return
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if q.get("resourceVersion") != "1":
            done.wait(60)
            return
        for n in range(EVENTS):
            ev = json.dumps({"type": "MODIFIED", "object": sl(n % SLICES, n % EPS, n + 2)})
            ev = (ev + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
        self.wfile.flush()
        self.server.sent = time.monotonic()
        done.wait(60)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
srv.daemon_threads = True
threading.Thread(target=srv.serve_forever, daemon=True).start()
tmp = tempfile.mkdtemp(prefix="sockdiag-kube-bench-")
open(os.path.join(tmp, "token"), "w").write("t\n")
out = os.path.join(tmp, "dead")
last = EVENTS - 1
want = "10.%d.%d.%d:8080/tcp" % (last % SLICES // 250, last % SLICES % 250, last % EPS + 1)
t0 = time.monotonic()
p = subprocess.Popen([SIDECAR, "--api-server", "http://127.0.0.1:%d" % srv.server_port,
                      "--service-account", tmp, out], stderr=subprocess.DEVNULL)
while time.monotonic() - t0 < 120:
    try:
        if want in open(out).read():
            break
    except FileNotFoundError:
        pass
    time.sleep(0.005)
seen = time.monotonic()
with open("/proc/%d/status" % p.pid) as f:
    hwm = [l for l in f if l.startswith("VmHWM")][0].split()[1]
with open("/proc/%d/stat" % p.pid) as f:
    st = f.read().rsplit(")", 1)[1].split()
cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
lines = sum(1 for l in open(out) if not l.startswith("#"))
p.terminate()
p.wait()
done.set()
print("%d slices x %d endpoints (%d backends), %d events: peak RSS %d KiB, CPU %.2f s, "
      "%.1f s from start to the last event's write (%.0f ms after it was sent), %d dead listed"
      % (SLICES, EPS, SLICES * EPS * 2, EVENTS, int(hwm), cpu, seen - t0,
         (seen - getattr(srv, "sent", seen)) * 1000, lines))
