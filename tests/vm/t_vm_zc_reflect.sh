#!/usr/bin/env bash
# tests/vm/t_vm_zc_reflect.sh: runs inside the guest (tests/vm/run.sh). Zero-copy
# TX as well as RX: p0 on NIC0 in mode zc with the reflect app (MAC swap, back
# out of the same port); the peer NIC (in a namespace) sends 50 pings and must
# get back 50 frames: p0 rx_packets >= 50 (a wire is promiscuous: the
# peer's IPv6 multicast comes too), tx_packets = rx_packets, and the peer's RX counter
# grows by at least 50 (the reflected frames carry the peer's own MAC as
# destination; its IP layer drops them, the link counts them).
# Then 16 UDP flows, which RSS spreads over all 4 queues, those virtio_net
# adds with XDP (receive only) included: every frame comes back (ferry
# sends from those on a queue that sends; before it sent on the queue it
# received from, and the driver never sent them: 1120 of 2001 came back).
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

# Many flows: RSS spreads them over every RX queue in use, the ones the XDP
# attach added included. virtio_net's added queues receive but never send an
# AF_XDP TX ring (port show: rx_only_queues): frames reflected from them
# must leave through a queue that sends, or they are counted and never go.
ro=$(ctl -j port show p0 | jq -c '.data[0].rx_only_queues')
if [[ ${1:-} != all-queues && $ro == null ]]; then
	bad "rx_only_queues not shown (channels grew with XDP: $(ethtool -l "$N0" | awk '/Combined/ {print $2}' | paste -sd/))"
fi
SEQFLOW=${SEQFLOW:-build/tests/seqflow}
st0=$(ctl -j stats port p0 | jq -c '.data.ports[] | select(.name == "p0") | [.totals.rx_packets, .totals.tx_packets]')
before=$(peer_rx)
ip netns exec vmpeer "$SEQFLOW" send -d 10.99.0.1:7300 -r 1000 -t 2 -f 16 -s 200 >/dev/null 2>&1 ||
	bad "seqflow send"
sleep 1
after=$(peer_rx)
p0=$(ctl -j stats port p0 | jq -c '.data.ports[] | select(.name == "p0")')
drx=$(($(jq '.totals.rx_packets' <<<"$p0") - $(jq '.[0]' <<<"$st0")))
dtx=$(($(jq '.totals.tx_packets' <<<"$p0") - $(jq '.[1]' <<<"$st0")))
qrx=$(jq -c '[.queues[] | .rx_packets]' <<<"$p0")
echo "     16 UDP flows: rx_only_queues $ro, per queue rx $qrx, p0 rx +$drx tx +$dtx, peer rx +$((after - before))"
rxo=0
[[ $ro != null ]] &&
	rxo=$(jq --argjson ro "$ro" '[.queues[] | select(.queue >= $ro[0] and .queue <= $ro[1]) | .rx_packets] | add // 0' <<<"$p0")
((rxo > 0)) || [[ $ro == null ]] || bad "no frame arrived on the receive-only queues $ro (16 flows)"
# The emulated wire may lose a frame or two of a burst (seen: 2000 of 2001
# at the peer). Frames reflected on a queue that does not send are lost by
# the hundred (the frames of the receive-only queues): fewer than half of
# those missing, and at most 2 + 0.5 %, is a pass.
missing=$((dtx - (after - before)))
if ((dtx == drx && drx >= 2000 && missing <= 2 + dtx / 200 && (rxo == 0 || 2 * missing < rxo))); then
	ok "16 flows over every queue reflected: $dtx of $drx, the peer got $((after - before)) ($rxo came in on receive-only queues)"
else
	bad "16 flows: reflected $dtx of $drx, the peer got $((after - before)) ($rxo came in on receive-only queues)"
fi
