#!/usr/bin/env bash
# The generator makes frames up to MTU 9000: `size 9000` sends multi-buffer
# chains from the port's AF_XDP TX ring (engine auto picks it: live frames
# hold 1514 bytes at most), and they cross the dut's xconnect byte-exact;
# `engine live` with such a size is refused with a reason.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_std3_mtu 9000
tb_gen_up
tb_dut_xconnect

assert_fail tb_ctl gen gen start g0 count 10 size 9000 engine live
tb_capture_start sink s0 "$TB_RUN/cap" --count 1000 --timeout 30 --verify-gen 9000
tb_do gen gen start g0 count 1000 rate 5000 size 9000 flows 4 >/dev/null
tb_wait_gen_done gen g0 30
tb_capture_wait "$TB_RUN/cap"
cap=$TB_CAP
tb_wait_quiet dut
assert_eq "gen engine" xsk "$(tb_gen gen g0 engine)"
assert_json .received 1000 "$cap"
assert_json .bad 0 "$cap"
assert_json '.flows | length' 4 "$cap"
assert_eq "gen g0 tx_packets (frames, not descriptors)" 1000 "$(tb_stat gen g0 tx_packets)"
assert_eq "gen g0 tx_bytes" 9000000 "$(tb_stat gen g0 tx_bytes)"
assert_eq "dut p0 rx_packets" 1000 "$(tb_stat dut p0 rx_packets)"
assert_eq "dut p0 rx_bytes" 9000000 "$(tb_stat dut p0 rx_bytes)"
assert_eq "dut p1 tx_packets" 1000 "$(tb_stat dut p1 tx_packets)"

# `vlan VID`: an 802.1Q tag before the IPv4 header, from both engines, as
# tcpdump on the sink reads them (the dut's xconnect is a wire: the tag
# crosses)
for eng in live xsk; do
	tb_bg sink "$TB_RUN/vlan-$eng.txt" timeout 20 tcpdump -e -n -l -c 10 -i "$S0" vlan 100 and udp
	tcpd=$TB_BG_PID
	sleep 1
	tb_do gen gen start g0 count 10 rate 1000 size 64 vlan 100 engine "$eng" >/dev/null
	tb_wait_gen_done gen g0 30
	wait "$tcpd" || true
	head -2 "$TB_RUN/vlan-$eng.txt"
	assert_eq "gen engine $eng vlan 100: tagged UDP frames on the wire" 10 \
		"$(grep -c 'ethertype 802.1Q (0x8100), length 64: vlan 100, p 0, ethertype IPv4.* 198.18.0.1.* > 198.18.0.2.*: UDP' "$TB_RUN/vlan-$eng.txt" || true)"
done
assert_fail tb_ctl gen gen start g0 count 10 size 42 vlan 100
