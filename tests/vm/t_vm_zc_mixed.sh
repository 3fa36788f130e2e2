#!/usr/bin/env bash
# tests/vm/t_vm_zc_mixed.sh: runs inside the guest (tests/vm/run.sh with
# FERRY_VM_NICS=2). Mixed-mode ports on one worker: ferry cross-connects a
# virtio_net NIC in mode zc (p0, NIC0) and a veth in copy mode (p1, the
# appliance's container side), `workers 1`. NIC1, wired back to back to
# NIC0, sits in namespace pa (10.98.0.1); the veth's peer in namespace pb
# (10.98.0.2):
#
#   pa: NIC1 ─wire─ NIC0 = p0 (zc) ══ xconnect ══ p1 (copy) = vm0 ─veth─ vm1 :pb
#
# The worker holds two UMEMs (`worker show`: umem_modes), and every frame
# crossing is copied from one into the other: tx_copied of each port equals
# what it sent, and the worker's is their sum. Checked as well: ping (ARP
# included), TCP byte-exact both ways (tcpx), UDP in 8 flows (seqflow);
# conservation (rx = tx + drops by reason), both UMEMs' frames accounted for,
# ferryd ends cleanly and dmesg has no WARN/BUG (guest_lib).
# Arguments: the TCP transfer in MiB each way (default 4); `zc-first`: p0
# is added before p1 (default: the copy-mode port first, the order the
# issue saw refused); `auto`: p1 with no mode (auto: zero-copy refused by
# veth, so it takes the other UMEM).
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
MIB=4 ZC_FIRST= P1_MODE=(mode copy)
for a in "$@"; do
	case $a in
	zc-first) ZC_FIRST=1 ;;
	auto) P1_MODE=() ;;
	*) MIB=$a ;;
	esac
done
TCPX=${TCPX:-build/tests/tcpx}
SEQFLOW=${SEQFLOW:-build/tests/seqflow}
N0=$(nic_by_mac 52:54:00:fe:00:00) N1=$(nic_by_mac 52:54:00:fe:00:01)
[[ -n $N0 && -n $N1 ]] || {
	bad "two NICs needed (FERRY_VM_NICS=2)"
	exit 1
}
modprobe veth 2>/dev/null || [[ -d /sys/module/veth ]] || {
	bad "modprobe veth"
	exit 1
}
ip netns add pa
ip netns add pb
ip link set "$N1" netns pa
ip link add vm0 type veth peer name vm1 netns pb
ip link set vm0 up
for x in pa:"$N1":10.98.0.1 pb:vm1:10.98.0.2; do
	IFS=: read -r ns nic addr <<<"$x"
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "$nic" up
	ip -n "$ns" addr add "$addr/24" dev "$nic"
done
ferryd_up
ctl workers 1 >/dev/null
add() { # NAME DEV MODE...
	local p=$1 nic=$2 out
	shift 2
	if out=$(ctl port add "$p" dev "$nic" "$@" 2>&1); then
		ok "port add $p dev $nic $* ($(ctl -j port show "$p" | jq -r '.data[0] | "mode \(.mode), queues \(.queues), need_wakeup \(.need_wakeup)"'))"
	else
		bad "port add $p dev $nic $*: $out"
		exit 1
	fi
}
if [[ -n $ZC_FIRST ]]; then
	add p0 "$N0" mode zc
	add p1 vm0 "${P1_MODE[@]}"
else
	add p1 vm0 "${P1_MODE[@]}"
	add p0 "$N0" mode zc
fi
ctl xconnect add p0 p1 path xsk >/dev/null || bad "xconnect add p0 p1 path xsk"
ctl xconnect add p1 p0 path xsk >/dev/null || bad "xconnect add p1 p0 path xsk"
[[ $(ctl -j port show p0 | jq -r '.data[0].mode') == zc ]] || bad "p0 not in mode zc"
[[ $(ctl -j port show p1 | jq -r '.data[0].mode') == copy ]] || bad "p1 not in mode copy"
modes=$(ctl -j worker show | jq -c '.data[0].umem_modes | sort')
if [[ $modes == '["copy","zc"]' ]]; then
	ok "one worker, two UMEMs: $modes"
else
	bad "worker 0 umem_modes $modes, not [copy, zc]"
fi

ping_check pa 10.98.0.2 "across the zc/copy xconnect (ARP included)" || exit 1

# TCP each way, content checked by the server.
tcp_check pa pb 10.98.0.2 7100 "$MIB"
tcp_check pb pa 10.98.0.1 7101 "$MIB"

