#!/usr/bin/env bash
# Hot restart during a generator run. A generator is runtime state (not in
# `show config`): the old ferryd ends it at the handover (its frames were
# its run's), the successor starts with none on that port and answers
# `gen stop` with "no generator", and a new `gen start` there runs as on
# any port. Forwarding on the other ports loses nothing meanwhile.
#
# gen (10.88.0.1) --veth-- dut (xconnect p0 <-> p1, path xsk) --veth--
# sink (10.88.0.2), and dut:d2 (port p2, no app) --veth-- tap: a host that
# counts what arrives (its interface counters). Numbered UDP datagrams
# (tests/lib/seqflow.c) gen <-> sink, and ferry's generator out of p2 at
# GEN_RATE pps, a takeover in the middle; one round per engine of ENGINES
# (xsk: its frames in the worker's UMEM and TX ring when the rings are
# handed over; live: BPF_PROG_RUN from a thread of the old process), each
# new ferryd taken over by the next. Checked: every datagram crossed once, in order;
# the rings were adopted; the old ferryd exited 0; nothing more left p2
# once it had (the old generator is gone, the successor runs none);
# what tap received is what p2's tx counter says was sent (carried on
# across the takeover, not reset, not doubled); the UMEM's frames all
# accounted for (umem_consistent, none elsewhere) once quiet; `stats` shows
# no generator, `gen stop p2` is refused with ENOENT, `gen show` with
# EINVAL (no such command); a new `gen start p2 count N` in the successor
# sends N frames, all of them arrive.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/takeover.sh
. "$(dirname "$0")/../lib/takeover.sh"

RATE=${RATE:-5000}
GEN_RATE=${GEN_RATE:-2000}
ENGINES=${ENGINES:-xsk live}
SECS=${SECS:-4}
SEQFLOW=$(tb__abs "${SEQFLOW:-build/tests/seqflow}")
[[ -x $SEQFLOW ]] || tb_die "no seqflow at $SEQFLOW (build first)"

tb_init
tb_std3
tb_ns tap
tb_veth dut d2 tap t0
D2=$(tb_ifname d2) T0=$(tb_ifname t0)
# The live engine's frames are XDP redirects: into a veth they arrive only
# if its peer has GRO (or XDP) on.
ip netns exec "$(tb_nsname tap)" ethtool -K "$T0" gro on >/dev/null
tko_xconnect_bed
tb_do dut port add p2 dev "$D2" >/dev/null

# Frames tap's interface received.
tap_rx() {
	ip -n "$(tb_nsname tap)" -j -s link show dev "$T0" | jq '.[0].stats64.rx.packets'
}

umem_check() {
	local w
	tb_wait_quiet dut
	w=$(tb_ctlj dut worker show | jq -c '.data[0] | {umem_frames, umem_free, umem_in_rings, umem_elsewhere, umem_consistent, umem_frames_lost}')
	echo "$1: worker 0 UMEM $w"
	assert_json .umem_consistent true "$w"
	assert_json .umem_elsewhere 0 "$w"
	assert_json .umem_frames_lost 0 "$w"
}

