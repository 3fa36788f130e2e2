#!/usr/bin/env bash
# Link down and up on a port under traffic: the port reports down with the
# reason, frames for it are dropped and counted as port_down (not queued in
# a TX ring the kernel won't drain), it comes back by itself and forwarding
# resumes; every frame the dut received went out or was counted. On the
# workers' path, and on the kernel path (t_fault_link_flap_kernel).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3_chain
fault_xc_path dut p0 p1

tb_do gen gen start g0 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
fault_wait_ge "sink rx before" 1000 tb_stat sink s0 rx_packets
assert_eq "p1 state before" up "$(fault_port dut p1 state)"

# Egress link down (admin): the watch sees it within about a second.
tb_exec dut ip link set dev "$D1" down
fault_wait_port dut p1 state down 5
assert_match "p1 reason" 'link down' "$(fault_port dut p1 reason)"
d1=$(fault_lost_down dut p0)
fault_wait_ge "p0 counts what it cannot send while p1 is down" $((d1 + 1000)) fault_lost_down dut p0
assert_ok tb_ctlj dut version

tb_exec dut ip link set dev "$D1" up
fault_wait_port dut p1 state up 10
assert_eq "p1 reason when up" "" "$(fault_port dut p1 reason)"
t1=$(tb_stat dut p1 tx_packets)
s1=$(tb_stat sink s0 rx_packets)
fault_wait_ge "p1 tx_packets after the link came back" $((t1 + 1000)) tb_stat dut p1 tx_packets
fault_wait_ge "sink rx_packets after the link came back" $((s1 + 1000)) tb_stat sink s0 rx_packets

# No carrier (the far end down) is down too.
tb_exec sink ip link set dev "$S0" down
fault_wait_port dut p1 state down 5
tb_exec sink ip link set dev "$S0" up
fault_wait_port dut p1 state up 10

tb_do gen gen stop g0 >/dev/null
tb_wait_quiet 20 dut
show=$(tb_do dut port show p1)
echo "p1: $(jq -c '.data[0] | {state, reason, events}' <<<"$show")"
assert_json '.data[0].events.link_down' 2 "$show"
assert_json '.data[0].events.link_up' 2 "$show"
R=$(tb_stat dut p0 rx_packets)
T=$(tb_stat dut p1 tx_packets)
D=$(($(tb_stat dut p0 drops) + $(tb_stat dut p1 drops)))
assert_eq "p0 received == p1 sent + dropped" "$R" $((T + D))
fault_umem_idle dut
