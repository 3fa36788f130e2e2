#!/usr/bin/env bash
# tests/vm/t_vm_zc_xconnect.sh: runs inside the guest (tests/vm/run.sh with
# FERRY_VM_NICS=4). Zero-copy forwarding: ferry cross-connects NIC0 (p0) and
# NIC2 (p1), both in mode zc, on the AF_XDP workers (path xsk). NIC1 and
# NIC3, wired back to back to them, sit in two namespaces, pa (10.98.0.1)
# and pb (10.98.0.2), one subnet, hosts that know nothing of ferry:
#
#   pa: NIC1 ─wire─ NIC0 = p0 ══ xconnect ══ p1 = NIC2 ─wire─ NIC3 :pb
#
# Checked: ARP and ping cross; a TCP transfer (tcpx: every byte a function
# of its offset, so the server checks content and order) and UDP in 8
# flows (seqflow: numbered datagrams whose bytes are checked too) arrive
# whole; many more frames than a ring holds, so fill-ring refills and TX
# completions go round many times; need_wakeup is on; frames are conserved
# (what both ports received = what they sent + what they dropped, by
# reason); the UMEM's frames are all accounted for; and (guest_lib) ferryd
# ends cleanly and dmesg has no WARN/BUG.
# Arguments: the TCP transfer in MiB (default 8); `busy-poll`: the ports
# with `busy-poll on` (SO_BUSY_POLL on the zero-copy sockets, which get a
# NAPI id on a zero-copy bind; without SO_PREFER_BUSY_POLL, which the
# virtio_net profile leaves off: with it TX waits for an interrupt).
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
MIB=8 BUSY=()
for a in "$@"; do
	case $a in
	busy-poll) BUSY=(busy-poll on) ;;
	*) MIB=$a ;;
	esac
done
TCPX=${TCPX:-build/tests/tcpx}
SEQFLOW=${SEQFLOW:-build/tests/seqflow}
four_nics || exit 1
hosts_ab
ferryd_up
ctl workers 1 >/dev/null
for x in p0:"$N0" p1:"$N2"; do
	IFS=: read -r p nic <<<"$x"
	if out=$(ctl port add "$p" dev "$nic" mode zc "${BUSY[@]}" 2>&1); then
		ok "port add $p dev $nic mode zc ${BUSY[*]} ($(ctl -j port show "$p" | jq -r '.data[0] | "mode \(.mode), queues \(.queues), need_wakeup \(.need_wakeup), busy_poll \(.busy_poll)"'))"
	else
		bad "port add $p dev $nic mode zc ${BUSY[*]}: $out"
		exit 1
	fi
done
ctl xconnect add p0 p1 path xsk >/dev/null || bad "xconnect add p0 p1 path xsk"
ctl xconnect add p1 p0 path xsk >/dev/null || bad "xconnect add p1 p0 path xsk"
if ((${#BUSY[@]})); then
	for p in p0 p1; do
		[[ $(ctl -j port show $p | jq -r '.data[0].busy_poll') == true ]] || bad "$p: busy_poll not on"
		[[ $(ctl -j port show $p | jq -r '.data[0].busy_poll_prefer') == false ]] ||
			bad "$p: busy_poll_prefer on virtio_net (its zero-copy TX has a NAPI of its own)"
	done
fi
for p in p0 p1; do
	[[ $(ctl -j port show $p | jq -r '.data[0].mode') == zc ]] || bad "$p not in mode zc"
	[[ $(ctl -j port show $p | jq -r '.data[0].need_wakeup') == true ]] || bad "$p: need_wakeup off"
done

# The promiscuous mode reaches the device from a driver work item (virtio_net
# sends it on its control queue), a moment after `xconnect add`: until then
# pb's unicast ARP replies to pa's MAC stop at NIC2 (ping_check waits).
if ! ping_check pa 10.98.0.2 "across the xconnect (ARP included)"; then
	ip -n pa neigh; ip -n pa -s link show dev "$N1"; ip -n pb -s link show dev "$N3"
	exit 1
fi

# TCP, pa -> pb, content checked by the server.
tcp_check pa pb 10.98.0.2 7100 "$MIB"

# UDP, pb -> pa, 8 flows (several RX queues when there are several), each
# datagram's bytes checked.
udp_check pb pa 10.98.0.1:7200 "UDP 8 flows pb -> pa"

sleep 0.5
st=$(ctl -j stats)
echo "     p0: $(jq -c '.data.ports[] | select(.name == "p0") | {rx: .totals.rx_packets, tx: .totals.tx_packets, kicks: .totals.tx_kicks, fill_empty: .totals.rx_fill_ring_empty_descs, q_rx: [.queues[] | .rx_packets], xsk: .xdp.xsk_redirect, no_xsk: .xdp.pass_no_xsk}' <<<"$st")"
echo "     p1: $(jq -c '.data.ports[] | select(.name == "p1") | {rx: .totals.rx_packets, tx: .totals.tx_packets, kicks: .totals.tx_kicks, fill_empty: .totals.rx_fill_ring_empty_descs, q_rx: [.queues[] | .rx_packets], xsk: .xdp.xsk_redirect, no_xsk: .xdp.pass_no_xsk}' <<<"$st")"
xsk_checks "$st"
# A fill ring holds XSK_RING_SIZE (2048) descriptors: a queue that
# received more frames than that had its fill ring refilled, and a port
# that sent more had its completions reaped and reused, many times over.
RING=2048
qmax=$(jq '[.data.ports[] | .queues[] | .rx_packets] | max' <<<"$st")
txmin=$(jq '[.data.ports[] | .totals.tx_packets] | min' <<<"$st")
if ((qmax > RING && txmin > RING)); then
	ok "refill and completions: a queue received $qmax frames, each port sent >= $txmin (ring $RING)"
else
	bad "refill and completions: most on a queue $qmax, least sent $txmin, not above the ring's $RING"
fi
# Fill shares: the worker's 8 sockets (4 queues of 2 ports) with 2048-slot
# fill rings would hold its whole UMEM; each holds an equal part of half.
shares=$(jq -c '[.data.ports[] | .queues[] | .fill_share]' <<<"$st")
frames=$(ctl -j worker show | jq '.data[0].umem_frames')
if (($(jq 'add' <<<"$shares") <= frames / 2)); then
	ok "fill shares $shares: at most half of the UMEM's $frames frames"
else
	bad "fill shares $shares: more than half of the UMEM's $frames frames"
fi
ws=$(ctl -j worker show | jq -c '.data[0] | {umem_frames, umem_free, umem_in_rings, umem_elsewhere, umem_consistent, umem_frames_lost}')
echo "     worker 0: $ws"
if [[ $(jq .umem_consistent <<<"$ws") == true && $(jq .umem_frames_lost <<<"$ws") == 0 ]]; then
	ok "UMEM frames all accounted for"
else
	bad "UMEM: $ws"
fi
