#!/usr/bin/env bash
# veth has no zero-copy: asking for it fails cleanly (nothing half made),
# and auto falls back to copy mode.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null

rc=0
out=$(tb_ctlj dut port add p0 dev "$D0" mode zc) || rc=$?
echo "port add mode zc: exit $rc: $out"
assert_eq "exit status of port add mode zc" 1 "$rc"
assert_json .ok false "$out"
assert_match "error message" 'zero[- ]?copy' "$(jq -r .error.message <<<"$out")"
assert_json '.data | length' 0 "$(tb_do dut port show)"
assert_eq "XDP program left on d0 by the failed add" none "$(tb_xdp_prog_id dut d0)"

tb_do dut port add p0 dev "$D0" >/dev/null
show=$(tb_do dut port show p0)
echo "port show p0: $show"
assert_json '.data[0].name' p0 "$show"
assert_json '.data[0].ifname' "$D0" "$show"
assert_json '.data[0].mode' copy "$show"
