#!/usr/bin/env bash
# Under load every frame is accounted for: each generated frame reached the
# dut's XDP program or was counted lost by veth; each redirected frame
# reached the AF_XDP socket or was counted by the kernel; each frame ferry
# received went out or was counted as a drop.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3_chain

tb_do gen gen start g0 rate 200000 count 400000 >/dev/null
tb_wait_gen_done gen g0 60
tb_wait_quiet 30 gen dut sink

gen=$(tb_do gen stats)
dut=$(tb_do dut stats)
sink=$(tb_do sink stats)
g0_link=$(tb_exec gen ip -s -j link show dev "$G0")
port() { jq -c --arg p "$2" '.data.ports[] | select(.name == $p)' <<<"$1"; }
p0=$(port "$dut" p0)
p1=$(port "$dut" p1)
s0=$(port "$sink" s0)
tot() { jq -r ".totals.$2" <<<"$1"; }

G=$(jq -r '.data.gen[] | select(.port == "g0") | .frames' <<<"$gen")
veth_lost=$(jq -r '.[0].stats64.tx.dropped' <<<"$g0_link")
V=$(jq -r '[.xdp[]] | add' <<<"$p0")
X=$(jq -r '.xdp.xsk_redirect' <<<"$p0")
R=$(tot "$p0" rx_packets)
K=$(($(tot "$p0" rx_dropped) + $(tot "$p0" rx_ring_full)))
T=$(tot "$p1" tx_packets)
D=$(($(tot "$p0" drops) + $(tot "$p1" drops)))
SX=$(jq -r '.xdp.xsk_redirect' <<<"$s0")
SR=$(tot "$s0" rx_packets)
SK=$(($(tot "$s0" rx_dropped) + $(tot "$s0" rx_ring_full)))

cat <<TXT
accounting:
  generated (gen g0 frames)                     G = $G
  lost by veth before the dut (g0 tx_dropped)     $veth_lost
  seen by the dut's XDP program (all verdicts)  V = $V
    of which xsk_redirect                       X = $X
  p0 received by ferry (rx_packets)             R = $R
  p0 lost in the kernel (rx_dropped + rx_ring_full) $K
  p1 sent (tx_packets)                          T = $T
  dropped by ferry (p0 + p1 drops)              D = $D
  sink s0: xsk_redirect $SX, rx_packets $SR, lost in the kernel $SK, drops $(tot "$s0" drops)
  gen: $(jq -c .data.gen <<<"$gen")
  dut p0 totals: $(jq -c .totals <<<"$p0")
  dut p1 totals: $(jq -c .totals <<<"$p1")
  sink s0 totals: $(jq -c .totals <<<"$s0")
  dut d0 ethtool: $(tb_exec dut ethtool -S "$D0" | tr -s ' \n' ' ')
TXT

assert_eq "generated == seen by XDP + lost by veth" "$G" $((V + veth_lost))
assert_eq "xsk_redirect == received + lost in the kernel" "$X" $((R + K))
assert_eq "received == sent + dropped" "$R" $((T + D))
assert_eq "sink: xsk_redirect == received + lost in the kernel" "$SX" $((SR + SK))
assert_eq "sink: received == dropped by the drop app" "$SR" "$(tot "$s0" drops)"
assert_ge "frames forwarded" 1 "$T"
