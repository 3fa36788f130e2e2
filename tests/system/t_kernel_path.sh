#!/usr/bin/env bash
# The in-kernel path of xconnect (DEVMAP): byte-exact on path kernel and
# path xsk, counters adding up on each; auto picks xsk while the egress
# veth's peer has neither GRO nor XDP (and path kernel is refused with the
# fix), kernel once GRO is on, xsk while a generator runs on the egress
# (spread ports take no xconnect at all); a path switch under traffic loses
# nothing; a redirect towards a downed egress is counted; show config
# carries path when it is not auto.
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

verdict() { tb_ctlj dut stats | jq -r --arg p "$1" "[.data.ports[] | select(.name == \$p) | .xdp.$2] | first // 0"; }

# An egress veth whose peer (in ferryd's namespace, so its GRO can be
# read) has GRO off and no XDP: a DEVMAP redirect would vanish there.
tb_veth dut x0 dut x1
X0=$(tb_ifname x0)
X1=$(tb_ifname x1)
ip netns exec "$(tb_nsname dut)" ethtool -K "$X1" gro off >/dev/null
tb_do dut port add p2 dev "$X0" >/dev/null
tb_do dut xconnect add p0 p2 >/dev/null
assert_eq "auto, peer without GRO" xsk "$(tb_pshow dut p0 path)"
assert_match "why" "neither XDP nor GRO" "$(tb_pshow dut p0 path_why)"
out=$(tb_ctlj dut xconnect add p0 p2 path kernel 2>&1 || true)
assert_match "path kernel refused" "ethtool -K $X1 gro on" "$out"
assert_eq "still xsk" xsk "$(tb_pshow dut p0 path)"
ip netns exec "$(tb_nsname dut)" ethtool -K "$X1" gro on >/dev/null
tb_do dut xconnect add p0 p2 >/dev/null
assert_eq "auto, peer with GRO" kernel "$(tb_pshow dut p0 path)"

# s0 lives in another namespace: without an XDP program there, ferryd
# (no CAP_SYS_ADMIN to enter it) cannot read its GRO, and auto keeps xsk.
tb_do dut xconnect add p0 p1 >/dev/null
assert_eq "auto, peer unknown" xsk "$(tb_pshow dut p0 path)"
assert_match "why" "cannot tell" "$(tb_pshow dut p0 path_why)"

# One byte-exact run of N frames through whatever path p0 is on.
run() {
	local tag=$1 n=$2
	tb_capture_start sink s0 "$TB_RUN/cap-$tag" --count "$n" --timeout 60 --verify-gen 128
	tb_do gen gen start g0 count "$n" rate 20000 size 128 flows 4 >/dev/null
	tb_wait_gen_done gen g0 60
	tb_capture_wait "$TB_RUN/cap-$tag"
	tb_wait_quiet dut
	assert_json .received "$n" "$TB_CAP"
	assert_json .bad 0 "$TB_CAP"
}

# ferryd on the sink puts XDP on s0 (frames pass to its kernel, where the
# capture reads them): auto sees the program and picks kernel.
tb_ferryd sink sink
tb_do sink workers 0 >/dev/null
tb_do sink port add s0 dev "$S0" default pass >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
assert_eq "auto, peer with XDP" kernel "$(tb_pshow dut p0 path)"
assert_match "why" "auto" "$(tb_pshow dut p0 path_why)"

tb_do dut stats reset >/dev/null
run kernel 5000
assert_eq "p0 rx" 5000 "$(tb_stat dut p0 rx_packets)"
assert_eq "p1 tx" 5000 "$(tb_stat dut p1 tx_packets)"
assert_eq "p0 kernel rx" 5000 "$(tb_kstat dut p0 rx_packets)"
assert_eq "p1 kernel tx" 5000 "$(tb_kstat dut p1 tx_packets)"
assert_eq "p0 xsk rx" 0 "$(tb_xstat dut p0 rx_packets)"
assert_eq "dev_redirect" 5000 "$(verdict p0 dev_redirect)"
assert_eq "p0 rx bytes" "$(tb_kstat dut p0 rx_bytes)" "$(tb_stat dut p0 rx_bytes)"

