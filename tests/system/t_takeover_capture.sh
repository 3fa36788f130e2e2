#!/usr/bin/env bash
# Hot restart during a capture: captures are runtime state of the process
# that runs them (not in `show config`), so the handover ends them cleanly,
# as `capture stop` does (what was copied written, the file closed), and
# says so in both daemons' logs; the successor starts with none and can
# capture the same ports again. Forwarding loses nothing meanwhile.
#
# gen (10.88.0.1) --veth-- dut (xconnect p0 <-> p1, path xsk) --veth--
# sink (10.88.0.2). Numbered UDP datagrams (tests/lib/seqflow.c), RATE pps
# (5k: a 2048-slot RX ring lasts 400 ms, room for a busy shared host)
# in 4 flows gen -> sink and RATE/10 in 1 flow back, for SECS seconds; a
# file capture on p0 (dir both) and a streamed one (`ferryctl capture p1
# -w FILE`) running; a takeover in the middle. Checked: every datagram
# arrived once, in order; the rings were adopted; the old ferryd exited 0;
# both logs name the ended captures; the file capture is readable by
# `tcpdump -r` and holds, per flow, the datagrams 0..k each once and in
# order (nothing lost or doubled up to the handover); the streaming
# ferryctl ended by itself with a readable file; the successor shows no
# capture, and a new one on p0 there gets every frame of a second burst.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/takeover.sh
. "$(dirname "$0")/../lib/takeover.sh"

RATE=${RATE:-5000}
SECS=${SECS:-4}
SEQFLOW=$(tb__abs "${SEQFLOW:-build/tests/seqflow}")
[[ -x $SEQFLOW ]] || tb_die "no seqflow at $SEQFLOW (build first)"
command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_std3
tko_xconnect_bed

# cap_seq FILE PORT: the seqflow datagrams to UDP PORT in FILE, checked
# per flow to be 0..k, each once, in order; prints how many.
cap_seq() {
	tcpdump -nn -r "$1" -xx "udp dst port $2" 2>/dev/null | "$PYTHON" -c '
import re, struct, sys
frames, cur = [], None
for line in sys.stdin:
    m = re.match(r"^\s+0x[0-9a-f]+:\s+(.*)$", line)
    if m and cur is not None:
        cur += bytes.fromhex(m.group(1).split("  ")[0].replace(" ", ""))
        continue
    cur = bytearray()
    frames.append(cur)
nxt = {}
for i, f in enumerate(frames):
    magic, flow, seq = struct.unpack_from("<IIQ", f, 42)
    if magic != 0x73657166:
        sys.exit("frame %d: not a seqflow datagram" % i)
    if seq != nxt.get(flow, 0):
        sys.exit("frame %d: flow %d seq %d, expected %d" % (i, flow, seq, nxt.get(flow, 0)))
    nxt[flow] = seq + 1
print(len(frames))
'
}

# seq_run TAG SECS: one measured run (seqflow both ways) in the
# background; seq_check TAG waits for it and asserts exactly once.
seq_run() {
	tko_streams "$1" "$2"
}
seq_check() {
	local tag=$1 d f s
	tko_streams_wait
	# Where a loss would be: the RX rings (ring_full: the worker was
	# off its CPU longer than a ring lasts) or elsewhere.
	echo "$tag: dut $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, tx: .totals.tx_packets, ring_full: .totals.rx_ring_full, fill_empty: .totals.rx_fill_ring_empty_descs}]')"
	for d in b a; do
		f=$TB_RUN/recv_$d.$tag
		s=$(jq .sent "$TB_RUN/send_a.$tag")
		[[ $d == a ]] && s=$(jq .sent "$TB_RUN/send_b.$tag")
		echo "$tag ($d): sent $s, $(cat "$f")"
		tko_exactly_once "$tag ($d)" "$s" "$f"
	done
}

# ---- the captures, traffic, the takeover in the middle ----
file=$TB_RUN/c1.pcapng
stream=$TB_RUN/stream.pcapng
tb_do dut capture start c1 port p0 dir both file "$file" >/dev/null
"$FERRYCTL" -s "$(tb_sock dut)" capture p1 -w "$stream" 2>"$TB_RUN/stream.err" &
pid_st=$!
tb_track $pid_st
for ((i = 0; i < 50; i++)); do
	[[ $(tb_ctlj dut capture show | jq '.data | length') == 2 ]] && break
	sleep 0.1
