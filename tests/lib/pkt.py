#!/usr/bin/env python3
"""pkt.py - send and capture test frames on an interface with AF_PACKET.

  pkt.py send IFNAME N KIND [--dst-mac M] [--size B] [--flows F] [--rate PPS]
             [--sport-base P]
  pkt.py capture IFNAME --count N --timeout S [--verify-gen SIZE] [--linger S]
                 [--ready-file PATH] [--ethertype T [--verify-kind KIND --size B]]

KIND is one of the names in KINDS: "good" is a frame exactly like ferry's
generator makes; the others are malformed the way one XDP verdict reason of
bpf/ferry_abi.h describes.

capture counts IPv4/UDP frames to 198.18.0.2 that arrive on IFNAME (frames
the interface sends, and any other traffic, are ignored) and prints one JSON
line: {"received":N,"bad":N,"flows":[sorted distinct UDP source ports],...}.
With --verify-gen SIZE every such frame must equal the generator's frame of
that size byte for byte, except the MAC addresses and the UDP source port;
the others count in "bad". With --ethertype T it counts frames of that
ethertype instead; with --verify-kind KIND the i-th of them must equal
`send`'s i-th frame of KIND (size B, same MAC addresses) byte for byte.
"lldp" is a well-formed LLDP frame (to 01:80:c2:00:00:0e; its port ID TLV
carries i), for carrying non-IP traffic across a wire.

Standard library only.
"""

import argparse
import errno
import json
import os
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_8021Q = 0x8100
PACKET_OUTGOING = 4

GEN_SRC_IP = bytes([198, 18, 0, 1])
GEN_DST_IP = bytes([198, 18, 0, 2])
GEN_DPORT = 9
GEN_SPORT_BASE = 1024
GEN_TTL = 64
IP_DF = 0x4000
ETH_HLEN = 14
IP_HLEN = 20
UDP_HLEN = 8
MIN_GEN_SIZE = ETH_HLEN + IP_HLEN + UDP_HLEN


