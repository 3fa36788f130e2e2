#!/usr/bin/env python3
"""proxy_peer.py - the backend -> client direction for the proxy tests.

  proxy_peer.py serve HOST PORT BYTES READY  accept one connection, send BYTES
                                             of a fixed pattern, then close
  proxy_peer.py fetch HOST PORT              connect, read to EOF, print
                                             {"bytes": N, "sha256": "..."}
  proxy_peer.py digest BYTES                 the pattern's {"bytes", "sha256"}
  proxy_peer.py echo HOST PORT READY         accept one connection, send back
                                             what it reads until EOF
  proxy_peer.py ping HOST PORT N SIZE        connect, N times send SIZE bytes
                                             and wait for their echo, print
                                             {"rounds": N, "ok": bool}
"""
import hashlib
import json
import socket
import sys

# 1021 is prime: a lost or repeated power-of-two run can't line up with it.
BLOCK = bytes((i * 7 + 3) % 256 for i in range(1021)) * 64


def chunks(n):
    while n > 0:
        c = BLOCK[: min(n, len(BLOCK))]
        n -= len(c)
        yield c


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def accept_one(host, port, ready):
    """Listens on host:port, says so in the file ready, takes one client."""
    s = socket.socket(family(host), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(1)
    open(ready, "w").close()
    c, _ = s.accept()
    return c


def serve(host, port, n, ready):
    c = accept_one(host, port, ready)
    for chunk in chunks(n):
        c.sendall(chunk)
    c.shutdown(socket.SHUT_WR)
    while c.recv(65536):
        pass
    c.close()


def fetch(host, port):
    c = socket.create_connection((host, port))
    c.shutdown(socket.SHUT_WR)
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
    print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))


def digest(n):
    h = hashlib.sha256()
    for chunk in chunks(n):
        h.update(chunk)
    print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))


def echo(host, port, ready):
    c = accept_one(host, port, ready)
    while True:
        b = c.recv(65536)
        if not b:
            break
        c.sendall(b)
    c.close()


def ping(host, port, rounds, size):
    c = socket.create_connection((host, port))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ok = True
    for i in range(rounds):
        req = bytes((i + j) % 256 for j in range(size))
        c.sendall(req)
        got = b""
        while len(got) < size:
            b = c.recv(size - len(got))
            if not b:
                break
            got += b
        ok = ok and got == req
    c.shutdown(socket.SHUT_WR)
    ok = ok and c.recv(1) == b""
    c.close()
    print(json.dumps({"rounds": rounds, "ok": ok}))


if __name__ == "__main__":
    if sys.argv[1] == "echo":
        echo(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "ping":
        ping(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "fetch":
        fetch(sys.argv[2], int(sys.argv[3]))
    else:
        digest(int(sys.argv[2]))
