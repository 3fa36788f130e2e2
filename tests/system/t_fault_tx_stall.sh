#!/usr/bin/env bash
# The sink side stalls so the dut's TX ring fills: s0's NAPI (threaded, so
# it can be starved) gets almost no CPU for two seconds. d1 gets a root
# qdisc: a veth without one drops a frame its peer's ring cannot take, with
# one it stops its queue and copy-mode TX answers EAGAIN, as a NIC with a
# full TX ring does. So the dut's TX ring fills, the dut takes from its RX
# ring only what the egress TX ring can hold (tx_backpressure), the rest
# backs up into the kernel's rx_ring_full/rx_dropped, nothing is lost at d1,
# and at the end every generated frame is accounted for, to the frame, with
# no UMEM frame leaked.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3_chain

tb_exec dut tc qdisc replace dev "$(tb_ifname d1)" root pfifo limit 1000
tb_exec sink sh -c "echo 1 > /sys/class/net/$S0/threaded"
napi=
for ((i = 0; i < 20; i++)); do
	napi=$(ps -eo pid,comm | awk -v n="napi/$S0-" 'index($2, n) == 1 {print $1; exit}')
	[[ -n $napi ]] && break
	sleep 0.1
done
[[ -n $napi ]] || tb_die "no NAPI thread for $S0"
echo "s0's NAPI thread: pid $napi"

tb_do gen gen start g0 rate 100000 count 300000 dst-mac "$(tb_mac dut d0)" >/dev/null
sleep 0.5
# Starve it: lowest priority, on CPU 0, next to a busy loop, for 2 s.
chrt -i -p 0 "$napi"
taskset -p 1 "$napi" >/dev/null
timeout 2 taskset -c 0 sh -c 'while :; do :; done' || true
chrt -o -p 0 "$napi"
taskset -p 3 "$napi" >/dev/null 2>&1 || true
tb_wait_gen_done gen g0 60
tb_wait_quiet 30 gen dut sink

gen=$(tb_do gen stats)
dut=$(tb_do dut stats)
sink=$(tb_do sink stats)
port() { jq -c --arg p "$2" '.data.ports[] | select(.name == $p)' <<<"$1"; }
tot() { jq -r ".totals.$2" <<<"$1"; }
txdrop() { tb_exec "$1" ip -s -j link show dev "$(tb_ifname "$2")" | jq -r '.[0].stats64.tx.dropped'; }
p0=$(port "$dut" p0)
p1=$(port "$dut" p1)
s0=$(port "$sink" s0)
G=$(jq -r '.data.gen[0].frames' <<<"$gen")
GL=$(txdrop gen g0)
V=$(jq -r '[.xdp[]] | add' <<<"$p0")
X=$(jq -r '.xdp.xsk_redirect' <<<"$p0")
R=$(tot "$p0" rx_packets)
K=$(($(tot "$p0" rx_dropped) + $(tot "$p0" rx_ring_full)))
T=$(tot "$p1" tx_packets)
D=$(($(tot "$p0" drops) + $(tot "$p1" drops)))
TI=$(tot "$p1" tx_invalid_descs)
DL=$(txdrop dut d1)
SV=$(jq -r '[.xdp[]] | add' <<<"$s0")
SX=$(jq -r '.xdp.xsk_redirect' <<<"$s0")
SR=$(tot "$s0" rx_packets)
SK=$(($(tot "$s0" rx_dropped) + $(tot "$s0" rx_ring_full)))
BP=$(tot "$p0" tx_backpressure)
cat <<TXT
accounting:
  generated                                     G  = $G
  lost by veth g0 (tx dropped)                  GL = $GL
  seen by the dut's XDP program                 V  = $V   (xsk_redirect X = $X)
  p0 received                                   R  = $R
  p0 lost in the kernel (rx_dropped + ring_full) K  = $K
  p0 RX passes cut short by a full TX ring      BP = $BP
  p1 sent                                       T  = $T   (tx_invalid_descs $TI)
  dropped by ferry                              D  = $D
  lost by veth d1 (tx dropped)                  DL = $DL
  seen by the sink's XDP program                SV = $SV  (xsk_redirect $SX)
  sink received                                 SR = $SR
  sink lost in the kernel                       SK = $SK
TXT
assert_ge "tx_backpressure while the sink stalled" 1 "$BP"
assert_eq "lost at d1 (its qdisc pushes back instead)" 0 "$DL"
assert_eq "generated == lost at g0 + seen by the dut" "$G" $((GL + V))
assert_eq "dut xsk_redirect == received + lost in the kernel" "$X" $((R + K))
assert_eq "dut received == sent + dropped" "$R" $((T + D))
assert_eq "dut sent == lost at d1 + invalid + seen by the sink" "$T" $((DL + TI + SV))
assert_eq "sink xsk_redirect == received + lost in the kernel" "$SX" $((SR + SK))
assert_eq "end to end: generated == sink received + every counted loss" "$G" \
	$((SR + GL + (V - X) + K + D + DL + TI + (SV - SX) + SK))
fault_umem_idle dut
