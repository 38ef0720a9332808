#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""make image, then the image run with podman (`make test-image`, opt-in).
Podman runs under a private configuration (CONTAINERS_STORAGE_CONF,
CONTAINERS_CONF: vfs storage, cgroupfs under a cgroup parent of this run,
runc, ulimits this machine allows, events to a file) in a directory of this
run; the system's configuration and storage are left alone. Checks:
  - make image prints the image's size; the image's user is 65534, its
    entrypoint /usr/bin/sockdiag;
  - every ELF file in the image has each DT_NEEDED resolved by the image's
    own dynamic loader (chroot into the mounted image, ld.so --list), and
    the library the binary dlopen()s is there; no compiler, assembler,
    linker, shell or package manager is;
  - the guard container started with deploy/kubernetes/sockdiag.yaml's
    settings (args, env, securityContext, volumes: taken from the YAML)
    serves metrics on loopback (and its probes answer), as the user and with
    the capabilities the manifest gives; hostNetwork and hostPID are NOT
    applied (the safety rule: the container gets namespaces of its own,
    hostPath volumes are empty directories of this run);
  - `sockdiag list` in a container of the guard's network namespace lists
    the guard's listeners, the same as `ss` entered into that namespace;
  - the sidecar container with the manifest's settings runs as a non-root
    user and retries an API server that does not answer; it stops at SIGTERM.
Containers are removed by id, the image by its tag (unique per run), the
storage and cgroups of the run removed. Usage: image.py (as root)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy"))
from checks import check, finish, wait  # noqa: E402

SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RUN = "sdimg-%d-%d" % (os.getpid(), int(time.time()))
TAG = "localhost/sockdiag-test:" + RUN
CGROUP = "/" + RUN
COMPILERS = re.compile(r"^(gcc|g\+\+|cc|c\+\+|cpp|clang|clang\+\+|tcc|ld|ld\.bfd|ld\.gold|"
                       r"as|cc1|cc1plus|collect2|make|sh|bash|dash|apt|apt-get|dpkg)"
                       r"(-\d+)?$")
CAPS = {"NET_ADMIN": 12, "SYS_ADMIN": 21, "NET_RAW": 13, "SYS_PTRACE": 19,
        "DAC_READ_SEARCH": 2, "SYS_RESOURCE": 24, "KILL": 5, "SETUID": 7, "SETGID": 6}


def podman_env(tmp):
    with open(os.path.join(tmp, "storage.conf"), "w") as f:
        f.write('[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' %
                (tmp, tmp))
    with open(os.path.join(tmp, "containers.conf"), "w") as f:
        f.write('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n'
                '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
                'events_logfile_path = "%s/events.log"\nruntime = "runc"\n'
                'tmp_dir = "%s/libpod"\nvolume_path = "%s/volumes"\n' % (tmp, tmp, tmp))
    return dict(os.environ, CONTAINERS_STORAGE_CONF=os.path.join(tmp, "storage.conf"),
                CONTAINERS_CONF=os.path.join(tmp, "containers.conf"),
                TMPDIR=tmp)


ENV = None


def podman(*args, check_rc=True, **kw):
    r = subprocess.run(["podman"] + list(args), env=ENV, capture_output=True, text=True, **kw)
    if check_rc and r.returncode:
        raise RuntimeError("podman %s: %d %s" % (" ".join(args[:3]), r.returncode, r.stderr))
    return r


