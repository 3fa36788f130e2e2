#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Records the kernel's netdev-family replies that test_netdev_feat reads.

Run as root from the repository root:

    tests/unit/data/record_netdev.py > tests/unit/data/netdev_replies.h
    clang-format -i tests/unit/data/netdev_replies.h

It makes a network namespace of its own with a veth pair, asks the kernel
over generic netlink exactly what drivers-cfg/netdev_feat.c asks (the
CTRL_CMD_GETFAMILY lookup, NETDEV_CMD_DEV_GET for one ifindex, and a dump),
and prints every reply byte for byte as a C array, then deletes the
namespace. The replies a host without such hardware cannot give (zero-copy
drivers, a 6.3-6.5 kernel) are built here too, with the same packing, and
marked hand-made.
"""
import os
import socket
import struct
import subprocess
import sys

NETLINK_GENERIC = 16
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_CMD_NEWFAMILY = 0x10, 3, 1
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NETDEV_CMD_DEV_GET = 1
A_IFINDEX, A_XDP_FEATURES, A_ZC_MAX_SEGS, A_RX_META, A_XSK = 1, 3, 4, 5, 6


def nla(typ, data):
    n = 4 + len(data)
    return struct.pack("HH", n, typ) + data + b"\0" * ((4 - n % 4) % 4)


def msg(typ, flags, seq, payload, pid=0):
    return struct.pack("IHHII", 16 + len(payload), typ, flags, seq, pid) + payload


def genl(cmd, version, attrs):
    return struct.pack("BBH", cmd, version, 0) + b"".join(attrs)


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.seq = 1

    def ask(self, typ, flags, payload):
        """All the bytes of the answer, as the kernel sent them."""
        self.seq += 1
        self.s.send(msg(typ, NLM_F_REQUEST | flags, self.seq, payload))
        out = b""
        while True:
            data = self.s.recv(65536)
            out += data
            if not flags & NLM_F_DUMP:
                return out
            off = 0
            while off + 16 <= len(data):
                n, t = struct.unpack_from("IH", data, off)
                if t in (NLMSG_DONE, NLMSG_ERROR):
                    return out
                off += (n + 3) & ~3

    def family(self, name):
        return self.ask(GENL_ID_CTRL, 0,
                        genl(CTRL_CMD_GETFAMILY, 1, [nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0")]))


def family_id(reply):
    off = 20
    while off + 4 <= len(reply):
        n, t = struct.unpack_from("HH", reply, off)
        if t == CTRL_ATTR_FAMILY_ID:
            return struct.unpack_from("H", reply, off + 4)[0]
        off += (n + 3) & ~3
    sys.exit("no family id in the reply: this kernel has no netdev family")


def dev_get(g, fid, ifindex):
    return g.ask(fid, 0, genl(NETDEV_CMD_DEV_GET, 1, [nla(A_IFINDEX, struct.pack("I", ifindex))]))


def crafted(fid, ifindex, xdp, segs=None, meta=None, xsk=None, extra=()):
    """A DEV_GET reply as the kernel packs one (u64 sets, u32 segs)."""
    attrs = [nla(A_IFINDEX, struct.pack("I", ifindex)), nla(A_XDP_FEATURES, struct.pack("Q", xdp))]
    attrs += list(extra)
    if segs is not None:
        attrs.append(nla(A_ZC_MAX_SEGS, struct.pack("I", segs)))
    if meta is not None:
        attrs.append(nla(A_RX_META, struct.pack("Q", meta)))
    if xsk is not None:
        attrs.append(nla(A_XSK, struct.pack("Q", xsk)))
    return msg(fid, 0, 2, genl(NETDEV_CMD_DEV_GET, 1, attrs))


def carray(name, comment, data):
    lines = ["/* %s */" % comment, "static const uint8_t %s[] = {" % name]
    for i in range(0, len(data), 12):
        lines.append("\t" + " ".join("0x%02x," % b for b in data[i:i + 12]))
    lines.append("};")
    return "\n".join(lines) + "\n"


def main():
    ns = "ferry-rec-%d" % os.getpid()
    sh = lambda *a: subprocess.run(a, check=True)
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "add", "va", "type", "veth", "peer", "name", "vb")
        for i in ("lo", "va", "vb"):
            sh("ip", "-n", ns, "link", "set", i, "up")
        # The recording runs inside the namespace: this script again.
        out = subprocess.run(["ip", "netns", "exec", ns, sys.executable, __file__, "--in-netns"],
                             check=True, stdout=subprocess.PIPE).stdout
        sys.stdout.write(out.decode())
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def record():
    g = Genl()
    fam = g.family("netdev")
    fid = family_id(fam)
    idx = {i: socket.if_nametoindex(i) for i in ("lo", "va", "vb")}
    va = dev_get(g, fid, idx["va"])
    subprocess.run(["ethtool", "-K", "vb", "gro", "on"], check=True)
    va_gro = dev_get(g, fid, idx["va"])
    subprocess.run(["ethtool", "-K", "vb", "gro", "off"], check=True)
    lo = dev_get(g, fid, idx["lo"])
    dump = g.ask(fid, NLM_F_DUMP, genl(NETDEV_CMD_DEV_GET, 1, []))
    nodev = dev_get(g, fid, 999)
    # No kernel has this family: the answer is the one a kernel without
    # netdev (before 6.3) gives for "netdev", an NLMSG_ERROR of -ENOENT.
    nofam = g.family("ferry-nosuch")
    uname = os.uname().release
    out = ["/* SPDX-License-Identifier: BSD-2-Clause */",
           "/*",
           " * netdev_replies.h - netdev generic netlink replies for",
           " * test_netdev_feat, written by tests/unit/data/record_netdev.py (then",
           " * clang-format). Recorded on Linux %s in a namespace" % uname,
           " * of its own; the hand-made ones are packed as the kernel packs them,",
           " * and say so.",
           " */",
           "#ifndef NETDEV_REPLIES_H",
           "#define NETDEV_REPLIES_H",
           "",
           "#include <stdint.h>",
           "",
           "/* The family id and ifindexes the recorded replies carry. */",
           "#define REC_FAMILY %d" % fid,
           "#define REC_IFINDEX_LO %d" % idx["lo"],
           "#define REC_IFINDEX_VA %d" % idx["va"],
           "#define REC_IFINDEX_VB %d" % idx["vb"],
           "#define REC_IFINDEX_ZC 7 /* the hand-made ones */",
           ""]
    out.append(carray("rec_family", "recorded: CTRL_CMD_GETFAMILY \"netdev\"", fam))
    out.append(carray("rec_no_family", "recorded: CTRL_CMD_GETFAMILY for a family this kernel lacks (-ENOENT)", nofam))
    out.append(carray("rec_veth", "recorded: DEV_GET va, a veth whose peer has no XDP program and GRO off", va))
    out.append(carray("rec_veth_gro", "recorded: DEV_GET va with GRO on at its peer vb (ndo-xmit appears)", va_gro))
    out.append(carray("rec_lo", "recorded: DEV_GET lo (no XDP in the driver)", lo))
    out.append(carray("rec_dump", "recorded: DEV_GET dump of the namespace (lo, va, vb, NLMSG_DONE)", dump))
    out.append(carray("rec_nodev", "recorded: DEV_GET for ifindex 999, which does not exist", nodev))
    # Hand-made: shaped like what zero-copy drivers report (the kernel
    # sends xdp-zc-max-segs only with xsk-zerocopy, above 1 only where
    # the driver does multi-buffer zero-copy); the values are the test's.
    out.append(carray("mk_virtio_zc",
                      "hand-made: virtio_net with zero-copy (6.11+): xdp-zc-max-segs 1",
                      crafted(fid, 7, 0x7f & ~0x10, segs=1, meta=0x2, xsk=0)))
    out.append(carray("mk_ice_zc",
                      "hand-made: ice, multi-buffer zero-copy: xdp-zc-max-segs 8, tx-checksum",
                      crafted(fid, 7, 0x7f & ~0x10, segs=8, meta=0x7, xsk=0x3)))
    out.append(carray("mk_old_zc",
                      "hand-made: a zero-copy driver on 6.3-6.5: xdp-features only",
                      crafted(fid, 7, 0x0f)))
    out.append(carray("mk_unknown_bit",
                      "hand-made: an xdp-features bit (0x80) and an attribute (9) from a later kernel",
                      crafted(fid, 7, 0x83, extra=[nla(9, struct.pack("I", 5))])))
    out.append("#endif /* NETDEV_REPLIES_H */")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--in-netns"]:
        sys.stdout.write(record())
    else:
        main()
