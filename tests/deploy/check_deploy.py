#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate everything in deploy/ and the installed systemd units.

usage: check_deploy.py SOCKDIAG DEPLOY_DIR UNIT...

- every *.yaml / *.yml parses (python3-yaml), every *.json too;
- the Kubernetes manifest: a DaemonSet with hostNetwork and hostPID, each
  container dropping ALL capabilities and adding only its own (exporter:
  SYS_ADMIN, guard: NET_ADMIN), /run/netns mounted, ports named as the
  scrape configuration expects; the ConfigMap's exporter.conf and guard.conf
  pass `sockdiag exporter|guard --check-config`; the containers' arguments
  parse (`--help` after them is never reached by a bad option);
- the scrape configuration passes `promtool check config`;
- the units (and the guard's metrics drop-in) pass `systemd-analyze verify`,
  with ExecStart pointed at the built binary.
A tool that is missing is a named skip (SKIP(tool:...)), never a pass.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

PASSED, SKIPPED = [], []


def fail(msg):
    print("FAIL: " + msg)
    print("# checks: %d passed, 1 failed, %d skipped" % (len(PASSED), len(SKIPPED)))
    sys.exit(1)


def ok(msg):
    PASSED.append(msg)
    print("ok: " + msg)


def skip(feature, why):
    SKIPPED.append(why)
    print("SKIP(%s): %s" % (feature, why))


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def check_yaml(deploy):
    try:
        import yaml
    except ImportError:
        skip("tool:python3-yaml", "python3-yaml not installed: YAML not checked")
        return None
    docs = {}
    files = sorted(glob.glob(os.path.join(deploy, "**", "*.y*ml"), recursive=True))
    if not files:
        fail("no YAML files in " + deploy)
    for f in files:
        try:
            with open(f) as fh:
                docs[f] = [d for d in yaml.safe_load_all(fh) if d is not None]
        except yaml.YAMLError as e:
            fail("%s: %s" % (f, e))
    for f in sorted(glob.glob(os.path.join(deploy, "**", "*.json"), recursive=True)):
        try:
            with open(f) as fh:
                json.load(fh)
        except ValueError as e:
            fail("%s: %s" % (f, e))
    ok("%d YAML files parse" % len(files))
    return docs


def check_kubernetes(sd, docs):
    objs = [d for f, ds in docs.items() if "/kubernetes/" in f for d in ds]
    ds = [o for o in objs if o.get("kind") == "DaemonSet"]
    cms = [o for o in objs if o.get("kind") == "ConfigMap"]
    svc = [o for o in objs if o.get("kind") == "Service"]
    if len(svc) != 1 or svc[0]["spec"].get("clusterIP") != "None" or \
            {p["name"] for p in svc[0]["spec"]["ports"]} != {"metrics", "guard-metrics"}:
        fail("kubernetes: want one headless Service with ports metrics, guard-metrics")
    if len(ds) != 1 or len(cms) != 1:
        fail("kubernetes: want one DaemonSet and one ConfigMap, got %s" %
             [o.get("kind") for o in objs])
    spec = ds[0]["spec"]["template"]["spec"]
    if not spec.get("hostNetwork") or not spec.get("hostPID"):
        fail("DaemonSet: hostNetwork and hostPID must be true")
    want = {"exporter": ["SYS_ADMIN"], "guard": ["NET_ADMIN"], "backends": None}
    ports = set()
    for c in spec["containers"]:
        caps = c.get("securityContext", {}).get("capabilities", {})
        if caps.get("drop") != ["ALL"] or caps.get("add") != want.get(c["name"]):
            fail("container %s: capabilities %s, want drop ALL add %s" %
                 (c["name"], caps, want.get(c["name"])))
        if c["securityContext"].get("allowPrivilegeEscalation") is not False:
            fail("container %s: allowPrivilegeEscalation must be false" % c["name"])
        ports |= {p["name"] for p in c.get("ports", [])}
        if c["name"] == "backends":
            continue  # the sidecar script, checked below and by tests/deploy/sidecar.py
        # The arguments parse: options are checked before --help is seen.
        args = [a.replace("$(NODE_IP)", "127.0.0.1") for a in c["args"]]
        args = [a for a in args if not a.startswith("/etc/sockdiag")]
        args = [a for a in args if a != "-c"]
        r = run([sd] + args + ["--help"])
        if r.returncode != 0:
            fail("container %s: %s: %s" % (c["name"], c["args"], r.stderr.strip()))
    if ports != {"metrics", "guard-metrics"}:
        fail("DaemonSet ports %s" % ports)
    if set(want) != {c["name"] for c in spec["containers"]}:
        fail("DaemonSet containers %s, want %s" % ([c["name"] for c in spec["containers"]],
                                                   sorted(want)))
    # The sidecar: the script of deploy/ in the ConfigMap, its file where the
    # guard's configuration reads it, on a volume both mount.
    with open(os.path.join(os.path.dirname(os.path.dirname(list(docs)[0])), "kubernetes",
                           "backends-sidecar.sh")) as f:
        if cms[0]["data"].get("backends-sidecar.sh") != f.read():
            fail("ConfigMap backends-sidecar.sh differs from deploy/kubernetes/backends-sidecar.sh")
    side = [c for c in spec["containers"] if c["name"] == "backends"][0]
    path = side["command"][-1]
    conf = cms[0]["data"]["guard.conf"]
    if "dead-backends = %s\n" % path not in conf:
        fail("guard.conf does not read the sidecar's %s" % path)
    mounts = {c["name"]: {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
              for c in spec["containers"]}
    if mounts["backends"].get("backends") != os.path.dirname(path) or \
            mounts["guard"].get("backends") != os.path.dirname(path):
        fail("the sidecar and the guard must share the volume at %s" % os.path.dirname(path))
    if spec.get("serviceAccountName") not in {o["metadata"]["name"] for o in objs
                                              if o.get("kind") == "ServiceAccount"}:
        fail("DaemonSet: no ServiceAccount for the sidecar")
    exporter = [c for c in spec["containers"] if c["name"] == "exporter"][0]
    if not any(m["mountPath"] == "/run/netns" for m in exporter["volumeMounts"]):
        fail("exporter: /run/netns is not mounted")
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in (("exporter.conf", "exporter"), ("guard.conf", "guard")):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(cms[0]["data"][name])
            r = run([sd, cmd, "-c", path, "--check-config"])
            if r.returncode != 0:
                fail("ConfigMap %s: %s" % (name, r.stderr.strip()))
    ok("DaemonSet: host network and pid, capabilities per container, /run/netns, "
       "ConfigMap configurations valid, arguments parse, the backends sidecar wired to the guard")


def check_prometheus(deploy):
    if not shutil.which("promtool"):
        skip("tool:promtool", "promtool not installed (Debian: prometheus)")
        return
    for f in glob.glob(os.path.join(deploy, "prometheus", "*.yml")):
        r = run(["promtool", "check", "config", f])
        if r.returncode != 0:
            fail("promtool check config %s: %s%s" % (f, r.stdout, r.stderr))
    ok("promtool check config passes")


def check_units(sd, deploy, units):
    if not shutil.which("systemd-analyze"):
        skip("tool:systemd-analyze", "systemd-analyze not installed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        for u in units:
            with open(u) as f:
                text = f.read()
            lines = []
            for line in text.splitlines():
                if line.startswith("ExecStart=") and line != "ExecStart=":
                    line = "ExecStart=" + sd + " " + line.split(" ", 1)[1]
                lines.append(line)
            with open(os.path.join(tmp, os.path.basename(u)), "w") as f:
                f.write("\n".join(lines) + "\n")
        for d in glob.glob(os.path.join(deploy, "systemd", "*.service.d")):
            dst = os.path.join(tmp, os.path.basename(d))
            os.makedirs(dst)
            for conf in glob.glob(os.path.join(d, "*.conf")):
                with open(conf) as f:
                    text = f.read().replace("/usr/local/bin/sockdiag", sd)
                with open(os.path.join(dst, os.path.basename(conf)), "w") as f:
                    f.write(text)
        env = dict(os.environ, SYSTEMD_UNIT_PATH=tmp + ":")
        for u in sorted(glob.glob(os.path.join(tmp, "*.service"))):
            r = run(["systemd-analyze", "verify", "--man=no", u], env=env)
            out = (r.stdout + r.stderr).strip()
            # Messages about the machine (no running manager, other units
            # in its search path) are not about our file.
            ours = [l for l in out.splitlines() if os.path.basename(u) in l or "metrics.conf" in l]
            if r.returncode != 0 or ours:
                fail("systemd-analyze verify %s: %s" % (os.path.basename(u), out))
    ok("systemd-analyze verify passes on %d units (drop-ins included)" % len(units))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    sd, deploy, units = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    docs = check_yaml(deploy)
    if docs is not None:
        check_kubernetes(sd, docs)
    check_prometheus(deploy)
    check_units(sd, deploy, units)
    print("# checks: %d passed, 0 failed, %d skipped" % (len(PASSED), len(SKIPPED)))
    return 77 if SKIPPED and not PASSED else 0


if __name__ == "__main__":
    sys.exit(main())
