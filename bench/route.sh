#!/usr/bin/env bash
# bench/route.sh - routed 64-byte pps on the namespace testbed, every row in
# the same run so that rows compare with each other only.
#
#   bench/route.sh [--runs N] [--secs S]
#
# Topology (tests/lib/testbed.sh, std3):
#   gen:g0 ──veth── dut:d0 [router] dut:d1 ──veth── sink:s0
# The generator is ferry's (64-byte UDP 198.18.0.1 -> 198.18.0.2, 1 flow,
# as fast as it goes) on CPU 0; the sink is ferryd's drop app on CPU 0,
# counting. The dut has 10.77.0.254/24 on d0 and 10.77.1.254/24 on d1, a
# route 198.18.0.0/24 via 10.77.1.1 (a permanent neighbour: the sink's MAC).
# Rows, the router on CPU 1:
#   kernel    the kernel's forwarding (ferry stopped, ip_forward=1)
# d0's receive NAPI is threaded and pinned to CPU 1 in every row.
#   route     ferryd, `route p0`, `route p1`, one busy-polling worker
#   route_kernel  ferryd, `route p0 path kernel`, `route p1 path kernel`:
#             bpf_fib_lookup and a DEVMAP redirect in the classifier, no
#             worker (lo's forwarding on for the lookup, docs/design.md)
#   xconnect  ferryd, xconnect p0 -> p1: the same worker without routing
# Ratios against kernel and against route (the worker path); then the cost
# of d0's classifier per frame on each ferry row's path. Not here yet:
# the full-table row and a bare bpf_fib_lookup forwarder (bench/, issue 13).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=lib.sh
. bench/lib.sh

RUNS=3
SECS=4
FWD_CPU=1
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--secs S]" >&2 && exit 2 ;;
	esac
	shift
done

tb_init
tb_std3
dut=$(tb_nsname dut)
ip -n "$dut" addr add 10.77.0.254/24 dev "$D0"
ip -n "$dut" addr add 10.77.1.254/24 dev "$D1"
ip -n "$dut" neigh replace 10.77.1.1 lladdr "$(tb_mac sink s0)" dev "$D1" nud permanent
ip -n "$dut" route add 198.18.0.0/24 via 10.77.1.1
ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
	"net.ipv4.conf.$D0.rp_filter=0" net.ipv4.ip_forward=0
# veth takes the generator's XDP frames only with its NAPI on (an XDP
# program or GRO): GRO for the kernel row, and its receive runs in a thread
# pinned to the router's CPU, for every row alike
ip netns exec "$dut" ethtool -K "$D0" gro on >/dev/null
tb_exec dut sh -c "echo 1 > /sys/class/net/$D0/threaded" || true

tb_gen_up
tb_sink_drop

# rate_of: frames per second the sink received over SECS
rate_of() {
	local c1 c2 t1 t2
	c1=$(tb_stat sink s0 rx_packets)
	t1=$(now)
	sleep "$SECS"
	c2=$(tb_stat sink s0 rx_packets)
	t2=$(now)
	echo "($c2 - $c1) / ($t2 - $t1)" | bc -l | cut -d. -f1
}

napi_pin() { # the d0 NAPI thread onto FWD_CPU
	local pid
	for pid in $(pgrep -f "napi/$D0" || true); do
		taskset -p -c "$FWD_CPU" "$pid" >/dev/null 2>&1 || true
	done
}

start_dut() { # APP
	tb_ferryd dut dut >/dev/null
	tb_do dut workers "$FWD_CPU" idle busy >/dev/null
	tb_do dut port add p0 dev "$D0" >/dev/null
	tb_do dut port add p1 dev "$D1" >/dev/null
	if [[ $1 == route ]]; then
		tb_do dut route p0 >/dev/null
		tb_do dut route p1 >/dev/null
	elif [[ $1 == route_kernel ]]; then
		ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 \
			net.ipv6.conf.lo.forwarding=1
		tb_do dut route p0 path kernel >/dev/null
		tb_do dut route p1 path kernel >/dev/null
	else
		tb_do dut xconnect add p0 p1 >/dev/null
	fi
}

