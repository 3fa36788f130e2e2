#!/usr/bin/env bash
# 1000 bad command lines, through ferryctl and through the raw socket, each
# answered with an error (or the connection closed, for oversized ones); the
# daemon still answers and its ports are as they were.
#
# Then a storm of 10,000 random lines on the raw socket (random bytes with
# NULs and newlines, command words with junk arguments, lines of 4 KiB to
# 20 KiB), each answered with one JSON reply (E2BIG and a close for the
# oversized); afterwards `show config` and `port show` are byte-identical.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
# Should a line ever work by accident (say, "save FILE"), what it writes
# lands in the run dir, which the trap removes, and the check below sees it.
cd "$TB_RUN"
tb_std3
tb_veth dut d2 sink s2 # a free interface, so bad "port add" lines fail on what is bad
tb_dut_xconnect

ports() { tb_do dut port show | jq -c '[.data[] | {name, ifname, ifindex, queues, mode, xdp, umem, app}]'; }
before=$(ports)
echo "ports before: $before"
config_before=$(tb_do dut show config | jq -r .data)
show_before=$(tb_do dut port show)

"$PYTHON" - "$(tb_sock dut)" "$FERRYCTL" "$D0" "$(tb_ifname d2)" <<'PY'
import json, random, socket, subprocess, sys

sock_path, ferryctl, d0, d2 = sys.argv[1:5]
rnd = random.Random(1234)

MISSING = [
    "port", "port add", "port add x", "port add x dev", "port del", "port frob",
    "port add x nodev " + d2, "port add x dev " + d2 + " queues",
    "port add x dev " + d2 + " mode", "port add x dev " + d2 + " xdp",
    "xconnect", "xconnect add", "xconnect add p0", "xconnect del",
    "reflect", "drop", "route", "gen", "gen start", "gen stop",
    "gen start p0 rate", "gen start p0 size", "gen start p0 count",
]
BAD_VALUES = [
    "workers 999", "workers -1", "workers abc", "workers 0-", "workers 5-2",
    "workers 64", "workers 1,,2",
    "port add x dev " + d2 + " queues 0-99",
    "port add x dev " + d2 + " queues 99999999999999999999999",
    "port add x dev " + d2 + " queues -3", "port add x dev " + d2 + " queues 3-1",
    "port add x dev " + d2 + " mode turbo", "port add x dev " + d2 + " xdp hw",
    "port add x dev " + d2 + " mode copy mode copy",
    "port add x dev " + d2 + " bogus 1",
    "port add x dev no-such-if0", "port add x dev " + "i" * 40,
    "port add " + "n" * 300 + " dev " + d2,
    "port add p0 dev " + d2,  # name taken
    "port add q dev " + d0,   # interface taken
    "gen start p0 rate -5", "gen start p0 rate abc", "gen start p0 size 10",
    "gen start p0 size 100000", "gen start p0 flows 0", "gen start p0 count x",
    "gen start p0 dst-mac zz:zz:zz:zz:zz:zz", "gen start p0 dst-mac 1:2:3",
    "gen start p0 rate 1e9", "gen start p0 bogus 1",
    "fib show 10.0.0.0/33", "fib show nonsense", "fib show fd00::/129",
    "neigh show x",
]
UNKNOWN_PORTS = [
    "port del nope", "port show nope", "xconnect add nope p1",
    "xconnect add p0 nope", "xconnect del nope", "reflect nope", "drop nope",
    "gen start nope", "gen stop nope", "route nope",
]
WORDS = ["port", "gen", "add", "del", "dev", "x", "0", "-1", "%s", "%n",
         "\"", "'", "\\", "{", "}", "[", "null", "\u00e9t\u00e9", "../..",
         "$(id)", "`id`", ";", "|", "*", "18446744073709551616"]