# A generator on the egress shares its TX with the workers: auto goes back
# to xsk while it runs, and to kernel once it is stopped.
tb_do dut gen start p1 count 1000000 rate 1000 >/dev/null
assert_eq "auto, generator on p1" xsk "$(tb_pshow dut p0 path)"
assert_match "why" "generator on p1" "$(tb_pshow dut p0 path_why)"
tb_do dut gen stop p1 >/dev/null
assert_eq "auto, generator stopped" kernel "$(tb_pshow dut p0 path)"

tb_do dut xconnect add p0 p1 path xsk >/dev/null
assert_eq "path xsk" xsk "$(tb_pshow dut p0 path)"
tb_do dut stats reset >/dev/null
run xsk 5000
assert_eq "p0 rx" 5000 "$(tb_stat dut p0 rx_packets)"
assert_eq "p1 tx" 5000 "$(tb_stat dut p1 tx_packets)"
assert_eq "p0 xsk rx" 5000 "$(tb_xstat dut p0 rx_packets)"
assert_eq "p0 kernel rx" 0 "$(tb_kstat dut p0 rx_packets)"
tb_ctlj dut show config | grep -q "xconnect add p0 p1 path xsk" ||
	tb_die "show config lacks path xsk: $(tb_ctlj dut show config)"

tb_do dut xconnect add p0 p1 path kernel >/dev/null
assert_eq "path kernel" kernel "$(tb_pshow dut p0 path)"
tb_ctlj dut show config | grep -q "xconnect add p0 p1 path kernel" ||
	tb_die "show config lacks path kernel"
tb_do dut xconnect add p0 p1 >/dev/null
tb_ctlj dut show config | grep -q "xconnect add p0 p1 path" &&
	tb_die "show config carries path auto"

# Switching path under traffic, back and forth: every frame arrives.
tb_do dut stats reset >/dev/null
n=20000
tb_capture_start sink s0 "$TB_RUN/cap-switch" --count "$n" --timeout 60 --verify-gen 128
tb_do gen gen start g0 count "$n" rate 10000 size 128 flows 4 >/dev/null
for _ in 1 2 3 4 5; do
	sleep 0.2
	tb_do dut xconnect add p0 p1 path xsk >/dev/null
	sleep 0.2
	tb_do dut xconnect add p0 p1 path kernel >/dev/null
done
tb_wait_gen_done gen g0 60
tb_capture_wait "$TB_RUN/cap-switch"
tb_wait_quiet dut
assert_json .received "$n" "$TB_CAP"
assert_json .bad 0 "$TB_CAP"
assert_eq "switch: p0 rx" "$n" "$(tb_stat dut p0 rx_packets)"
assert_eq "switch: p1 tx" "$n" "$(tb_stat dut p1 tx_packets)"
k=$(tb_kstat dut p0 rx_packets)
x=$(tb_xstat dut p0 rx_packets)
tb_log "switch: kernel $k xsk $x"
assert_eq "switch: both paths carried" 1 "$(((k > 0 && x > 0) ? 1 : 0))"

# Egress down: counted as xdp_redirect_err (down), not lost.
tb_do dut stats reset >/dev/null
ip -n "$(tb_nsname dut)" link set "$D1" down
tb_do gen gen start g0 count 300 rate 10000 size 128 flows 4 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
assert_eq "down: p0 rx" 300 "$(tb_stat dut p0 rx_packets)"
assert_eq "down: err_down" 300 "$(tb_kstat dut p0 err_down)"
assert_eq "down: p1 tx" 0 "$(tb_stat dut p1 tx_packets)"
prom=$(tb_do dut metrics | jq -j .data)
assert_match "metrics: err_down" '^ferry_kpath_err_down_total\{port="p0"\} 300$' "$prom"
assert_match "metrics: p0 kernel rx" '^ferry_kpath_rx_packets_total\{port="p0"\} 300$' "$prom"
assert_match "metrics: verdict dev_redirect" '^ferry_xdp_verdicts_total\{port="p0",reason="dev_redirect"\} 300$' "$prom"
ip -n "$(tb_nsname dut)" link set "$D1" up
