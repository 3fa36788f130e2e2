#!/usr/bin/env bash
# Every generated frame crosses the dut's xconnect unchanged: 5000 frames of
# 128 bytes in 4 flows leave s0's peer exactly as the generator made them.
# Both generator engines: BPF live frames, and the AF_XDP TX fallback.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_gen_up
tb_dut_xconnect

tb_do dut stats reset >/dev/null
for engine in live xsk; do
	tb_log "engine $engine"
	# No ferryd on the sink: the kernel hands the frames to AF_PACKET there.
	tb_capture_start sink s0 "$TB_RUN/cap-$engine" --count 5000 --timeout 30 --verify-gen 128
	tb_do gen gen start g0 count 5000 rate 20000 size 128 flows 4 engine "$engine" >/dev/null
	tb_wait_gen_done gen g0 30
	tb_capture_wait "$TB_RUN/cap-$engine"
	cap=$TB_CAP
	tb_wait_quiet dut
	# Where each frame was, should one be missing.
	echo "gen g0: $(tb_ctlj gen stats | jq -c '.data.ports[0].totals | {tx_packets, tx_kicks, tx_invalid_descs, drops}')"
	echo "g0 tx: $(ip -n "$(tb_nsname gen)" -s -j link show dev "$G0" | jq -c '.[0].stats64.tx')"
	echo "d0 rx: $(ip -n "$(tb_nsname dut)" -s -j link show dev "$D0" | jq -c '.[0].stats64.rx')"
	echo "p1: $(tb_ctlj dut stats | jq -c ".data.ports[1].totals")"
	echo "dut: $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, tx: .totals.tx_packets, xsk: .xdp.xsk_redirect, rxd: .totals.rx_dropped, full: .totals.rx_ring_full, fe: .totals.rx_fill_ring_empty_descs}], (.data.workers[0] | {polls, fill_empty, loops})')"

	assert_json .received 5000 "$cap"
	assert_json .bad 0 "$cap"
	assert_json '.flows | length' 4 "$cap"
	assert_json '.flows | join(",")' 1024,1025,1026,1027 "$cap"
	assert_eq "gen engine" "$engine" "$(tb_gen gen g0 engine)"
	assert_eq "gen frames" 5000 "$(tb_gen gen g0 frames)"
	assert_eq "dut p0 rx_packets" 5000 "$(tb_stat dut p0 rx_packets)"
	assert_eq "dut p1 tx_packets" 5000 "$(tb_stat dut p1 tx_packets)"
	tb_do dut stats reset >/dev/null
done