stop_dut() {
	tb_do dut shutdown >/dev/null || true
	tb_wait_exit dut 10 || true
}

# A 64-byte UDP frame 198.18.0.1 -> 198.18.0.2, TTL 64, checksums whole.
python3 - "$TB_RUN/f64" <<'PY'
import struct, sys
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return s
src, dst = bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2])
udp = struct.pack("!HHHH", 1024, 9, 26, 0) + bytes(18)
c = (~csum(src + dst + struct.pack("!BBH", 0, 17, 26) + udp)) & 0xffff or 0xffff
udp = udp[:6] + struct.pack("!H", c) + udp[8:]
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0, src, dst)
ip = ip[:10] + struct.pack("!H", (~csum(ip)) & 0xffff) + ip[12:]
eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
open(sys.argv[1], "wb").write(eth + ip + udp)
PY
# BPF_PROG_TEST_RUN runs its repeats on one buffer: on the kernel path the
# TTL goes down each time, so a call repeats 62 times (TTL 64 -> 2, every
# run a forwarded frame) and the median is taken over COST_CALLS calls.
# The average a call reports is timed around its loop only.
COST_REPEAT=62
COST_CALLS=101
declare -A COST
# cost_of ROW: ns per frame of d0's classifier on the frame above (the
# row's path: a socket, the DEVMAP, or the lookup and the DEVMAP), in the
# dut's namespace (the lookup's)
cost_of() {
	local id i
	id=$(tb_xdp_prog_id dut d0)
	COST[$1]=$(for ((i = 0; i < COST_CALLS; i++)); do
		tb_exec dut bpftool prog run id "$id" data_in "$TB_RUN/f64" repeat "$COST_REPEAT" 2>&1 |
			sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p'
	done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
}

measure() { # ROW
	local row=$1 vals=() i
	case $row in
	kernel) ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=1 ;;
	*) start_dut "$row" ;;
	esac
	napi_pin
	tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" size 64 >/dev/null
	sleep 1
	for ((i = 0; i < RUNS; i++)); do
		vals+=("$(rate_of)")
	done
	tb_do gen gen stop g0 >/dev/null || true
	sleep 0.5
	case $row in
	kernel) ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0 ;;
	route)
		EXTRA["route"]=$(tb_ctlj dut stats | jq -c '.data.route | {routed, no_neigh, no_route, ttl_exceeded}')
		cost_of "$row"
		stop_dut
		;;
	route_kernel)
		EXTRA["route_kernel"]=$(tb_ctlj dut stats | jq -c '.data.ports | {p0_kernel_rx: .[0].paths.kernel.rx_packets, p1_kernel_tx: .[1].paths.kernel.tx_packets, fib: .[0].paths.kernel.fib}')
		cost_of "$row"
		stop_dut
		ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=0 \
			net.ipv6.conf.lo.forwarding=0
		;;
	*)
		cost_of "$row"
		stop_dut
		;;
	esac
	record "$row" "${vals[@]}"
	say "$row: ${vals[*]}"
}

for row in kernel route route_kernel xconnect; do
	measure "$row"
done

printf '\n%-12s %12s %12s %12s %8s %8s\n' row median_pps min max vs_kernel vs_route
for row in kernel route route_kernel xconnect; do
	printf '%-12s %12s %12s %12s %8s %8s\n' "$row" "${MED[$row]}" "${MIN[$row]}" \
		"${MAX[$row]}" "$(ratio "$row" kernel)" "$(ratio "$row" route)"
done
echo "route counters: ${EXTRA["route"]:-}"
echo
echo "d0's classifier per 64-byte frame (BPF_PROG_TEST_RUN, repeat $COST_REPEAT, median of $COST_CALLS calls):"
printf '%-12s %8s %12s\n' row ns vs_xconnect
for row in route route_kernel xconnect; do
	printf '%-12s %8s %12s\n' "$row" "${COST[$row]:-}" \
		"$([[ -n ${COST[xconnect]:-} ]] && echo "scale=2; ${COST[$row]} / ${COST[xconnect]}" | bc -l)"
done
echo "route path kernel, p0: ${EXTRA["route_kernel"]:-}"
