#!/usr/bin/env bash
# tests/vm/t_vm_zc_route.sh: runs inside the guest (tests/vm/run.sh with
# FERRY_VM_NICS=4). The route app on two zero-copy ports: the guest's own
# namespace is the router (addresses 10.97.1.254 on NIC0, 10.97.2.254 on
# NIC2, kernel forwarding off: ferry forwards, the kernel is its control
# plane), pa (10.97.1.1 on NIC1) and pb (10.97.2.1 on NIC3) are hosts with
# default routes via it:
#
#   pa: NIC1 ─wire─ NIC0 = p0 ══ route ══ p1 = NIC2 ─wire─ NIC3 :pb
#
# Checked: ping replies at TTL 63 both ways (neighbours resolved by the
# kernel first), TCP 4 MiB each way byte-exact (tcpx), conservation, and
# (guest_lib) a clean ferryd exit and dmesg.
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
TCPX=${TCPX:-build/tests/tcpx}
four_nics || exit 1
sysctl -qw net.ipv4.ip_forward=0
ip addr add 10.97.1.254/24 dev "$N0"
ip addr add 10.97.2.254/24 dev "$N2"
for x in pa:"$N1":10.97.1 pb:"$N3":10.97.2; do
	IFS=: read -r ns nic net <<<"$x"
	ip netns add "$ns"
	ip link set "$nic" netns "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "$nic" up
	ip -n "$ns" addr add "$net.1/24" dev "$nic"
	ip -n "$ns" route add default via "$net.254"
done
ferryd_up
ctl workers 1 >/dev/null
for x in p0:"$N0" p1:"$N2"; do
	IFS=: read -r p nic <<<"$x"
	if out=$(ctl port add "$p" dev "$nic" mode zc 2>&1) && ctl route "$p" >/dev/null; then
		ok "port add $p dev $nic mode zc; route $p ($(ctl -j port show "$p" | jq -r '.data[0] | "mode \(.mode), queues \(.queues)"'))"
	else
		bad "port add $p dev $nic mode zc / route $p: $out"
		exit 1
	fi
done

# The first frames find no neighbour (ferry asks the kernel to resolve).
rping() {
	local ns=$1 dst=$2 i out
	for ((i = 0; i < 10; i++)); do
		out=$(ip netns exec "$ns" ping -c 1 -W 1 "$dst" 2>&1) && {
			echo "$out"
			return 0
		}
	done
	echo "$out"
	return 1
}
for x in pa:10.97.2.1 pb:10.97.1.1; do
	IFS=: read -r ns dst <<<"$x"
	if out=$(rping "$ns" "$dst") && grep -q 'ttl=63' <<<"$out"; then
		ok "ping $ns -> $dst through ferry, reply at TTL 63"
	else
		bad "ping $ns -> $dst: $out"
		# where the frames went: per queue, and what the hosts' NICs saw
		ctl -j stats | jq -M -c '.data.ports[] | {name, q: [.queues[] | {q: .queue, rx: .rx_packets, tx: .tx_packets, kicks: .tx_kicks}], no_xsk: .xdp.pass_no_xsk}'
		ctl -j worker show | jq -M -c '.data[0] | {umem_free, umem_in_rings, umem_elsewhere}'
		ip -n pa -s link show dev "$N1" | sed -n '3,6p'
		ip -n pb -s link show dev "$N3" | sed -n '3,6p'
	fi
done

tcp_check pa pb 10.97.2.1 7300 4
tcp_check pb pa 10.97.1.1 7301 4

sleep 0.5
st=$(ctl -j stats)
tot() { jq "[.data.ports[] | .totals.$1] | add" <<<"$st"; }
rx=$(tot rx_packets) tx=$(tot tx_packets) drops=$(tot drops)
echo "     ports: $(jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, tx: .totals.tx_packets, drops: .totals.drops, reasons: (.totals.drop_reasons | with_entries(select(.value > 0)))}]' <<<"$st")"
echo "     route: $(jq -c '.data.route | with_entries(select(.value != 0))' <<<"$st")"
# The route app counts its own outcomes: a frame with no neighbour yet is
# dropped there (no_neigh, the resolution asked of the kernel).
nn=$(jq '.data.route.no_neigh // 0' <<<"$st")
if ((rx == tx + drops + nn && rx > 0)); then
	ok "conservation: rx $rx = tx $tx + drops $drops + no_neigh $nn"
else
	bad "conservation: rx $rx != tx $tx + drops $drops + no_neigh $nn"
fi
