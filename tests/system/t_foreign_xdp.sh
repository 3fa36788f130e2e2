#!/usr/bin/env bash
# ferryd never clobbers an XDP program it did not load: port add on an
# interface that has one fails and names it, and the program stays attached,
# also after the daemon exits.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3

tb_foreign_xdp_build
tb_exec dut ip link set dev "$D0" xdp obj "$TB_RUN/foreign.o" sec xdp
before=$(tb_xdp_prog_id dut d0)
echo "foreign program on d0: id $before"
[[ $before =~ ^[0-9]+$ ]] || tb_die "could not attach the foreign program"

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
rc=0
out=$(tb_ctlj dut port add p0 dev "$D0") || rc=$?
echo "port add on d0: exit $rc: $out"
assert_eq "exit status of port add" 1 "$rc"
assert_json .ok false "$out"
assert_match "error message" 'prog' "$(jq -r .error.message <<<"$out")"
assert_json '.data | length' 0 "$(tb_do dut port show)"
assert_eq "XDP program id on d0 after the failed add" "$before" "$(tb_xdp_prog_id dut d0)"

# The other interface is free: ferry works there, then leaves d0 alone on exit.
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut shutdown >/dev/null || true
tb_wait_exit dut 10 || true
assert_eq "ferryd exit status after shutdown" 0 "$TB_EXIT_RC"
assert_eq "XDP program id on d0 after ferryd exited" "$before" "$(tb_xdp_prog_id dut d0)"
assert_eq "XDP program on d1 after ferryd exited" none "$(tb_xdp_prog_id dut d1)"