r=0
old_log=$TB_RUN/dut.log
for ENGINE in $ENGINES; do
	r=$((r + 1))
	echo "---- round $r: $ENGINE engine"
	tap0=$(tap_rx)
	p2_tx0=$(tb_stat dut p2 tx_packets)
	tb_do dut gen start p2 rate "$GEN_RATE" size 256 flows 4 engine "$ENGINE" >/dev/null
	tko_streams "$r" "$SECS"
	sleep "$(echo "$SECS / 2" | bc -l)"
	before=$(tb_ctlj dut stats | jq -c '.data.gen')
	echo "generator before the takeover: $before"
	assert_json '.[0].running' true "$before"
	old_pid=${TB_PID_OF[dut]}
	t_ho=$("$PYTHON" -c 'import time; print(time.monotonic_ns())')
	tb_takeover "dut$r"
	tb_takeover_wait "dut$r"
	assert_eq "$ENGINE: old ferryd exit code" 0 "$TB_EXIT_RC"
	TB_PID_OF[dut]=${TB_PID_OF[dut$r]}
	tko_streams_wait
	tko_adopted "$ENGINE" "$TB_RUN/dut$r.log" "$old_pid"

	# ---- forwarding on p0/p1: nothing lost ----
	echo "dut $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, tx: .totals.tx_packets, ring_full: .totals.rx_ring_full, fill_empty: .totals.rx_fill_ring_empty_descs}]')"
	grep -h "takeover: \(rings adopted\|forwarding again\)" "$TB_RUN/dut$r.log" >&2
	for d in b a; do
		f=$TB_RUN/recv_$d.$r
		s=$(jq .sent "$TB_RUN/send_a.$r")
		[[ $d == a ]] && s=$(jq .sent "$TB_RUN/send_b.$r")
		echo "($d): sent $s, $(cat "$f"); the longest gap began $((($(jq .max_gap_at_ns "$f") - t_ho) / 1000000)) ms after the takeover started"
		tko_exactly_once "$ENGINE: ($d)" "$s" "$f"
	done

	# ---- the generator: gone with the old ferryd, p2 consistent ----
	umem_check "after the takeover"
	sent_old=$(($(tap_rx) - tap0))
	sleep 1
	assert_eq "$ENGINE: nothing leaves p2 after the takeover" "$sent_old" "$(($(tap_rx) - tap0))"
	# A second's worth at least was sent before the takeover (half the run).
	assert_ge "$ENGINE: the old generator's frames arrived" "$GEN_RATE" "$sent_old"
	# Every frame the old generator counted arrived, once: those still in
	# p2's TX ring at the park were sent by the successor's worker.
	old_frames=$(sed -n 's/.*gen p2: ended by the hot restart after \([0-9]*\) frames.*/\1/p' "$old_log")
	echo "the old ferryd: $(grep 'gen p2: ended' "$old_log")"
	assert_eq "$ENGINE: frames tap received = the old generator's count" "$old_frames" "$sent_old"
	p2_tx=$(($(tb_stat dut p2 tx_packets) - p2_tx0))
	echo "p2: tx_packets $p2_tx in the successor, tap received $sent_old; $(tb_ctlj dut stats | jq -c '[.data.ports[] | select(.name == "p2") | .totals | {tx_packets, tx_bytes, drops}]')"
	if [[ $ENGINE == xsk ]]; then
		# Sent from the worker's TX ring: counted there, carried on.
		assert_eq "$ENGINE: p2 tx_packets (carried on) = frames tap received" "$sent_old" "$p2_tx"
	fi
	assert_json '.data.gen | length' 0 "$(tb_ctlj dut stats)"
	assert_fail tb_ctlj dut gen stop p2
	assert_match "$ENGINE: gen stop: no generator" "ENOENT.*no generator on p2" "$(tb_ctlj dut gen stop p2 2>&1 || true)"
	assert_fail tb_ctlj dut gen show
	assert_match "$ENGINE: gen show: EINVAL" "EINVAL" "$(tb_ctlj dut gen show 2>&1 || true)"

	# ---- a new run in the successor ----
	N=1000
	tb_do dut gen start p2 rate "$GEN_RATE" size 256 count "$N" engine "$ENGINE" >/dev/null
	tb_wait_gen_done dut p2 30
	umem_check "after the second run"
	assert_eq "$ENGINE: second run: generator frames" "$N" "$(tb_gen dut p2 frames)"
	assert_eq "$ENGINE: second run: frames tap received" "$N" "$(($(tap_rx) - tap0 - sent_old))"
	if [[ $ENGINE == xsk ]]; then
		assert_eq "$ENGINE: second run: p2 tx_packets" $((p2_tx0 + p2_tx + N)) "$(tb_stat dut p2 tx_packets)"
	fi
	tb_do dut gen stop p2 >/dev/null
	echo "round $r ($ENGINE engine): $sent_old frames before the takeover, $N after"
	old_log=$TB_RUN/dut$r.log
done

tb_do dut shutdown >/dev/null
tb_wait_exit dut 10 || tb_die "the new ferryd did not exit on shutdown"
assert_eq "new ferryd exit code" 0 "$TB_EXIT_RC"
echo "PASS t_takeover_gen (engines $ENGINES, one takeover each)"
