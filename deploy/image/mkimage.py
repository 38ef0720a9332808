#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The sockdiag image (`make image`), built without Docker and without any
registry but Debian's archive:
  1. the built tree installed into a staging directory (meson install --destdir);
  2. the base: mmdebstrap --variant=extract of Debian 12 with the packages of
     the libraries the binaries need (their dependencies come along), nothing
     run in it (no maintainer scripts, no shell needed);
  3. the runtime root: the binaries, their configuration, and from the base
     only the dynamic loader and the closure of DT_NEEDED of the binaries
     and of the libraries they dlopen() (libmicrohttpd; libcurl and libsnappy
     for the exporter's push), each resolved in
     the base (a library none of the packages has is an error naming it);
     /etc/passwd and /etc/group with root and nobody (65534), the copyright
     files; no shell, no package manager, no compiler;
  4. that root as one tar (owners root, the commit's time), imported with
     `podman import` as TAG: ENTRYPOINT /usr/bin/sockdiag, USER 65534.
Prints the image's size. Usage: mkimage.py BUILDDIR TAG PACKAGE..."""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BINARIES = ["usr/bin/sockdiag", "usr/bin/sockdiag-kube-backends"]
LIBDIRS = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "usr/lib64", "lib",
           "usr/lib"]
SUITE = "bookworm"
SOURCES = "/etc/apt/sources.list.d/debian.sources"
NOBODY = 65534


def die(msg):
    print("mkimage: " + msg, file=sys.stderr)
    sys.exit(1)


def run(args, **kw):
    r = subprocess.run(args, **kw)
    if r.returncode:
        die("%s failed (exit %d)" % (args[0], r.returncode))
    return r


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_deps(path):
    """(DT_NEEDED names, RUNPATH dirs, interpreter) of an ELF file."""
    d = run(["readelf", "-dW", path], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", d)
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]+)\]", d)
    p = run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    interp = re.search(r"Requesting program interpreter: ([^\]]+)\]", p)
    dirs = [x.lstrip("/") for r in runpath for x in r.split(":")]
    return needed, dirs, interp.group(1).lstrip("/") if interp else None


def copy_in(base, root, rel):
    """base/rel into root/rel, with the symbolic links on the way (of the file
    or of a directory above it: lib64, a merged /usr); the file's path."""
    for _ in range(40):
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            pre = "/".join(parts[:i])
            src = os.path.join(base, pre)
            if os.path.islink(src):
                target = os.readlink(src)
                dst = os.path.join(root, pre)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                if not os.path.lexists(dst):
                    os.symlink(target, dst)
                resolved = (target.lstrip("/") if target.startswith("/") else
                            os.path.normpath(os.path.join(os.path.dirname(pre), target)))
                rel = "/".join([resolved] + parts[i:])
                break
        else:
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if not os.path.exists(dst):
                shutil.copy2(os.path.join(base, rel), dst)
            return rel
    die("%s: a loop of symbolic links" % rel)


def resolve(base, name, dirs):
    for d in dirs + LIBDIRS:
        if os.path.lexists(os.path.join(base, d, name)):
            return os.path.join(d, name)
    return None


def closure(base, root, roots, dlopened):
    """Copy into root every library the ELF files of roots need, transitively."""
    todo = [(r, None) for r in roots] + [(None, n) for n in dlopened]
    done, libs = set(), []
    while todo:
        rel, name = todo.pop()
        if rel is None:
            rel = resolve(base, name, [])
            if rel is None:
                die("%s (dlopen()ed) is in none of the packages" % name)
            rel = copy_in(base, root, rel)
            libs.append(rel)
        if rel in done:
            continue
        done.add(rel)
        needed, dirs, interp = elf_deps(os.path.join(root, rel))
        if interp:
            libs.append(copy_in(base, root, interp))
        for n in needed:
            lib = resolve(base, n, dirs)
            if lib is None:
                die("%s, needed by /%s, is in none of the packages" % (n, rel))
            todo.append((copy_in(base, root, lib), None))
            libs.append(lib)
    return sorted(set(libs))


def dlopened(binary):
    """The sonames the binary loads with dlopen() (meson wrote them in): libmicrohttpd's,
    and the exporter's push's, libcurl's and libsnappy's."""
    with open(binary, "rb") as f:
        return sorted({m.decode() for m in re.findall(
            rb"lib(?:microhttpd|curl-gnutls|curl|snappy)\.so\.\d+", f.read())})