def junk():
    k = rnd.random()
    if k < 0.4:  # a word that is no command, then anything
        words = ["zz" + "".join(rnd.choice("abcdefxyz_-") for _ in range(rnd.randint(1, 12)))]
        words += [rnd.choice(WORDS) for _ in range(rnd.randint(0, 8))]
        return " ".join(words)
    if k < 0.7:  # printable noise that starts with no command name
        s = "".join(chr(rnd.randint(33, 126)) for _ in range(rnd.randint(1, 200)))
        return "~" + s
    # a bad value or an unknown port, then more words (never a missing
    # argument: "workers" plus a word could make a good command)
    base = rnd.choice(BAD_VALUES + UNKNOWN_PORTS)
    return base + " " + " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 4)))


lines = []
lines += MISSING + BAD_VALUES + UNKNOWN_PORTS
lines += ["x" * 5000, "port add " + "a " * 2500, "version " + "v" * 5000]
while len(lines) < 1000:
    lines.append(junk())
oversize = {i for i, l in enumerate(lines) if len(l) >= 4096}

failures = []


def check(how, i, line, reply, closed_ok):
    if reply is None:
        if not (closed_ok and i in oversize):
            failures.append("%s: no reply to %r" % (how, line[:80]))
        return
    try:
        obj = json.loads(reply)
    except ValueError:
        failures.append("%s: not JSON %r for %r" % (how, reply[:120], line[:80]))
        return
    if obj.get("ok") is not False or "error" not in obj or \
            not isinstance(obj["error"].get("code"), str) or \
            not isinstance(obj["error"].get("message"), str):
        failures.append("%s: %r answered %r" % (how, line[:80], reply[:160]))


def raw(data, timeout=5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock_path)
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    buf = b""
    try:
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except (ConnectionResetError, socket.timeout) as e:
        if isinstance(e, socket.timeout):
            failures.append("raw: timeout waiting for a reply to %r" % data[:80])
    s.close()
    return buf.split(b"\n")[0].decode("utf-8", "replace") if buf else None


# 1. the raw socket: every line, plus some that no shell can pass
for i, line in enumerate(lines):
    check("raw", i, line, raw(line.encode() + b"\n"), True)
binary = [b"\xff\xfe\x80 port del \xc3\x28", b"port del \xe2\x82", b"zz\x00version",
          b"\x1b[2J\x07", b"port add \xff dev \xfe", b"\t\t\t  \x0b\x0c zz"]
for b in binary:
    check("raw", -1, repr(b), raw(b + b"\n"), False)

# 2. ferryctl: the same lines as words; oversized ones may be refused locally
n_ctl = refused_locally = 0
for i, line in enumerate(lines):
    words = line.split()
    if not words:
        continue
    n_ctl += 1
    p = subprocess.run([ferryctl, "-s", sock_path, "-j"] + words,
                       capture_output=True, timeout=10)
    out = p.stdout.decode("utf-8", "replace").strip()
    if i in oversize:
        if p.returncode == 0:
            failures.append("ferryctl: oversized line accepted")
        continue
    if p.returncode not in (0, 1) and not out and '"' in line:
        # ferryctl may refuse a word with a double quote itself: the
        # protocol would read it as quoting. Nothing reached the daemon.
        refused_locally += 1
        continue
    if p.returncode != 1:
        failures.append("ferryctl: exit %d (want 1) for %r: %r %r" % (
            p.returncode, line[:80], out[:120], p.stderr[:120]))
        continue
    check("ferryctl", i, line, out.splitlines()[0] if out else None, False)

# 3. clients that misbehave must not stop others from being served
idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
idle.connect(sock_path)                   # connects, says nothing
half = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
half.connect(sock_path)
half.sendall(b"versi")                    # half a line, then silence
p = subprocess.run([ferryctl, "-s", sock_path, "-j", "version"],
                   capture_output=True, timeout=10)
if p.returncode != 0:
    failures.append("version while two clients hang: exit %d %r" % (p.returncode, p.stdout))
idle.close()
half.close()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
s.close()                                 # connect and leave

print("sent %d lines raw, %d through ferryctl (%d refused by ferryctl itself), "
      "%d binary; %d failures" % (len(lines), n_ctl, refused_locally,
                                  len(binary), len(failures)))
