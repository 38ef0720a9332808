# SPDX-License-Identifier: GPL-2.0-or-later
"""What the dead-backend tests share (tests/kill/backends.py,
tests/guard/guard_backends.py): the addresses and rules they set up in their
private namespace, a population of sockets with the verdict the backends file
implies for each, and `conntrack -L` as the oracle for conntrack deletes."""
import errno
import ipaddress
import re
import socket
import subprocess
import sys

SO_COOKIE = 57


def cookie(s):
    return "%x" % int.from_bytes(s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8), "little")


def setup_namespace():
    """Addresses on lo, conntrack made to track (an nftables `ct state` rule),
    the service address 10.96.0.10:53 DNAT'ed to 10.0.0.1:53 as kube-proxy
    does. Exits 77 when nftables cannot be used. Call only in a private
    network namespace."""
    import os
    import shutil
    if not shutil.which("conntrack") or not shutil.which("nft"):
        print("SKIP(tool:conntrack,nft): not installed (conntrack, nftables)")
        sys.exit(77)
    if os.environ.get("SDIAG_BACKENDS_INNER") != "1":
        # Hash tables of its own (asked for here, in the namespace run.sh
        # made, for the namespaces made from it): otherwise every dump walks
        # the whole machine's TCP and UDP hashes, and passes measure its load.
        subprocess.run("sysctl -qw net.ipv4.tcp_child_ehash_entries=1024;"
                       "sysctl -qw net.ipv4.udp_child_hash_entries=256", shell=True)
        os.environ["SDIAG_BACKENDS_INNER"] = "1"
        sys.stdout.flush()
        os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run("ip addr add 10.0.0.1/32 dev lo; ip addr add 10.0.0.2/32 dev lo;"
                   "ip addr add 10.96.0.10/32 dev lo;"
                   "ip -6 addr add fd00::1/128 dev lo nodad;"
                   "ip -6 addr add fd00::2/128 dev lo nodad", shell=True, check=True)
    r = subprocess.run(
        "nft add table inet t && "
        "nft add chain inet t o '{ type filter hook output priority 0; }' && "
        "nft add rule inet t o ct state new,established accept && "
        "nft add table ip nat && "
        "nft add chain ip nat out '{ type nat hook output priority -100; }' && "
        "nft add rule ip nat out ip daddr 10.96.0.10 udp dport 53 dnat to 10.0.0.1:53",
        shell=True, capture_output=True, text=True)
    if r.returncode:
        print("SKIP(nftables): cannot load rules: " + r.stderr.strip())
        sys.exit(77)


BACKENDS = """# dead backends
10.0.0.1:80/tcp
[fd00::1]:80
10.0.0.1:82          # v4-mapped clients too
10.0.0.1:53/udp
[fd00::1]:53/udp
"""
UDP_BACKENDS = {("10.0.0.1", 53), ("fd00::1", 53)}