def base_rootfs(tmp, packages):
    out = os.path.join(tmp, "base.tar")
    args = ["mmdebstrap", "--quiet", "--variant=extract", "--include=" + ",".join(packages),
            SUITE, out]
    if os.path.exists(SOURCES):
        args.append(SOURCES)  # the host's mirror and security suite
    run(args)
    base = os.path.join(tmp, "base")
    os.mkdir(base)
    run(["tar", "-xf", out, "-C", base])
    os.unlink(out)
    return base


def etc_files(root):
    with open(os.path.join(root, "etc/passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/usr/sbin/nologin\n"
                "nobody:x:%d:%d:nobody:/nonexistent:/usr/sbin/nologin\n" % (NOBODY, NOBODY))
    with open(os.path.join(root, "etc/group"), "w") as f:
        f.write("root:x:0:\nnogroup:x:%d:\n" % NOBODY)
    for d in ("tmp", "run", "proc", "sys", "dev", "var/run/secrets"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)


def copyrights(base, root):
    docs = os.path.join(base, "usr/share/doc")
    for pkg in sorted(os.listdir(docs)) if os.path.isdir(docs) else []:
        src = os.path.join(docs, pkg, "copyright")
        if os.path.isfile(src) and not os.path.islink(src):
            os.makedirs(os.path.join(root, "usr/share/doc", pkg), exist_ok=True)
            shutil.copy2(src, os.path.join(root, "usr/share/doc", pkg, "copyright"))
    os.makedirs(os.path.join(root, "usr/share/doc/sockdiag"), exist_ok=True)
    shutil.copy2(os.path.join(SRC, "COPYING"), os.path.join(root, "usr/share/doc/sockdiag/copyright"))


def commit_time():
    r = subprocess.run(["git", "-C", SRC, "log", "-1", "--format=%ct"], capture_output=True,
                       text=True)
    return int(r.stdout.strip() or 0) if r.returncode == 0 else 0


def pack(root, out):
    """One tar, sorted, every owner root, every time the commit's."""
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", commit_time()))

    def norm(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        ti.mtime = mtime
        return ti
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as t:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                path = os.path.join(dirpath, name)
                t.add(path, arcname=os.path.relpath(path, root), recursive=False, filter=norm)


def main():
    if len(sys.argv) < 4:
        die("usage: mkimage.py BUILDDIR TAG PACKAGE...")
    build, tag, packages = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    for tool in ("mmdebstrap", "podman", "readelf"):
        if not shutil.which(tool):
            die("%s not found (make image installs mmdebstrap, podman, binutils)" % tool)
    tmp = tempfile.mkdtemp(prefix="sockdiag-image-", dir=build)
    try:
        stage, root = os.path.join(tmp, "stage"), os.path.join(tmp, "root")
        run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage],
            stdout=subprocess.DEVNULL)
        base = base_rootfs(tmp, packages)
        for b in BINARIES:
            if not is_elf(os.path.join(stage, b)):
                die("/%s was not built (meson -Dkube=enabled needs libcurl and json-c)" % b)
            os.makedirs(os.path.join(root, os.path.dirname(b)), exist_ok=True)
            shutil.copy2(os.path.join(stage, b), os.path.join(root, b))
        shutil.copytree(os.path.join(stage, "etc/sockdiag"), os.path.join(root, "etc/sockdiag"))
        libs = closure(base, root, BINARIES, dlopened(os.path.join(root, BINARIES[0])))
        etc_files(root)
        copyrights(base, root)
        image_tar = os.path.join(tmp, "image.tar")
        pack(root, image_tar)
        run(["podman", "import", "--quiet",
             "--change", 'ENTRYPOINT ["/usr/bin/sockdiag"]',
             "--change", 'CMD ["--help"]',
             "--change", "USER %d:%d" % (NOBODY, NOBODY),
             "--change", "ENV PATH=/usr/bin",
             "--change", "LABEL org.opencontainers.image.title=sockdiag",
             "--message", "make image: mmdebstrap %s (%s) + meson install" %
             (SUITE, " ".join(packages)),
             image_tar, tag], stdout=subprocess.DEVNULL)
        size = os.path.getsize(image_tar)
        print("image %s: %.1f MiB (%d libraries from %d packages; tar %d bytes)" %
              (tag, size / 1048576, len(libs), len(packages), size))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