for f in failures[:30]:
    print("  " + f)
sys.exit(1 if failures else 0)
PY

assert_ok tb_ctlj dut version
after=$(ports)
echo "ports after: $after"
assert_eq "port show after the bad commands" "$before" "$after"

# Nothing the storm sends may be a command that changes anything: junk
# words never name a port or an interface of the daemon's namespace.
forbidden=(p0 p1 lo "$D0" "$D1" "$(tb_ifname d2)")
files_before=$(ls -A "$TB_RUN")
start=$SECONDS
timeout 60 "$PYTHON" - "$(tb_sock dut)" "${forbidden[@]}" <<'PY'
import json, random, socket, sys, time

sock_path, forbidden = sys.argv[1], set(sys.argv[2:])
rnd = random.Random(4321)
N_LINES = 10000
MAX_LINE = 4096          # CTL_MAX_LINE, the newline included
DEADLINE = time.monotonic() + 45
BATCH = 64               # lines pipelined before their replies are read

# Not "workers": with a valid CPU list it re-plans the ports (a good
# command, tested in t_workers_replan), which would change port show.
COMMANDS = ["help", "version", "shutdown", "worker show", "port add",
            "port del", "port show", "xconnect add", "xconnect del", "reflect",
            "drop", "gen start", "gen stop", "stats", "stats reset", "metrics",
            "show config", "save"]
# With no argument these would succeed and change something (or exit).
NEED_JUNK = {"version": 1, "shutdown": 1, "worker show": 1, "stats reset": 1,
             "metrics": 1, "show config": 1, "save": 2}
KEYWORDS = ["dev", "queues", "mode", "xdp", "busy-poll", "rate", "size", "flows",
            "dst-mac", "count", "idle", "busy", "poll", "auto", "zc", "copy",
            "native", "generic", "on", "off", "port", "worker", "add", "del"]
JUNK = ["0", "1", "63", "64", "-1", "0-3", "3-1", "0,2-3", "1,,2", "0x10", "1e9",
        "18446744073709551616", "aa:bb:cc:dd:ee:ff", "zz:zz", "%s%n", "\\",
        "{", "}", "[]", "null", "\u00e9t\u00e9", "\u2603", "../..", "$(id)",
        "`id`", ";", "|", "*", "\x7f", "\x01", "x" * 300]


def junk_word():
    k = rnd.random()
    if k < 0.4:
        w = rnd.choice(KEYWORDS + COMMANDS)
    elif k < 0.7:
        w = rnd.choice(JUNK)
    else:
        w = "".join(chr(rnd.randint(33, 126)) for _ in range(rnd.randint(1, 40)))
    # Each junk word must stay one word: a blank, a quote (gluing words)
    # or a '#' (cutting the line short) could turn "save a b" into a save
    # that works.
    w = "".join(c for c in w if c not in ' \t\r\n"#\0') or "~"
    return "~" + w if w in forbidden else w


def words_line():
    cmd = rnd.choice(COMMANDS)
    n = max(rnd.randint(0, 8), NEED_JUNK.get(cmd, 1))
    return (cmd + " " + " ".join(junk_word() for _ in range(n))).encode()


def random_bytes_lines():
    b = bytearray(rnd.getrandbits(8) for _ in range(rnd.randint(1, 400)))
    for _ in range(rnd.randint(0, 3)):
        b[rnd.randrange(len(b))] = rnd.choice((0, 10, 13, 34, 35))
    return bytes(b).split(b"\n")


def oversized_line():
    n = rnd.choice((MAX_LINE, MAX_LINE + 1, rnd.randint(5000, 20000)))
    k = rnd.random()
    if k < 0.3:
        s = ("port add " + "a " * n)[:n]
    elif k < 0.6:
        s = "version " + "v" * n
    else:
        s = "".join(chr(rnd.randint(32, 126)) for _ in range(n))
    return s[:n].encode()


