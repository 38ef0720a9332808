#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag-kube-backends against a stand-in API server: an HTTPS server of
this test (its own CA, the service account's token checked on every request)
in a private network namespace, answering with the recorded EndpointSlices
of tests/deploy/endpointslices/ in the API server's list and watch formats.
The exchange, one request after another:
  1. list, two pages (limit, continue), resourceVersion 100; the file there
     from before lists 10.244.9.9:80/tcp (kept: dead still) and
     10.244.1.5:53/udp (dropped: a listed slice serves it);
  2. watch from 100 with bookmarks: an FQDN slice (ignored), a BOOKMARK (105),
     10.244.2.7 stops serving (106); then the connection drops mid-stream;
  3. a new watch after the backoff (>= 200 ms), from 106 (the last event's);
     10.244.2.7 leaves its slice (107), then an ERROR event 410 Gone;
  4. a list again (200): the IPv6 slice `web` is gone from it: its backend dies;
  5. a watch from 200 refused with HTTP 410: a list again (300), `web-v2`
     serves the IPv6 backend again;
  6. a watch from 300: a terminating endpoint still serving (draining: not
     dead), the server ends the watch cleanly; the watch again from 301
     at once: the endpoint leaves its slice (dead); the token rotated meanwhile.
(A second exchange: an ERROR event 500 makes it list again, after a backoff.)
After each step the file lists what the responses say (the oracle: the test's
expectations from reading them). Every version of the file seen at its
IN_MOVED_TO/IN_CLOSE_WRITE (inotify, as the guard reads it) is whole, and
the guard itself (`dead-backends`, backend-interval 0, in the namespace)
reads each and never refuses one. A second run: --ttl 1 drops a dead
backend after a second. SIGTERM: exit 0, no temporary file left.
Usage: kube_sidecar.py SOCKDIAG SOCKDIAG-KUBE-BACKENDS."""
import ctypes
import glob
import http.server
import json
import os
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from checks import SLOW, check, finish, wait

SD, SIDECAR = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
EV = {os.path.basename(p)[:2]: p for p in glob.glob(os.path.join(HERE, "endpointslices", "*.json"))}
HEADER = "# dead backends, written by sockdiag-kube-backends"
PATH = "/apis/discovery.k8s.io/v1/endpointslices"

SEED = ["10.244.9.9:80/tcp"]
DNS_DEAD = ["10.244.2.7:53/tcp", "10.244.2.7:53/udp"]
WEB = "[fd00:10:244::5]:8080/tcp"
API = "10.244.3.9:8443/tcp"


def event(n, rv, type_=None):
    """Recorded event n (its object with resourceVersion rv), as the watch sends it."""
    with open(EV[n]) as f:
        ev = json.load(f)
    ev["object"]["metadata"]["resourceVersion"] = str(rv)
    if type_:
        ev["type"] = type_
    return ev


def obj(n, rv=1):
    return event(n, rv)["object"]


def slice_list(items, rv, cont=None):
    md = {"resourceVersion": str(rv)}
    if cont:
        md["continue"] = cont
    return {"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1", "metadata": md,
            "items": items}


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class Inotify:
    """Every version of the file when a write of it ends, read at once."""
    IN_CLOSE_WRITE, IN_MOVED_TO = 0x8, 0x80

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_CLOEXEC)
        self.path, self.versions, self.stop = path, [], False
        self.libc.inotify_add_watch(self.fd, os.path.dirname(path).encode(),
                                    self.IN_CLOSE_WRITE | self.IN_MOVED_TO)
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        name = os.path.basename(self.path).encode()
        while not self.stop:
            buf = os.read(self.fd, 65536)
            off = 0
            while off < len(buf):
                _, mask, _, n = struct.unpack_from("iIII", buf, off)
                ename = buf[off + 16:off + 16 + n].rstrip(b"\0")
                off += 16 + n
                if ename == name:
                    try:
                        with open(self.path) as f:
                            self.versions.append(f.read())
                    except OSError as e:
                        self.versions.append("error: %s" % e)


def listed(path):
    try:
        with open(path) as f:
            return sorted(l.strip() for l in f if l.strip() and not l.startswith("#"))
    except FileNotFoundError:
        return None


def whole(text):
    lines = text.split("\n")
    rx = re.compile(r"^(\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]+\]):\d+/(tcp|udp)$")
    return (text.endswith("\n") and lines[0] == HEADER and
            all(rx.match(l) for l in lines[1:-1]))


class Api(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next step of the exchange (server.steps)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        srv = self.server
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        with open(srv.token_path) as f:
            token = f.read().strip()
        req = {"path": url.path, "q": q, "t": time.monotonic(),
               "auth": self.headers.get("Authorization"), "token": token}
        srv.requests.append(req)
        if req["auth"] != "Bearer " + token:
            check(False, "request %d carries the token: %s" % (len(srv.requests), req["auth"]))
            self.reply(401, status(401, "Unauthorized", "Unauthorized"))
            return
        if not srv.steps:
            # The exchange is over: hold the watch open until the end.
            srv.idle.set()
            self.start_stream()
            srv.done.wait(60)
            return
        step = srv.steps.pop(0)
        step(self, req)

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_event(self, ev):
        data = (json.dumps(ev) + "\n").encode()
        # One event over two chunks: the client must join them.
        half = len(data) // 2
        for part in (data[:half], data[half:]):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True

    def drop(self):
        """The connection cut mid-stream (no last chunk), as a restarted API server."""
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True


def expect_file(path, want, what):
    ok = wait(lambda: listed(path) == sorted(want))
    return check(ok, "%s: the file lists %s, want %s" % (what, listed(path), sorted(want)))


def is_list(req, cont=None):
    return (req["path"] == PATH and "watch" not in req["q"] and
            req["q"].get("continue") == cont and req["q"].get("limit") == "500")


def is_watch(req, rv):
    q = req["q"]
    return (req["path"] == PATH and q.get("watch") in ("1", "true") and
            q.get("allowWatchBookmarks") == "true" and q.get("resourceVersion") == rv)


def exchange(out, srv):
    """The steps of the docstring, each checking the request it answers."""
    t = {}

    def list1(h, req):
        check(is_list(req), "1: a list, first page: %s" % req)
        h.reply(200, slice_list([obj("01")], 100, cont="page-2"))

    def list2(h, req):
        check(is_list(req, "page-2"), "1: a list, second page: %s" % req)
        h.reply(200, slice_list([obj("02")], 100))
        expect_file(out, SEED, "1: listed")

    def watch1(h, req):
        check(is_watch(req, "100"), "2: a watch from the list's 100: %s" % req)
        h.start_stream()
        h.send_event(event("03", 101))
        h.send_event({"type": "BOOKMARK", "object": {
            "kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
            "metadata": {"resourceVersion": "105"}}})
        h.send_event(event("04", 106))
        expect_file(out, SEED + DNS_DEAD, "2: 10.244.2.7 stops serving")
        t["drop"] = time.monotonic()
        h.drop()

    def watch2(h, req):
        gap = req["t"] - t.get("drop", 0)
        check(is_watch(req, "106"), "3: after the drop, a watch from 106: %s" % req)
        check(gap >= 0.2, "3: the watch again after a backoff: %.3f s" % gap)
        h.start_stream()
        h.send_event(event("05", 107))
        expect_file(out, SEED + DNS_DEAD, "3: 10.244.2.7 leaves its slice")
        h.send_event({"type": "ERROR", "object": status(
            410, "Expired", "too old resource version: 107 (150)")})
        h.end_stream()

    def list3(h, req):
        check(is_list(req), "4: after 410 Gone, a list: %s" % req)
        h.reply(200, slice_list([obj("05"), obj("03")], 200))
        expect_file(out, SEED + DNS_DEAD + [WEB], "4: web's slice gone from the list")

    def watch3(h, req):
        check(is_watch(req, "200"), "5: a watch from 200: %s" % req)
        h.reply(410, status(410, "Gone", "too old resource version: 200 (300)"))

    def list4(h, req):
        check(is_list(req), "5: after HTTP 410, a list: %s" % req)
        h.reply(200, slice_list([obj("05"), obj("03"), obj("07")], 300))
        expect_file(out, SEED + DNS_DEAD, "5: the IPv6 backend serves again in web-v2")

    def watch4(h, req):
        check(is_watch(req, "300"), "6: a watch from 300: %s" % req)
        h.start_stream()
        h.send_event(event("08", 301))
        # The token rotates (the kubelet rewrites it): the next request has the new one.
        with open(srv.token_path + ".new", "w") as f:
            f.write("token-2\n")
        os.rename(srv.token_path + ".new", srv.token_path)
        h.end_stream()
        t["end"] = time.monotonic()

    def watch5(h, req):
        check(is_watch(req, "301"), "6: the watch again from 301: %s" % req)
        check(req["auth"] == "Bearer token-2", "6: the rotated token: %s" % req["auth"])
        check(listed(out) == sorted(SEED + DNS_DEAD),
              "6: a draining endpoint (serving, not ready) is not dead: %s" % listed(out))
        h.start_stream()
        h.send_event(event("09", 302))
        expect_file(out, SEED + DNS_DEAD + [API], "6: the draining endpoint leaves its slice")
        srv.steps_done.set()
        srv.done.wait(60)

    return [list1, list2, watch1, watch2, list3, watch3, list4, watch4, watch5]


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def make_ca(tmp):
    key, crt = os.path.join(tmp, "server.key"), os.path.join(tmp, "ca.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=kubernetes", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    return key, crt


def serve(tmp, sa, steps_of):
    key, crt = make_ca(tmp)
    shutil.copy(crt, os.path.join(sa, "ca.crt"))
    srv = Server(("127.0.0.1", 0), Api)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.token_path = os.path.join(sa, "token")
    srv.requests, srv.steps = [], []
    srv.done, srv.steps_done, srv.idle = threading.Event(), threading.Event(), threading.Event()
    srv.steps = steps_of(srv)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def start(tmp, sa, srv, out, *extra):
    log = open(os.path.join(tmp, "sidecar-%d.log" % len(os.listdir(tmp))), "w+")
    p = subprocess.Popen([SIDECAR, "--api-server", "https://127.0.0.1:%d" % srv.server_port,
                          "--service-account", sa] + list(extra) + [out], stderr=log)
    return p, log


def stop(p, log, srv, what):
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=10 * SLOW)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    srv.done.set()
    srv.shutdown()
    log.seek(0)
    text = log.read()
    check(rc == 0, "%s: exit 0 at SIGTERM: %d %s" % (what, rc, text))
    return text


def guard_start(tmp, out):
    conf = os.path.join(tmp, "guard.conf")
    with open(conf, "w") as f:
        f.write("dead-backends = %s\nbackend-interval = 0\n" % out)
    log = open(os.path.join(tmp, "guard.log"), "w+")
    return subprocess.Popen([SD, "guard", "-c", conf], stderr=log), log


def main():
    if os.environ.get("SDIAG_KUBE_INNER") != "1":
        os.environ["SDIAG_KUBE_INNER"] = "1"
        sys.stdout.flush()
        os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv)
    if not shutil.which("openssl"):
        print("SKIP(tool:openssl): not installed")
        sys.exit(77)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    tmp = tempfile.mkdtemp(prefix="sockdiag-kube-")
    try:
        run_exchange(tmp)
        run_ttl(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


def dirs(tmp, name):
    """A service account directory (token-1) and the file's directory."""
    sa, d = os.path.join(tmp, "sa-" + name), os.path.join(tmp, "run-" + name)
    os.mkdir(sa)
    os.mkdir(d)
    with open(os.path.join(sa, "token"), "w") as f:
        f.write("token-1\n")
    return sa, d, os.path.join(d, "dead-backends")


def run_exchange(tmp):
    sa, d, out = dirs(tmp, "exchange")
    with open(out, "w") as f:
        f.write("# from the last run\n10.244.9.9:80/tcp\n10.244.1.5:53/udp\n")
    srv = serve(tmp, sa, lambda s: exchange(out, s))
    watcher = Inotify(out)
    guard, glog = guard_start(tmp, out)
    p, log = start(tmp, sa, srv, out)
    try:
        check(srv.steps_done.wait(60 * SLOW), "the exchange ran to its end: %d steps left, "
              "requests %s" % (len(srv.steps), [r["q"] for r in srv.requests]))
    finally:
        text = stop(p, log, srv, "exchange")
    check(not [f for f in os.listdir(d) if f != "dead-backends"],
          "no temporary file left: %s" % os.listdir(d))
    for line in ("410 Gone", "watch ended after"):
        check(line in text, "the log says %r: %s" % (line, text))
    # The guard read every version the test saw, and refused none (it counts
    # ADDR:PORT pairs: the two protocols of 10.244.2.7:53 are one backend).
    final = len({b.rsplit("/", 1)[0] for b in SEED + DNS_DEAD + [API]})
    check(wait(lambda: re.search(r"dead-backends: %d backends from " % final,
                                 open(glog.name).read())),
          "the guard read the last file: " + open(glog.name).read())
    guard.send_signal(signal.SIGTERM)
    guard.wait(timeout=10)
    watcher.stop = True
    gtext = open(glog.name).read()
    check("keeping the previous list" not in gtext and not re.search(r"line \d+, column", gtext),
          "the guard refused no version: " + gtext)
    # Each write is the whole file of one state, in the exchange's order.
    seen = [sorted(l for l in v.split("\n")[1:] if l) if whole(v) else v
            for v in watcher.versions]
    want = [SEED, SEED + DNS_DEAD, SEED + DNS_DEAD + [WEB], SEED + DNS_DEAD,
            SEED + DNS_DEAD + [API]]
    check(seen == [sorted(w) for w in want],
          "every version seen at the end of its write is whole, one per state: %s" % seen)


def run_ttl(tmp):
    """--ttl 1: a backend not serving when listed is dead for one second; an
    ERROR event other than 410 (a 500): listed again after a backoff."""
    sa, d, out = dirs(tmp, "ttl")
    t = {}

    def list1(h, req):
        h.reply(200, slice_list([obj("04")], 100))
        t["listed"] = time.monotonic()

    def watch_error(h, req):
        check(is_watch(req, "100"), "ttl: a watch from 100: %s" % req)
        h.start_stream()
        h.send_event({"type": "ERROR", "object": status(500, "InternalError", "etcd gone")})
        h.end_stream()
        t["error"] = time.monotonic()

    def list2(h, req):
        gap = req["t"] - t.get("error", 0)
        check(is_list(req), "ttl: after an ERROR event (500), a list: %s" % req)
        check(gap >= 0.2, "ttl: the list again after a backoff: %.3f s" % gap)
        h.reply(200, slice_list([obj("04")], 100))

    srv = serve(tmp, sa, lambda s: [list1, watch_error, list2])
    p, log = start(tmp, sa, srv, out, "--ttl", "1")
    try:
        expect_file(out, DNS_DEAD, "ttl: listed")
        check(wait(lambda: listed(out) == []), "ttl: the file empties: %s" % listed(out))
        took = time.monotonic() - t.get("listed", 0)
        check(took >= 1.0, "ttl: emptied after the TTL: %.3f s" % took)
    finally:
        stop(p, log, srv, "ttl")


main()
