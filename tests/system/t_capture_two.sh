#!/usr/bin/env bash
# Two captures on one port and direction at once, as a new user would:
# `capture start c1 ... file F` and `ferryctl capture p0 ... -w -` on an
# xconnect's p0 rx. One capture per port and direction (design.md,
# Capture): the second is refused at once with an error that names the
# first, ferryctl exits non-zero and writes nothing to stdout; the first
# gets every one of the 1000 frames. And the other way round: a stream
# running, `capture start` on the same port is refused naming it.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/capture_check.sh
. "$(dirname "$0")/../lib/capture_check.sh"

command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_std3
tb_gen_up
tb_dut_xconnect

want="udp dst port 9" # the generator's frames
f="$TB_RUN/c1.pcapng" s="$TB_RUN/s.pcapng" serr="$TB_RUN/s.err"
tb_do dut capture start c1 port p0 dir rx filter "$want" file "$f" >/dev/null
rc=0
timeout -s INT 20 "$FERRYCTL" -s "$TB_RUN/dut.sock" capture p0 filter "$want" \
	-w - >"$s" 2>"$serr" || rc=$?
echo "ferryctl capture -w - -> $rc: $(cat "$serr")"
((rc != 0 && rc != 124)) || tb_die "the second capture was not refused (exit $rc)"
grep -q "already captured (rx) by capture c1, output $f" "$serr" ||
	tb_die "the refusal does not name c1 and its file: $(cat "$serr")"
assert_eq "nothing on the refused stream's stdout" 0 "$(stat -c %s "$s")"
assert_json '.data | length' 1 "$(tb_do dut capture show)"
# tx on the same port is another direction: allowed.
tb_do dut capture start c2 port p0 dir tx file "$TB_RUN/c2.pcapng" >/dev/null
tb_do dut capture stop c2 >/dev/null
tb_do gen gen start g0 count 1000 rate 20000 size 128 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
cap_show_until '.data[0].written >= 1000' >/dev/null
tb_do dut capture stop c1 >/dev/null
assert_eq "c1: every frame" 1000 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"
assert_eq "p1 tx" 1000 "$(tb_stat dut p1 tx_packets)"

# The stream first, then capture start: refused, naming the stream.
"$FERRYCTL" -s "$TB_RUN/dut.sock" capture p0 filter "$want" -w "$s" &
spid=$!
cap_show_until '.data | length == 1' >/dev/null
name=$(tb_do dut capture show | jq -r '.data[0].name')
rc=0
out=$(tb_ctl dut capture start c3 port p0 dir both file "$TB_RUN/c3.pcapng" 2>&1) || rc=$?
echo "capture start c3 -> $rc: $out"
((rc != 0)) || tb_die "capture start beside a stream was accepted"
[[ $out == *"already captured (rx) by capture $name, output stream"* ]] ||
	tb_die "the refusal does not name the stream: $out"
[[ ! -e $TB_RUN/c3.pcapng ]] || tb_die "a refused capture left a file"
tb_do gen gen start g0 count 1000 rate 20000 size 128 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
cap_show_until '.data[0].written >= 1000' >/dev/null
kill -INT "$spid"
wait "$spid" || true
cap_show_until '.data | length == 0' >/dev/null
assert_eq "the stream: every frame" 1000 "$(tcpdump -nn -r "$s" 2>/dev/null | wc -l)"
tb_log "ok"