lines = []   # (bytes, oversized)
while len(lines) < N_LINES:
    k = rnd.random()
    if k < 0.40:
        lines += [(l, False) for l in random_bytes_lines()]
    elif k < 0.97:
        lines.append((words_line(), False))
    elif k < 0.98:   # longest allowed: answered, connection kept
        lines.append((b"~" * (MAX_LINE - 1 - rnd.randint(0, 2)), False))
    else:
        lines.append((oversized_line(), True))
lines = lines[:N_LINES]

failures = []
counts = {"ok": 0, "error": 0, "e2big": 0, "conns": 0}
ok_by_cmd = {}   # what was answered ok, by first word: for the log


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock_path)
    counts["conns"] += 1
    return s


def read_replies(s, n):
    buf = b""
    while buf.count(b"\n") < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.split(b"\n")[:-1]


def check(line, reply, want_code=None):
    try:
        obj = json.loads(reply)
        ok = obj["ok"]
        if not isinstance(ok, bool):
            raise ValueError("ok is not a boolean")
        if not ok:
            code = obj["error"]["code"]
            if not isinstance(code, str) or not isinstance(obj["error"]["message"], str):
                raise ValueError("error without code and message")
    except (ValueError, KeyError, TypeError) as e:
        failures.append("%s: reply %r to %r" % (e, reply[:120], line[:60]))
        return
    if want_code and (ok or code != want_code):
        failures.append("want %s, got %r for a %d-byte line" % (want_code, reply[:120], len(line)))
    counts["ok" if ok else "error"] += 1
    if ok:
        words = line.split()
        first = words[0].decode("utf-8", "replace") if words else "(blank)"
        if first.startswith("#"):
            first = "(comment)"
        elif first not in (c.split()[0] for c in COMMANDS) and words:
            first = "(other)"
        ok_by_cmd[first] = ok_by_cmd.get(first, 0) + 1
    if not ok and code == "E2BIG":
        counts["e2big"] += 1


def send_batch(s, batch):
    s.sendall(b"".join(l + b"\n" for l in batch))
    replies = read_replies(s, len(batch))
    if len(replies) != len(batch):
        failures.append("%d replies to %d lines" % (len(replies), len(batch)))
    for line, reply in zip(batch, replies):
        check(line, reply)


def send_oversized(line):
    s = connect()
    try:
        s.sendall(line + b"\n")
    except (BrokenPipeError, ConnectionResetError):
        pass   # closed after its first 4 KiB: the reply is still there
    try:
        replies = read_replies(s, 1)
    except ConnectionResetError:
        replies = []
    s.close()
    if not replies:
        failures.append("no reply to a %d-byte line" % len(line))
    else:
        check(line, replies[0], "E2BIG")


s = connect()
batch = []
try:
    for line, oversized in lines:
        if time.monotonic() > DEADLINE:
            failures.append("out of time")
            break
        if not oversized:
            batch.append(line)
            if len(batch) == BATCH:
                send_batch(s, batch)
                batch = []
            continue
        send_oversized(line)
    if batch:
        send_batch(s, batch)
except (OSError, socket.timeout) as e:
    failures.append("socket: %r" % e)
s.close()

print("storm: %d lines on %d connections: %d ok, %d errors (%d E2BIG); %d failures"
      % (len(lines), counts["conns"], counts["ok"], counts["error"],
         counts["e2big"], len(failures)))
print("answered ok: %s" % ", ".join("%s %d" % kv for kv in sorted(ok_by_cmd.items())))
for f in failures[:30]:
    print("  " + f)
sys.exit(1 if failures else 0)
PY
echo "storm took $((SECONDS - start)) s"

assert_ok tb_ctlj dut version
assert_eq "show config after the storm" "$config_before" "$(tb_do dut show config | jq -r .data)"
assert_eq "port show after the storm" "$show_before" "$(tb_do dut port show)"
assert_eq "files in the daemon's directory after the storm" "$files_before" "$(ls -A "$TB_RUN")"