def parse_mac(text):
    parts = text.split(":")
    if len(parts) != 6:
        raise argparse.ArgumentTypeError("bad MAC address: %s" % text)
    try:
        return bytes(int(p, 16) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError("bad MAC address: %s" % text)


def if_mac(ifname):
    with open("/sys/class/net/%s/address" % ifname) as f:
        return parse_mac(f.read().strip())


def csum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth_hdr(dst, src, ethertype):
    return dst + src + struct.pack("!H", ethertype)


def ip4_hdr(tot_len, ver_ihl=0x45, proto=17):
    """IPv4 header as the generator writes it: TOS 0, id 0, DF, TTL 64."""
    hdr = struct.pack("!BBHHHBBH4s4s", ver_ihl, 0, tot_len, 0, IP_DF, GEN_TTL,
                      proto, 0, GEN_SRC_IP, GEN_DST_IP)
    return hdr[:10] + struct.pack("!H", csum16(hdr)) + hdr[12:]


def payload(n):
    return bytes(i & 0xFF for i in range(n))


def gen_frame(size, sport, src, dst):
    """The generator's frame of `size` bytes (no FCS)."""
    if size < MIN_GEN_SIZE:
        raise ValueError("size %d is under %d" % (size, MIN_GEN_SIZE))
    udp_len = size - ETH_HLEN - IP_HLEN
    udp = struct.pack("!HHHH", sport, GEN_DPORT, udp_len, 0)
    return (eth_hdr(dst, src, ETH_P_IP) + ip4_hdr(size - ETH_HLEN) + udp +
            payload(udp_len - UDP_HLEN))


# ---- the kinds of frame `send` makes: f(i, size, sport, src, dst) ----

def k_good(i, size, sport, src, dst):
    return gen_frame(size, sport, src, dst)


def k_trunc_eth(i, size, sport, src, dst):
    # Shorter than an Ethernet header. Note: the kernel refuses to send
    # frames under 14 bytes on an Ethernet device (dev_validate_header).
    return (dst + src)[:10]


ETH_P_LLDP = 0x88CC
LLDP_DST = bytes([0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E])


def k_lldp(i, size, sport, src, dst):
    # Chassis ID (subtype 4: MAC), port ID (subtype 7: local, "p<i>"),
    # TTL 120, end; padded to size. The LLDP group address, not dst.
    def tlv(t, value):
        return struct.pack("!H", t << 9 | len(value)) + value
    port = b"p%d" % i
    body = (tlv(1, b"\x04" + src) + tlv(2, b"\x07" + port) +
            tlv(3, struct.pack("!H", 120)) + tlv(0, b""))
    frame = eth_hdr(LLDP_DST, src, ETH_P_LLDP) + body
    return frame + bytes(max(0, size - len(frame)))


def k_trunc_ip4(i, size, sport, src, dst):
    return eth_hdr(dst, src, ETH_P_IP) + ip4_hdr(IP_HLEN + UDP_HLEN)[:10]


def k_bad_ihl(i, size, sport, src, dst):
    f = bytearray(gen_frame(size, sport, src, dst))
    f[ETH_HLEN] = 0x40 | (4, 0, 3)[i % 3]  # IHL under 5 words
    return bytes(f)


def k_bad_ip4_len(i, size, sport, src, dst):
    f = bytearray(gen_frame(size, sport, src, dst))
    # Alternately more than the frame holds and less than the header.
    tot = size - ETH_HLEN + 200 if i % 2 == 0 else IP_HLEN - 1
    struct.pack_into("!H", f, ETH_HLEN + 2, tot)
    struct.pack_into("!H", f, ETH_HLEN + 10, 0)
    struct.pack_into("!H", f, ETH_HLEN + 10,
                     csum16(bytes(f[ETH_HLEN:ETH_HLEN + IP_HLEN])))
    return bytes(f)


def k_bad_ver(i, size, sport, src, dst):
    f = bytearray(gen_frame(size, sport, src, dst))
    f[ETH_HLEN] = ((6, 5, 0, 15)[i % 4] << 4) | 5  # ethertype says IPv4
    return bytes(f)


def k_trunc_udp(i, size, sport, src, dst):
    # IP header consistent (total length 24), but only 4 bytes of UDP.
    return (eth_hdr(dst, src, ETH_P_IP) + ip4_hdr(IP_HLEN + 4) +
            struct.pack("!HH", sport, GEN_DPORT))


def k_vlan3(i, size, sport, src, dst):
    f = gen_frame(size, sport, src, dst)
    tags = b"".join(struct.pack("!HH", ETH_P_8021Q, vid) for vid in (10, 20, 30))
    return f[:12] + tags + f[12:]


def k_bad_udp_len(i, size, sport, src, dst):
    f = bytearray(gen_frame(size, sport, src, dst))
    # Alternately more than the IP payload and less than the UDP header.
    ulen = size - ETH_HLEN - IP_HLEN + 100 if i % 2 == 0 else UDP_HLEN - 1
    struct.pack_into("!H", f, ETH_HLEN + IP_HLEN + 4, ulen)
    return bytes(f)


KINDS = {
    "good": k_good,
    "trunc_eth": k_trunc_eth,
    "trunc_ip4": k_trunc_ip4,
    "bad_ihl": k_bad_ihl,
    "bad_ip4_len": k_bad_ip4_len,
    "bad_ver": k_bad_ver,
    "trunc_udp": k_trunc_udp,
    "vlan3": k_vlan3,
    "bad_udp_len": k_bad_udp_len,
    "lldp": k_lldp,
}


def cmd_send(args):
    src = args.src_mac or if_mac(args.ifname)
    make = KINDS[args.kind]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((args.ifname, 0))
    gap = 1.0 / args.rate if args.rate > 0 else 0.0
    t0 = time.monotonic()
    sent = 0
    for i in range(args.n):
        frame = make(i, args.size, args.sport_base + i % args.flows, src,
                     args.dst_mac)
        while True:
            try:
                s.send(frame)
                break
            except OSError as e:
                if e.errno in (errno.ENOBUFS, errno.EAGAIN):
                    time.sleep(0.001)
                    continue
                print(json.dumps({"sent": sent, "kind": args.kind,
                                  "error": "%s: %s" % (errno.errorcode.get(
                                      e.errno, e.errno), e.strerror),
                                  "frame_len": len(frame)}))
                return 1
        sent += 1
        if gap:
            delay = t0 + sent * gap - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    print(json.dumps({"sent": sent, "kind": args.kind}))
    return 0


def udp_to_gen_dst(f):
    """UDP source port of an IPv4/UDP frame to 198.18.0.2, else None."""
    if len(f) < ETH_HLEN + IP_HLEN or f[12:14] != b"\x08\x00":
        return None
    ihl = (f[ETH_HLEN] & 0x0F) * 4
    if f[ETH_HLEN + 9] != 17 or f[ETH_HLEN + 16:ETH_HLEN + 20] != GEN_DST_IP:
        return None
    if ihl < IP_HLEN or len(f) < ETH_HLEN + ihl + 2:
        return None
    return struct.unpack_from("!H", f, ETH_HLEN + ihl)[0]


def first_diff(got, want):
    for off in range(min(len(got), len(want))):
        if got[off] != want[off]:
            return {"offset": off, "got": got[off], "want": want[off],
                    "len": len(got), "want_len": len(want)}
    return {"offset": min(len(got), len(want)), "len": len(got),
            "want_len": len(want)}


def cmd_capture(args):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    for opt in (getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF):
        try:
            s.setsockopt(socket.SOL_SOCKET, opt, 64 << 20)
            break
        except OSError:
            pass
    # Protocol 0 at socket() and ETH_P_ALL at bind(): no frame of another
    # interface slips in before the bind.
    s.bind((args.ifname, ETH_P_ALL))
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write("%d\n" % os.getpid())

    received = bad = other = 0
    flows = set()
    lengths = set()
    first_bad = None
    expect = {}
    deadline = time.monotonic() + args.timeout
    while True:
        now = time.monotonic()
        if now >= deadline:
            break
        if args.count and received >= args.count:
            deadline = min(deadline, now + args.linger)
            if args.linger <= 0:
                break
        s.settimeout(max(0.001, deadline - now))
        try:
            f, addr = s.recvfrom(65536)
        except socket.timeout:
            break
        if addr[2] == PACKET_OUTGOING:
            continue
        if args.ethertype is not None:
            if len(f) < ETH_HLEN or struct.unpack_from("!H", f, 12)[0] != \
                    args.ethertype:
                other += 1
                continue
            if args.verify_kind:
                want = KINDS[args.verify_kind](received, args.size, 0,
                                               f[6:12], f[0:6])
                if f != want:
                    bad += 1
                    if first_bad is None:
                        first_bad = first_diff(f, want)
            received += 1
            lengths.add(len(f))
            continue
        sport = udp_to_gen_dst(f)
        if sport is None:
            other += 1
            continue
        received += 1
        flows.add(sport)
        lengths.add(len(f))
        if args.verify_gen:
            key = (sport, f[:12])
            want = expect.get(key)
            if want is None:
                want = gen_frame(args.verify_gen, sport, f[6:12], f[0:6])
                expect[key] = want
            if f != want:
                bad += 1
                if first_bad is None:
                    first_bad = first_diff(f, want)
    out = {"received": received, "bad": bad, "flows": sorted(flows),
           "other": other, "lengths": sorted(lengths)}
    if first_bad is not None:
        out["first_bad"] = first_bad
    print(json.dumps(out))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("send", help="send N frames of a kind")
    p.add_argument("ifname")
    p.add_argument("n", type=int)
    p.add_argument("kind", choices=sorted(KINDS))
    p.add_argument("--dst-mac", type=parse_mac, default=b"\xff" * 6)
    p.add_argument("--src-mac", type=parse_mac, default=None)
    p.add_argument("--size", type=int, default=64,
                   help="frame length of the generator-like kinds")
    p.add_argument("--flows", type=int, default=1)
    p.add_argument("--sport-base", type=int, default=GEN_SPORT_BASE,
                   help="UDP source port of the first flow")
    p.add_argument("--rate", type=float, default=0,
                   help="frames per second (0: as fast as possible)")

    p = sub.add_parser("capture", help="count (and check) frames received")
    p.add_argument("ifname")
    p.add_argument("--count", type=int, default=0,
                   help="stop once this many arrived (plus --linger)")
    p.add_argument("--timeout", type=float, default=10)
    p.add_argument("--linger", type=float, default=0.3,
                   help="seconds to keep counting after --count arrived, "
                        "so extra frames are seen")
    p.add_argument("--verify-gen", type=int, default=0, metavar="SIZE")
    p.add_argument("--ready-file", help="created once the socket is bound")
    p.add_argument("--ethertype", type=lambda v: int(v, 0), default=None,
                   help="count frames of this ethertype, not UDP ones")
    p.add_argument("--verify-kind", choices=sorted(KINDS), default=None,
                   help="with --ethertype: the i-th frame must equal send's")
    p.add_argument("--size", type=int, default=64,
                   help="with --verify-kind: the size send was given")

    args = ap.parse_args()
    if args.cmd == "send":
        if args.size < MIN_GEN_SIZE or args.flows < 1:
            ap.error("--size must be >= %d and --flows >= 1" % MIN_GEN_SIZE)
        return cmd_send(args)
    return cmd_capture(args)


if __name__ == "__main__":
    sys.exit(main())
