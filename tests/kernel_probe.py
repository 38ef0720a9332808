#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What this machine and its kernel have, asked of the kernel itself (never
of sockdiag): the names a skipping test gives (SKIP(FEATURE): ...).

  kernel_probe.py FEATURE...   one line per feature: "FEATURE yes|no|unknown"
  kernel_probe.py --families   the sock_diag tables this kernel dumps

Creating sockets, the probes run in a private network namespace: run this
under `unshare -n` (tests/summary.py does). Imported by tests that need the
same answer (test_cli.py: is there a raw_diag?)."""
import errno
import os
import resource
import shutil
import socket
import struct
import subprocess
import sys
import time

NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, SOCK_DESTROY = 4, 20, 21
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3


def inet_diag_supported(family, protocol):
    """An inet_diag dump for PROTOCOL ends in ENOENT (in NLMSG_DONE or
    NLMSG_ERROR) when the kernel has no handler for it (no raw_diag,
    sctp_diag...); otherwise it ends in a clean NLMSG_DONE."""
    # struct inet_diag_req_v2: family, protocol, ext, pad, states, sockid (48)
    return dump_supported(struct.pack("=BBBBI48x", family, protocol, 0, 0, 0xffffffff))


# The other families' dump requests (smc_diag_req, xdp_diag_req,
# tipc_sock_diag_req), as sockdiag's decoders send them; (family, request).
FAMILY_REQUESTS = {
    "smc_diag": struct.pack("=BBBB48x", 43, 0, 0, 0),          # AF_SMC
    "xsk_diag": struct.pack("=BBHIIII", 44, 0, 0, 0, 0, 0, 0),  # AF_XDP
    "tipc_diag": struct.pack("=BBHI", 30, 0, 0, 0xffffffff),    # AF_TIPC
}


def family_diag_supported(module):
    """Has the kernel the sock_diag handler MODULE (smc_diag, xsk_diag, tipc_diag)?"""
    return dump_supported(FAMILY_REQUESTS[module])


def dump_supported(req):
    """A SOCK_DIAG_BY_FAMILY dump of REQ: False when it ends in ENOENT (no
    handler for that family or protocol), True when it ends cleanly."""
    hdr = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                      NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as nl:
        nl.send(hdr + req)
        while True:
            buf = nl.recv(1 << 16)
            off = 0
            while off + 16 <= len(buf):
                ln, typ = struct.unpack_from("=IH", buf, off)
                if typ in (NLMSG_ERROR, NLMSG_DONE):
                    err = struct.unpack_from("=i", buf, off + 16)[0] if ln >= 20 else 0
                    if err == 0 and typ == NLMSG_DONE:
                        return True
                    if err == -errno.ENOENT:
                        return False
                    raise OSError(-err, "inet_diag probe")
                off += (ln + 3) & ~3


# Dump requests for every sock_diag table, by name (tests/kernels/ names the
# families a guest kernel has with these; tests/families/ skips on them).
# inet_diag_req_v2 for inet tables (MPTCP's protocol > 255 goes in the
# INET_DIAG_REQ_PROTOCOL attribute), each family's own request otherwise.
def _inet_req(proto):
    if proto > 255:
        return struct.pack("=BBBBI48xHHI", socket.AF_INET, 0, 0, 0, 0xffffffff, 8, 3, proto)
    return struct.pack("=BBBBI48x", socket.AF_INET, proto, 0, 0, 0xffffffff)


DIAG_TABLES = {
    "tcp": _inet_req(6), "udp": _inet_req(17), "udplite": _inet_req(136),
    "raw": _inet_req(255), "sctp": _inet_req(132), "mptcp": _inet_req(262),
    "unix": struct.pack("=BBHIIIII", 1, 0, 0, 0xffffffff, 0, 0, 0, 0),
    "packet": struct.pack("=BBHIIII", 17, 0, 0, 0, 0, 0, 0),
    "netlink": struct.pack("=BBHIIII", 16, 255, 0, 0, 0, 0, 0),
    "tipc": struct.pack("=BBHI", 30, 0, 0, 0xffffffff),
    "vsock": struct.pack("=BBHIIIII", 40, 0, 0, 0xffffffff, 0, 0, 0, 0),
    "smc": struct.pack("=BBBB48x", 43, 0, 0, 0),
    "xdp": struct.pack("=BBHIIII", 44, 0, 0, 0, 0, 0, 0),
}


def diag_table(name):
    """True when this kernel dumps the sock_diag table NAME (DIAG_TABLES)."""
    return diag_dump_ok(DIAG_TABLES[name])


def diag_dump_ok(req):
    """A dump ends in a clean NLMSG_DONE when the kernel has a handler, in
    ENOENT when it has none (EINVAL/EOPNOTSUPP: a family it cannot take)."""
    hdr = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                      NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(5)
        nl.send(hdr + req)
        while True:
            buf = nl.recv(1 << 16)
            off = 0
            while off + 16 <= len(buf):
                ln, typ = struct.unpack_from("=IH", buf, off)
                if typ in (NLMSG_ERROR, NLMSG_DONE):
                    err = struct.unpack_from("=i", buf, off + 16)[0] if ln >= 20 else 0
                    if err == 0:
                        return True
                    if err in (-errno.ENOENT, -errno.EINVAL, -errno.EOPNOTSUPP):
                        return False
                    raise OSError(-err, "sock_diag probe")
                off += (ln + 3) & ~3


def families():
    """The sock_diag tables this kernel dumps, and those it does not."""
    yes = [n for n in DIAG_TABLES if diag_table(n)]
    return yes, [n for n in DIAG_TABLES if n not in yes]


def bound_inactive_dumped():
    """Does a TCP dump for state bit 13 (BOUND_INACTIVE, Linux 6.8+) return a
    socket bound and never listening? Older kernels ignore the bit. Makes
    one such socket: run in a private network namespace."""
    with socket.socket() as b:
        b.bind(("127.0.0.1", 0))
        inode = os.fstat(b.fileno()).st_ino
        req = struct.pack("=BBBBI48x", socket.AF_INET, socket.IPPROTO_TCP, 0, 0, 1 << 13)
        hdr = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                          NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
        seen = False
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(5)
            nl.send(hdr + req)
            while True:
                buf = nl.recv(1 << 16)
                off = 0
                while off + 16 <= len(buf):
                    ln, typ = struct.unpack_from("=IH", buf, off)
                    if typ in (NLMSG_ERROR, NLMSG_DONE):
                        return seen
                    # inet_diag_msg: 4 + sockid 48 + expires, rqueue, wqueue, uid: inode at 68
                    if ln >= 16 + 72 and struct.unpack_from("=I", buf, off + 16 + 68)[0] == inode:
                        seen = True
                    off += (ln + 3) & ~3


def bpf_syscall_prog():
    """Does bpf(2) load a BPF_PROG_TYPE_SYSCALL program (Linux 5.14 and later)? The light
    skeleton of sockdiag's owners iterator loads through one. Needs root."""
    import ctypes
    insns = struct.pack("=BBhiBBhi", 0xb7, 0, 0, 0, 0x95, 0, 0, 0)  # r0 = 0; exit
    lic = ctypes.create_string_buffer(b"GPL")
    ibuf = ctypes.create_string_buffer(insns, len(insns))
    # prog_type SYSCALL, 2 insns, insns, license, no log, kern_version, BPF_F_SLEEPABLE
    # (syscall programs are sleepable only).
    attr = ctypes.create_string_buffer(struct.pack("=IIQQIIQII", 31, 2, ctypes.addressof(ibuf),
                                                   ctypes.addressof(lic), 0, 0, 0, 0, 1 << 4),
                                       48)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(321, 5, attr, 48)  # SYS_bpf, BPF_PROG_LOAD
    if fd >= 0:
        os.close(fd)
        return True
    if ctypes.get_errno() in (errno.EPERM, errno.EACCES):
        raise OSError(ctypes.get_errno(), "bpf probe")
    return False