# UDP, pb -> pa (copy -> zc), 8 flows, each datagram's bytes checked.
udp_check pb pa 10.98.0.1:7200 "UDP 8 flows pb -> pa"

sleep 0.5
st=$(ctl -j stats)
pt() { jq ".data.ports[] | select(.name == \"$1\") | .totals.$2" <<<"$st"; }
for p in p0 p1; do
	echo "     $p: $(jq -c ".data.ports[] | select(.name == \"$p\") | {rx: .totals.rx_packets, tx: .totals.tx_packets, copied: .totals.tx_copied, kicks: .totals.tx_kicks, xsk: .xdp.xsk_redirect, no_xsk: .xdp.pass_no_xsk, k_rx_dropped: .totals.rx_dropped, k_ring_full: .totals.rx_ring_full, k_fill_empty: .totals.rx_fill_ring_empty_descs}" <<<"$st")"
done
# Where a frame lost outside ferry went: the hosts' own interfaces (the
# UDP wiring between QEMU's NICs is a host socket, lossy on a loaded host).
echo "     pa $N1: $(ip -n pa -s -j link show dev "$N1" | jq -c '.[0].stats64 | {rx: .rx.packets, rx_drop: .rx.dropped, tx: .tx.packets}')," \
	"pb vm1: $(ip -n pb -s -j link show dev vm1 | jq -c '.[0].stats64 | {rx: .rx.packets, rx_drop: .rx.dropped, tx: .tx.packets}')," \
	"NIC0 $N0: $(ip -s -j link show dev "$N0" | jq -c '.[0].stats64 | {rx: .rx.packets, tx: .tx.packets, tx_drop: .tx.dropped}')"
echo "     sent by p0 and not received by pa's $N1 (the wire, after ferry's TX ring): $(($(pt p0 tx_packets) - $(ip -n pa -s -j link show dev "$N1" | jq '.[0].stats64.rx.packets')))" 
xsk_checks "$st"
# Every frame either port sent came from the other port, on the other UMEM.
wcopied=$(jq '.data.workers[0].tx_copied' <<<"$st")
for p in p0 p1; do
	c=$(pt $p tx_copied) t=$(pt $p tx_packets)
	if ((c > 0 && c == t)); then
		ok "$p: tx_copied $c = tx_packets $t (every frame to it crossed UMEMs)"
	else
		bad "$p: tx_copied $c, tx_packets $t"
	fi
done
if ((wcopied == $(pt p0 tx_copied) + $(pt p1 tx_copied))); then
	ok "worker 0 tx_copied $wcopied = p0's + p1's"
else
	bad "worker 0 tx_copied $wcopied != p0 $(pt p0 tx_copied) + p1 $(pt p1 tx_copied)"
fi
RING=2048
txmin=$(jq '[.data.ports[] | .totals.tx_packets] | min' <<<"$st")
if ((txmin > RING)); then
	ok "completions: each port sent >= $txmin (ring $RING): both pools went round"
else
	bad "least sent $txmin, not above the ring's $RING"
fi
ws=$(ctl -j worker show | jq -c '.data[0] | {umem_modes, umem_frames, umem_free, umem_in_rings, umem_elsewhere, umem_consistent, umem_frames_lost}')
echo "     worker 0: $ws"
if [[ $(jq .umem_consistent <<<"$ws") == true && $(jq .umem_frames_lost <<<"$ws") == 0 && $(jq .umem_frames <<<"$ws") == 32768 ]]; then
	ok "both UMEMs' frames all accounted for"
else
	bad "UMEM: $ws"
fi
# Deleting the zero-copy port closes its UMEM whole; the copy-mode port
# goes on, on the other.
ctl xconnect del p1 >/dev/null || bad "xconnect del p1"
ctl xconnect del p0 >/dev/null || bad "xconnect del p0"
out=$(ctl port del p0 2>&1) || bad "port del p0: $out"
ws=$(ctl -j worker show | jq -c '.data[0] | {umem_modes, umem_frames, umem_consistent, umem_closed, umem_frames_lost}')
if [[ $(jq -c .umem_modes <<<"$ws") == '["copy"]' && $(jq .umem_closed <<<"$ws") == 1 && $(jq .umem_frames_lost <<<"$ws") == 0 ]]; then
	ok "port del p0: its UMEM closed whole, p1's stays ($ws)"
else
	bad "port del p0: $ws"
fi
