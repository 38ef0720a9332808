# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the push tests (tests/exporter/push_*.py): a receiver that records what it
is sent and answers as told, and decoders written from the formats' specifications,
independent of the exporter's encoders: snappy's block format, the protobuf wire format
(Prometheus's WriteRequest), protoc's text format (OTLP, decoded by protoc itself)."""
import http.server
import os
import shutil
import socketserver
import subprocess
import sys
import threading
import time


class Receiver:
    """An HTTP server on 127.0.0.1:port in a thread. mode: ('ok',), ('status', N,
    retry_after or None), ('slow', seconds). Records (time, path, headers, body)."""

    def __init__(self, port):
        self.port, self.mode, self.reqs = port, ("ok",), []
        self.lock = threading.Lock()
        self.srv = None

    def start(self):
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with outer.lock:
                    outer.reqs.append((time.monotonic(), self.path, dict(self.headers), body))
                    mode = outer.mode
                if mode[0] == "slow":
                    time.sleep(mode[1])
                status = 204 if mode[0] in ("ok", "slow") else mode[1]
                self.send_response(status)
                if mode[0] == "status" and mode[2] is not None:
                    self.send_header("Retry-After", str(mode[2]))
                msg = b"" if status < 300 else b"no thanks"
                self.send_header("Content-Length", str(len(msg)))
                try:
                    self.end_headers()
                    self.wfile.write(msg)
                except OSError:     # a slow answer the client gave up on
                    self.close_connection = True

            def log_message(self, *a):
                pass

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.srv = S(("127.0.0.1", self.port), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.srv:
            self.srv.shutdown()
            self.srv.server_close()
            self.srv = None

    def set(self, *mode):
        with self.lock:
            self.mode = mode

    def requests(self):
        with self.lock:
            return list(self.reqs)


def snappy_decompress(b):
    """Snappy's block format: the uncompressed length (varint), then literals and copies."""
    n, i = varint(b, 0)
    out = bytearray()
    while i < len(b):
        tag = b[i]
        i += 1
        kind = tag & 3
        if kind == 0:
            ln = tag >> 2
            if ln >= 60:
                k = ln - 59
                ln = int.from_bytes(b[i:i + k], "little")
                i += k
            ln += 1
            out += b[i:i + ln]
            i += ln
            continue
        if kind == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | b[i]
            i += 1
        elif kind == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + 2], "little")
            i += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + 4], "little")
            i += 4
        if off == 0 or off > len(out):
            raise ValueError("snappy: bad copy offset")
        for _ in range(ln):
            out.append(out[-off])
    if len(out) != n:
        raise ValueError("snappy: %d bytes, header says %d" % (len(out), n))
    return bytes(out)


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def pb_fields(b):
    """The protobuf wire format: [(field, wire type, value)], value an int (varint),
    bytes (length-delimited) or 8/4 raw bytes."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    if i != len(b):
        raise ValueError("protobuf: runs past its end")
    return out


def write_request(b):
    """prompb.WriteRequest -> ([(labels as [(name, value)] in their order, [(value, ts)])],
    [(type, family, help)])."""
    import struct
    series, meta = [], []
    for f, w, v in pb_fields(b):
        if f == 1 and w == 2:
            labels, samples = [], []
            for g, w2, x in pb_fields(v):
                if g == 1:
                    d = {h: y for h, _, y in pb_fields(x)}
                    labels.append((d.get(1, b"").decode(), d.get(2, b"").decode()))
                elif g == 2:
                    d = {h: y for h, _, y in pb_fields(x)}
                    samples.append((struct.unpack("<d", d.get(1, bytes(8)))[0], d.get(2, 0)))
            series.append((labels, samples))
        elif f == 3 and w == 2:
            d = {h: y for h, _, y in pb_fields(v)}
            meta.append((d.get(1, 0), d.get(2, b"").decode(), d.get(4, b"").decode()))
        else:
            raise ValueError("WriteRequest: field %d" % f)
    return series, meta


def text_format(s):
    """protoc's text format -> nested dicts of lists: {"field": [value or dict, ...]}."""
    root, stack = {}, []
    cur = root
    for line in s.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
        elif line.endswith("{"):
            d = {}
            cur.setdefault(line[:-1].strip(), []).append(d)
            stack.append(cur)
            cur = d
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = bytes(v[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode()
            cur.setdefault(k, []).append(v)
    return root


def sapt_fetch(builddir, suite, pkg):
    """A Debian package of another suite, extracted under BUILDDIR/push-deb (tests/tools/
    sapt.sh: its own sources list and lists; the system's apt untouched). Its root, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    cache = os.path.join(builddir, "push-deb")
    os.makedirs(cache, exist_ok=True)
    r = subprocess.run(["bash", "-c", '. "$0"; sapt_fetch "$1" "$2" "$3"',
                        os.path.join(here, "..", "tools", "sapt.sh"), suite, pkg, cache],
                       capture_output=True, text=True,
                       env=dict(os.environ, SAPT_CACHE=cache, SAPT_WHO="push test"))
    if r.returncode != 0:
        print(r.stderr, end="")
        return None
    return r.stdout.strip()


def parse_exposition(text):
    """OpenMetrics text -> {family: (type, help, [(sample name, {labels}, value)])}, read
    with prometheus_client's strict parser (an oracle apart from the exporter's)."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    fams = {}
    for fam in text_string_to_metric_families(text):
        fams[fam.name] = (fam.type, fam.documentation,
                          [(s.name, dict(s.labels), s.value) for s in fam.samples])
    return fams


def main(doc, nargs, run, tools=(), before=None):
    """A push test's main: NARGS arguments, root and TOOLS or exit 77, then itself again in a
    new network namespace (unshare -n) where run() runs; before() (in the first process,
    with the network) returns variables for the second, or None to fail."""
    import exporter_e2e as e2e
    if len(sys.argv) != nargs + 1:
        print(doc)
        return 2
    if os.geteuid() != 0:
        print("SKIP(netns): needs root (network namespaces)")
        return 77
    for tool in ("ip", "unshare") + tuple(tools):
        if not shutil.which(tool):
            print("SKIP(tool:%s): not installed" % tool)
            return 77
    if not os.environ.get("SD_PUSH_INNER"):
        env = dict(os.environ, SD_PUSH_INNER="1")
        if before:
            more = before()
            if more is None:
                return 1
            env.update(more)
        return subprocess.run(["unshare", "-n", sys.executable, os.path.abspath(sys.argv[0])]
                              + sys.argv[1:], env=env).returncode
    run()
    print("# checks: %d passed, 0 failed, 0 skipped" % len(e2e.PASSED))
    return 0