def has_raw_diag():
    return inet_diag_supported(socket.AF_INET, socket.IPPROTO_RAW)


def can_make(family, type_, proto=0):
    try:
        socket.socket(family, type_, proto).close()
        return True
    except OSError as e:
        if e.errno in (errno.EPROTONOSUPPORT, errno.EAFNOSUPPORT, errno.ESOCKTNOSUPPORT):
            return False
        raise


def sysctl(path):
    try:
        with open("/proc/sys/" + path) as f:
            return f.read().strip()
    except OSError:
        return None


def time_wait_destroyed():
    """Does SOCK_DESTROY destroy a TIME-WAIT socket (Linux 6.0 and later; 5.10 answers
    EOPNOTSUPP)? Asked with a request built here for a TIME-WAIT socket made here on
    127.0.0.1 (lo up), once /proc/net/tcp shows it in TIME-WAIT."""
    with socket.socket() as lst:
        lst.bind(("127.0.0.1", 0))
        lst.listen(1)
        c = socket.create_connection(lst.getsockname())
        a, _ = lst.accept()
        cookie = struct.unpack("=Q", c.getsockopt(socket.SOL_SOCKET, 57, 8))[0]  # SO_COOKIE
        sport, dport = c.getsockname()[1], lst.getsockname()[1]
        c.close()
        a.recv(1)  # the client's FIN
        a.close()
        slow = float(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1"))
        want = ":%04X 0100007F:%04X 06 " % (sport, dport)  # 06: TCP_TIME_WAIT
        deadline = time.monotonic() + 10 * slow
        while want not in open("/proc/net/tcp").read():
            if time.monotonic() > deadline:
                raise OSError(errno.ETIMEDOUT, "no TIME-WAIT socket on port %d" % sport)
            time.sleep(0.01)
    lo = socket.inet_aton("127.0.0.1") + bytes(12)
    req = (struct.pack("=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0, 0xffffffff) +
           struct.pack("!HH", sport, dport) + lo + lo +
           struct.pack("=III", 0, cookie & 0xffffffff, cookie >> 32))
    hdr = struct.pack("=IHHII", 16 + len(req), SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as nl:
        nl.send(hdr + req)
        buf = nl.recv(4096)
    err = struct.unpack_from("=i", buf, 16)[0]
    if err in (0, -errno.EOPNOTSUPP):
        return err == 0
    raise OSError(-err, "SOCK_DESTROY of a TIME-WAIT socket")


def rtnl_high_group():
    """Does an rtnetlink socket join a group above 32 (33: RTNLGRP_BRVLAN, Linux 5.8)?"""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as s:
        try:
            s.setsockopt(270, 1, 33)  # SOL_NETLINK, NETLINK_ADD_MEMBERSHIP
            return True
        except OSError as e:
            if e.errno == errno.EINVAL:
                return False
            raise


def service_22():
    try:
        return socket.getservbyport(22, "tcp") is not None
    except OSError:
        return False


def cgroup2_writable():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"]:
                return os.access(left.split()[4], os.W_OK)
    return False


PROBES = {
    # Root with CAP_SYS_ADMIN: private network namespaces.
    "netns": lambda: subprocess.run(["unshare", "-n", "true"],
                                    stderr=subprocess.DEVNULL).returncode == 0,
    "raw_diag": has_raw_diag,
    "udplite": lambda: can_make(socket.AF_INET, socket.SOCK_DGRAM, 136),
    "sctp_diag": lambda: inet_diag_supported(socket.AF_INET, 132),
    "mptcp": lambda: sysctl("net/mptcp/enabled") == "1" and diag_table("mptcp"),
    "vsock_diag": lambda: diag_table("vsock"),
    "bound_inactive": bound_inactive_dumped,
    "tipc_diag": lambda: diag_table("tipc"),
    "smc_diag": lambda: diag_table("smc"),
    "xdp_diag": lambda: diag_table("xdp"),
    # A vsock_diag kernel without the loopback transport (vsock_loopback).
    "vsock_loopback": lambda: diag_table("vsock") and os.path.isdir("/sys/module/vsock_loopback"),
    "services": service_22,  # netbase's /etc/services
    "nofile": lambda: resource.getrlimit(resource.RLIMIT_NOFILE)[1] >= 7100,
    # A cgroup2 mount we may create test cgroups under.
    "cgroup2": cgroup2_writable,
    # The BPF owners iterator: a kernel with BTF, root (CAP_BPF + CAP_PERFMON)
    # and bpftool, without which meson builds sockdiag without the iterator.
    "bpf_owners": lambda: os.path.exists("/sys/kernel/btf/vmlinux") and os.geteuid() == 0
    and shutil.which("bpftool", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is not None,
    # Decided by the test from the kernel's own raw answer (a netlink dump
    # that lists a socket once), so the skip is this kernel's behaviour.
    "netlink-dup": lambda: False,
    "rtnl-groups": rtnl_high_group,
    "tw-destroy": time_wait_destroyed,
    # What the owners iterator's loader needs of the kernel (Linux 5.14).
    "bpf-syscall-prog": bpf_syscall_prog,
}


def probe(feature):
    """True, False, or None (a feature this file does not know)."""
    if feature.startswith("tool:"):
        return shutil.which(feature[5:]) is not None
    if feature.startswith("pymod:"):  # a Python module of Debian's python3
        return subprocess.run(["/usr/bin/python3", "-c", "import " + feature[6:]],
                              capture_output=True).returncode == 0
    fn = PROBES.get(feature)
    return fn() if fn else None


def main(argv):
    if argv == ["--families"]:
        yes, no = families()
        print("families: %s (absent: %s)" % (" ".join(yes), " ".join(no) or "none"))
        return 0
    for f in argv:
        try:
            v = probe(f)
        except OSError as e:
            print("%s unknown (%s)" % (f, e))
            continue
        print("%s %s" % (f, {True: "yes", False: "no", None: "unknown"}[v]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
