#!/usr/bin/env python3
"""proxy_ends.py - half-close and reset, each way, through the proxy.

  proxy_ends.py server HOST PORT CASE READY   accept one connection, play
                                              the server's part of CASE
  proxy_ends.py client HOST PORT CASE         connect, play the client's part

Each prints one JSON line {"ok": bool, ...} and exits 0 only if ok.
CASE:
  cli_half  the client sends 1 MB and half-closes; the server reads to EOF
            (all bytes, in order), then sends 1 MB and closes; the client
            reads it to EOF.
  srv_half  the same with the roles swapped: the server sends and
            half-closes first.
  cli_rst   the client sends 100 kB, then resets (SO_LINGER 0 close): the
            server must read the 100 kB and then see ECONNRESET, not EOF.
  srv_rst   the server sends 100 kB, then resets: the client likewise.
"""
import json
import socket
import struct
import sys
import time

HALF = 1000000
RST = 100000
# 1021 is prime: a lost or repeated power-of-two run can't line up with it.
PERIOD = 1021
BLOCK = bytes((i * 7 + 3) % 256 for i in range(PERIOD)) * 64


def send_pattern(s, n):
    off = 0
    while off < n:
        k = min(n - off, len(BLOCK) - PERIOD)
        start = off % PERIOD
        s.sendall(BLOCK[start : start + k])
        off += k


def recv_pattern(s):
    """Reads to EOF or an error: (bytes, first bad offset or None, error)."""
    got, bad = 0, None
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return got, bad, None
            if bad is None:
                start = got % PERIOD
                want = (BLOCK * (len(b) // len(BLOCK) + 2))[start : start + len(b)]
                if b != want:
                    bad = got + next(i for i in range(len(b)) if b[i] != want[i])
            got += len(b)
    except OSError as e:
        return got, bad, e.__class__.__name__


def reset(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def report(ok, **kw):
    print(json.dumps(dict(ok=ok, **kw)))
    sys.exit(0 if ok else 1)


def sender_then_reader(s):
    send_pattern(s, HALF)
    s.shutdown(socket.SHUT_WR)
    got, bad, err = recv_pattern(s)
    s.close()
    report(got == HALF and bad is None and err is None, got=got, bad=bad, err=err)


def reader_then_sender(s):
    got, bad, err = recv_pattern(s)
    if got == HALF and bad is None and err is None:
        send_pattern(s, HALF)
        s.shutdown(socket.SHUT_WR)
        # The peer closes after reading: wait for its FIN.
        while s.recv(65536):
            pass
    s.close()
    report(got == HALF and bad is None and err is None, got=got, bad=bad, err=err)


def resetter(s):
    send_pattern(s, RST)
    time.sleep(0.5)
    reset(s)
    report(True)


def reset_seer(s):
    got, bad, err = recv_pattern(s)
    s.close()
    report(got == RST and bad is None and err == "ConnectionResetError",
           got=got, bad=bad, err=err)


PARTS = {
    ("cli_half", "client"): sender_then_reader,
    ("cli_half", "server"): reader_then_sender,
    ("srv_half", "server"): sender_then_reader,
    ("srv_half", "client"): reader_then_sender,
    ("cli_rst", "client"): resetter,
    ("cli_rst", "server"): reset_seer,
    ("srv_rst", "server"): resetter,
    ("srv_rst", "client"): reset_seer,
}


def main():
    role, host, port, case = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    part = PARTS[(case, role)]
    if role == "server":
        ls = socket.socket(fam, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((host, port))
        ls.listen(1)
        open(sys.argv[5], "w").close()
        s, _ = ls.accept()
        ls.close()
    else:
        s = socket.create_connection((host, port))
    part(s)


if __name__ == "__main__":
    main()
