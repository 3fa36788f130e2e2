#!/usr/bin/env bash
# `ferryctl stats --watch` against a daemon whose port drops generated
# traffic: in a pseudo terminal it redraws with ANSI escapes and leaves with
# exit 0 on Ctrl-C, cursor shown again; into a file it prints --count frames
# separated by blank lines and no escapes; SIGTERM ends it with 0, the
# daemon going away with 1 and a message.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_ns gen
tb_ns dut
tb_veth gen g0 dut d0
tb_ferryd gen gen
tb_do gen workers 0 idle poll >/dev/null
tb_do gen port add g0 dev "$(tb_ifname g0)" >/dev/null
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add d0 dev "$(tb_ifname d0)" >/dev/null
tb_do dut drop d0 >/dev/null
tb_do gen gen start g0 rate 2000 >/dev/null

# Traffic first, so that every frame below has drops to show.
for ((i = 0; i < 50; i++)); do
	(($(tb_stat dut d0 drops) > 0)) && break
	sleep 0.2
done
assert_ge "dut d0 drops before watching" 1 "$(tb_stat dut d0 drops)"
sock=$(tb_sock dut)

# ---- in a pseudo terminal, ended by Ctrl-C ----
pty_raw="$TB_RUN/watch-pty.out"
pty_json=$("$PYTHON" - "$FERRYCTL" "$sock" "$pty_raw" <<'PY'
import json, os, pty, select, sys, time

ferryctl, sock, raw_path = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execv(ferryctl, [ferryctl, "-s", sock, "stats", "--watch", "0.2"])

out = bytearray()

def read_for(seconds):
    """Reads what the child writes for that long; False at EOF."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        out.extend(chunk)
    return True

read_for(1.5)
os.write(fd, b"\x03")  # Ctrl-C: the line discipline sends SIGINT
read_for(5.0)
status = None
for _ in range(50):
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = st
        break
    time.sleep(0.1)
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
with open(raw_path, "wb") as f:
    f.write(out)
text = out.decode("utf-8", "replace")
last = text.rsplit("\x1b[2J", 1)[-1]
print(json.dumps({
    "exited": status is not None,
    "exit_code": os.waitstatus_to_exitcode(status) if status is not None else None,
    "clears": text.count("\x1b[H\x1b[2J"),
    "header": ("ferry stats  " + sock) in text,
    "port_row": any(l.startswith("d0  ") and "queue 0 on worker 0" in l
                    for l in last.splitlines()),
    "cursor_hidden": "\x1b[?25l" in text,
    "cursor_shown_last": text.rfind("\x1b[?25h") > text.rfind("\x1b[?25l"),
}))
PY
)
echo "pty: $pty_json"
echo "--- pty output, last frame:"
cat -v "$pty_raw" | tail -n 12
assert_json .exited true "$pty_json"
assert_json .exit_code 0 "$pty_json"
assert_json '.clears >= 3' true "$pty_json"
assert_json .header true "$pty_json"
assert_json .port_row true "$pty_json"
assert_json .cursor_hidden true "$pty_json"
assert_json .cursor_shown_last true "$pty_json"

# ---- not a terminal: --count frames, blank lines between them ----
out="$TB_RUN/watch-count.out"
rc=0
"$FERRYCTL" -s "$sock" stats --watch 0.2 --count 3 >"$out" || rc=$?
assert_eq "--count 3 exit status" 0 "$rc"
assert_eq "frames printed" 3 "$(grep -c '^ferry stats  ' "$out")"
assert_eq "blank line before each later frame" 2 \
	"$(grep -B1 '^ferry stats  ' "$out" | grep -c '^$')"
assert_eq "escape sequences without a terminal" 0 "$(grep -c $'\e' "$out" || true)"
assert_match "port block" '^d0  .* queue 0 on worker 0' "$(cat "$out")"
assert_match "drop reason in the last frame" \
	'dropped [0-9,]+: app_drop [1-9]' "$(awk '/^ferry stats  /{f=""} {f=f $0 "\n"} END{printf "%s", f}' "$out")"

# Words other than --watch/--count go to the daemon unchanged.
rc=0
"$FERRYCTL" -s "$sock" stats port d0 --watch 0.2 --count 1 >"$out" || rc=$?
assert_eq "stats port d0 --watch exit status" 0 "$rc"
assert_match "stats port d0: port block" '^d0  .* queue 0 on worker 0' "$(cat "$out")"
rc=0
"$FERRYCTL" -s "$sock" stats port nosuch --watch --count 1 >"$out" 2>&1 || rc=$?
assert_eq "watching a port that does not exist: exit status" 1 "$rc"
assert_match "and says why" 'ENOENT' "$(cat "$out")"
rc=0
"$FERRYCTL" -s "$sock" stats --watch 0.1 >"$out" 2>&1 || rc=$?
assert_eq "interval below 0.2 s: exit status" 2 "$rc"

# ---- SIGTERM: exit 0 ----
"$FERRYCTL" -s "$sock" stats --watch 0.2 >"$out" 2>&1 &
wpid=$!
tb_track "$wpid"
sleep 0.7
kill -TERM "$wpid"
rc=0
wait "$wpid" || rc=$?
assert_eq "exit status after SIGTERM" 0 "$rc"

# ---- the daemon goes away: exit 1 with a message ----
"$FERRYCTL" -s "$sock" stats --watch 0.2 >"$out" 2>"$out.err" &
wpid=$!
tb_track "$wpid"
sleep 0.7
tb_do dut shutdown >/dev/null
rc=0
wait "$wpid" || rc=$?
assert_eq "exit status when the daemon exits" 1 "$rc"
assert_match "message when the daemon exits" 'closed the connection' "$(cat "$out.err")"