def build():
    t = time.monotonic()
    r = subprocess.run(["make", "-C", SRC, "image", "IMAGE=" + TAG], env=ENV,
                       capture_output=True, text=True)
    took = time.monotonic() - t
    size = re.search(r"^image %s: ([\d.]+) MiB" % re.escape(TAG), r.stdout, re.M)
    check(r.returncode == 0 and size, "make image builds and prints the size: %d %s %s" %
          (r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    print("# make image: %.0f s, %s MiB" % (took, size.group(1) if size else "?"), flush=True)
    if r.returncode:
        raise RuntimeError("make image failed")
    cfg = json.loads(podman("image", "inspect", TAG).stdout)[0]["Config"]
    check(cfg.get("User") == "65534:65534" and cfg.get("Entrypoint") == ["/usr/bin/sockdiag"],
          "the image: user 65534, entrypoint sockdiag: %s" % cfg)


def files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            yield os.path.join(dirpath, n)


def check_contents():
    root = podman("image", "mount", TAG).stdout.strip()
    try:
        elves = []
        for p in files(root):
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        elves.append("/" + os.path.relpath(p, root))
        check(len(elves) >= 10, "ELF files found in the image: %d" % len(elves))
        bad = []
        for e in elves:
            r = subprocess.run(["chroot", root, "/lib64/ld-linux-x86-64.so.2", "--list", e],
                               capture_output=True, text=True)
            if r.returncode or "not found" in r.stdout + r.stderr:
                bad.append((e, r.returncode, r.stdout + r.stderr))
        check(not bad, "every DT_NEEDED resolves in the image (its ld.so): %s" % bad)
        with open(os.path.join(root, "usr/bin/sockdiag"), "rb") as f:
            mhd = re.findall(rb"libmicrohttpd\.so\.\d+", f.read())
        check(mhd and os.path.exists(os.path.join(root, "usr/lib/x86_64-linux-gnu",
                                                  mhd[0].decode())),
              "the dlopen()ed %s is in the image" % mhd)
        tools = [p for p in files(root) if COMPILERS.match(os.path.basename(p))]
        tools += [d for d in ("usr/include", "usr/lib/gcc", "usr/libexec/gcc", "bin/sh")
                  if os.path.lexists(os.path.join(root, d))]
        check(not tools, "no compiler, linker, shell or package manager: %s" % tools)
    finally:
        podman("image", "unmount", TAG, check_rc=False)


def manifest():
    import yaml
    with open(os.path.join(SRC, "deploy/kubernetes/sockdiag.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
    cms = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    return ds["spec"]["template"]["spec"], cms


def expand(s, env):
    return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), s)


def run_args(tmp, pod, c, cms, image_env):
    """podman run arguments from a container of the pod spec."""
    env = dict(image_env)
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
        elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") in (
                "status.hostIP", "status.podIP"):
            env[e["name"]] = "127.0.0.1"  # the container's own loopback (no host network)
    sc = c.get("securityContext", {})
    args = ["run", "-d", "--network", "none", "--pid", "private", "--cgroup-parent", CGROUP]
    if "runAsUser" in sc:
        args += ["--user", "%d" % sc["runAsUser"]]
    caps = sc.get("capabilities", {})
    for cap in caps.get("drop", []):
        args += ["--cap-drop", cap]
    for cap in caps.get("add", []):
        args += ["--cap-add", cap]
    if sc.get("readOnlyRootFilesystem"):
        args += ["--read-only"]
    if sc.get("allowPrivilegeEscalation") is False:
        args += ["--security-opt", "no-new-privileges"]
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = vols[m["name"]]
        src = os.path.join(tmp, "vol-" + m["name"])
        if "configMap" in v:
            os.makedirs(src, exist_ok=True)
            for k, text in cms[v["configMap"]["name"]].get("data", {}).items():
                with open(os.path.join(src, k), "w") as f:
                    f.write(text)
        elif m["mountPath"] == "/proc" or m["mountPath"].startswith("/proc/"):
            continue  # the container's own /proc (private PID namespace)
        else:
            os.makedirs(src, exist_ok=True)  # emptyDir, and hostPath (never the host's)
            os.chmod(src, 0o777)
        args += ["-v", "%s:%s:%s" % (src, m["mountPath"], "ro" if m.get("readOnly") else "rw")]
    for k, v in env.items():
        args += ["-e", "%s=%s" % (k, v)]
    if "command" in c:
        args += ["--entrypoint", c["command"][0]]
    args += [TAG] + [expand(a, env) for a in c.get("command", [])[1:] + c.get("args", [])]
    return args, sc


def pid_of(cid):
    return int(podman("inspect", "--format", "{{.State.Pid}}", cid).stdout.strip())


def in_netns(pid, *cmd):
    return subprocess.run(["nsenter", "-t", str(pid), "-n"] + list(cmd), capture_output=True,
                          text=True)


def http_get(pid, port, path):
    code = ("import sys, urllib.request\n"
            "try:\n r = urllib.request.urlopen('http://127.0.0.1:%d%s', timeout=5)\n"
            " sys.stdout.write('%%d\\n' %% r.status + r.read().decode())\n"
            "except Exception as e:\n print('error', e)\n") % (port, path)
    return in_netns(pid, sys.executable, "-c", code).stdout


def status_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(l.split(":\t", 1) for l in f.read().splitlines() if ":\t" in l)


def guard_container(tmp, pod, cms, ids):
    c = [c for c in pod["containers"] if c["name"] == "guard"][0]
    args, sc = run_args(tmp, pod, c, cms, {})
    cid = podman(*args).stdout.strip()
    ids.append(cid)
    pid = pid_of(cid)
    port = [p["containerPort"] for p in c.get("ports", []) if p.get("protocol", "TCP") == "TCP"]
    check(port, "the guard container has a metrics port")
    page = []
    ok = wait(lambda: page.append(http_get(pid, port[0], "/metrics")) or
              page[-1].startswith("200\n"), 20, 0.1)
    check(ok and "sockdiag_guard_" in page[-1],
          "the guard serves metrics on loopback: %s; log: %s" %
          (page[-1][:300], podman("logs", cid, check_rc=False).stderr[-1500:]))
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        hg = c.get(probe, {}).get("httpGet")
        if hg:
            p = hg["port"] if isinstance(hg["port"], int) else port[0]
            r = http_get(pid, p, hg.get("path", "/"))
            check(r.startswith("200\n"), "the guard's %s answers: %s" % (probe, r[:200]))
    st = status_of(pid)
    want_caps = sum(1 << CAPS[x] for x in sc.get("capabilities", {}).get("add", []))
    check(int(st["Uid"].split()[1]) == sc.get("runAsUser", 65534),
          "the guard runs as the manifest's user: %s" % st["Uid"])
    check(int(st["CapBnd"], 16) == want_caps,
          "the guard's capabilities are the manifest's %s: %s" %
          (sc.get("capabilities"), st["CapBnd"]))
    return cid, pid


def list_inside(guard_id, guard_pid, ids):
    r = podman("run", "--rm", "--network", "container:" + guard_id, "--cgroup-parent", CGROUP,
               TAG, "list", "-tlnH")
    got = sorted(l.split()[3] for l in r.stdout.splitlines() if l.strip())
    ss = in_netns(guard_pid, "ss", "-tlnH")
    want = sorted(l.split()[3] for l in ss.stdout.splitlines() if l.strip())
    check(got and got == want, "sockdiag list in the container's namespace: %s, ss there: %s"
          % (got, want))


def sidecar_container(tmp, pod, cms, ids):
    cs = [c for c in pod["containers"] if c.get("command", [""])[0].endswith(
        "sockdiag-kube-backends") or "sockdiag-kube-backends" in " ".join(c.get("args", []))]
    if not check(cs, "a container runs sockdiag-kube-backends"):
        return
    sa = os.path.join(tmp, "sa")
    os.makedirs(sa)
    for name, text in (("token", "t\n"), ("ca.crt", ""), ("namespace", "sockdiag\n")):
        with open(os.path.join(sa, name), "w") as f:
            f.write(text)
    args, sc = run_args(tmp, pod, cs[0], cms, {"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                                                "KUBERNETES_SERVICE_PORT": "1"})
    i = args.index(TAG)
    args[i:i] = ["-v", sa + ":/var/run/secrets/kubernetes.io/serviceaccount:ro"]
    cid = podman(*args).stdout.strip()
    ids.append(cid)
    pid = pid_of(cid)
    ok = wait(lambda: "again in" in podman("logs", cid, check_rc=False).stderr, 20, 0.1)
    log = podman("logs", cid, check_rc=False).stderr
    check(ok, "the sidecar retries an API server that does not answer: %s" % log[-800:])
    uid = int(status_of(pid)["Uid"].split()[1])
    check(uid == sc.get("runAsUser", 65534) and uid != 0,
          "the sidecar runs as a user that is not root: %d" % uid)
    podman("stop", "-t", "10", cid)
    rc = podman("inspect", "--format", "{{.State.ExitCode}}", cid).stdout.strip()
    check(rc == "0", "the sidecar exits 0 at SIGTERM: %s" % rc)


def cleanup(ids):
    for cid in ids:
        podman("rm", "-f", "-t", "0", cid, check_rc=False)
    podman("rmi", "-f", TAG, check_rc=False)
    for base in ["/sys/fs/cgroup"] + [os.path.join("/sys/fs/cgroup", d)
                                      for d in os.listdir("/sys/fs/cgroup")]:
        d = os.path.join(base, RUN)
        if os.path.isdir(d):
            for dirpath, _, _ in sorted(os.walk(d), key=lambda w: -len(w[0])):
                try:
                    os.rmdir(dirpath)
                except OSError as e:
                    check(False, "cgroup %s removed: %s" % (dirpath, e))


def main():
    global ENV
    for tool in ("podman", "mmdebstrap", "nsenter", "ss"):
        if not shutil.which(tool):
            print("SKIP(tool:%s): not installed (make test-image installs it)" % tool)
            sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="sockdiag-image-test-")
    ENV = podman_env(tmp)
    ids = []
    try:
        build()
        check_contents()
        pod, cms = manifest()
        guard_id, guard_pid = guard_container(tmp, pod, cms, ids)
        list_inside(guard_id, guard_pid, ids)
        sidecar_container(tmp, pod, cms, ids)
    except RuntimeError as e:
        check(False, str(e))
    finally:
        cleanup(ids)
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


main()
