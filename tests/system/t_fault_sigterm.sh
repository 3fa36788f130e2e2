#!/usr/bin/env bash
# SIGTERM under load: ferryd undoes its xconnects, drains every port,
# detaches its XDP programs and exits 0, while frames keep arriving.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3_chain

tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" >/dev/null # full rate
fault_wait_ge "p1 tx_packets under load" 10000 tb_stat dut p1 tx_packets
kill -TERM "${TB_PID_OF[dut]}"
tb_wait_exit dut 15 || true
assert_eq "ferryd exit status after SIGTERM" 0 "$TB_EXIT_RC"
assert_eq "XDP program on d0 after exit" none "$(tb_xdp_prog_id dut d0)"
assert_eq "XDP program on d1 after exit" none "$(tb_xdp_prog_id dut d1)"
log=$TB_RUN/dut.log
assert_match "log" 'signal 15: shutting down' "$(cat "$log")"
assert_match "log" 'port p0: deleted' "$(cat "$log")"
assert_match "log" 'ferryd exits' "$(cat "$log")"
assert_eq "ports left undrained (log)" 0 "$(grep -c 'not drained' "$log" || true)"
# The generator's daemon and the sink never noticed.
assert_ok tb_ctlj gen version
assert_ok tb_ctlj sink version
tb_do gen gen stop g0 >/dev/null
