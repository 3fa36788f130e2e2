#!/usr/bin/env bash
# tests/vm/t_vm_boot.sh: runs inside the guest (tests/vm/run.sh starts it from
# the repository's root). Checks, in order, each step printing "ok"/"FAIL":
#   1. the kernel is >= 6.13 (virtio_net AF_XDP zero-copy);
#   2. two virtio_net NICs exist (MACs 52:54:00:fe:00:00 / :01, set by run.sh);
#   3. the wire: eth1 moved to a namespace, a ping from there reaches eth0;
#   4. ferryd (build/daemon/ferryd, the host's build over 9p) starts;
#      `host check NIC0` reports the driver's own zero-copy feature (netdev
#      genl: xsk-zerocopy, zero-copy yes (kernel)) on an ok row; and
#      `port add p0 dev NIC0 mode zc` succeeds;
#   5. `port show p0` says mode zc (ferry asks the kernel: XDP_OPTIONS);
#   6. frames sent by the peer namespace arrive on p0's zero-copy socket
#      (drop app): rx_packets > 0 and equal to the XDP program's xsk_redirect,
#      and xsk_redirect + pass_no_xsk (a frame on a queue with no socket)
#      account for every frame sent. pass_no_xsk is printed, not failed:
#      with multi-queue, virtio_net's XDP attach raises the queue pairs in use
#      (see README.md), and frames may arrive on a queue ferry did not bind.
# On a failure: the error, ferryd's log and the kernel's last messages.
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"

kver=$(uname -r)
IFS=.- read -r maj min _ <<<"$kver"
if ((maj > 6 || (maj == 6 && min >= 13))); then ok "kernel $kver >= 6.13"; else bad "kernel $kver < 6.13"; fi

N0=$(nic_by_mac 52:54:00:fe:00:00) N1=$(nic_by_mac 52:54:00:fe:00:01)
drv0=$(basename "$(readlink -f "/sys/class/net/$N0/device/driver" 2>/dev/null)" 2>/dev/null)
drv1=$(basename "$(readlink -f "/sys/class/net/$N1/device/driver" 2>/dev/null)" 2>/dev/null)
if [[ -n $N0 && -n $N1 && $drv0 == virtio_net && $drv1 == virtio_net ]]; then
	ok "NICs $N0 $N1 (virtio_net)"
else
	bad "NICs: '$N0' ($drv0) '$N1' ($drv1)"
	ip -br link
	exit 1
fi
echo "     channels $N0: $(ethtool -l "$N0" 2>/dev/null | awk '/Combined/ {print $2}' | paste -sd/)"

ip netns add vmpeer
ip link set "$N1" netns vmpeer
ip -n vmpeer link set lo up
ip -n vmpeer link set "$N1" up
ip -n vmpeer addr add 10.99.0.2/24 dev "$N1"
ip addr add 10.99.0.1/24 dev "$N0"
if ip netns exec vmpeer ping -c 3 -i 0.2 -W 2 10.99.0.1 >/dev/null; then
	ok "wire: ping $N1 -> $N0"
else
	bad "wire: no ping reply over $N1 -> $N0"
fi

if [[ ! -x $FERRYD || ! -x $FERRYCTL ]]; then
	bad "no $FERRYD / $FERRYCTL (./run build on the host first)"
	exit 1
fi
ferryd_up
ctl workers 1 >/dev/null
hcall=$(ctl -j host check "$N0")
hc=$(jq -c '.data[] | select(.check == "xdp features")' <<<"$hcall")
echo "     host check $N0: $hc"
# What the kernel lacks is said, not failed here (Debian 13's 6.12 has no
# copy-mode TX budget option, FERRY_VM_PIN=tests/vm/kernel-6.12.pin):
echo "     host check: $(jq -M -c '.data[] | select(.check == "kernel: AF_XDP TX budget") | {status, value}' <<<"$hcall")"
if [[ $(jq -r .status <<<"$hc") == ok && $(jq -r .value <<<"$hc") == *xsk-zerocopy* &&
	$(jq -r .value <<<"$hc") == *"zero-copy: yes (kernel)"* ]]; then
	ok "host check $N0: the driver reports zero-copy (netdev genl)"
else
	bad "host check $N0: xdp features row $hc"
fi
if out=$(ctl port add p0 dev "$N0" mode zc 2>&1); then
	ok "port add p0 dev $N0 mode zc"
else
	bad "port add p0 dev $N0 mode zc: $out"
	# What copy mode says, for the report.
	out=$(ctl port add p0 dev "$N0" mode copy 2>&1) &&
		echo "     (mode copy binds)" || echo "     (mode copy fails too: $out)"
	exit 1
fi
show=$(ctl -j port show p0)
mode=$(jq -r '.data[] | select(.name == "p0") | .mode' <<<"$show")
if [[ $mode == zc ]]; then ok "port show p0: mode zc"; else bad "port show p0: mode '$mode'"; fi
ctl port show p0
echo "     channels $N0 after the XDP attach: $(ethtool -l "$N0" 2>/dev/null | awk '/Combined/ {print $2}' | paste -sd/) (max/current)"
ctl drop p0 >/dev/null
sent=$(ip netns exec vmpeer ping -c 20 -i 0.05 -W 1 10.99.0.1 2>&1 | sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p')
sleep 1
stats=$(ctl -j stats port p0)
[[ -n ${FERRY_VM_DEBUG:-} ]] && echo "$stats"
p0=$(jq -c '.data.ports[] | select(.name == "p0")' <<<"$stats")
rx=$(jq '.totals.rx_packets' <<<"$p0")
redir=$(jq '.xdp.xsk_redirect' <<<"$p0")
noxsk=$(jq '.xdp.pass_no_xsk' <<<"$p0")
echo "     peer sent $sent ICMP; XDP: xsk_redirect $redir, pass_no_xsk $noxsk; per queue rx: $(jq -c '[.queues[] | .rx_packets]' <<<"$p0")"
if ((rx > 0 && rx == redir)); then ok "zero-copy rx: p0 rx_packets $rx"; else bad "zero-copy rx: p0 rx_packets $rx, xsk_redirect $redir"; fi
if ((redir + noxsk >= sent && sent > 0)); then
	ok "all $sent frames reached p0's XDP program"
else
	bad "of $sent frames, XDP saw $((redir + noxsk))"
fi
