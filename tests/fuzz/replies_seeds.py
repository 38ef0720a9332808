#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds for fuzz_replies from the captured dumps (tests/fixtures/*.bin): each
dump cut into datagrams at message boundaries and framed as fuzz_replies
reads them (a flags byte, then u16-length-prefixed datagrams), stamped as
ours (flags 0x02), stamped with an abort (0x06) and foreign (0x00); plus a
destroyer batch of 4 with two NLMSG_ERROR replies (ENOENT, EPERM).
usage: replies_seeds.py OUTDIR FIXTURE.bin..."""
import os
import struct
import sys


def frame(data):
    out, chunk, off = b"", b"", 0
    while off + 16 <= len(data):
        ln = struct.unpack_from("=I", data, off)[0]
        if ln < 16:
            break
        msg = data[off:off + ((ln + 3) & ~3)]
        if chunk and len(chunk) + len(msg) > 32768:
            out += struct.pack("<H", len(chunk)) + chunk
            chunk = b""
        chunk += msg
        off += (ln + 3) & ~3
    if chunk:
        out += struct.pack("<H", len(chunk)) + chunk
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    for f in sys.argv[2:]:
        framed = frame(open(f, "rb").read())
        for flags in (0x02, 0x06, 0x00):
            name = "seed-%s-%02x" % (os.path.basename(f), flags)
            with open(os.path.join(outdir, name), "wb") as o:
                o.write(bytes([flags]) + framed)

    def err(seq, e):  # NLMSG_ERROR carrying the request's header (NETLINK_CAP_ACK)
        return struct.pack("=IHHIIi", 36, 2, 0, seq, 0, e) + struct.pack("=IHHII", 16, 20, 1, seq, 0)
    d = err(0, -2) + err(2, -1)
    with open(os.path.join(outdir, "seed-destroy-4"), "wb") as o:
        o.write(bytes([0x1b]) + struct.pack("<H", len(d)) + d)


main()
