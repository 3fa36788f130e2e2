#!/usr/bin/env bash
# tests/vm/t_vm_zc_reflect.sh: runs inside the guest (tests/vm/run.sh). Zero-copy
# TX as well as RX: p0 on NIC0 in mode zc with the reflect app (MAC swap, back
# out of the same port); the peer NIC (in a namespace) sends 50 pings and must
# get back 50 frames: p0 rx_packets >= 50 (a wire is promiscuous: the
# peer's IPv6 multicast comes too), tx_packets = rx_packets, and the peer's RX counter
# grows by at least 50 (the reflected frames carry the peer's own MAC as
# destination; its IP layer drops them, the link counts them).
# Argument `all-queues`: first `ethtool -L NIC0 combined MAX`, so that every RX
# queue virtio_net uses once XDP is attached is one ferry binds (a workaround
# for the multi-queue finding in README.md).
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
N0=$(nic_by_mac 52:54:00:fe:00:00) N1=$(nic_by_mac 52:54:00:fe:00:01)
[[ -n $N0 && -n $N1 ]] || { bad "no NICs"; exit 1; }
ip netns add vmpeer
ip link set "$N1" netns vmpeer
ip -n vmpeer link set "$N1" up
ip -n vmpeer addr add 10.99.0.2/24 dev "$N1"
# No ARP needed: the peer knows NIC0's MAC; NIC0 has no address at all.
ip -n vmpeer neigh add 10.99.0.1 lladdr 52:54:00:fe:00:00 dev "$N1"
if [[ ${1:-} == all-queues ]]; then
	max=$(ethtool -l "$N0" | awk '/Combined/ {print $2; exit}')
	ethtool -L "$N0" combined "$max" && echo "     ethtool -L $N0 combined $max"
fi

ferryd_up
ctl workers 1 >/dev/null
if out=$(ctl port add p0 dev "$N0" mode zc 2>&1); then
	ok "port add p0 dev $N0 mode zc"
else
	bad "port add p0 dev $N0 mode zc: $out"
	exit 1
fi
ctl reflect p0 >/dev/null || bad "reflect p0"
echo "     channels $N0 after the XDP attach: $(ethtool -l "$N0" 2>/dev/null | awk '/Combined/ {print $2}' | paste -sd/) (max/current)"
peer_rx() { ip -n vmpeer -j -s link show dev "$N1" | jq '.[0].stats64.rx.packets'; }
before=$(peer_rx)
sent=$(ip netns exec vmpeer ping -c 50 -i 0.02 -W 1 10.99.0.1 2>&1 | sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p')
sleep 1
after=$(peer_rx)
p0=$(ctl -j stats port p0 | jq -c '.data.ports[] | select(.name == "p0")')
rx=$(jq '.totals.rx_packets' <<<"$p0") tx=$(jq '.totals.tx_packets' <<<"$p0")
echo "     peer sent $sent; p0 rx $rx tx $tx kicks $(jq '.totals.tx_kicks' <<<"$p0"); XDP xsk_redirect $(jq .xdp.xsk_redirect <<<"$p0") pass_no_xsk $(jq .xdp.pass_no_xsk <<<"$p0"); per queue rx $(jq -c "[.queues[] | .rx_packets]" <<<"$p0"); peer rx +$((after - before)); mode $(ctl -j port show p0 | jq -r '.data[0].mode')"
# At least the pings: a reflect port is a wire, promiscuous, and also gets
# what else the peer sends (its IPv6 router solicitations, MLD reports).
if ((rx >= sent && sent > 0)); then ok "zero-copy rx: $rx, the $sent pings included"; else bad "zero-copy rx: $rx of $sent"; fi
if ((tx == rx && tx > 0)); then ok "zero-copy tx: $tx reflected"; else bad "zero-copy tx: $tx of $rx reflected"; fi
if ((after - before >= sent)); then ok "peer received $((after - before)) frames"; else bad "peer received $((after - before)) of $sent"; fi
