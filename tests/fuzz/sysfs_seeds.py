#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds for fuzz_sysfs, from this machine, read only (.ci/fuzz runs it under
`unshare -n`: the sockets it opens for its own /proc are in a namespace of
their own). Writes into DIR, each seed a selector byte and its input:
  seed-mountinfo      0  /proc/self/mountinfo
  seed-records        1  the BPF iterator's records (lib/owners/bpf/owners.h)
                         for this process's sockets, as the iterator writes them
  seed-cgroup-path    2  the first two levels of the cgroup2 tree, walked as
                         a subtree of its first directory
  seed-cgroup-unit    3  the same, walked for a unit name found in it
  seed-proc, -threads 4, 5  this process's /proc/PID (comm, fd links,
                         ns/net, a thread), with a run/ directory of names
usage: sysfs_seeds.py DIR"""
import os
import socket
import struct
import subprocess
import sys
import threading

TASK = 0xffffffff


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", " ")


def sockets_of(pid):
    """(fd, link) of /proc/PID/fd."""
    out = []
    base = "/proc/%d/fd" % pid
    for name in sorted(os.listdir(base), key=int):
        try:
            out.append((int(name), os.readlink(os.path.join(base, name))))
        except OSError:
            pass
    return out


def cgroup_tree():
    """'d' lines for two levels of the cgroup2 mount, and a unit name in it."""
    mnt = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"]:
                mnt = left.split()[4]
                break
    lines, unit = [], None
    for top in sorted(os.listdir(mnt))[:40] if mnt else []:
        p = os.path.join(mnt, top)
        if not os.path.isdir(p):
            continue
        lines.append("d " + top)
        for sub in sorted(os.listdir(p))[:20]:
            if os.path.isdir(os.path.join(p, sub)):
                lines.append("d %s/%s" % (top, sub))
                if sub.endswith((".service", ".scope")) and not unit:
                    unit = sub
    if not lines:   # no cgroup2 tree here: a systemd host's layout
        return ["d init.scope", "d system.slice/ssh.service", "d system.slice/cron.service",
                "d system.slice/docker-1f2e.scope/init", "d user.slice/user-1000.slice/"
                "user@1000.service/app.slice", "d user.slice/user-1000.slice/session-4.scope",
                "f system.slice/ssh.service/cgroup.procs\t1\\n812\\n"], "ssh.service"
    return lines, unit or "init.scope"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if [n for _, n in socket.if_nameindex()] != ["lo"]:
        sys.exit("sysfs_seeds.py: run it in a new network namespace (unshare -n)")
    out = sys.argv[1]

    def write(name, sel, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([sel]) + data)

    with open("/proc/self/mountinfo", "rb") as f:
        info = f.read()
    write("seed-mountinfo", 0, info)
    # A pure v2 host's line, and one whose mount point holds a space (\040).
    write("seed-mountinfo-v2", 0, info + b"35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,"
          b"noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n")
    write("seed-mountinfo-space", 0, b"36 24 0:31 / /run/my\\040cgroup rw shared:9 - "
          b"cgroup2 cgroup2 rw\n")

    # Sockets of our own, in this private namespace: a listener, a pair, UDP, unix.
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    keep = [socket.socket(socket.AF_INET, socket.SOCK_STREAM), socket.socketpair()]
    keep[0].bind(("127.0.0.1", 0))
    keep[0].listen(4)
    keep.append(socket.create_connection(keep[0].getsockname()))
    keep.append(socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
    stop = threading.Event()
    th = threading.Thread(target=stop.wait)
    th.start()
    pid = os.getpid()
    fds = sockets_of(pid)
    with open("/proc/self/comm") as f:
        comm = f.read().strip()

    rec = struct.pack("=IiII16s", TASK, pid, os.geteuid(), 0, comm.encode()[:15])
    for fd, link in fds:
        if link.startswith("socket:["):
            rec += struct.pack("=IIQ", fd, 0, int(link[8:-1]))
    rec += struct.pack("=IiII16s", TASK, 1, 0, 0, b"init")
    write("seed-records", 1, rec)

    lines, unit = cgroup_tree()
    first = lines[0][2:] if lines else "system.slice"
    write("seed-cgroup-path", 2, ("%s/**\n" % first + "\n".join(lines) + "\n").encode())
    write("seed-cgroup-unit", 3, ("%s\n" % unit + "\n".join(lines) + "\n").encode())

    tree = ["x", "f %d/comm\t%s\\n" % (pid, esc(comm)), "f %d/ns/net\tnet" % pid,
            "f 1/comm\tinit\\n", "f 1/ns/net\tnet", "d run", "f run/blue\tns",
            "f run/.hidden\tns"]
    # Sockets, pipes and anonymous inodes as they are; files as /dev/null.
    fds = [(fd, link if link.startswith(("socket:", "pipe:", "anon_inode:")) else "/dev/null")
           for fd, link in fds]
    for fd, link in fds:
        tree.append("l %d/fd/%d\t%s" % (pid, fd, esc(link)))
    tid = th.native_id
    tree.append("f %d/task/%d/comm\t%s\\n" % (pid, tid, esc(comm)))
    for fd, link in fds[:4]:
        tree.append("l %d/task/%d/fd/%d\t%s" % (pid, tid, fd, esc(link)))
    text = ("\n".join(tree) + "\n").encode()
    write("seed-proc", 4, text)
    write("seed-threads", 5, text)
    stop.set()
    th.join()


if __name__ == "__main__":
    main()
