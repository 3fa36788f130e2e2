#!/usr/bin/env bash
# port del under traffic: succeeds, the daemon keeps answering, what p0 had
# received went out p1 or was counted, the XDP program leaves d0, and the
# port can be added again and forwards.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3_chain

tb_do gen gen start g0 rate 50000 >/dev/null
sleep 1
before=$(tb_do dut stats)
p0_rx=$(jq '.data.ports[] | select(.name == "p0") | .totals.rx_packets' <<<"$before")
p0_drops=$(jq '.data.ports[] | select(.name == "p0") | .totals.drops' <<<"$before")
echo "before port del: p0 rx_packets $p0_rx, drops $p0_drops"
assert_ge "p0 rx_packets under traffic" 1000 "$p0_rx"

assert_ok tb_ctlj dut port del p0
assert_ok tb_ctlj dut version
tb_wait_quiet 20 dut
show=$(tb_do dut port show)
assert_json '[.data[].name] | join(",")' p1 "$show"
assert_eq "XDP program on d0 after port del" none "$(tb_xdp_prog_id dut d0)"

p1_tx=$(tb_stat dut p1 tx_packets)
p1_drops=$(tb_stat dut p1 drops)
echo "after port del: p1 tx_packets $p1_tx, drops $p1_drops"
assert_ge "p1 tx + p1 drops + p0 drops (every frame p0 had received)" \
	"$p0_rx" $((p1_tx + p1_drops + p0_drops))

tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
sleep 1
assert_ge "p1 tx_packets after p0 came back" $((p1_tx + 1000)) "$(tb_stat dut p1 tx_packets)"
tb_do gen gen stop g0 >/dev/null
assert_ok tb_ctlj dut version
