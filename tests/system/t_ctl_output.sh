#!/usr/bin/env bash
# What a person reads: with a realistic configuration (a generator, an
# xconnect over two-queue ports, a drop sink, a steering rule, a proxy and
# a sockmap attachment, traffic through it all), every show command's human
# form has no line over 120 columns and no JSON in it; `help` is one line
# per command of at most 100 columns and `help CMD` is wrapped to 80 in a
# pipe; -j parses as JSON and carries the zero counters the human form
# leaves out, which -a shows; drop reasons appear by name with their count
# and counters with thousands separated.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

# Widest line of stdin in terminal columns (UTF-8).
widest() {
	"$PYTHON" -c 'import sys; print(max([len(l.rstrip("\n")) for l in sys.stdin] or [0]))'
}

# "1234567" -> "1,234,567", as the human form writes counters.
thousands() {
	sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"
}

# check NAME MAXCOLS ARGS...: the human form of ferryctl ARGS on daemon NAME
# fits MAXCOLS, holds no JSON, and -j of the same command is JSON.
check() {
	local name=$1 max=$2 out json
	shift 2
	out=$(tb_ctl "$name" "$@")
	echo "--- ferryctl $*"
	printf '%s\n' "$out"
	assert_le "ferryctl $*: widest line" "$max" "$(widest <<<"$out")"
	assert_eq "ferryctl $*: no JSON object" 0 "$(grep -c '[{}]' <<<"$out" || true)"
	# help and show config are in the command grammar: [optional], "a b"
	if [[ $* != *help* && $* != *"show config"* ]]; then
		assert_eq "ferryctl $*: no JSON string" 0 "$(grep -c '"' <<<"$out" || true)"
		assert_eq "ferryctl $*: no JSON list" 0 "$(grep -c '\[' <<<"$out" || true)"
	fi
	json=$(tb_ctlj "$name" "$@")
	assert_json .ok true "$json"
}

tb_init
tb_cgroup acc
CG=$TB_CGROUP
tb_std3 2
tb_gen_up
tb_dut_xconnect
tb_sink_drop
tb_do dut steer add udp9000 port p0 match proto udp dport 9000 to cpus 0 qsize 512 >/dev/null
# A match longer than acl show's column (wrapped there); its config line
# still fits 120 columns.
tb_do dut acl add v6 port p0 match proto tcp src 2001:db8:1234::/48 dst 2001:db8:ffff::/48 \
	dport 8000-8999 action drop >/dev/null
tb_do dut proxy add v4 listen 127.0.0.1:8000 backend 127.0.0.1:9000 >/dev/null
tb_do dut sockmap attach cgroup "$CG" ports 7000-7010 >/dev/null
tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" rate 20000 count 20000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet 20 dut sink

# ---- every view: width, no JSON, -j is JSON ----
check dut 100 help
check dut 80 help port add
check dut 100 help port
cmds=("port show" "stats" "worker show" "steer show" "acl show" "proxy show" "sockmap show"
	"version" "host check" "show config")
# `workers` alone shows the workers where the daemon answers it
if [[ $(tb_ctlj dut workers | jq -r .ok) == true ]]; then
	cmds+=("workers")
fi
for cmd in "${cmds[@]}"; do
	# shellcheck disable=SC2086 # the words of the command
	check dut 120 $cmd
	# shellcheck disable=SC2086
	check dut 120 -a $cmd
done
check gen 120 stats
check sink 120 stats
check dut 120 stats port p0

# ---- help: one line per command ----
ncmds=$(tb_ctlj dut help | jq '.data | length')
assert_eq "help: a line per command and one to say 'help COMMAND'" \
	$((ncmds + 1)) "$(tb_ctl dut help | wc -l)"
assert_match "help port add: the usage" '^usage: port add NAME dev IFNAME' \
	"$(tb_ctl dut help port add)"

# ---- stats: counters the human form leaves out are in -j and with -a ----
j=$(tb_ctlj dut stats)
human=$(tb_ctl dut stats)
all=$(tb_ctl dut -a stats)
assert_json '.data.ports[0].totals.tx_invalid_descs' 0 "$j"
assert_eq "a zero counter is left out" 0 "$(grep -c 'tx_invalid_descs' <<<"$human" || true)"
assert_match "and shown with -a" 'tx_invalid_descs 0' "$all"
# -a leaves out nothing -j has: every counter of a port's totals by name
for key in $(jq -r '.data.ports[0].totals | keys[] | select(. != "drop_reasons")' <<<"$j") \
	$(jq -r '.data.ports[0].totals.drop_reasons | keys[]' <<<"$j") \
	$(jq -r '.data.ports[0].xdp | keys[]' <<<"$j"); do
	case $key in
	rx_packets | tx_packets | rx_bytes | tx_bytes | rx_pps | tx_pps | drops) ;; # the RX/TX lines
	*) assert_match "-a stats shows $key" "$key" "$all" >/dev/null ;;
	esac
