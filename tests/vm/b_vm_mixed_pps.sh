#!/usr/bin/env bash
# tests/vm/b_vm_mixed_pps.sh: a measurement, not a test; runs inside the
# guest (tests/vm/run.sh with FERRY_VM_NICS=4). Zero-copy against copy mode
# on the same virtio NICs, the cost of the copy between UMEMs, and the
# kernel path beside them, as ratios in one boot: ferry forwards frames
# from NIC0 (p0) to NIC2 or a veth (p1), one worker (rows below); the
# kernel's pktgen on NIC1
# (wired to NIC0) offers 64-byte UDP frames as fast as it can. Printed per
# round: the frames p1 sent per second over SECS, and tx_copied. TCG
# emulation: the ratio says how the copy weighs against the rest of this
# guest's path, nothing about a NIC.
# Arguments: SECS per round (default 5), ROUNDS (default 3).
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
SECS=${1:-5} ROUNDS=${2:-3}
N0=$(nic_by_mac 52:54:00:fe:00:00) N1=$(nic_by_mac 52:54:00:fe:00:01)
N2=$(nic_by_mac 52:54:00:fe:00:02)
[[ -n $N0 && -n $N1 && -n $N2 ]] || {
	bad "four NICs needed (FERRY_VM_NICS=4)"
	exit 1
}
modprobe veth && modprobe pktgen || {
	bad "modprobe veth pktgen"
	exit 1
}
ip link add vm0 type veth peer name vm1
ip link set vm0 up
ip link set vm1 up
ferryd_up
ctl workers 1 >/dev/null
# pktgen on CPU 0 (the worker is on CPU 1), from NIC1 (wired to NIC0).
pktgen_on "$N1"
round() { # LABEL
	local t0 t1 s0 s1
	sleep 1
	s0=$(ctl -j stats)
	t0=$(date +%s.%N)
	sleep "$SECS"
	s1=$(ctl -j stats)
	t1=$(date +%s.%N)
	# p1's frames and copies, p0's kernel drops (rx_ring_full: the worker
	# fell behind), the worker's busy share (1: saturated), all per round.
	jq -n -r --argjson a "$s0" --argjson b "$s1" --arg dt "$(echo "$t1 - $t0" | bc)" --arg l "$1" '
		def p($s; $n): $s.data.ports[] | select(.name == $n) | .totals;
		"RESULT \($l) pps \(((p($b; "p1").tx_packets - p($a; "p1").tx_packets) / ($dt | tonumber)) | floor)" +
		" copied \(p($b; "p1").tx_copied - p($a; "p1").tx_copied) of \(p($b; "p1").tx_packets - p($a; "p1").tx_packets)" +
		" p0_ring_full \(p($b; "p0").rx_ring_full - p($a; "p0").rx_ring_full)" +
		" busy_share \($b.data.workers[0].busy_share * 100 | floor)%"'
}
# Rows, each with its ports added afresh: zc->zc (one UMEM), zc->copy
# (the veth: two UMEMs, every frame copied), copy->copy (the same virtio
# NICs bound in copy mode: the kernel copies into and out of the UMEM),
# kernel (xconnect path kernel: the classifier's DEVMAP redirect, no
# worker).
for ((r = 1; r <= ROUNDS; r++)); do
	for row in zc:zc zc:copy copy:copy kernel; do
		m0=${row%%:*} m1=${row#*:} path=xsk dev1=$N2
		[[ $row == kernel ]] && m0=copy m1=copy path=kernel
		[[ $row == zc:copy ]] && dev1=vm0
		ctl port add p0 dev "$N0" mode "$m0" >/dev/null || bad "port add p0 $N0 mode $m0"
		ctl port add p1 dev "$dev1" mode "$m1" >/dev/null || bad "port add p1 $dev1 mode $m1"
		ctl xconnect add p0 p1 path "$path" >/dev/null || bad "xconnect add p0 p1 path $path"
		echo start >/proc/net/pktgen/pgctrl &
		PG=$!
		sleep 1
		round "round $r $row"
		echo stop >/proc/net/pktgen/pgctrl
		wait "$PG"
		ctl xconnect del p0 >/dev/null
		ctl port del p1 >/dev/null || bad "port del p1"
		ctl port del p0 >/dev/null || bad "port del p0"
		ctl -j worker show | jq -M -c '.data[0] | {umem_modes, umem_consistent, umem_frames_lost}'
	done
done
