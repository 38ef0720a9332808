#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A simulated Kubernetes node (run by guard_k8s_node.sh inside a private mount +
pid + network namespace with its own /run/netns): the DaemonSet's guard, started
with the manifest's arguments, capabilities and mounts (read from the YAML, never
retyped), closes every pod's connections to a backend the dead-backends file
lists, and their conntrack entries, and nothing else.

The node: the namespace the test runs in (host-network pods) and its /proc
(hostPID). Pods are network namespaces with processes (tests/guard/k8s_pod.py:
servers on 10.0.0.1:8080, the dead backend, and 10.0.0.1:8081, a live one, and a
client connection to each):
  - pod-a, named in /run/netns (ip netns add);
  - pod-b, named in the node's /var/run/netns (here a directory of the
    simulated host, since on this machine /var/run is /run), as CNI plugins do;
  - pod-c, named nowhere, its sandbox process running as uid 65535 (as the pause
    container does): reachable only through /proc/PID/ns/net;
  - pod-d, named in /var/run/netns after the guard started.
hostPath volumes are the simulated host's directories (/run/netns and /proc are
the private world's own), bind-mounted where the container would see them
(mountPropagation HostToContainer: a slave mount), the ConfigMap's files
written, the emptyDir made; arguments and configuration values that name a
mount path are mapped onto it. The dead-backends file is written as the
sidecar writes it.

