#!/usr/bin/env bash
# The driver asked, not only its profile: `host check` shows what a veth
# reports through the netdev family (its XDP actions, ndo-xmit appearing
# once its peer has GRO on, no zero-copy), marks it as the kernel's
# answer, and says whether this kernel has the family and the AF_XDP TX
# budget option. `port add ... mode zc` is refused with the driver's
# reason and leaves nothing behind; `mode auto` binds copy mode and
# `port show` says the kernel decided. On a kernel without the family the
# profile decides, and the test expects that instead.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_ns dut
tb_ns peer
tb_veth dut d0 peer p0 2
D0=$(tb_ifname d0)
P0=$(tb_ifname p0)
nosock=$TB_RUN/none.sock

# kernel release as a number: 6.18 -> 618
kver=$(uname -r | awk -F. '{ printf "%d%02d", $1, $2 }')
st() { jq -r --arg c "$1" '.data[] | select(.check == $c) | .status'; }
val() { jq -r --arg c "$1" '.data[] | select(.check == $c) | .value'; }
check() { tb_exec dut "$FERRYCTL" -s "$nosock" -j host check "$D0" cpus 0 2>/dev/null; }

# ---- host check: the kernel's features ferry uses
out=$(check)
echo "$out" | jq -c '.data[] | select(.check | test("kernel: netdev|TX budget|xdp features")) | [.check, .status, .value]'
if ((kver >= 603)); then
	assert_eq "netdev family on $(uname -r)" ok "$(st "kernel: netdev family" <<<"$out")"
	assert_match "netdev family row" "^available" "$(val "kernel: netdev family" <<<"$out")"
else
	assert_eq "no netdev family on $(uname -r)" warn "$(st "kernel: netdev family" <<<"$out")"
fi
if ((kver >= 617)); then
	assert_eq "TX budget option on $(uname -r)" ok "$(st "kernel: AF_XDP TX budget" <<<"$out")"
else
	assert_eq "no TX budget option on $(uname -r)" warn "$(st "kernel: AF_XDP TX budget" <<<"$out")"
	assert_match "TX budget row says the cost" "at most 32" "$(val "kernel: AF_XDP TX budget" <<<"$out")"
fi

# ---- host check: the veth's own report
row=$(val "xdp features" <<<"$out")
assert_eq "xdp features row" ok "$(st "xdp features" <<<"$out")"
if ((kver >= 603)); then
	# the peer has neither an XDP program nor GRO: no ndo-xmit yet
	assert_match "what veth reports" "kernel: xdp-features basic,redirect,rx-sg;" "$row"
	assert_match "zero-copy from the kernel" "zero-copy: no \(kernel\)" "$row"
	assert_match "multi-buffer from the kernel" "native XDP rx-sg yes \(kernel\)" "$row"
	# GRO on the peer makes the veth take redirected frames, and it says so
	ip netns exec "$(tb_nsname peer)" ethtool -K "$P0" gro on
	row=$(val "xdp features" <<<"$(check)")
	assert_match "veth with GRO on its peer" \
		"xdp-features basic,redirect,ndo-xmit,rx-sg,ndo-xmit-sg;" "$row"
	ip netns exec "$(tb_nsname peer)" ethtool -K "$P0" gro off
else
	assert_match "profile decides" "zero-copy: no \(profile veth\)" "$row"
fi
human=$(tb_exec dut "$FERRYCTL" -s "$nosock" host check "$D0" cpus 0 2>/dev/null)
assert_match "people's view has the row" "^ok +xdp features +kernel: " "$human"

# ---- ferryd: zc refused with the driver's reason, nothing left behind
tb_ferryd dut dut
tb_do dut workers 0 >/dev/null
out=$(tb_do dut host check "$D0")
assert_match "ferryd's host check asks the kernel too" "zero-copy: no" "$(val "xdp features" <<<"$out")"
rc=0
out=$(tb_ctlj dut port add z0 dev "$D0" mode zc) || rc=$?
echo "port add mode zc: exit $rc: $out"
assert_eq "exit of port add mode zc" 1 "$rc"
assert_json .error.code EOPNOTSUPP "$out"
msg=$(jq -r .error.message <<<"$out")
if ((kver >= 603)); then
	assert_match "refusal names the driver's reason" \
		"zero-copy is not supported on $D0 \(driver veth\): the kernel reports no xsk-zerocopy \(xdp-features basic,redirect,rx-sg\)" "$msg"
else
	assert_match "refusal names the profile" "profile veth has no zero-copy" "$msg"
fi
assert_json '.data | length' 0 "$(tb_do dut port show)"
assert_eq "XDP program left by the refused add" none "$(tb_xdp_prog_id dut d0)"

# ---- mode auto: copy, and port show says who decided
show=$(tb_do dut port add p0 dev "$D0")
echo "port add p0: $(jq -c '.data[0].driver_caps' <<<"$show")"
assert_json '.data[0].mode' copy "$show"
assert_json '.data[0].driver_caps.zerocopy' false "$show"
if ((kver >= 603)); then
	assert_json '.data[0].driver_caps.from' kernel "$show"
	assert_json '.data[0].driver_caps.zerocopy_from' kernel "$show"
	assert_json '.data[0].driver_caps.xdp' basic,redirect,rx-sg "$show"
	assert_json '.data[0].driver_caps.xsk' none "$show"
	assert_match "log says the kernel chose copy" "auto: the kernel reports no xsk-zerocopy" \
		"$(cat "$TB_RUN/dut.log")"
else
	assert_json '.data[0].driver_caps.from' profile "$show"
fi
# the TX budget port show reports agrees with the kernel's option
if ((kver >= 617)); then
	assert_json '.data[0].tx_budget' 256 "$show"
else
	assert_json '.data[0].tx_budget' "32 (kernel default)" "$show"
fi
assert_match "people's port show" "driver_caps" "$(tb_ctl dut port show p0)"
assert_ok tb_ctl dut version >/dev/null
echo "PASS"
