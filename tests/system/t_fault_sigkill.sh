#!/usr/bin/env bash
# SIGKILL under load: the XDP programs stay behind (nobody detached them);
# the next ferryd recognises them as a dead ferryd's, takes the interfaces
# over and forwards again, with the traffic never stopped.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3
tb_gen_up
tb_dut_xconnect dut
tb_sink_drop

tb_do gen gen start g0 rate 50000 dst-mac "$(tb_mac dut d0)" >/dev/null
fault_wait_ge "p1 tx_packets under load" 10000 tb_stat dut p1 tx_packets
tb_kill9 dut
stale=$(tb_xdp_prog_id dut d0)
echo "XDP on d0 after kill -9: $stale"
[[ $stale =~ ^[0-9]+$ ]] || tb_die "expected the killed ferryd's program to stay"

s0=$(tb_stat sink s0 rx_packets)
tb_dut_xconnect dut2
show=$(tb_do dut2 port show)
assert_json '[.data[] | .took_over_stale_program] | all' true "$show"
assert_json '[.data[] | .state] | join(",")' up,up "$show"
[[ $(tb_xdp_prog_id dut d0) != "$stale" ]] || tb_die "stale program still attached"
fault_wait_ge "sink rx_packets after the takeover" $((s0 + 1000)) tb_stat sink s0 rx_packets
tb_do gen gen stop g0 >/dev/null
tb_wait_quiet 20 dut2 sink
R=$(tb_stat dut2 p0 rx_packets)
assert_eq "dut2: p0 received == p1 sent + dropped" "$R" $(($(tb_stat dut2 p1 tx_packets) + $(tb_stat dut2 p0 drops) + $(tb_stat dut2 p1 drops)))
fault_umem_idle dut2
