#!/usr/bin/env bash
# Hot restart with jumbo frames in flight: at MTU 9000 a frame is a chain
# of UMEM frames (multi-buffer, XDP_PKT_CONTD), and the handover parks the
# old workers, hands the rings over and lets the new ones go on, with
# chains in the RX rings, in the TX rings and, for a chain the old worker's
# burst ended inside, handed back to its RX ring. Every chain must cross
# once and whole.
#
# gen (10.88.0.1) --veth-- dut (xconnect p0 <-> p1, path xsk) --veth--
# sink (10.88.0.2), every link at MTU 9000. Numbered UDP datagrams
# (tests/lib/seqflow.c) of SIZE bytes (8000 by default: 8042-byte frames,
# five descriptors) at RATE pps (1k: the RX ring's 2048 descriptors hold
# ~400 such frames, 400 ms) in 4 flows gen -> sink, and of 8972 bytes
# (the whole MTU: 9014-byte frames, six descriptors) at RATE/10 back, for
# SECS seconds, ROUNDS takeovers in a row, each in the middle of a run.
# Checked per round: every datagram arrived once, in order, with its
# length and every byte as sent (seqflow recv -s: "bad" 0); the rings
# were adopted; the old ferryd exited 0; the counters carried on (p0 rx
# and p1 tx grew by what was sent, not reset, not doubled, and
# tx_bytes by the whole frames); no chain dropped (chain_* drops 0); once
# quiet every UMEM frame accounted for (umem_consistent, none elsewhere).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/takeover.sh
. "$(dirname "$0")/../lib/takeover.sh"

ROUNDS=${ROUNDS:-2}
RATE=${RATE:-1000}
SECS=${SECS:-4}
SIZE=${SIZE:-8000}
BACK_SIZE=8972
SEQFLOW=$(tb__abs "${SEQFLOW:-build/tests/seqflow}")
[[ -x $SEQFLOW ]] || tb_die "no seqflow at $SEQFLOW (build first)"

tb_init
tb_std3
tb_std3_mtu 9000
tko_xconnect_bed
# A jumbo ping through the dut, not fragmented: chains cross at all.
ip netns exec "$nsA" ping -c 1 -W 2 -M "do" -s 8972 "$B_IP" >/dev/null ||
	tb_die "gen cannot reach sink through ferry with 9000-byte packets"

drops_json() {
	tb_ctlj dut stats | jq -c '[.data.ports[] | {name, drops: (.drops // {} | with_entries(select(.value != 0)))}]'
}
umem_check() {
	local w
	w=$(tb_ctlj dut worker show | jq -c '.data[0] | {umem_frames, umem_free, umem_in_rings, umem_elsewhere, umem_consistent, umem_frames_lost}')
	echo "$1: worker 0 UMEM $w"
	assert_json .umem_consistent true "$w"
	assert_json .umem_elsewhere 0 "$w"
	assert_json .umem_frames_lost 0 "$w"
}
chain_drops() {
	tb_ctlj dut stats | jq '[.data.ports[].drops // {} | to_entries[] | select(.key | startswith("chain")) | .value] | add // 0'
}

for ((r = 1; r <= ROUNDS; r++)); do
	rx0=$(tb_stat dut p0 rx_packets)
	tx0=$(tb_stat dut p1 tx_packets)
	txb0=$(tb_stat dut p1 tx_bytes)
	tko_streams "$r" "$SECS" "$SIZE" "$BACK_SIZE"
	sleep "$(echo "$SECS / 2" | bc -l)"
	old_pid=${TB_PID_OF[dut]}
	tb_takeover "dut$r"
	tb_takeover_wait "dut$r"
	assert_eq "round $r: old ferryd exit code" 0 "$TB_EXIT_RC"
	TB_PID_OF[dut]=${TB_PID_OF[dut$r]}
	tko_streams_wait
	tko_adopted "round $r" "$TB_RUN/dut$r.log" "$old_pid"
	sent_f=$(jq .sent "$TB_RUN/send_a.$r")
	sent_b=$(jq .sent "$TB_RUN/send_b.$r")
	echo "round $r: gen->sink ($SIZE bytes) sent $sent_f, $(cat "$TB_RUN/recv_b.$r")"
	echo "round $r: sink->gen ($BACK_SIZE bytes) sent $sent_b, $(cat "$TB_RUN/recv_a.$r")"
	echo "round $r: dut $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, tx: .totals.tx_packets, ring_full: .totals.rx_ring_full, fill_empty: .totals.rx_fill_ring_empty_descs}]') drops $(drops_json)"
	for d in b a; do
		f=$TB_RUN/recv_$d.$r
		s=$sent_f
		[[ $d == a ]] && s=$sent_b
		tko_exactly_once "round $r ($d)" "$s" "$f" bad
	done
	tb_wait_quiet dut
	assert_eq "round $r: chains dropped" 0 "$(chain_drops)"
	fwd_rx=$(($(tb_stat dut p0 rx_packets) - rx0))
	fwd_tx=$(($(tb_stat dut p1 tx_packets) - tx0))
	fwd_txb=$(($(tb_stat dut p1 tx_bytes) - txb0))
	assert_ge "round $r: p0 rx_packets carried on" "$sent_f" "$fwd_rx"
	assert_le "round $r: p0 rx_packets, no double count" $((sent_f + 20)) "$fwd_rx"
	assert_ge "round $r: p1 tx_packets carried on" "$sent_f" "$fwd_tx"
	assert_le "round $r: p1 tx_packets, no double count" $((sent_f + 20)) "$fwd_tx"
	# Whole frames counted: 14 + 20 + 8 + SIZE bytes each (and the odd ARP).
	assert_ge "round $r: p1 tx_bytes, whole frames" $((sent_f * (SIZE + 42))) "$fwd_txb"
	assert_le "round $r: p1 tx_bytes, no more" $((sent_f * (SIZE + 42) + 20 * 64)) "$fwd_txb"
	umem_check "round $r"
done

tb_do dut shutdown >/dev/null
tb_wait_exit dut 10 || tb_die "the last ferryd did not exit on shutdown"
assert_eq "last ferryd exit code" 0 "$TB_EXIT_RC"
echo "PASS t_takeover_jumbo ($ROUNDS rounds, $SIZE/$BACK_SIZE-byte datagrams)"
