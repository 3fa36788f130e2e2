#!/usr/bin/env bash
# Conservation soak: the generator runs at full rate while the dut's
# configuration changes in a loop (xconnect del/add, stats reset, port
# del/add of either port, workers changed, which re-plans every port).
# At the end every generated frame is accounted for, to the frame:
#
#   generated = received at the sink + every loss some counter names
#
# using the dut's ledger (counters since it started, deleted ports
# included, untouched by `stats reset`) and the kernel's counters for what
# goes to the dut's IP stack: while d0 has no XDP program, and what the
# classifier passes (pass_no_xsk: a port being deleted takes its sockets
# out of the XSKMAP before it detaches). And no UMEM frame leaks: every
# UMEM that closed got all of its frames back. SOAK_SECS sets the length
# (default 45). Once the sink's ferryd has XDP on s0, each `xconnect add`
# on the default path auto takes the kernel path (DEVMAP), and each
# `workers` re-plan or port del/add may switch it back: the ledger's
# kpath_* counters close the sums over both paths.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

SECS=${SOAK_SECS:-45}
tb_init
tb_std3_chain
# Without an XDP program on d0 (between port del and port add), frames the
# generator redirects into g0 would vanish uncounted unless d0 has a NAPI
# to take them (docs/kernel-facts.md: veth); with GRO on, they reach the IP stack.
tb_exec dut ethtool -K "$D0" gro on >/dev/null

# Frames d0 handed to the dut's IP stack (which drops them: no address
# there, InAddrErrors). d0's rx_dropped is no help: it includes the XDP
# redirects that failed, already in the sockets' rx_dropped/rx_ring_full.
stack_in() {
	tb_exec dut cat /proc/net/snmp |
		awk '$1 == "Ip:" && $4 ~ /^[0-9]+$/ {print $4}'
}
txdrop() { tb_exec "$1" ip -s -j link show dev "$(tb_ifname "$2")" | jq -r '.[0].stats64.tx.dropped'; }
N0=$(stack_in)
DL0=$(txdrop dut d1)
GL0=$(txdrop gen g0)

tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" >/dev/null # full rate
end=$((SECONDS + SECS))
n=0
ops=(xconnect stats_reset port_del_p1 port_del_p0 workers)
while ((SECONDS < end)); do
	op=${ops[n % ${#ops[@]}]}
	case $op in
	xconnect)
		tb_do dut xconnect del p0 >/dev/null
		sleep 0.2
		tb_do dut xconnect add p0 p1 >/dev/null
		;;
	stats_reset)
		tb_do dut stats reset >/dev/null
		;;
	port_del_p1)
		tb_do dut xconnect del p0 >/dev/null
		tb_do dut port del p1 >/dev/null
		tb_do dut port add p1 dev "$D1" >/dev/null
		tb_do dut xconnect add p0 p1 >/dev/null
		;;
	port_del_p0)
		tb_do dut port del p0 >/dev/null
		sleep 0.2
		tb_do dut port add p0 dev "$D0" >/dev/null
		tb_do dut xconnect add p0 p1 >/dev/null
		;;
	workers)
		if ((n / ${#ops[@]} % 2)); then cpus=1; else cpus=0-1; fi
		tb_do dut workers "$cpus" >/dev/null
		;;
	esac
	n=$((n + 1))
	sleep 0.5
done
tb_log "$n configuration changes in ${SECS}s"
tb_do gen gen stop g0 >/dev/null
tb_wait_quiet 30 gen dut sink

gen=$(tb_do gen stats)
L=$(tb_ctlj dut stats | jq -c .data.ledger)
sink=$(tb_do sink stats)
s0=$(jq -c '.data.ports[] | select(.name == "s0")' <<<"$sink")
lg() { jq -r "$1" <<<"$L"; }
G=$(jq -r '.data.gen[0].frames' <<<"$gen")
GL=$(($(txdrop gen g0) - GL0))
V=$(lg '[.xdp[]] | add')
P=$(lg '.xdp | .pass_rule + .pass_no_rule + .pass_no_xsk')
N=$(($(stack_in) - N0 - P))
X=$(lg .xdp.xsk_redirect)
R=$(lg .rx_packets)
K=$(($(lg .rx_dropped) + $(lg .rx_ring_full)))
A=$(($(lg .rx_abandoned) + $(lg .tx_abandoned)))
T=$(lg .tx_packets)
D=$(lg .drops)
TI=$(lg .tx_invalid_descs)
DL=$(($(txdrop dut d1) - DL0))
SV=$(jq -r '[.xdp[]] | add' <<<"$s0")
SX=$(jq -r '.xdp.xsk_redirect' <<<"$s0")
SR=$(jq -r '.totals.rx_packets' <<<"$s0")
KR=$(lg .kpath_rx_packets)
KT=$(lg .kpath_tx_packets)
KE=$(lg .kpath_redirect_err)
KX=$(lg .kpath_xmit_drops)
SK=$(jq -r '.totals | .rx_dropped + .rx_ring_full' <<<"$s0")
cat <<TXT
soak: $n configuration changes in ${SECS}s ($(lg .ports_retired) ports retired)
  generated (full rate)                          G  = $G
  lost by veth g0                                GL = $GL
  to the dut's IP stack, no XDP on d0            N  = $N
  seen by the dut's XDP programs                 V  = $V  (xsk_redirect X = $X, passed to the stack $P)
  dut received                                   R  = $R
  dut lost in the kernel (rx_dropped+ring_full)  K  = $K
  left in rings when a port closed               A  = $A
  dut sent                                       T  = $T  (tx_invalid_descs $TI)
  kernel path: redirected                        KR = $KR (dev_redirect $(lg .xdp.dev_redirect))
  kernel path: sent, refused at redirect, by d1  KT = $KT, KE = $KE, KX = $KX
  dropped by ferry, by reason                    D  = $D  $(jq -c .drop_reasons <<<"$L")
  lost by veth d1                                DL = $DL
  seen by the sink's XDP program                 SV = $SV (xsk_redirect $SX)
  sink received                                  SR = $SR
  sink lost in the kernel                        SK = $SK
  UMEMs closed $(lg .umem_closed), frames missing from them $(lg .umem_frames_lost)
TXT
assert_ge "configuration changes" 10 "$n"
assert_eq "generated == lost at g0 + to the stack + seen by XDP" "$G" $((GL + N + V))
assert_eq "xsk_redirect == received + lost in the kernel + abandoned" "$X" $((R + K + $(lg .rx_abandoned)))
assert_eq "received == sent + dropped" "$R" $((T + D))
assert_eq "kernel path: dev_redirect == kpath_rx" "$(lg .xdp.dev_redirect)" "$KR"
assert_eq "kernel path: redirected == sent + refused" "$KR" $((KT + KE + KX))
# d1's tx_dropped counts both paths' losses there, the kernel path's too
# (veth's ndo_xdp_xmit refusals): KX is inside DL.
assert_eq "sent (both paths) == lost at d1 + invalid + seen by the sink + abandoned" $((T + KT + KX)) \
	$((DL + TI + SV + $(lg .tx_abandoned)))
assert_eq "sink xsk_redirect == received + lost in the kernel" "$SX" $((SR + SK))
assert_eq "END TO END: generated == sink received + every counted loss" "$G" \
	$((SR + GL + N + (V - X - KR) + K + A + D + DL + TI + (SV - SX) + SK + KE))
assert_eq "UMEM frames missing" 0 "$(lg .umem_frames_lost)"
fault_umem_idle dut
