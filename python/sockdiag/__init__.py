# SPDX-License-Identifier: GPL-2.0-or-later
"""sockdiag: Linux sockets through NETLINK_SOCK_DIAG, shaped like psutil.

    >>> import sockdiag
    >>> for s in sockdiag.connections("tcp", filter="state listening"):
    ...     print(s.laddr, s.status, s.pid)

connections() returns what psutil.net_connections() returns (the same
fd, family, type, laddr, raddr, status and pid, with processes=True), read
from the kernel's socket dumps instead of /proc text, plus the socket's
cookie, inode, uid, cgroup, queues and, with details=True, its tcp_info.
Filters are sockdiag(8)'s FILTER language ("dport = :443 and state
established"). iter_connections() yields the same in constant memory,
count_by() counts groups in C, kill() destroys sockets (SOCK_DESTROY), and
watch() follows the kernel's socket-destroy events; life() yields one record
per ended connection (outcome, duration, bytes), as `sockdiag life`.

Errors: FilterError (a ValueError, with .position) for a malformed filter,
PermissionError for a missing capability (CAP_NET_ADMIN to destroy,
CAP_SYS_ADMIN to enter another namespace), OSError with its errno for the
rest. Every call opens its own netlink socket: calls from several threads
are safe, and dumps run without the GIL. See docs/python.md.
"""
from ._sockdiag import (ConnectionIterator, FilterError, Life, Socket, Watch, addr,
                        connections, count_by, iter_connections, kill, life, proc, watch)

__all__ = ["connections", "iter_connections", "count_by", "kill", "watch", "life",
           "Socket", "Watch", "Life", "ConnectionIterator", "FilterError", "addr", "proc"]
__version__ = "1.0.0"