done
assert_json '.data | length' 2 "$(tb_do dut capture show)"

seq_run round "$SECS"
sleep "$(echo "$SECS / 2" | bc -l)"
old_pid=${TB_PID_OF[dut]}
show_before=$(tb_do dut capture show)
tb_takeover dut1
tb_takeover_wait dut1
assert_eq "old ferryd exit code" 0 "$TB_EXIT_RC"
TB_PID_OF[dut]=${TB_PID_OF[dut1]}
seq_check round
tko_adopted takeover "$TB_RUN/dut1.log" "$old_pid"
echo "captures before the takeover: $(jq -c '[.data[] | {name, port, dir, written}]' <<<"$show_before")"

# Said, by name, on both sides.
grep -h "capture" "$TB_RUN/dut.log" "$TB_RUN/dut1.log" | grep -i "hot restart\|handover\|takeover" >&2 || true
assert_match "old log: c1 ended by the handover" "capture c1 .*ended by the hot restart" "$(cat "$TB_RUN/dut.log")"
assert_match "new log: c1 not carried on" "capture c1 on p0 .*not carried on" "$(cat "$TB_RUN/dut1.log")"
assert_json '.data | length' 0 "$(tb_do dut capture show)"

# The file: whole, readable, nothing lost or doubled up to the handover.
tcpdump -nn -r "$file" >/dev/null 2>"$TB_RUN/tcpdump.err" || tb_die "tcpdump -r $file: $(cat "$TB_RUN/tcpdump.err")"
assert_eq "tcpdump -r: no complaint" "" "$(grep -iv '^reading from file' "$TB_RUN/tcpdump.err" || true)"
n_fwd=$(cap_seq "$file" 7000) || tb_die "capture file c1 (p0 rx): $n_fwd"
n_back=$(cap_seq "$file" 7001) || tb_die "capture file c1 (p0 tx): $n_back"
echo "c1: $n_fwd datagrams gen->sink (p0 rx), $n_back sink->gen (p0 tx)"
assert_ge "c1 captured frames before the handover" $((RATE / 2)) "$n_fwd"
assert_ge "c1 captured the way back too" 1 "$n_back"
# ... and all of what the old ferryd said it wrote (nothing else crossed).
w=$(sed -n 's/.*capture c1 on p0: ended by the hot restart: \([0-9]*\) frame.*/\1/p' "$TB_RUN/dut.log")
assert_eq "c1: frames in the file, as the old ferryd wrote them" "$w" "$((n_fwd + n_back))"

# The stream: ferryctl saw the end and left by itself.
for ((i = 0; i < 50; i++)); do
	kill -0 "$pid_st" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$pid_st" 2>/dev/null && tb_die "the streaming ferryctl is still running after the takeover"
rc=0
wait "$pid_st" || rc=$?
echo "streaming ferryctl: exit $rc, stderr: $(cat "$TB_RUN/stream.err")"
n_st=$(cap_seq "$stream" 7001) || tb_die "streamed capture (p1 rx): $n_st"
echo "stream: $n_st datagrams sink->gen (p1 rx)"
assert_ge "streamed frames before the handover" 1 "$n_st"
w=$(sed -n 's/.*capture \(stream-[0-9]*\) on p1: ended by the hot restart: \([0-9]*\) frame.*/\2/p' "$TB_RUN/dut.log")
assert_eq "stream: frames received, as the old ferryd wrote them" "$w" "$n_st"

# ---- the successor captures the same port again ----
file2=$TB_RUN/c2.pcapng
tb_do dut capture start c2 port p0 filter "udp dst port 7000" file "$file2" >/dev/null
seq_run again 1
seq_check again
tb_wait_quiet dut
tb_do dut capture stop c2 >/dev/null
n2=$(cap_seq "$file2" 7000) || tb_die "capture file c2: $n2"
assert_eq "c2 on the successor: every datagram" "$(jq .sent "$TB_RUN/send_a.again")" "$n2"

tb_do dut shutdown >/dev/null
tb_wait_exit dut 10 || tb_die "the new ferryd did not exit on shutdown"
assert_eq "new ferryd exit code" 0 "$TB_EXIT_RC"
echo "PASS t_takeover_capture ($n_fwd + $n_back frames in c1, $n_st streamed, c2 $n2)"