done
# the totals, thousands separated, on the RX line of p0's block
rx=$(jq -r '.data.ports[] | select(.name == "p0") | .totals.rx_packets' <<<"$j")
assert_ge "p0 received generated frames" 1 "$rx"
assert_match "p0 RX line" "^    RX +$(thousands "$rx") " \
	"$(awk '/^p0 /{f=1} /^p1 /{f=0} f' <<<"$human")"
# two queues: a sub-table with a row each
assert_match "queue sub-table" '^ +queue +worker +rx_packets' "$human"
# drop reasons by name with their count: the sink drops everything
sj=$(tb_ctlj sink stats)
drops=$(jq -r '.data.ports[0].totals.drop_reasons.app_drop' <<<"$sj")
assert_ge "the sink dropped" 1 "$drops"
assert_match "sink: dropped by app_drop" "dropped $(thousands "$drops"): app_drop $(thousands "$drops")" \
	"$(tb_ctl sink stats)"

# ---- port show: settings a line each; events only when not zero ----
ps=$(tb_ctl dut port show p0)
assert_match "port show: name, interface, state" "^p0  $D0  up" "$ps"
assert_match "port show: app" "app xconnect p1" "$ps"
assert_match "port show: mtu" "mtu 1500" "$ps"
assert_json '.data[0].events.link_down' 0 "$(tb_ctlj dut port show p0)"
assert_eq "port show: zero events left out" 0 "$(grep -c link_down <<<"$ps" || true)"
assert_match "port show -a: zero events shown" "link_down 0" \
	"$(tb_ctl dut -a port show p0)"

# ---- the other views ----
assert_match "steer show" '^udp9000  port p0  match proto udp dport 9000  to cpus 0' \
	"$(tb_ctl dut steer show)"
assert_match "proxy show" '^v4  listen 127.0.0.1:8000  backend 127.0.0.1:9000' \
	"$(tb_ctl dut proxy show)"
assert_match "sockmap show" '^attached: yes' "$(tb_ctl dut sockmap show)"
assert_match "worker show" '^worker 0  cpu 1  idle busy  sockets p0/0' "$(tb_ctl dut worker show)"

# ---- stats --watch: the same layout, in a file folded to 120 ----
out=$("$FERRYCTL" -s "$(tb_sock dut)" stats --watch 0.2 --count 2)
assert_le "stats --watch: widest line" 120 "$(widest <<<"$out")"
assert_match "stats --watch: p0's block" '^p0  ' "$out"
assert_eq "stats --watch: no JSON" 0 "$(grep -c '[][{}"]' <<<"$out" || true)"

# ---- on a terminal: folded to its width; --watch cut to its size, and says so ----
# in_pty ROWS COLS ARGS...: ferryctl's output on a terminal of that size.
in_pty() {
	"$PYTHON" - "$FERRYCTL" "$(tb_sock dut)" "$@" <<'PY'
import fcntl, os, pty, select, struct, sys, termios, time

ferryctl, sock, rows, cols = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pid, fd = pty.fork()
if pid == 0:
    # The size is set before ferryctl runs: wait for the parent's go.
    os.read(0, 1)
    os.execv(ferryctl, [ferryctl, "-s", sock] + sys.argv[5:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
os.write(fd, b"\n")
out = bytearray()
end = time.monotonic() + 10
while time.monotonic() < end:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if not ready:
        continue
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out.extend(chunk)
os.waitpid(pid, 0)
text = out.decode("utf-8", "replace").replace("\r", "")
text = text.split("\x1b[2J")[-1]
for esc in ("\x1b[?25l", "\x1b[?25h", "\x1b[H"):
    text = text.replace(esc, "")
sys.stdout.write(text.lstrip("\n"))
PY
}
narrow=$(in_pty 40 70 port show)
printf '%s\n' "$narrow"
assert_le "port show on 70 columns: widest line" 70 "$(widest <<<"$narrow")"
assert_match "port show on 70 columns: the settings still there" "xdp-restore off" "$narrow"
small=$(in_pty 12 60 stats --watch 0.2 --count 1)
printf '%s\n' "$small"
assert_le "stats --watch on 60x12: widest line" 60 "$(widest <<<"$small")"
assert_le "stats --watch on 60x12: lines" 12 "$(wc -l <<<"$small")"
assert_match "stats --watch on 60x12: says what it cut" 'terminal too small: [0-9]+ lines hidden, [0-9]+ cut' "$small"