class Population:
    """Sockets, each with the verdict the file implies."""

    def __init__(self, base):
        self.keep = []
        self.socks = []  # (name, socket, expected destroyed)
        self.flows = set()  # of the sockets expected destroyed
        self.listeners = {}
        self.aborted = set()  # ids of sockets seen with ECONNABORTED (SO_ERROR reads clear it)
        b = base

        def lis(addr, port, fam=socket.AF_INET):
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((addr, port))
            s.listen(16)
            self.add("listener %s:%d" % (addr, port), s, False)
            self.listeners[port if addr == "::" else (addr, port)] = s
            return s

        def tcp(name, l, dst, fam, dead):
            c = socket.socket(fam, socket.SOCK_STREAM)
            c.connect(dst)
            a, _ = l.accept()
            self.add(name, c, dead)
            self.add(name + " (server side)", a, False)

        def udp(name, dst, fam, dead, connect=True, send=True):
            u = socket.socket(fam, socket.SOCK_DGRAM)
            if connect:
                u.connect(dst)
                if send:
                    u.send(b"x")
            else:
                u.sendto(b"x", dst)
            self.add(name, u, dead)

        for addr, fam in (("10.0.0.1", socket.AF_INET), ("10.0.0.2", socket.AF_INET),
                          ("fd00::1", socket.AF_INET6)):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.bind((addr, 53))
            self.add("udp server %s:53" % addr, s, False)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("10.0.0.1", 80))
        self.add("udp server 10.0.0.1:80", s, False)
        l80 = lis("10.0.0.1", 80)
        l81 = lis("10.0.0.1", 81)
        l80b = lis("10.0.0.2", 80)
        l6 = lis("fd00::1", 80, socket.AF_INET6)
        ldual = lis("::", 82, socket.AF_INET6)
        for i in range(b):
            tcp("tcp to dead 10.0.0.1:80 #%d" % i, l80, ("10.0.0.1", 80), socket.AF_INET, True)
        tcp("tcp to 10.0.0.1:81 (other port)", l81, ("10.0.0.1", 81), socket.AF_INET, False)
        tcp("tcp to live 10.0.0.2:80", l80b, ("10.0.0.2", 80), socket.AF_INET, False)
        tcp("tcp6 to dead [fd00::1]:80", l6, ("fd00::1", 80), socket.AF_INET6, True)
        tcp("tcp6 to dead v4-mapped ::ffff:10.0.0.1:82", ldual, ("::ffff:10.0.0.1", 82),
            socket.AF_INET6, True)
        udp("udp to dead 10.0.0.1:53", ("10.0.0.1", 53), socket.AF_INET, True)
        udp("udp6 to dead [fd00::1]:53", ("fd00::1", 53), socket.AF_INET6, True)
        udp("udp6 to dead v4-mapped ::ffff:10.0.0.1:53", ("::ffff:10.0.0.1", 53),
            socket.AF_INET6, True)
        # Connected, nothing sent: no conntrack entry ever. Its delete is answered
        # ENOENT, which must not count as an entry deleted.
        udp("udp to dead 10.0.0.1:53 that never sent (no conntrack entry)", ("10.0.0.1", 53),
            socket.AF_INET, True, send=False)
        udp("unconnected udp that sent to 10.0.0.1:53", ("10.0.0.1", 53), socket.AF_INET, False,
            connect=False)
        udp("udp to live 10.0.0.2:53", ("10.0.0.2", 53), socket.AF_INET, False)
        udp("udp to 10.0.0.1:80 (a TCP-only backend)", ("10.0.0.1", 80), socket.AF_INET, False)
        udp("udp to the service 10.96.0.10:53 (DNAT to 10.0.0.1:53)", ("10.96.0.10", 53),
            socket.AF_INET, False)

    def add(self, name, s, dead):
        self.socks.append((name, s, dead))
        if dead:  # its flow, as conntrack shows it (no peer name once destroyed)
            proto = "tcp" if s.type == socket.SOCK_STREAM else "udp"
            src, sport = s.getsockname()[:2]
            dst, dport = s.getpeername()[:2]
            self.flows.add((proto, unmap(src), sport, unmap(dst), dport))

    def verdicts(self):
        """Names of sockets whose fate differs from the expected one."""
        wrong = []
        for name, s, dead in self.socks:
            got = self.is_aborted(s)
            if got != dead:
                wrong.append("%s: %s" % (name, "destroyed" if got else "alive"))
        return wrong

    def is_aborted(self, s):
        """Whether the socket was destroyed (remembered: reading SO_ERROR clears it)."""
        if id(s) not in self.aborted and \
                s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == errno.ECONNABORTED:
            self.aborted.add(id(s))
        return id(s) in self.aborted

    def dead_cookies(self):
        return sorted(cookie(s) for _, s, dead in self.socks if dead)

    def dead_flows(self):
        """(proto, src, sport, dst, dport) as conntrack shows them."""
        return self.flows

    def new_tcp(self, addr, port, fam=socket.AF_INET):
        """A new client of a listener of the population: (client, server side)."""
        l = self.listeners.get((addr, port)) or self.listeners[port]
        c = socket.socket(fam, socket.SOCK_STREAM)
        c.connect((addr, port))
        a, _ = l.accept()
        self.add("later client of %s:%d" % (addr, port), c, False)
        self.add("later client of %s:%d (server side)" % (addr, port), a, False)
        return c

    def close(self):
        for _, s, _ in self.socks:
            s.close()


def unmap(a):
    ip = ipaddress.ip_address(a)
    if ip.version == 6 and ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return str(ip)


CT_LINE = re.compile(r"^(\w+)\s+\d+\s+\d+\s+.*?src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+)"
                     r".*?src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+)")


def conntrack():
    p = subprocess.run(["conntrack", "-L"], capture_output=True, text=True)
    entries = set()
    for line in p.stdout.splitlines():
        m = CT_LINE.match(line)
        if m and m.group(1) in ("tcp", "udp"):
            g = m.groups()
            entries.add((g[0], unmap(g[1]), int(g[3]), unmap(g[2]), int(g[4]),
                         unmap(g[5]), int(g[7])))
    return entries


def expected_ct_removed(before, flows, sweep=True):
    """Entries of a destroyed socket's flow (either direction), and UDP entries
    whose original destination or reply source is a UDP backend."""
    out = set()
    for e in before:
        proto, osrc, osport, odst, odport, rsrc, rsport = e
        fwd = (proto, osrc, osport, odst, odport)
        rev = (proto, odst, odport, osrc, osport)
        if fwd in flows or rev in flows:
            out.add(e)
        elif sweep and proto == "udp" and ((odst, odport) in UDP_BACKENDS or
                                 (rsrc, rsport) in UDP_BACKENDS):
            out.add(e)
    return out


