#!/usr/bin/env bash
# After kill -9 ferry's XDP programs may stay attached; a new ferryd must
# recognise them as its own stale ones, replace them and forward again.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_dut_xconnect dut
echo "XDP on d0 before kill -9: $(tb_xdp_prog_id dut d0)"
tb_kill9 dut
echo "XDP on d0 after kill -9: $(tb_xdp_prog_id dut d0)"

tb_dut_xconnect dut2
show=$(tb_do dut2 port show)
echo "port show after restart: $show"
assert_json '[.data[].name] | sort | join(",")' p0,p1 "$show"

tb_gen_up
tb_capture_start sink s0 "$TB_RUN/cap" --count 1000 --timeout 30 --verify-gen 64
tb_do gen gen start g0 count 1000 rate 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_capture_wait "$TB_RUN/cap"
cap=$TB_CAP
assert_json .received 1000 "$cap"
assert_json .bad 0 "$cap"
assert_eq "dut2 p1 tx_packets" 1000 "$(tb_stat dut2 p1 tx_packets)"
