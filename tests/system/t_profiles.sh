#!/usr/bin/env bash
# Driver profiles on the testbed: `port add` on a veth reads its driver and
# applies the veth profile (copy mode straight away, native XDP), `port show`
# names it; the bad inputs (no such interface, a driver without
# native XDP, more queues than the device has) each get a clear error and
# leave nothing behind; a one-node host gives no NUMA warning.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_ns dut
tb_ns peer
tb_veth dut d0 peer p0 4
D0=$(tb_ifname d0)
tb_ferryd dut dut
tb_do dut workers 0 >/dev/null

# ---- bad input: each a clear error, nothing half-made
expect_err() { # CODE REGEX ARGS...
	local code=$1 re=$2 rc=0 out
	shift 2
	out=$(tb_ctlj dut "$@") || rc=$?
	echo "$*: exit $rc: $out"
	assert_eq "exit of '$*'" 1 "$rc"
	assert_json .error.code "$code" "$out"
	assert_match "message of '$*'" "$re" "$(jq -r .error.message <<<"$out")"
}
# before any port: the interface exists, the queues do not
expect_err ENODEV "no interface 'nosuch0' here" port add x dev nosuch0
expect_err ERANGE "has 4 RX queue" port add x dev "$D0" queues 9
expect_err ERANGE "has 4 RX queue" port add x dev "$D0" queues 3-4
assert_json '.data | length' 0 "$(tb_do dut port show)"
assert_eq "XDP on d0 after the refused adds" none "$(tb_xdp_prog_id dut d0)"

# ---- the veth profile, applied
show=$(tb_do dut port add v0 dev "$D0")
echo "port add v0: $show"
assert_json '.data[0].driver' veth "$show"
assert_json '.data[0].profile' veth "$show"
assert_json '.data[0].mode_requested' auto "$show"
assert_json '.data[0].mode' copy "$show"
assert_json '.data[0].xdp' native "$show"
assert_json '.data[0].xdp_chosen_by' profile "$show"
assert_json '.data[0].queues' 4 "$show"
# this machine has one node and veth has none: nothing to warn about
assert_json '.data[0].warnings | length' 0 "$show"
assert_match "log names the profile" "port v0: $D0 \(driver veth, profile veth\)" \
	"$(cat "$TB_RUN/dut.log")"
# auto on a copy-only driver binds copy at once: no failed zero-copy try
# (the driver says so through the netdev family, else its profile does)
assert_match "log says why auto chose copy" \
	"auto: (profile veth has no zero-copy|the kernel reports no xsk-zerocopy)" \
	"$(cat "$TB_RUN/dut.log")"
# the person's view names it too
assert_match "port show: driver and profile" "driver veth +profile veth" "$(tb_ctl dut port show v0)"
assert_match "port show: who chose the XDP mode" "chosen by profile" "$(tb_ctl dut port show v0)"

# ---- more bad input, with a port in place
before=$(tb_do dut port show)
expect_err EEXIST "already port v0" port add x dev "$D0"
# lo has no driver profile and no native XDP (no ndo_bpf)
expect_err EOPNOTSUPP "lo \(driver unknown\) has no native XDP; add 'xdp generic'" \
	port add x dev lo xdp native
expect_err EINVAL "xdp" port add x dev lo xdp turbo
assert_eq "ports after the bad adds" "$before" "$(tb_do dut port show)"
assert_eq "XDP on lo after the refused add" none \
	"$(ip -n "$(tb_nsname dut)" -j -d link show dev lo | jq -r '.[0].xdp.prog.id // "none"')"
assert_ok tb_ctl dut version >/dev/null

# ---- an unknown driver gets the generic profile: generic XDP, copy mode
show=$(tb_do dut port add l0 dev lo)
echo "port add l0 (lo): $show"
assert_json '.data[0].profile' generic "$show"
assert_json '.data[0].xdp' generic "$show"
assert_json '.data[0].xdp_chosen_by' profile "$show"
assert_json '.data[0].mode' copy "$show"
tb_do dut port del l0 >/dev/null

# ---- an explicit request wins over the profile
tb_do dut port del v0 >/dev/null
show=$(tb_do dut port add v0 dev "$D0" xdp generic mode copy)
assert_json '.data[0].xdp' generic "$show"
assert_json '.data[0].xdp_chosen_by' request "$show"
assert_json '.data[0].mode_requested' copy "$show"
echo "PASS"
