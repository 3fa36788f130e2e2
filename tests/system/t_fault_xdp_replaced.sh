#!/usr/bin/env bash
# Another tool replaces or removes ferry's XDP program: the watch sees it
# within about a second, the port reports down with the reason, and ferry
# leaves the other program alone unless the port was added with
# `xdp-restore on`, in which case ferry's program is put back by itself and
# forwarding resumes.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3_chain

tb_foreign_xdp_build
foreign() { tb_exec dut ip -force link set dev "$D0" xdpdrv obj "$TB_RUN/foreign.o" sec xdp; }

tb_do gen gen start g0 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
fault_wait_ge "p1 forwards" 1000 tb_stat dut p1 tx_packets

# 1. Replaced, xdp-restore off: reported, not undone.
ours=$(fault_port dut p0 prog_id)
foreign
theirs=$(tb_xdp_prog_id dut d0)
[[ $theirs != "$ours" ]] || tb_die "foreign program not attached"
fault_wait_port dut p0 state down 5
assert_match "p0 reason" "id $theirs replaced" "$(fault_port dut p0 reason)"
# The name only with CAP_SYS_ADMIN (opening a program by id), which ferryd
# does not keep: '?' then, the id says which.
grep -E "port p0: XDP program '(foreign_pass|\?)' \(id $theirs\) replaced" "$TB_RUN/dut.log"
r0=$(tb_stat dut p0 rx_packets)
sleep 1.5
assert_eq "program on d0 still the foreign one" "$theirs" "$(tb_xdp_prog_id dut d0)"
assert_eq "p0 rx_packets while the foreign program runs" "$r0" "$(tb_stat dut p0 rx_packets)"
assert_json '.data[0].events.xdp_lost' 1 "$(tb_do dut port show p0)"

# port del leaves a program that is not ferry's in place.
tb_do dut port del p0 >/dev/null
assert_eq "foreign program after port del" "$theirs" "$(tb_xdp_prog_id dut d0)"
tb_exec dut ip link set dev "$D0" xdp off

# 2. xdp-restore on: replaced, then removed; restored both times.
tb_do dut port add p0 dev "$D0" xdp-restore on >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
assert_match "show config" 'xdp-restore on' "$(tb_ctlj dut show config | jq -r .data)"
ours=$(fault_port dut p0 prog_id)
foreign
fault_wait_event dut p0 xdp_restored 1 5
fault_wait_port dut p0 state up 5
assert_eq "program on d0 after restore" "$ours" "$(tb_xdp_prog_id dut d0)"
tb_exec dut ip link set dev "$D0" xdp off
fault_wait_event dut p0 xdp_restored 2 5
assert_eq "program on d0 after removal and restore" "$ours" "$(tb_xdp_prog_id dut d0)"
fault_wait_port dut p0 state up 5
t1=$(tb_stat dut p1 tx_packets)
fault_wait_ge "p1 forwards after the restores" $((t1 + 1000)) tb_stat dut p1 tx_packets
show=$(tb_do dut port show p0)
echo "p0: $(jq -c '.data[0] | {state, reason, events}' <<<"$show")"
assert_json '.data[0].events.xdp_lost' 2 "$show"
assert_json '.data[0].events.xdp_restored' 2 "$show"
tb_do gen gen stop g0 >/dev/null
