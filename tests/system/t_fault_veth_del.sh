#!/usr/bin/env bash
# The veth under a port is deleted under traffic: the port goes `failed`
# with the reason, frames for it are counted as port_down, the daemon and
# the other ports carry on, commands needing the port get a clear error,
# and `port del` + `port add` on a new veth restore forwarding. On the
# workers' path, and on the kernel path (t_fault_veth_del_kernel): there
# the failed egress sends p0 back to its worker, which counts port_down.
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

# Deleting d1 takes its peer s0 with it: both ferryds lose a port.
tb_exec dut ip link del dev "$D1"
fault_wait_port dut p1 state failed 5
fault_wait_port sink s0 state failed 5
assert_match "p1 reason" 'disappeared' "$(fault_port dut p1 reason)"
assert_match "s0 reason" 'disappeared' "$(fault_port sink s0 reason)"
r0=$(tb_stat dut p0 rx_packets)
d0=$(fault_drop dut p0 port_down)
fault_wait_ge "p0 still receives" $((r0 + 1000)) tb_stat dut p0 rx_packets
fault_wait_ge "p0 counts frames for p1 as port_down" $((d0 + 1000)) fault_drop dut p0 port_down
assert_ok tb_ctlj dut version
assert_ok tb_ctlj sink stats
out=$(tb_ctlj dut xconnect add p1 p0 || true)
assert_json .error.code ENETDOWN "$out"
assert_match "xconnect on a failed port" 'failed' "$(jq -r .error.message <<<"$out")"
assert_json '[.data[].sockets[]] | join(",")' p0/0 "$(tb_do dut worker show)"
grep -E 'port p1: failed' "$TB_RUN/dut.log"
assert_eq "p0 path with p1 failed" xsk "$(fault_port dut p0 path)"

# Restore: a new veth pair under the same names, then del + add.
tb_veth dut d1 sink s0
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p1 >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do sink port del s0 >/dev/null
tb_do sink port add s0 dev "$S0" >/dev/null
tb_do sink drop s0 >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
fault_xc_path dut p0 p1
assert_eq "p1 state after restore" up "$(fault_port dut p1 state)"
s1=$(tb_stat sink s0 rx_packets)
fault_wait_ge "sink rx after restore" $((s1 + 1000)) tb_stat sink s0 rx_packets
tb_do gen gen stop g0 >/dev/null
tb_wait_quiet 20 dut sink
fault_umem_idle dut
fault_umem_idle sink
