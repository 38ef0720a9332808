#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate everything in deploy/ and the installed systemd units.

usage: check_deploy.py SOCKDIAG DEPLOY_DIR UNIT...

- every *.yaml / *.yml parses (python3-yaml), every *.json too; there is a
  Kubernetes manifest and a scrape configuration (none is a failure);
- the Kubernetes manifest: a DaemonSet with hostNetwork and hostPID, each
  container dropping ALL capabilities and adding only its own (exporter:
  SYS_ADMIN, SYS_PTRACE; guard: SYS_ADMIN, NET_ADMIN, SYS_PTRACE), /run/netns
  mounted in both, the guard on every namespace (--all-netns), ports named as the
  scrape configuration expects (what each capability is for:
  tests/guard/guard_k8s_node.sh removes each in turn); the ConfigMap's exporter.conf and guard.conf
  pass `sockdiag exporter|guard --check-config`; the containers' arguments
  parse (`--help` after them is never reached by a bad option);
- the scrape configuration passes `promtool check config`;
- the units (and the guard's metrics drop-in) pass `systemd-analyze verify`,
  with ExecStart pointed at the built binary; nothing in deploy/ names
  /usr/local/bin (templates say @bindir@, as the units);
- the image: every container runs the one `make image` builds (the Makefile's
  IMAGE, localhost/sockdiag:VERSION); sockdiag's containers give no command (the
  image's ENTRYPOINT, sockdiag) and start with a subcommand; the sidecar runs
  sockdiag-kube-backends, whose arguments parse (the built binary, env
  KUBE_BACKENDS), and writes the file guard.conf reads; every package of a
  library the binaries need (dpkg -S) is in the Makefile's IMAGE_PACKAGES.
  (tests/image/image.py, make test-image, builds and runs the image.)
A tool that is missing is a named skip (SKIP(tool:...)), never a pass.
"""
import glob
import json
import os
import re
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
    if not any("/kubernetes/" in f for f in files):
        fail("no Kubernetes manifest (kubernetes/*.yaml) in " + deploy)
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
    want = {"exporter": ["SYS_ADMIN", "SYS_PTRACE"],
            "guard": ["SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE"], "backends": None}
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
            continue  # the sidecar, checked below and in check_image
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
    # The sidecar: its file where the guard's configuration reads it, on a
    # volume both mount.
    side = [c for c in spec["containers"] if c["name"] == "backends"][0]
    path = side["args"][-1]
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
    gd = [c for c in spec["containers"] if c["name"] == "guard"][0]
    for c in (exporter, gd):
        if not any(m["mountPath"] == "/run/netns" for m in c["volumeMounts"]):
            fail("%s: /run/netns is not mounted" % c["name"])
        if "--all-netns" not in c["args"]:
            fail("%s: not on every network namespace (--all-netns)" % c["name"])
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
    files = sorted(glob.glob(os.path.join(deploy, "prometheus", "*.y*ml")))
    if not files:
        fail("no scrape configuration (prometheus/*.yml) in " + deploy)
    for f in files:
        r = run(["promtool", "check", "config", f])
        if r.returncode != 0:
            fail("promtool check config %s: %s%s" % (f, r.stdout, r.stderr))
    ok("promtool check config passes on %d file(s)" % len(files))


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
            for conf in glob.glob(os.path.join(d, "*.conf.in")):
                with open(conf) as f:
                    text = f.read()
                if "ExecStart=@bindir@/sockdiag " not in text:
                    fail("%s: ExecStart is not @bindir@/sockdiag" % conf)
                text = text.replace("@bindir@/sockdiag", sd)
                with open(os.path.join(dst, os.path.basename(conf)[:-3]), "w") as f:
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


def check_no_prefix(deploy):
    """The install prefix is never written into deploy/ (the drop-in said /usr/local/bin)."""
    bad = []
    for root, _, files in os.walk(deploy):
        for name in files:
            path = os.path.join(root, name)
            with open(path, errors="replace") as f:
                if "/usr/local/bin" in f.read():
                    bad.append(os.path.relpath(path, deploy))
    if bad:
        fail("deploy/ hardcodes /usr/local/bin (use @bindir@): %s" % bad)
    ok("nothing in deploy/ names /usr/local/bin")


def needed_packages(binaries):
    """The Debian packages of the libraries the binaries need: their NEEDED entries,
    and libmicrohttpd, which sockdiag dlopen()s by the soname built into it."""
    sonames = []
    for b in binaries:
        r = run(["readelf", "-d", b])
        if r.returncode != 0:
            fail("readelf -d %s: %s" % (b, r.stderr))
        sonames += [l.split("[", 1)[1].split("]", 1)[0] for l in r.stdout.splitlines()
                    if "(NEEDED)" in l]
    # Sanitizer runtimes are the test build's (make asan).
    sonames = [s for s in sonames if not s.startswith(("libasan.", "libubsan.", "liblsan.",
                                                        "libtsan."))]
    with open(binaries[0], "rb") as f:
        data = f.read()
    i = data.find(b"libmicrohttpd.so.")
    if i < 0:
        fail("%s: no libmicrohttpd soname in the binary" % binaries[0])
    sonames.append(data[i:data.index(b"\0", i)].decode())
    pkgs = {}
    for so in sorted(set(sonames)):
        r = run(["dpkg", "-S", "*/" + so])
        if r.returncode != 0:
            fail("dpkg -S %s: %s" % (so, r.stderr.strip()))
        # "libc6:amd64, libc6-i386: /path" lines: any of them may hold it.
        pkgs[so] = {p.strip().split(":")[0] for l in r.stdout.splitlines()
                    for p in l.split(": ", 1)[0].split(",")}
    return pkgs


def make_var(makefile, name):
    """A variable of the Makefile, continuation lines joined."""
    with open(makefile) as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(r"^%s\s*[:?]?=\s*(.*)$" % name, text, re.M)
    return m.group(1).strip() if m else ""


def check_image(sd, deploy, docs):
    src = os.path.dirname(os.path.abspath(deploy))
    with open(os.path.join(src, "meson.build")) as f:
        version = re.search(r"version : '([^']+)'", f.read()).group(1)
    image = make_var(os.path.join(src, "Makefile"), "IMAGE").replace("$(VERSION)", version)
    kube = os.environ.get("KUBE_BACKENDS")
    objs = [d for f, ds in (docs or {}).items() if "/kubernetes/" in f for d in ds]
    for o in objs:
        if o.get("kind") != "DaemonSet":
            continue
        for c in o["spec"]["template"]["spec"]["containers"]:
            if c.get("image") != image:
                fail("container %s: image %s, make image builds %s" %
                     (c["name"], c.get("image"), image))
            if c["name"] == "backends":
                if c.get("command") != ["/usr/bin/sockdiag-kube-backends"]:
                    fail("the sidecar runs %s, not /usr/bin/sockdiag-kube-backends" %
                         c.get("command"))
                if kube:
                    r = run([kube] + c["args"] + ["--help"])
                    if r.returncode != 0:
                        fail("the sidecar's arguments %s: %s" % (c["args"], r.stderr.strip()))
                else:
                    skip("build:kube", "sockdiag-kube-backends not built: its arguments "
                         "not checked")
            elif "command" in c or c["args"][0] not in ("exporter", "guard"):
                fail("container %s: the image's ENTRYPOINT (sockdiag) must apply (no command) "
                     "and args start with a subcommand: %s" % (c["name"], c["args"]))
    packages = make_var(os.path.join(src, "Makefile"), "IMAGE_PACKAGES").split()
    if shutil.which("dpkg") and shutil.which("readelf"):
        missing = {so: p for so, p in needed_packages([sd] + ([kube] if kube else [])).items()
                   if not p & set(packages)}
        if missing:
            fail("Makefile: IMAGE_PACKAGES lacks the packages of %s" % missing)
    else:
        skip("tool:dpkg", "no dpkg/readelf: the image's libraries not checked")
    ok("image: every container runs %s, the sidecar's arguments parse, IMAGE_PACKAGES "
       "has every library's package" % image)


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
    check_no_prefix(deploy)
    check_image(sd, deploy, docs)
    print("# checks: %d passed, 0 failed, %d skipped" % (len(PASSED), len(SKIPPED)))
    return 77 if SKIPPED and not PASSED else 0


if __name__ == "__main__":
    sys.exit(main())
