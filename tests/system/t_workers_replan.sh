#!/usr/bin/env bash
# `workers` with ports configured: the ports are drained, deleted and added
# again on the new workers from the running configuration, and forwarding
# resumes; a bad CPU list is refused before anything is touched.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3_chain

before=$(tb_ctlj dut show config | jq -r .data)
assert_fail tb_ctl dut workers 63
assert_eq "config after a refused workers" "$before" "$(tb_ctlj dut show config | jq -r .data)"

tb_do dut workers 0-1 idle poll >/dev/null
after=$(tb_ctlj dut show config | jq -r .data)
assert_eq "ports and apps after the re-plan" \
	"$(grep -v '^workers' <<<"$before")" "$(grep -v '^workers' <<<"$after")"
assert_eq "workers line" "workers 0-1 idle poll" "$(grep '^workers' <<<"$after")"
assert_json '.data | length' 2 "$(tb_ctlj dut worker show)"

# Forwarding works on the new workers.
tb_do gen gen start g0 count 2000 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut sink
assert_eq "dut p0 rx_packets" 2000 "$(tb_stat dut p0 rx_packets)"
assert_eq "dut p1 tx_packets" 2000 "$(tb_stat dut p1 tx_packets)"
assert_eq "sink s0 rx_packets" 2000 "$(tb_stat sink s0 rx_packets)"
