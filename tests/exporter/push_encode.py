#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the exporter pushes, decoded by decoders of its own (tests/exporter/pushlib.py).

usage: push_encode.py SOCKDIAG BUILDDIR

In a private network namespace A, a receiver (pushlib.Receiver) takes what
`sockdiag exporter --once` pushes about a second namespace B holding a known
population (exporter_e2e.py's). Checked against the exposition of the same
namespace (`--once --openmetrics`, read by prometheus_client's parser) and the
population:
- OTLP/HTTP protobuf, decoded by `protoc --decode` against OpenTelemetry's own
  .proto files (trixie's opentelemetry-proto, fetched into BUILDDIR without
  touching the system's apt: tests/tools/sapt.sh): every family is one metric
  with the documented name, type, unit and attributes, every sample one point
  with the exposition's value where the population fixes it; the resource
  attributes (host.name, k8s.* from the Downward API's variables);
- the same as JSON (otlp-format = json) and gzip (otlp-compression = gzip);
- remote write: the headers the protocol asks, snappy (decoded by a decoder
  written from snappy's format), a WriteRequest (protobuf decoded by hand):
  one series per exposition sample with its labels sorted, job and instance,
  the population's values; one metadata entry per family;
- push-header sent and never in the output; --once's exit statuses: 0 (2xx),
  4 (400, 503), 5 (nothing listening).
Exit 77 (skip) without root, protoc or prometheus_client.
"""
import gzip
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_e2e as e2e  # noqa: E402  (its population)
import pushlib  # noqa: E402

PORT = 9201
EXPECT = [  # (family, labels, value): what B holds (exporter_e2e.py's population)
    ("sockdiag_sockets", {"family": "inet", "proto": "tcp", "state": "listen"}, 2),
    ("sockdiag_sockets", {"family": "inet6", "proto": "tcp", "state": "listen"}, 1),
    ("sockdiag_sockets", {"family": "inet", "proto": "tcp", "state": "established"}, 10),
    ("sockdiag_sockets", {"family": "inet", "proto": "tcp", "state": "fin_wait2"}, 1),
    ("sockdiag_sockets", {"family": "inet", "proto": "udp", "state": "close"}, 1),
    ("sockdiag_port_sockets", {"proto": "tcp", "port": "5432", "state": "established"}, 3),
    ("sockdiag_accept_queue_length", {"address": "127.0.0.1", "port": "5432"}, 3),
    ("sockdiag_accept_queue_limit", {"address": "::1", "port": "443"}, 5),
    ("sockdiag_tcp_info_sockets", {}, 15),
]
# Families whose values change from pass to pass (the exporter's own).
VOLATILE = ("sockdiag_scrape_", "sockdiag_push_", "sockdiag_tcp_rtt_seconds",
            "sockdiag_tcp_sent", "sockdiag_tcp_received", "sockdiag_tcp_unacked")
# sockdiag(8)'s mapping table.
OTLP_NAME = {"sockdiag_sockets": ("system.network.connection.count", "{connection}")}
ATTR = {"proto": "network.transport", "family": "network.type",
        "state": "network.connection.state", "port": "network.local.port",
        "address": "network.local.address", "local_address": "network.local.address",
        "peer_address": "network.peer.address", "peer_port": "network.peer.port"}
VALUE = {("family", "inet"): "ipv4", ("family", "inet6"): "ipv6",
         ("state", "syn_recv"): "syn_received", ("state", "fin_wait1"): "fin_wait_1",
         ("state", "fin_wait2"): "fin_wait_2"}
UNITS = [("_seconds", "s", True), ("_bytes", "By", True), ("_sockets", "{socket}", False),
         ("_segments", "{segment}", False), ("_length", "{connection}", False),
         ("_limit", "{connection}", False)]
ENV = {"K8S_NODE_NAME": "node-7", "POD_NAME": "sockdiag-abc12", "POD_NAMESPACE": "monitoring"}
fail, ok = e2e.fail, e2e.ok


def otlp_name(fam):
    if fam in OTLP_NAME:
        return OTLP_NAME[fam]
    rest = fam[len("sockdiag_"):]
    for suf, unit, strip in UNITS:
        if rest.endswith(suf):
            return "sockdiag." + (rest[:-len(suf)] if strip else rest), unit
    return "sockdiag." + rest, "1"


def otlp_attrs(labels):
    out = {}
    for k, v in labels.items():
        if k == "le" or v == "":
            continue
        key = ATTR.get(k, "sockdiag." + k)
        if k == "family" and v not in ("inet", "inet6"):
            key = "sockdiag.family"     # network.type knows ipv4 and ipv6 only
        out[key] = int(v) if k in ("port", "peer_port") and v.isdigit() else VALUE.get((k, v), v)
    return out


class Test(e2e.Test):
    def __init__(self, sd, builddir):
        super().__init__(sd, None)
        self.builddir = builddir
        self.conf = os.path.join(self.tmp, "exporter.conf")

    def setup(self):
        self.setup_population()
        self.rx = pushlib.Receiver(PORT).start()

    def write_conf(self, extra=""):
        with open(self.conf, "w") as f:
            # Every metric family a --once pass can have (life needs a daemon).
            f.write("ports = 22, 443, 5432, 5353\nephemeral-ports = yes\nudp-drops = yes\n"
                    "destinations = cgroup\ngroup-by-cgroup = yes\n"
                    "push-header = Authorization: Bearer "
                    "s3cret-token\n" + extra)

    def exporter(self, *args, conf="", expect=0):
        self.write_conf(conf)
        r = subprocess.run([self.sd, "exporter", "-c", self.conf, "-N", self.ns, "--once"]
                           + list(args), capture_output=True, text=True,
                           env=dict(os.environ, **ENV), timeout=60)
        if r.returncode != expect:
            fail("exporter --once %s: exit %d (want %d): %s" % (" ".join(args), r.returncode,
                                                                 expect, r.stderr))
        if "s3cret" in r.stdout + r.stderr:
            fail("the push-header's value was printed")
        return r

    def last(self, n0):
        reqs = self.rx.requests()
        if len(reqs) != n0 + 1:
            fail("%d requests received, want 1" % (len(reqs) - n0))
        return reqs[-1]

    def exposition(self):
        return pushlib.parse_exposition(self.exporter("--openmetrics").stdout)

    @staticmethod
    def check_population(points, what):
        """points(fam) -> [(labels, value)]: the one point whose labels include EXPECT's."""
        for fam, labels, want in EXPECT:
            got = [v for lb, v in points(fam) if labels.items() <= lb.items()]
            if got != [want]:
                fail("%s: %s%s = %s, want [%s]" % (what, fam, labels, got, want))

    # ---- OTLP -------------------------------------------------------------------------

    def otlp_decode(self, body):
        inc = os.path.join(os.environ["SD_OTLP_PROTO"], "usr", "include")
        r = subprocess.run(["protoc", "-I", inc, "--decode=opentelemetry.proto.collector."
                            "metrics.v1.ExportMetricsServiceRequest",
                            "opentelemetry/proto/collector/metrics/v1/metrics_service.proto"],
                           input=body, capture_output=True)
        if r.returncode != 0:
            fail("protoc --decode: %s" % r.stderr.decode())
        return pushlib.text_format(r.stdout.decode())

    @staticmethod
    def otlp_norm_pb(tree):
        """protoc's tree -> {name: (kind, unit, description, temporality, monotonic,
        [(attrs, value)]), resource attrs}."""
        def attrs(lst):
            out = {}
            for a in lst:
                v = a["value"][0]
                out[a["key"][0]] = int(v["int_value"][0]) if "int_value" in v \
                    else v["string_value"][0]
            return out
        rm = tree["resource_metrics"]
        if len(rm) != 1 or len(rm[0]["scope_metrics"]) != 1:
            fail("OTLP: not one resource and one scope")
        res = attrs(rm[0]["resource"][0]["attributes"])
        sm = rm[0]["scope_metrics"][0]
        if sm["scope"][0]["name"] != ["sockdiag"]:
            fail("OTLP: scope %s" % sm["scope"])
        out = {}
        for m in sm["metrics"]:
            kind = [k for k in ("gauge", "sum", "histogram") if k in m][0]
            d = m[kind][0]
            pts = []
            for p in d.get("data_points", []):
                if kind == "histogram":
                    val = (int(p.get("count", ["0"])[0]), float(p["sum"][0]),
                           [int(x) for x in p.get("bucket_counts", [])],
                           [float(x) for x in p.get("explicit_bounds", [])])
                elif "as_int" in p:
                    val = int(p["as_int"][0])
                else:
                    val = float(p["as_double"][0])
                pts.append((attrs(p.get("attributes", [])), val))
            out[m["name"][0]] = (kind, m.get("unit", [""])[0], m.get("description", [""])[0],
                                 d.get("aggregation_temporality", [None])[0],
                                 d.get("is_monotonic", ["false"])[0] == "true", pts)
        return out, res

    @staticmethod
    def otlp_norm_json(doc):
        temp = {1: "AGGREGATION_TEMPORALITY_DELTA", 2: "AGGREGATION_TEMPORALITY_CUMULATIVE"}

        def attrs(lst):
            out = {}
            for a in lst:
                v = a["value"]
                out[a["key"]] = int(v["intValue"]) if "intValue" in v else v["stringValue"]
            return out
        rm = doc["resourceMetrics"][0]
        res = attrs(rm["resource"]["attributes"])
        out = {}
        for m in rm["scopeMetrics"][0]["metrics"]:
            kind = [k for k in ("gauge", "sum", "histogram") if k in m][0]
            d = m[kind]
            pts = []
            for p in d.get("dataPoints", []):
                if kind == "histogram":
                    val = (int(p.get("count", "0")), float(p["sum"]),
                           [int(x) for x in p.get("bucketCounts", [])],
                           [float(x) for x in p.get("explicitBounds", [])])
                elif "asInt" in p:
                    val = int(p["asInt"])
                else:
                    val = float(p["asDouble"])
                pts.append((attrs(p.get("attributes", [])), val))
            out[m["name"]] = (kind, m.get("unit", ""), m.get("description", ""),
                              temp.get(d.get("aggregationTemporality")),
                              d.get("isMonotonic", False), pts)
        return out, res

    def check_otlp_against(self, got, res, expo, what):
        want_res = {"host.name": socket.gethostname(), "service.name": "sockdiag-exporter",
                    "k8s.node.name": "node-7", "k8s.pod.name": "sockdiag-abc12",
                    "k8s.namespace.name": "monitoring"}
        for k, v in want_res.items():
            if res.get(k) != v:
                fail("%s: resource %s = %r, want %r" % (what, k, res.get(k), v))
        names = {}
        got = {k: v for k, v in got.items() if not k.startswith("sockdiag.push_")}
        for fam, (typ, helptext, samples) in expo.items():
            name, unit = otlp_name(fam)
            names[name] = fam
            if name not in got:
                fail("%s: no metric %s (for %s)" % (what, name, fam))
            kind, gunit, desc, temp, mono, pts = got[name]
            want_kind = {"gauge": "gauge", "counter": "sum", "gaugehistogram": "histogram",
                         "histogram": "histogram"}[typ]
            if fam == "sockdiag_sockets":
                want_kind = "sum"   # an UpDownCounter in the semantic conventions
            if (kind, gunit, desc) != (want_kind, unit, helptext):
                fail("%s: %s is (%s, %s, %r), want (%s, %s, %r)" % (
                    what, name, kind, gunit, desc, want_kind, unit, helptext))
            if kind != "gauge" and temp != "AGGREGATION_TEMPORALITY_CUMULATIVE":
                fail("%s: %s temporality %s" % (what, name, temp))
            if mono != (typ == "counter"):
                fail("%s: %s monotonic %s" % (what, name, mono))
            if kind == "histogram":
                series = {}
                for sname, labels, v in samples:
                    key = tuple(sorted(otlp_attrs(labels).items()))
                    series.setdefault(key, []).append((sname, labels, v))
                if len(pts) != len(series):
                    fail("%s: %s has %d points, want %d" % (what, name, len(pts), len(series)))
                for attrs, (count, _, buckets, bounds) in pts:
                    ss = series[tuple(sorted(attrs.items()))]
                    cum = [v for s, lb, v in ss if s.endswith("_bucket")]
                    les = [float(lb["le"]) for s, lb, v in ss if s.endswith("_bucket")]
                    if bounds != les[:-1] or count != cum[-1] or \
                            [int(x) for x in cum] != [sum(buckets[:i + 1])
                                                      for i in range(len(buckets))]:
                        fail("%s: %s's buckets %s/%s, want cumulative %s at %s" % (
                            what, name, buckets, bounds, cum, les))
                continue
            if len(pts) != len(samples):
                fail("%s: %s has %d points, want %d" % (what, name, len(pts), len(samples)))
            want = sorted((sorted(otlp_attrs(lb).items()), v) for _, lb, v in samples)
            have = sorted((sorted(a.items()), v) for a, v in pts)
            if not fam.startswith(VOLATILE) and have != want:
                fail("%s: %s's points %s, want %s" % (what, name, have[:4], want[:4]))
            if [a for a, _ in have] != [a for a, _ in want]:
                fail("%s: %s's attributes %s, want %s" % (what, name, have[:2], want[:2]))
        extra = set(got) - set(names)
        if extra:
            fail("%s: metrics the exposition lacks: %s" % (what, sorted(extra)))

        def points(fam):
            back = {}
            for k, v in ATTR.items():    # network.local.address: address first
                back.setdefault(v, k)
            unvalue = {(k, v2): v for (k, v), v2 in VALUE.items()}
            out = []
            for a, v in got[otlp_name(fam)[0]][5]:
                lb = {}
                for k, x in a.items():
                    name = back.get(k, k[len("sockdiag."):])
                    lb[name] = unvalue.get((name, x), str(x))
                out.append((lb, v))
            return out
        self.check_population(points, what)

    def check_otlp(self):
        expo = self.exposition()
        n0 = len(self.rx.requests())
        self.exporter("--otlp", "http://127.0.0.1:%d" % PORT)
        _, path, hdr, body = self.last(n0)
        if path != "/v1/metrics" or hdr.get("Content-Type") != "application/x-protobuf" \
                or "Content-Encoding" in hdr:
            fail("OTLP: POST %s %s" % (path, hdr))
        if hdr.get("Authorization") != "Bearer s3cret-token":
            fail("OTLP: push-header not sent: %s" % hdr)
        got, res = self.otlp_norm_pb(self.otlp_decode(body))
        self.check_otlp_against(got, res, expo, "OTLP protobuf")
        ok("OTLP protobuf (protoc --decode, opentelemetry-proto): %d metrics match the "
           "exposition's families, types, units, attributes and values" % len(got))

        n0 = len(self.rx.requests())
        self.exporter(conf="otlp-endpoint = http://127.0.0.1:%d/otlp/v1/metrics\n"
                           "otlp-compression = gzip\n" % PORT)
        _, path, hdr, body = self.last(n0)
        if path != "/otlp/v1/metrics" or hdr.get("Content-Encoding") != "gzip":
            fail("OTLP gzip: POST %s %s" % (path, hdr))
        got, res = self.otlp_norm_pb(self.otlp_decode(gzip.decompress(body)))
        self.check_otlp_against(got, res, expo, "OTLP gzip")
        ok("OTLP gzip: Content-Encoding gzip, the same metrics")

        n0 = len(self.rx.requests())
        self.exporter(conf="otlp-endpoint = http://127.0.0.1:%d\notlp-format = json\n" % PORT)
        _, path, hdr, body = self.last(n0)
        if hdr.get("Content-Type") != "application/json":
            fail("OTLP JSON: Content-Type %s" % hdr.get("Content-Type"))
        got, res = self.otlp_norm_json(json.loads(body))
        self.check_otlp_against(got, res, expo, "OTLP JSON")
        ok("OTLP JSON: the same metrics, OTLP's JSON mapping")

    # ---- remote write -----------------------------------------------------------------

    def check_remote_write(self):
        expo = self.exposition()
        n0 = len(self.rx.requests())
        self.exporter("--remote-write", "http://127.0.0.1:%d/api/v1/write" % PORT)
        _, path, hdr, body = self.last(n0)
        want = {"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
                "X-Prometheus-Remote-Write-Version": "0.1.0",
                "Authorization": "Bearer s3cret-token"}
        for k, v in want.items():
            if hdr.get(k) != v:
                fail("remote write: header %s = %r, want %r" % (k, hdr.get(k), v))
        series, meta = pushlib.write_request(pushlib.snappy_decompress(body))
        samples = [(s, lb, v) for fam in expo.values() for s, lb, v in fam[2]]
        # The exposition of --once without a target has no push self-metrics: a
        # pusher's own (one target: 5 series) are checked apart.
        own = sorted((dict(lb)["__name__"], dict(lb).get("result")) for lb, _ in series
                     if dict(lb)["__name__"].startswith("sockdiag_push_"))
        if own != [("sockdiag_push_dropped_samples_total", None),
                   ("sockdiag_push_queue_bytes", None), ("sockdiag_push_queue_payloads", None),
                   ("sockdiag_push_requests_total", "failed"),
                   ("sockdiag_push_requests_total", "ok")]:
            fail("remote write: the push self-metrics: %s" % own)
        series = [x for x in series if not dict(x[0])["__name__"].startswith("sockdiag_push_")]
        meta = [x for x in meta if not x[1].startswith("sockdiag_push_")]
        if len(series) != len(samples):
            fail("remote write: %d series, the exposition has %d samples"
                 % (len(series), len(samples)))
        byname = {}
        host = socket.gethostname()
        for labels, pts in series:
            names = [k for k, _ in labels]
            if names != sorted(names) or len(set(names)) != len(names):
                fail("remote write: labels not sorted or repeated: %s" % names)
            d = dict(labels)
            if d.get("job") != "sockdiag" or d.get("instance") != host or len(pts) != 1:
                fail("remote write: series %s %s" % (labels, pts))
            if any(v == "" for _, v in labels):
                fail("remote write: an empty label: %s" % labels)
            name = d.pop("__name__")
            del d["job"], d["instance"]
            byname[(name, tuple(sorted(d.items())))] = pts[0][0]
        for s, lb, v in samples:
            key = (s, tuple(sorted((k, x) for k, x in lb.items() if x != "")))
            if key not in byname:
                fail("remote write: no series for %s%s" % (s, lb))
            if not s.startswith(VOLATILE) and byname[key] != v:
                fail("remote write: %s%s = %s, the exposition says %s" % (s, lb, byname[key], v))
        self.check_population(lambda fam: [(dict(k[1]), v) for k, v in byname.items()
                                           if k[0] == fam], "remote write")
        fams = {f for _, f, _ in meta}
        if fams != set(expo):
            fail("remote write metadata: %s" % sorted(fams ^ set(expo)))
        ok("remote write (snappy and protobuf decoded here): %d series = the exposition's "
           "samples, labels sorted, job and instance, metadata per family" % len(series))

    def check_status(self):
        for mode, want in ((("status", 400, None), 4), (("status", 503, 1), 4)):
            self.rx.set(*mode)
            r = self.exporter("--remote-write", "http://127.0.0.1:%d/api/v1/write" % PORT,
                              expect=want)
            if "HTTP %d" % mode[1] not in r.stderr:
                fail("--once against %s: %r" % (mode, r.stderr))
        self.rx.set("ok")
        r = self.exporter("--otlp", "http://127.0.0.1:%d" % (PORT + 1), expect=5)
        if "no answer" not in r.stderr:
            fail("--once against nothing: %r" % r.stderr)
        ok("--once: exit 0 when accepted, 4 on 400 and 503, 5 when nothing answers")

    def run(self):
        try:
            self.setup()
            self.check_remote_write()
            self.check_otlp()
            self.check_status()
        finally:
            if getattr(self, "rx", None):
                self.rx.stop()
            self.cleanup()


def fetch_proto():
    """Trixie's opentelemetry-proto, fetched before the namespace without a network."""
    root = pushlib.sapt_fetch(os.path.abspath(sys.argv[2]), "trixie", "opentelemetry-proto")
    if not root:
        print("FAIL: cannot fetch trixie's opentelemetry-proto (apt-get download)")
        return None
    return {"SD_OTLP_PROTO": root}


def main():
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        print("SKIP(python3-prometheus-client): not installed")
        return 77
    return pushlib.main(__doc__, 2, lambda: Test(os.path.abspath(sys.argv[1]),
                                                 os.path.abspath(sys.argv[2])).run(),
                        tools=("protoc",), before=fetch_proto)


if __name__ == "__main__":
    sys.exit(main())
