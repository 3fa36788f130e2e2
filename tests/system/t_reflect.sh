#!/usr/bin/env bash
# reflect sends every frame back where it came from: the generator's own port
# (with the drop app, so it counts them) gets its 1000 frames back.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_gen_up
tb_do gen drop g0 >/dev/null
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut reflect p0 >/dev/null

tb_do gen gen start g0 count 1000 rate 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet gen dut

assert_eq "gen frames" 1000 "$(tb_gen gen g0 frames)"
assert_eq "dut p0 rx_packets" 1000 "$(tb_stat dut p0 rx_packets)"
assert_eq "dut p0 tx_packets" 1000 "$(tb_stat dut p0 tx_packets)"
assert_ge "gen g0 rx_packets (reflected back)" 1000 "$(tb_stat gen g0 rx_packets)"
