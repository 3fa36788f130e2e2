#!/usr/bin/env bash
# MTU lowered and raised at run time: the watch picks the new MTU up, frames
# longer than the egress MTU allows are counted as mtu_exceeded and not
# sent (copy-mode AF_XDP TX would send them regardless), shorter ones still
# go, and forwarding is whole again once the MTU is back. ferry's XDP
# program takes multi-buffer frames (xdp.frags), so a veth under it takes
# 3000 and 9000 alike (the kernel refuses 9000 to a program without frags
# support: ERANGE), and ferry carries on.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3_chain
mac=$(tb_mac dut d0)

burst() { # SIZE: 2000 frames of SIZE bytes through the dut
	tb_do gen gen start g0 count 2000 rate 20000 size "$1" dst-mac "$mac" >/dev/null
	tb_wait_gen_done gen g0 30
	tb_wait_quiet 20 dut sink
}

assert_eq "p1 mtu at start" 1500 "$(fault_port dut p1 mtu)"
tb_exec dut ip link set dev "$D1" mtu 1000
fault_wait_port dut p1 mtu 1000 5
burst 1400
assert_eq "p0 mtu_exceeded (1400-byte frames, p1 MTU 1000)" 2000 "$(fault_drop dut p0 mtu_exceeded)"
assert_eq "p1 tx_packets" 0 "$(tb_stat dut p1 tx_packets)"
assert_eq "sink rx_packets" 0 "$(tb_stat sink s0 rx_packets)"
burst 600
assert_eq "p1 tx_packets (600-byte frames)" 2000 "$(tb_stat dut p1 tx_packets)"
assert_eq "sink rx_packets (600-byte frames)" 2000 "$(tb_stat sink s0 rx_packets)"

tb_exec dut ip link set dev "$D1" mtu 1500
fault_wait_port dut p1 mtu 1500 5
burst 1400
assert_eq "p1 tx_packets (MTU back to 1500)" 4000 "$(tb_stat dut p1 tx_packets)"
assert_eq "sink rx_packets (MTU back to 1500)" 4000 "$(tb_stat sink s0 rx_packets)"
assert_eq "p0 mtu_exceeded unchanged" 2000 "$(fault_drop dut p0 mtu_exceeded)"

# Raised: to 3000, then to 9000, which a single-buffer program could not.
tb_exec gen ip link set dev "$G0" mtu 3000
tb_exec dut ip link set dev "$D0" mtu 3000
fault_wait_port dut p0 mtu 3000 5
assert_ok tb_exec dut ip link set dev "$D0" mtu 9000
fault_wait_port dut p0 mtu 9000 5
burst 1400
assert_eq "p1 tx_packets (p0 MTU 9000)" 6000 "$(tb_stat dut p1 tx_packets)"
show=$(tb_do dut port show)
echo "events: $(jq -c '[.data[] | {name, mtu, events}]' <<<"$show")"
assert_json '.data[] | select(.name == "p1") | .events.mtu_changed' 2 "$show"
assert_json '.data[] | select(.name == "p0") | .events.mtu_changed' 2 "$show"
R=$(tb_stat dut p0 rx_packets)
assert_eq "p0 received == p1 sent + dropped" "$R" $(($(tb_stat dut p1 tx_packets) + $(tb_stat dut p0 drops)))
fault_umem_idle dut
