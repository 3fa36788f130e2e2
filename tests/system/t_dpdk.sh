#!/usr/bin/env bash
# The DPDK backend (port add ... backend dpdk, the af_xdp PMD): every app
# works over it as over native ports, byte-exact where the frames leave the
# testbed, and a DPDK port xconnects to a native one both ways (a copy,
# counted). The PMD's classifier is ferry's: its verdicts are counted.
# With ferryd built without DPDK: a clear ENOTSUP, and nothing made.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

N=2000

tb_init
tb_std3
tb_ferryd dut dut

if [[ $(tb_ctlj dut version | jq -r .data.dpdk) != true ]]; then
	tb_log "ferryd built without DPDK: checking the refusal only"
	rc=0
	out=$(tb_ctlj dut port add p0 dev "$D0" backend dpdk) || rc=$?
	echo "$out"
	# ENOTSUP is EOPNOTSUPP on Linux; the protocol names it so.
	assert_json .error.code EOPNOTSUPP "$out"
	assert_match "message" 'built without DPDK' "$(jq -r .error.message <<<"$out")"
	assert_json '.data | length' 0 "$(tb_do dut port show)"
	assert_json '.data | length' 0 "$(tb_do dut worker show)"
	assert_eq "XDP on d0" none "$(tb_xdp_prog_id dut d0)"
	exit 0
fi

tb_gen_up
tb_do dut workers 1 >/dev/null
S0_MAC=$(tb_mac sink s0)

# exact_through LABEL: N generated frames cross the dut and reach s0 as made.
exact_through() {
	local label=$1 cap
	tb_do dut stats reset >/dev/null
	tb_capture_start sink s0 "$TB_RUN/cap-$label" --count "$N" --timeout 30 --verify-gen 128
	tb_do gen gen start g0 count "$N" rate 20000 size 128 flows 4 >/dev/null
	tb_wait_gen_done gen g0 30
	tb_capture_wait "$TB_RUN/cap-$label"
	cap=$TB_CAP
	tb_wait_quiet dut
	echo "$label: $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, tx: .totals.tx_packets, drops: .totals.drops, xsk: .xdp.xsk_redirect}], [.data.workers[] | {copies}]')"
	assert_json .received "$N" "$cap"
	assert_json .bad 0 "$cap"
	assert_json '.flows | join(",")' 1024,1025,1026,1027 "$cap"
	assert_eq "$label: p0 rx_packets" "$N" "$(tb_stat dut p0 rx_packets)"
	assert_eq "$label: p1 tx_packets" "$N" "$(tb_stat dut p1 tx_packets)"
	# The classifier the PMD loaded is ferry's and counts as on a native port.
	assert_eq "$label: p0 xsk_redirect" "$N" "$(tb_xdpstat dut p0 xsk_redirect)"
}

copies() {
	tb_ctlj dut stats | jq -r '[.data.workers[].copies] | add'
}

tb_log "DPDK -> DPDK xconnect"
out=$(tb_do dut port add p0 dev "$D0" backend dpdk)
assert_json '.data[0].backend' dpdk "$out"
assert_json '.data[0].dpdk.pmd' net_af_xdp "$out"
tb_do dut port add p1 dev "$D1" backend dpdk >/dev/null
assert_match "config says backend dpdk" 'port add p1 .*backend dpdk' \
	"$(tb_ctlj dut show config | jq -r .data)"
tb_do dut xconnect add p0 p1 >/dev/null
exact_through dpdk-dpdk
assert_eq "dpdk-dpdk: copies" 0 "$(copies)"
# More frames than a worker's mbuf pool holds: mbufs come back (TX
# completions, fill ring). A pool whose objects do not lie back to back
# starved RX after ~7400 frames.
tb_do dut stats reset >/dev/null
tb_do gen gen start g0 count 30000 rate 50000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
assert_ge "sustained: p1 tx_packets" 20000 "$(tb_stat dut p1 tx_packets)"
# The kernel's socket counters of a DPDK queue add up as a native one's.
st=$(tb_ctlj dut stats)
assert_json '.data.ports[] | select(.name == "p0") | .totals | .rx_packets + .rx_dropped + .rx_ring_full' \
	"$(jq '.data.ports[] | select(.name == "p0") | .xdp.xsk_redirect' <<<"$st")" "$st"