Each capability the guard's securityContext adds is then removed in turn: the
guard must break (exit at start, or leave some pod's connection open). With all
of them: every pod's connection to 10.0.0.1:8080 is closed (ss), its conntrack
entries gone (conntrack -L in the pod's namespace), the connections to :8081
and their entries untouched.
usage: k8s_node.py SOCKDIAG MANIFEST"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

SD, MANIFEST = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SLOW = int(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1"))
DEAD, LIVE = 8080, 8081
passed, failed = [0], []


def check(cond, what):
    if cond:
        passed[0] += 1
        print("ok:", what)
    else:
        failed.append(what)
        print("FAIL:", what)
    return cond


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def wait(pred, seconds):
    end = time.monotonic() + seconds * SLOW
    while True:
        if pred():
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.05)


# ---- the manifest ------------------------------------------------------------------

docs = [d for d in yaml.safe_load_all(open(MANIFEST)) if d]
ds = next(d for d in docs if d["kind"] == "DaemonSet")
cm = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
spec = ds["spec"]["template"]["spec"]
guard = next(c for c in spec["containers"] if c["name"] == "guard")
volumes = {v["name"]: v for v in spec["volumes"]}
caps = guard["securityContext"]["capabilities"]["add"]
check(spec.get("hostPID") is True and spec.get("hostNetwork") is True,
      "DaemonSet: hostPID and hostNetwork (the node's /proc and namespace)")
check(guard["securityContext"]["capabilities"].get("drop") == ["ALL"],
      "guard: drops ALL, adds %s" % caps)
check("command" not in guard and guard["args"][0] == "guard",
      "guard: the image's entrypoint with args %s" % guard["args"])

T = tempfile.mkdtemp(prefix="sd-k8snode-")
HOST, CTR = T + "/host", T + "/ctr"
IDENTITY = {"/run/netns", "/proc"}  # the private world's own
mapped = {}
mounts = []  # to undo, last first


def host_path(p):
    if p in IDENTITY:
        return p
    os.makedirs(HOST + p, exist_ok=True)
    return HOST + p


def mount(*args):
    sh("mount", *args)
    mounts.append(args[-1])


for m in guard["volumeMounts"]:
    vol, mp = volumes[m["name"]], m["mountPath"]
    if "hostPath" in vol:
        src = host_path(vol["hostPath"]["path"])
        if src == mp:
            mapped[mp] = mp
            continue
        dst = CTR + mp
        os.makedirs(dst, exist_ok=True)
        if m.get("mountPropagation") == "HostToContainer":
            if src not in mounts:  # the host side shared, the container's a slave
                mount("--bind", src, src)
                sh("mount", "--make-shared", src)
            mount("--rbind", src, dst)
            sh("mount", "--make-rslave", dst)
        else:
            mount("--rbind", src, dst)
        mapped[mp] = dst
    elif "configMap" in vol or "emptyDir" in vol:
        mapped[mp] = CTR + mp
        os.makedirs(CTR + mp, exist_ok=True)
    else:
        check(False, "volume %s: a kind the simulated node does not map" % m["name"])


def remap(s):
    for mp in sorted(mapped, key=len, reverse=True):
        if s == mp or s.startswith(mp.rstrip("/") + "/"):
            return mapped[mp] + s[len(mp):]
    return s


for m in guard["volumeMounts"]:
    vol = volumes[m["name"]]
    if "configMap" in vol:
        for key, text in cm[vol["configMap"]["name"]]["data"].items():
            lines = []
            for line in text.splitlines():
                k = re.match(r"(\s*[\w-]+\s*=\s*)(/\S*)\s*$", line)
                lines.append(k.group(1) + remap(k.group(2)) if k else line)
            with open(os.path.join(mapped[m["mountPath"]], key), "w") as f:
                f.write("\n".join(lines) + "\n")
# $(VAR) from the container's env; the node's address is loopback here.
env = {}
for e in guard.get("env", []):
    ref = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    env[e["name"]] = "127.0.0.1" if ref == "status.hostIP" else e.get("value", "")
args = [remap(re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a)) for a in guard["args"]]
conf = open(args[args.index("-c") + 1]).read()
backends_file = re.search(r"^dead-backends\s*=\s*(\S+)", conf, re.M).group(1)
check(backends_file.startswith(CTR), "dead-backends on a mapped volume: %s" % backends_file)
# What the sidecar writes: the backend at :8080 is dead (temporary name, rename).
with open(backends_file + ".tmp", "w") as f:
    f.write("# dead backends, written by the sidecar\n10.0.0.1:%d/tcp\n" % DEAD)
os.rename(backends_file + ".tmp", backends_file)
print("# guard:", " ".join(args))

# ---- the pods -----------------------------------------------------------------------

VAR_RUN_NETNS = host_path("/var/run/netns")
procs = []


class Pod:
    def __init__(self, name, nspath):
        self.name, self.ns = name, nspath
        self.p = subprocess.Popen(["nsenter", "--net=" + nspath, sys.executable,
                                   os.path.join(HERE, "k8s_pod.py")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(self.p)
        if self.p.stdout.readline().strip() != "ready":
            raise SystemExit("pod %s did not start" % name)
        self.connect()

    def connect(self):
        self.p.stdin.write("connect\n")
        self.p.stdin.flush()
        if self.p.stdout.readline().strip() != "connected":
            raise SystemExit("pod %s: no connection" % self.name)

    def est(self, port):
        out = sh("nsenter", "--net=" + self.ns, "ss", "-Htn", "state", "established",
                 "dst", "10.0.0.1:%d" % port)
        return len(out.splitlines())

    def ct(self, port):
        r = subprocess.run(["nsenter", "--net=" + self.ns, "conntrack", "-L", "-p", "tcp",
                            "--dport", str(port)], capture_output=True, text=True)
        return len([l for l in r.stdout.splitlines() if l.startswith("tcp")])


def named_in(d, name):
    """A namespace named in d the way CNI plugins name theirs: a file with the
    namespace bind-mounted on it."""
    path = os.path.join(d, name)
    open(path, "w").close()
    sh("unshare", "--net=" + path, "true")
    mounts.append(path)
    return path


uniq = str(os.getpid())
pods = [Pod("node", "/proc/self/ns/net")]
sh("ip", "netns", "add", "sdk8s-a-" + uniq)
pods.append(Pod("pod-a (/run/netns)", "/run/netns/sdk8s-a-" + uniq))
pods.append(Pod("pod-b (/var/run/netns)", named_in(VAR_RUN_NETNS, "cni-b-" + uniq)))
# pod-c: its sandbox process runs as uid 65535 without capabilities; the pod's
# own processes are root's (as containers' often are); no name anywhere.
pause = subprocess.Popen(["unshare", "-n", "--", "setpriv", "--reuid=65535", "--regid=65535",
                          "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                          "sleep", "1000000"])
procs.append(pause)
wait(lambda: os.readlink("/proc/%d/ns/net" % pause.pid) !=
     os.readlink("/proc/self/ns/net"), 5)
pods.append(Pod("pod-c (only /proc)", "/proc/%d/ns/net" % pause.pid))
for p in pods:
    check(p.est(DEAD) == 1 and p.est(LIVE) == 1 and p.ct(DEAD) >= 1 and p.ct(LIVE) >= 1,
          "%s: connected to :%d and :%d, both in conntrack" % (p.name, DEAD, LIVE))

# ---- the guard, as the container runs it ---------------------------------------------

guard_proc = [None]


def start_guard(without=None):
    keep = [c for c in caps if c != without]
    bset = ",".join(["-all"] + ["+" + c.lower() for c in keep])
    log = open(os.path.join(T, "guard-%s.log" % (without or "all")), "w+")
    p = subprocess.Popen(["setpriv", "--no-new-privs", "--bounding-set=" + bset,
                          "--inh-caps=-all", "--", SD] + args, stdout=log, stderr=log)
    guard_proc[0] = p
    return p, log


def stop_guard():
    p = guard_proc[0]
    if p and p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    guard_proc[0] = None


def logtext(log):
    log.flush()
    log.seek(0)
    return log.read()


def closed(p):
    return p.est(DEAD) == 0


try:
    # Each capability removed: the guard breaks.
    expect = {"SYS_ADMIN": "exit", "NET_ADMIN": "exit", "SYS_PTRACE": "pod-c"}
    for cap in caps:
        p, log = start_guard(without=cap)
        exited = wait(lambda: p.poll() is not None, 5)
        if exited:
            text = logtext(log).strip()
            check(p.returncode == 3 and "CAP_" + cap in text,
                  "without %s: exit 3 at start, '%s'" % (cap, text))
            check(all(q.est(DEAD) == 1 for q in pods),
                  "without %s: no connection closed" % cap)
            check(expect.get(cap) == "exit", "without %s: breaks as documented (exit)" % cap)
            continue
        reach = [q for q in pods if "only /proc" not in q.name]
        done = wait(lambda: all(closed(q) for q in reach), 15)
        check(done, "without %s: the named pods' and the node's connections closed" % cap)
        # The unnamed pod was seen by the same first scan: its guard would
        # have started 200 ms later and closed it by now.
        time.sleep(2 * SLOW)  # an absence: a bounded wait
        open_left = [q.name for q in pods if not closed(q)]
        check(open_left == [q.name for q in pods if "only /proc" in q.name],
              "without %s: left open: %s" % (cap, open_left))
        check(expect.get(cap) == "pod-c", "without %s: breaks as documented" % cap)
        stop_guard()
        for q in pods:
            if closed(q):
                q.connect()
    for q in pods:
        if closed(q):
            q.connect()
    live_before = {q.name: (q.est(LIVE), q.ct(LIVE)) for q in pods}

    # With every capability: every pod, including one that comes later.
    p, log = start_guard()
    check(wait(lambda: "started: every network namespace" in logtext(log), 5),
          "the guard's supervisor started")
    pods.append(Pod("pod-d (/var/run/netns, later)", named_in(VAR_RUN_NETNS, "cni-d-" + uniq)))
    live_before[pods[-1].name] = (pods[-1].est(LIVE), pods[-1].ct(LIVE))
    check(wait(lambda: all(closed(q) for q in pods), 15),
          "every pod's connection to the dead backend closed: %s" %
          [q.name for q in pods if not closed(q)])
    check(wait(lambda: all(q.ct(DEAD) == 0 for q in pods), 5),
          "their conntrack entries deleted, in each pod's namespace: %s" %
          {q.name: q.ct(DEAD) for q in pods})
    live_after = {q.name: (q.est(LIVE), q.ct(LIVE)) for q in pods}
    check(live_after == live_before,
          "the live backend's connections and entries untouched: %s" % live_after)
    check(p.poll() is None, "the guard still runs")
    # Its metrics and probes, where the container's ports and probes say.
    port = {q["name"]: q["containerPort"] for q in guard.get("ports", [])}
    for probe, want in (("livenessProbe", "ok"), ("readinessProbe", "ready")):
        g = guard[probe]["httpGet"]
        url = "http://127.0.0.1:%d%s" % (port.get(g["port"], g["port"]), g["path"])
        body = urllib.request.urlopen(url, timeout=5).read().decode().strip()
        check(body == want, "%s %s: 200 %s" % (probe, url, body))
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port["guard-metrics"],
                                  timeout=5).read().decode()
    vals = dict(re.findall(r"^(sockdiag_guard_\S+) (\d+)$", text, re.M))
    check(vals.get("sockdiag_guard_backend_sockets_destroyed_total") == str(len(pods)) and
          vals.get('sockdiag_guard_netns{state="running"}') == str(len(pods)) and
          int(vals.get("sockdiag_guard_conntrack_entries_deleted_total", 0)) >= len(pods),
          "the metrics sum every namespace's guard: %s" %
          {k: v for k, v in vals.items() if "backend" in k or "netns" in k or "conntrack" in k})
    print("--- guard log:\n" + logtext(log))
finally:
    stop_guard()
    for q in procs:
        if q.poll() is None:
            q.kill()
            q.wait()
    for m in reversed(mounts):
        subprocess.run(["umount", "-l", m], capture_output=True)
    subprocess.run(["ip", "netns", "del", "sdk8s-a-" + uniq], capture_output=True)
    shutil.rmtree(T, ignore_errors=True)
print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failed)))
sys.exit(1 if failed else 0)
