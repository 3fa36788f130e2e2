#!/usr/bin/env bash
# tests/vm/t_vm_zc_jumbo.sh: runs inside the guest (tests/vm/run.sh with
# FERRY_VM_NICS=4 FERRY_VM_QUEUES=2 FERRY_VM_MTU=9000). Jumbo frames and
# zero-copy on virtio_net, which takes no multi-buffer frames in zero-copy
# (the kernel reports xdp-zc-max-segs 1): its driver drops a frame longer
# than one UMEM frame less the XDP headroom (1792 bytes) before XDP runs,
# counted only in its own rx_dropped (measured: 3000- and 8000-byte pings
# vanished in mode zc, crossed in mode copy). So, with MTU 9000:
#   - `port add ... mode zc` is refused (EMSGSIZE) and says why and what to do;
#   - `mode auto` binds copy mode and says why; an xconnect then carries
#     8000-byte pings (DF set) and a TCP transfer at MTU 9000 whole, both ways;
#   - a zero-copy port (MTU 1500) whose MTU is raised to 9000 under it gets a
#     warning in `port show` (or the kernel refuses the change).
#   pa: NIC1 ─ NIC0 = p0 ══ xconnect ══ p1 = NIC2 ─ NIC3 :pb
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
four_nics || exit 1
hosts_ab 9000
ip link set "$N0" mtu 9000 || bad "MTU 9000 on $N0"
ip link set "$N2" mtu 9000 || bad "MTU 9000 on $N2"
ferryd_up
ctl workers 1 >/dev/null

if out=$(ctl port add p0 dev "$N0" mode zc 2>&1); then
	bad "port add p0 mode zc at MTU 9000 was accepted"
	ctl port del p0 >/dev/null
elif grep -q "EMSGSIZE" <<<"$out" && grep -q "mode copy" <<<"$out"; then
	ok "mode zc at MTU 9000 refused: $out"
else
	bad "mode zc at MTU 9000: $out"
fi
for x in p0:"$N0" p1:"$N2"; do
	IFS=: read -r p nic <<<"$x"
	ctl port add "$p" dev "$nic" mode auto >/dev/null || bad "port add $p dev $nic mode auto"
	m=$(ctl -j port show "$p" | jq -r '.data[0].mode')
	[[ $m == copy ]] && ok "$p mode auto at MTU 9000: $m" || bad "$p mode auto at MTU 9000: $m, not copy"
done
grep -q "auto: MTU 9000 needs multi-buffer frames" /run/ferry-vm.log &&
	ok "the log says why auto chose copy" || bad "no reason for copy mode in the log"
ctl xconnect add p0 p1 path xsk >/dev/null || bad "xconnect add p0 p1"
ctl xconnect add p1 p0 path xsk >/dev/null || bad "xconnect add p1 p0"
ping_check pa 10.98.0.2 "across the xconnect" || exit 1
if ip netns exec pa ping -c 5 -i 0.2 -W 2 -s 8000 -M do 10.98.0.2 >/run/ping.out 2>&1; then
	ok "8000-byte pings, DF set, both ways: $(grep -o '[0-9]* received' /run/ping.out)"
else
	bad "8000-byte pings: $(tail -2 /run/ping.out | head -1)"
fi
tcp_check pa pb 10.98.0.2 7100 8
tcp_check pb pa 10.98.0.1 7101 8
sleep 0.5
xsk_checks "$(ctl -j stats)"
ctl xconnect del p0 >/dev/null && ctl xconnect del p1 >/dev/null &&
	ctl port del p0 >/dev/null && ctl port del p1 >/dev/null || bad "xconnect del, port del"

# A zero-copy port whose MTU grows under it.
ip link set "$N0" mtu 1500
if ctl port add p0 dev "$N0" mode zc >/dev/null; then
	ok "p0 mode zc at MTU 1500"
	if ip link set "$N0" mtu 9000 2>/run/mtu.err; then
		for ((i = 0; i < 30; i++)); do
			w=$(ctl -j port show p0 | jq -r '.data[0].warnings[]' | grep MTU)
			[[ -n $w ]] && break
			sleep 0.1
		done
		[[ -n $w ]] && ok "MTU raised to 9000 under zero-copy: warned: $w" ||
			bad "MTU raised to 9000 under zero-copy: no warning"
	else
		ok "MTU 9000 under zero-copy refused by the kernel: $(cat /run/mtu.err)"
	fi
else
	bad "port add p0 mode zc at MTU 1500"
fi
