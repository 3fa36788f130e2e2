#!/usr/bin/env bash
# tests/vm/run.sh [-t SECS] SCRIPT [ARGS...]: boot a TCG guest on the pinned
# Debian kernel (kernel.pin) whose root is the host's / shared read-only over
# 9p under a tmpfs overlay, run SCRIPT (a path on the host, relative to the
# current directory or absolute; run with bash inside the guest, from the same
# directory) and exit with its status. 125: the guest did not get as far as
# running SCRIPT; 124: timeout.
#
# The guest: 2 vCPUs, 2 GiB, FERRY_VM_NICS virtio-net NICs (default 2: eth0,
# eth1 in the guest; an even number), wired back to back in pairs (NIC 2k
# with NIC 2k+1, MACs 52:54:00:fe:00:0N), so a frame sent out of eth0 arrives
# on eth1 and vice versa; nothing leaves the host. Two wirings:
#   FERRY_VM_QUEUES=1 (default): each NIC's backend is a UDP socket on
#     127.0.0.1 sending to the other's (-netdev socket,udp=,localaddr=); one
#     queue pair per NIC (QEMU's socket backend has one queue).
#   FERRY_VM_QUEUES=N>1: each NIC's backend is a multi-queue tap (queues=N,
#     mq=on, vectors=2N+2) in a private network namespace made for the run,
#     the two taps joined by tc (u32 + mirred redirect, both ways); qemu runs
#     in that namespace; the namespace goes away on exit.
# Both NICs are modern-only virtio with
# iommu_platform=on (VIRTIO_F_ACCESS_PLATFORM: without it virtio_net has no
# DMA device and refuses an XSK pool), queue_reset on (QEMU 7.2's default;
# virtio_net needs it to swap a queue's buffers for an XSK pool's).
# The console goes to stdout and to $FERRY_VM_LOG (default
# build/vm/console.log).
#
# Environment: FERRY_VM_CACHE (default /var/cache/ferry-vm), FERRY_VM_SMP (2),
# FERRY_VM_MEM (2G), FERRY_VM_IOMMU_PLATFORM (on), FERRY_VM_QUEUES (1),
# FERRY_VM_NICS (2), FERRY_VM_MTU (the taps' MTU, with FERRY_VM_QUEUES > 1).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TIMEOUT=300
if [[ ${1:-} == -t ]]; then
	TIMEOUT=$2
	shift 2
fi
if [[ $# -lt 1 ]]; then
	echo "usage: $0 [-t SECS] SCRIPT [ARGS...]" >&2
	exit 2
fi
SCRIPT=$(realpath "$1")
shift
for a in "$@"; do
	[[ $a == *[,\ ]* ]] && { echo "run.sh: an argument may hold no comma or space: '$a'" >&2; exit 2; }
done
ARGS=$(IFS=,; echo "$*")
. "${FERRY_VM_PIN:-$HERE/kernel.pin}"
CACHE=${FERRY_VM_CACHE:-/var/cache/ferry-vm}
command -v qemu-system-x86_64 >/dev/null || { echo "run.sh: no qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 125; }
TREE=$("$HERE/fetch-kernel.sh")
INITRD=$CACHE/initramfs-$KVER.gz
"$HERE/mkinitramfs.sh" "$TREE" "$INITRD"
LOG=${FERRY_VM_LOG:-$REPO/build/vm/console.log}
mkdir -p "$(dirname "$LOG")"

IOMMU=${FERRY_VM_IOMMU_PLATFORM:-on}
NIC=(disable-legacy=on,iommu_platform=$IOMMU,queue_reset=on)
Q=${FERRY_VM_QUEUES:-1}
NICS=${FERRY_VM_NICS:-2}
((NICS >= 2 && NICS <= 8 && NICS % 2 == 0)) || { echo "run.sh: FERRY_VM_NICS is 2, 4, 6 or 8" >&2; exit 2; }
NETNS=()
NETDEVS=()
if ((Q > 1)); then
	NS=ferryvm-$$
	cleanup() {
		for ((k = 0; k < NICS; k++)); do
			ip -n "$NS" link del t$k 2>/dev/null || true
		done
		ip netns del "$NS" 2>/dev/null || true
	}
	trap cleanup EXIT
	ip netns add "$NS"
	for ((k = 0; k < NICS; k++)); do
		ip -n "$NS" tuntap add dev t$k mode tap multi_queue vnet_hdr
		ip -n "$NS" link set t$k up ${FERRY_VM_MTU:+mtu $FERRY_VM_MTU}
		ip netns exec "$NS" tc qdisc add dev t$k clsact
	done
	for ((k = 0; k < NICS; k += 2)); do
		ip netns exec "$NS" tc filter add dev t$k ingress u32 match u32 0 0 action mirred egress redirect dev t$((k + 1))
		ip netns exec "$NS" tc filter add dev t$((k + 1)) ingress u32 match u32 0 0 action mirred egress redirect dev t$k
	done
	NETNS=(ip netns exec "$NS")
	MQ=",mq=on,vectors=$((2 * Q + 2))"
	for ((k = 0; k < NICS; k++)); do
		NETDEVS+=(-netdev tap,id=n$k,ifname=t$k,script=no,downscript=no,vhost=off,queues=$Q)
	done
else
	# Free UDP ports next to each other (a busy one only makes qemu fail).
	base=$((20000 + RANDOM % 20000))
	MQ=
	for ((k = 0; k < NICS; k++)); do
		NETDEVS+=(-netdev socket,id=n$k,udp=127.0.0.1:$((base + (k ^ 1))),localaddr=127.0.0.1:$((base + k)))
	done
fi
for ((k = 0; k < NICS; k++)); do
	NETDEVS+=(-device virtio-net-pci,netdev=n$k,mac=52:54:00:fe:00:0$k,"${NIC[0]}$MQ")
done
APPEND="console=ttyS0 loglevel=4 panic=-1 ferry.script=$SCRIPT ferry.cwd=$PWD ferry.tree=$TREE"
[[ -n $ARGS ]] && APPEND+=" ferry.args=$ARGS"
[[ -n ${FERRY_VM_DEBUG:-} ]] && APPEND+=" ferry.debug=1"

t0=$(date +%s)
set +e
timeout -k 5 "$TIMEOUT" "${NETNS[@]}" qemu-system-x86_64 -accel tcg -machine q35 -cpu max \
	-smp "${FERRY_VM_SMP:-2}" -m "${FERRY_VM_MEM:-2G}" \
	-display none -vga none -monitor none -serial stdio -no-reboot \
	-kernel "$TREE/boot/vmlinuz-$KVER" -initrd "$INITRD" -append "$APPEND" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	"${NETDEVS[@]}" \
	</dev/null 2>&1 | tee "$LOG"
qrc=${PIPESTATUS[0]}
set -e
t1=$(date +%s)
rc=$(sed -n 's/.*FERRY-VM-RESULT rc=\([0-9]*\).*/\1/p' "$LOG" | tail -1)
if [[ -z $rc ]]; then
	if [[ $qrc == 124 ]]; then
		echo "run.sh: timeout after ${TIMEOUT}s (console: $LOG)" >&2
		exit 124
	fi
	echo "run.sh: the guest gave no result (qemu exit $qrc; console: $LOG)" >&2
	exit 125
fi
echo "run.sh: $(basename "$SCRIPT") exit $rc in $((t1 - t0)) s (console: $LOG)" >&2
exit "$rc"
