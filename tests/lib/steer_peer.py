#!/usr/bin/env python3
"""steer_peer.py - the two ends of t_steer.sh's traffic.

  serve ADDR TCP_PORT UDP_PORT COUNT_FILE   TCP echo server and a UDP sink
                                            that writes its datagram count
                                            to COUNT_FILE (every 0.1 s)
  udp SRC DST DPORT SPORT FLOWS COUNT [PPS] COUNT datagrams per flow, flows
                                            from source ports SPORT..
  tcp DST PORT BYTES [RATE]                 sends BYTES (a known pattern), at
                                            most RATE bytes/s when given, and
                                            checks the echo is byte-exact;
                                            prints JSON
"""
import json
import os
import select
import socket
import socketserver
import sys
import threading
import time


def pattern(n, off=0):
    return bytes((off + i) % 251 for i in range(n))


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            data = self.request.recv(65536)
            if not data:
                return
            self.request.sendall(data)


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True


def serve(addr, tcp_port, udp_port, count_file):
    srv = Server((addr, int(tcp_port)), Echo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    u.bind((addr, int(udp_port)))
    socks = [u]
    if socket.has_ipv6:
        # IPv6 datagrams to the same port count too (when the namespace
        # has IPv6 at all).
        try:
            u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            u6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            u6.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            u6.bind(("::", int(udp_port)))
            socks.append(u6)
        except OSError:
            pass
    n = 0
    last = None
    while True:
        ready, _, _ = select.select(socks, [], [], 0.1)
        for r in ready:
            try:
                while True:
                    r.recv(2048, socket.MSG_DONTWAIT)
                    n += 1
            except BlockingIOError:
                pass
        if n != last:
            tmp = count_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % n)
            os.rename(tmp, count_file)
            last = n


def udp(src, dst, dport, sport, flows, count, pps=0):
    socks = []
    fam = socket.AF_INET6 if ":" in src else socket.AF_INET
    for i in range(int(flows)):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((src, int(sport) + i))
        socks.append(s)
    gap = 1.0 / float(pps) if float(pps) > 0 else 0
    t = time.monotonic()
    payload = b"steer" * 10
    for _ in range(int(count)):
        for s in socks:
            s.sendto(payload, (dst, int(dport)))
            if gap:
                t += gap
                d = t - time.monotonic()
                if d > 0:
                    time.sleep(d)
    print(json.dumps({"sent": int(count) * int(flows)}))


def tcp(dst, port, nbytes, rate=0):
    nbytes = int(nbytes)
    rate = float(rate)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect((dst, int(port)))
    t0 = time.monotonic()
    got = bytearray()
    sent = 0
    chunk = 32768
    s.setblocking(True)
    bad = 0
    while len(got) < nbytes:
        if sent < nbytes and sent - len(got) < 4 * chunk:
            n = min(chunk, nbytes - sent)
            s.sendall(pattern(n, sent))
            sent += n
        data = s.recv(65536)
        if not data:
            break
        got += data
        if rate:
            # Paced, so a transfer lasts long enough to change the rules
            # under it.
            d = t0 + len(got) / rate - time.monotonic()
            if d > 0:
                time.sleep(d)
    s.close()
    if bytes(got) != pattern(nbytes):
        bad = 1
    print(json.dumps({"sent": sent, "received": len(got), "exact": not bad}))
    return 0 if not bad and len(got) == nbytes else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "serve":
        serve(*args)
    elif cmd == "udp":
        udp(*args)
    elif cmd == "tcp":
        sys.exit(tcp(*args))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
