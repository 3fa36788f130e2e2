#!/usr/bin/env bash
# The XDP classifier counts each kind of malformed frame under its own
# reason and lets only the good ones through to the xconnect.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_dut_xconnect

# pkt.py kind -> verdict reason (bpf/ferry_abi.h)
declare -A reason=(
	[trunc_ip4]=drop_trunc_ip4
	[bad_ihl]=drop_bad_ihl
	[bad_ip4_len]=drop_bad_ip4_len
	[bad_ver]=drop_bad_ip_ver
	[trunc_udp]=drop_trunc_l4
	[vlan3]=drop_vlan_depth
	[bad_udp_len]=drop_bad_l4_len
)
n=100
for kind in "${!reason[@]}" good; do
	tb_send gen g0 "$n" "$kind" --rate 5000
done
# The kernel will not send a frame shorter than an Ethernet header on an
# Ethernet device (dev_validate_header), so drop_trunc_eth can't be reached
# through veth; pkt.py must report that rather than pretend.
out=$(tb_send gen g0 1 trunc_eth) || true
echo "trunc_eth: $out"
tb_wait_quiet dut

stats=$(tb_do dut stats)
xdp=$(jq -c '.data.ports[] | select(.name == "p0") | .xdp' <<<"$stats")
echo "p0 xdp verdicts: $xdp"
for kind in "${!reason[@]}"; do
	assert_json ".${reason[$kind]}" "$n" "$xdp"
done
assert_json .xsk_redirect "$n" "$xdp"
assert_json .drop_trunc_eth "$(jq -r .sent <<<"$out")" "$xdp"
assert_json '[.[]] | add' $((n * (${#reason[@]} + 1))) "$xdp"
assert_json '.data.ports[] | select(.name == "p0") | .xdp_malformed' \
	$((n * ${#reason[@]})) "$stats"
assert_json '.data.ports[] | select(.name == "p0") | .totals.rx_packets' "$n" "$stats"
assert_json '.data.ports[] | select(.name == "p1") | .totals.tx_packets' "$n" "$stats"
