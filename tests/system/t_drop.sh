#!/usr/bin/env bash
# The drop app counts and drops: nothing leaves by p1.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_gen_up
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut drop p0 >/dev/null

tb_do gen gen start g0 count 1000 rate 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut

assert_eq "dut p0 rx_packets" 1000 "$(tb_stat dut p0 rx_packets)"
assert_eq "dut p0 drops" 1000 "$(tb_stat dut p0 drops)"
assert_eq "dut p1 tx_packets" 0 "$(tb_stat dut p1 tx_packets)"
assert_json '.data[] | select(.name == "p0") | .app' drop "$(tb_do dut port show p0)"