tb_log "DPDK -> native xconnect"
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p1 >/dev/null
assert_eq "XDP on d1 after port del" none "$(tb_xdp_prog_id dut d1)"
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
exact_through dpdk-native
assert_eq "dpdk-native: copies" "$N" "$(copies)"

tb_log "native -> DPDK xconnect"
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p0 >/dev/null
tb_do dut port del p1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" backend dpdk >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
exact_through native-dpdk
assert_eq "native-dpdk: copies" "$N" "$(copies)"

tb_log "gen out of a DPDK port"
# Live frames enter s0 by ndo_xdp_xmit: its peer needs GRO (or XDP) on.
tb_exec sink ethtool -K "$S0" gro on >/dev/null
tb_do dut stats reset >/dev/null
tb_capture_start sink s0 "$TB_RUN/cap-gen" --count "$N" --timeout 30 --verify-gen 128
tb_do dut gen start p1 count "$N" rate 20000 size 128 flows 4 dst-mac "$S0_MAC" >/dev/null
tb_wait_gen_done dut p1 30
tb_capture_wait "$TB_RUN/cap-gen"
assert_json .received "$N" "$TB_CAP"
assert_json .bad 0 "$TB_CAP"
assert_eq "gen engine on a DPDK port" live "$(tb_gen dut p1 engine)"
rc=0
out=$(tb_ctlj dut gen start p1 count 10 engine xsk) || rc=$?
assert_json .error.code EOPNOTSUPP "$out"

tb_log "reflect and drop over DPDK"
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p0 >/dev/null
tb_do dut port add p0 dev "$D0" backend dpdk >/dev/null
tb_do dut reflect p0 >/dev/null
tb_do gen drop g0 >/dev/null
tb_do gen stats reset >/dev/null
tb_do dut stats reset >/dev/null
tb_do gen gen start g0 count 1000 rate 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet gen dut
assert_eq "reflect: p0 rx_packets" 1000 "$(tb_stat dut p0 rx_packets)"
assert_eq "reflect: p0 tx_packets" 1000 "$(tb_stat dut p0 tx_packets)"
assert_ge "reflect: g0 got them back" 1000 "$(tb_stat gen g0 rx_packets)"

tb_do dut drop p0 >/dev/null
tb_do dut stats reset >/dev/null
tb_do gen gen start g0 count 1000 rate 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet gen dut
st=$(tb_ctlj dut stats)
assert_json '.data.ports[] | select(.name == "p0") | .totals.rx_packets' 1000 "$st"
assert_json '.data.ports[] | select(.name == "p0") | .totals.drop_reasons.app_drop' 1000 "$st"

tb_log "steering rules and a workers re-plan on DPDK ports"
# The generator's frames (UDP to port 9) leave the PMD's classifier by
# the CPUMAP now: the rule lives in the adopted maps.
tb_do dut steer add r1 port p0 match proto udp dport 9 to cpus 0 >/dev/null
tb_do gen gen start g0 count 1000 rate 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet gen dut
assert_json '.data[0].counters[0].steered' 1000 "$(tb_do dut steer show)"
tb_do dut workers 1 >/dev/null
out=$(tb_do dut port show)
assert_json '[.data[] | select(.backend == "dpdk")] | length' 2 "$out"
assert_json '.data | length' 1 "$(tb_do dut steer show)"
tb_do dut steer del r1 >/dev/null

tb_log "port del and shutdown leave nothing attached"
tb_do dut port del p0 >/dev/null
tb_do dut port del p1 >/dev/null
assert_eq "XDP on d0" none "$(tb_xdp_prog_id dut d0)"
assert_eq "XDP on d1" none "$(tb_xdp_prog_id dut d1)"
tb_do dut port add p0 dev "$D0" backend dpdk >/dev/null
tb_do dut shutdown >/dev/null
tb_wait_exit dut 20
assert_eq "ferryd exit status" 0 "$TB_EXIT_RC"
assert_eq "XDP on d0 after shutdown" none "$(tb_xdp_prog_id dut d0)"
