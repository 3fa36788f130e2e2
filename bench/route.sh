#!/usr/bin/env bash
# bench/route.sh - routed 64-byte pps on the namespace testbed, every row in
# the same run so that rows compare with each other only.
#
#   bench/route.sh [--runs N] [--secs S] [--routes N] [--only-table]
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
#   xconnect  ferryd, xconnect p0 -> p1 path xsk: the same worker without
#             routing (path auto would take the kernel path: s0 has XDP)
# Ratios against kernel and against route (the worker path); then the cost
# of d0's classifier per frame on each ferry row's path.
# Then the table part (the full routing table), its rows interleaved run by run, each run
# setting its forwarder up afresh, ratios against its own kernel row:
#   kernel    as above
#   xdp_fib   bench/xdp_fib_fwd.bpf.o on d0: bpf_fib_lookup, TTL - 1, MACs,
#             DEVMAP_HASH redirect to d1 (as xdp-tools' xdp-forward;
#             forwarding on, which bpf_fib_lookup requires)
#   route     ferryd `route p0`, `route p1`
# first with the one route, then with ROUTES more IPv4 routes (default
# 1 000 000, an Internet-like mix of lengths, all via 10.77.1.1, none
# covering 198.18.0.0/15) loaded into the main table with `ip -batch`:
# kernel_full, xdp_fib_full, route_full. It reports how long the load took,
# how long ferryd's netlink mirror took to follow it live, and how long its
# initial dump of the full table takes at `route p0`. --routes 0 skips it.
# The sink in this part is an XDP count+drop on s0 (xdp_sink_reset, below).
# Then, with --nh-groups N (default 16; 0 skips), the same table behind
# nexthop objects, as FRR's zebra installs it: two next hops (10.77.1.1 and
# .2, both the sink) and N groups of the two, every route `nhid` one of the
# groups (the generator's 198.18.0.0/24 too): rows kernel_nh, xdp_fib_nh,
# route_nh, route_kernel_nh. And how long ferryd takes to follow one change
# under all of them: `ip nexthop replace` of a next hop every group holds
# (the object rewritten in place, then the kernel's per-route messages of
# nexthop_compat_mode drained), beside the same move of the plain table
# (ROUTES `ip route replace` of the gateway, one message each).
# --only-table: just this part.
# --vlan: instead of the xconnect row and the table part, each of kernel,
# route and route_kernel again with 802.1Q VLANs (rows *_vlan): the
# generator tags its frames with VID 100, the dut routes them from d0.100
# (10.77.2.254/24) to d1.200 (10.77.3.254/24, the sink's MAC as the
# neighbour 10.77.3.1), so every frame is popped and pushed; the route
# 198.18.0.0/24 moves to 10.77.3.1 for those rows. Needs a kernel with
# 802.1Q VLANs: this host's has none, so it runs in the guest of tests/vm/
# (`tests/vm/run.sh -t 900 bench/route.sh --vlan`), whose figures are an
# emulator's (ratios only).
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
ROUTES=1000000
ONLY_TABLE=0
VLAN=0
NH_GROUPS=16
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--routes) ROUTES=$2 && shift ;;
	--only-table) ONLY_TABLE=1 ;;
	--nh-groups) NH_GROUPS=$2 && shift ;;
	--vlan) VLAN=1 ;;
	*) echo "usage: $0 [--runs N] [--secs S] [--routes N] [--nh-groups N] [--only-table] [--vlan]" >&2 && exit 2 ;;
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

if ((VLAN)); then
	ip -n "$dut" link add link "$D0" name "$D0.100" type vlan id 100 ||
		tb_die "no 802.1Q VLANs in this kernel (--vlan runs in the guest of tests/vm/)"
	ip -n "$dut" link add link "$D1" name "$D1.200" type vlan id 200
	ip -n "$dut" addr add 10.77.2.254/24 dev "$D0.100"
	ip -n "$dut" addr add 10.77.3.254/24 dev "$D1.200"
	ip -n "$dut" link set "$D0.100" up
	ip -n "$dut" link set "$D1.200" up
	ip -n "$dut" neigh replace 10.77.3.1 lladdr "$(tb_mac sink s0)" dev "$D1.200" nud permanent
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.default.rp_filter=0 \
		"net.ipv4.conf.$D0/100.rp_filter=0"
fi

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
		tb_do dut xconnect add p0 p1 path xsk >/dev/null
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

measure() { # ROW (ROW_vlan: the same through the VLANs)
	local row=$1 base=${1%_vlan} vals=() i tag=()
	if [[ $row == *_vlan ]]; then
		tag=(vlan 100)
		ip -n "$dut" route replace 198.18.0.0/24 via 10.77.3.1
	else
		ip -n "$dut" route replace 198.18.0.0/24 via 10.77.1.1
	fi
	case $base in
	kernel) ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=1 ;;
	*) start_dut "$base" ;;
	esac
	napi_pin
	tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" size 64 "${tag[@]}" >/dev/null
	sleep 1
	for ((i = 0; i < RUNS; i++)); do
		vals+=("$(rate_of)")
	done
	tb_do gen gen stop g0 >/dev/null || true
	sleep 0.5
	case $base in
	kernel) ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0 ;;
	route)
		EXTRA["$row"]=$(tb_ctlj dut stats | jq -c '.data.route | {routed, no_neigh, no_route, ttl_exceeded, vlan_unknown}')
		[[ $row == "$base" ]] && cost_of "$row"
		stop_dut
		;;
	route_kernel)
		EXTRA["$row"]=$(tb_ctlj dut stats | jq -c '.data.ports | {p0_kernel_rx: .[0].paths.kernel.rx_packets, p1_kernel_tx: .[1].paths.kernel.tx_packets, fib: .[0].paths.kernel.fib}')
		[[ $row == "$base" ]] && cost_of "$row"
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

# ---- table part: XDP FIB forwarder and the full table ------------------
# Rows interleaved run by run (load drift on this shared host falls on every
# row alike); each run sets its forwarder up, measures SECS, takes it down.

FIB_OBJ=$REPO/build/bench/xdp_fib_fwd.bpf.o
FIB_PIN=/sys/fs/bpf/bench_fib

# Loads xdp_fib_fwd once, pinned, and fills its DEVMAP_HASH with d1.
tbl_fib_load() {
	local d1 k
	[[ -f $FIB_OBJ ]] || tb_die "build first (./run build): no $FIB_OBJ"
	d1=$(tb_ifindex dut d1)
	k="$((d1 & 255)) $(((d1 >> 8) & 255)) $(((d1 >> 16) & 255)) 0"
	tb_exec dut sh -c "
		rm -rf $FIB_PIN ${FIB_PIN}_maps &&
		bpftool prog loadall '$FIB_OBJ' $FIB_PIN type xdp pinmaps ${FIB_PIN}_maps &&
		bpftool map update pinned ${FIB_PIN}_maps/fib_tx_ports key $k value $k"
}

# fib_ctr per outcome (the enum in xdp_fib_fwd.bpf.c), summed over CPUs
# and over every run so far (the program stays loaded between runs)
tbl_fib_ctr() {
	tb_exec dut bpftool -j map dump pinned "${FIB_PIN}_maps/fib_ctr" |
		jq -c '[.[].formatted | [.values[].value] | add] |
			{redirect: .[0], pass_lookup: .[1], pass_ttl: .[2], pass_other: .[3],
			 fwd_disabled: .[4], redirect_fail: .[5]}'
}

# The sink for this part: xdp_sink_reset on s0 (count, TTL back to 64,
# drop) instead of ferryd's drop app: its copy of every frame into a UMEM,
# on CPU 0 beside the generator, capped the faster rows. s0 takes d0's MAC
# (its own L2 segment, so harmless): with that and the TTL reset, the
# generator's recycled pages stay valid frames after an in-place forwarder
# rewrote them (see xdp_fib_fwd.bpf.c). s0's receive stays where veth puts
# it, in the softirq of whoever sent on d1: the router's CPU, which so pays
# for an XDP drop per frame in every row alike (a NAPI thread on CPU 0,
# tried first, lost most frames at s0's ring when CPU 0 was busy).
tbl_sink() {
	local mac
	tb_do sink shutdown >/dev/null || true
	tb_wait_exit sink 10 || true
	mac=$(tb_mac dut d0)
	ip -n "$(tb_nsname sink)" link set dev "$S0" address "$mac"
	ip -n "$dut" neigh replace 10.77.1.1 lladdr "$mac" dev "$D1" nud permanent
	tb_exec sink sh -c "
		rm -rf ${FIB_PIN}_sink ${FIB_PIN}_sink_maps &&
		bpftool prog loadall '$FIB_OBJ' ${FIB_PIN}_sink type xdp pinmaps ${FIB_PIN}_sink_maps &&
		bpftool net attach xdpdrv pinned ${FIB_PIN}_sink/xdp_sink_reset dev $S0 overwrite"
}

# tbl_up ROW: kernel* / xdp_fib* / route* forwarding on d0 -> d1
tbl_up() {
	local t0
	case $1 in
	kernel*) ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=1 ;;
	xdp_fib*)
		# bpf_fib_lookup answers FWD_DISABLED without it (ingress device)
		ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=1
		tb_exec dut bpftool net attach xdpdrv pinned "$FIB_PIN/xdp_fib_fwd" dev "$D0" overwrite
		;;
	route*)
		local path=xsk
		[[ $1 == route_kernel* ]] && path=kernel
		ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 net.ipv6.conf.lo.forwarding=1
		tb_ferryd dut dut >/dev/null
		tb_do dut workers "$FWD_CPU" idle busy >/dev/null
		tb_do dut port add p0 dev "$D0" >/dev/null
		tb_do dut port add p1 dev "$D1" >/dev/null
		# the first `route` makes the router: its netlink mirror dumps
		# the kernel's tables before the command answers
		t0=$(now)
		tb_do dut route p0 path $path >/dev/null
		EXTRA[${1}_dump]+=" $(echo "$(now) - $t0" | bc -l | cut -c1-5)"
		tb_do dut route p1 path $path >/dev/null
		;;
	esac
	napi_pin
}

tbl_down() {
	case $1 in
	kernel*) ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0 ;;
	xdp_fib*)
		ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0
		tb_exec dut ip link set dev "$D0" xdp off
		;;
	route*)
		stop_dut
		ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=0 net.ipv6.conf.lo.forwarding=0
		;;
	esac
}

# tbl_sample ROW: one run of ROW, its rate appended to VALS[ROW]
tbl_sample() {
	local row=$1 r
	tbl_up "$row"
	tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" size 64 >/dev/null
	sleep 1
	r=$(xdp_rate sink "$S0" sink_ctr)
	tb_do gen gen stop g0 >/dev/null || true
	sleep 0.5
	case $row in
	xdp_fib*) EXTRA[${row}_ctr]=$(tbl_fib_ctr) ;;
	route_kernel*) EXTRA[${row}_ctr]=$(tb_ctlj dut stats | jq -c '.data.ports |
		{p0_kernel_rx: .[0].paths.kernel.rx_packets, fib: .[0].paths.kernel.fib}') ;;
	route*) EXTRA[${row}_ctr]=$(tb_ctlj dut stats | jq -c '.data.route |
		{routed, no_neigh, no_route, ttl_exceeded, routes_added: .netlink.routes_added}') ;;
	esac
	tbl_down "$row"
	VALS[$row]+=" $r"
	say "$row: $r"
}

# tbl_gen N: N distinct IPv4 routes for `ip -batch`, lengths in the DFZ's
# rough mix (~60% /24, the rest /8-/23, 0.5% /25-/28 so ferry's tbl8 pool
# holds them), all via 10.77.1.1; none in 0/8, 10/8, 127/8, 198/8 (the
# generator's 198.18.0.0/24 keeps its own route) or 224/3.
tbl_gen() {
	awk -v n="$1" 'BEGIN {
		srand(13)
		while (made < n) {
			u = rand() * 1000
			if (u < 5) len = 8 + int(rand() * 8)
			else if (u < 180) len = 16 + int(rand() * 6)
			else if (u < 280) len = 22
			else if (u < 395) len = 23
			else if (u < 995) len = 24
			else len = 25 + int(rand() * 4)
			a = 1 + int(rand() * 223)
			if (a == 10 || a == 127 || a == 198) continue
			ip = a * 16777216 + int(rand() * 16777216)
			ip -= ip % (2 ^ (32 - len))
			key = ip "/" len
			if (key in seen) continue
			seen[key] = 1
			made++
			printf "route add %d.%d.%d.%d/%d via 10.77.1.1\n", int(ip / 16777216),
				int(ip / 65536) % 256, int(ip / 256) % 256, ip % 256, len
		}
	}'
}

# Loads ROUTES routes into the dut's main table while a ferryd follows them
# live (its mirror's routes_added), and reports both times.
tbl_load() {
	local f=$TB_RUN/table.batch t0 t1 added i
	tbl_gen "$ROUTES" >"$f"
	tbl_up route_live
	added=$(tb_ctlj dut stats | jq '.data.route.netlink.routes_added')
	t0=$(now)
	ip -n "$dut" -batch "$f"
	t1=$(now)
	EXTRA["load_s"]=$(echo "$t1 - $t0" | bc -l | cut -c1-6)
	for ((i = 0; i < 6000; i++)); do
		(($(tb_ctlj dut stats | jq '.data.route.netlink.routes_added') - added >= ROUTES)) && break
		sleep 0.1
	done
	EXTRA["mirror_s"]=$(echo "$(now) - $t0" | bc -l | cut -c1-6)
	EXTRA["mirror_nl"]=$(tb_ctlj dut stats | jq -c '.data.route.netlink |
		{messages, routes_added, fib_errors, overruns}')
	tbl_down route_live
	EXTRA["kernel_routes"]=$(ip -n "$dut" -4 route show | wc -l)
	rm -f "$f"
}

# nl_ctr NAME: one counter of the dut ferryd's netlink mirror
nl_ctr() { tb_ctlj dut stats | jq ".data.route.netlink.$1"; }

# The plain table's ROUTES routes move to 10.77.1.2 (`ip route replace`,
# one message each) while a ferryd follows: EXTRA[plain_move_s].
tbl_plain_move() {
	local f=$TB_RUN/move.batch t0 added i
	tbl_gen "$ROUTES" | sed 's/^route add/route replace/; s/via 10.77.1.1/via 10.77.1.2/' >"$f"
	tbl_up route_live
	added=$(nl_ctr routes_added)
	t0=$(now)
	ip -n "$dut" -batch "$f"
	for ((i = 0; i < 6000; i++)); do
		(($(nl_ctr routes_added) - added >= ROUTES)) && break
		sleep 0.1
	done
	EXTRA["plain_move_s"]=$(echo "$(now) - $t0" | bc -l | cut -c1-6)
	tbl_down route_live
	rm -f "$f"
}

# The plain table out, the same prefixes back behind NH_GROUPS groups.
tbl_nh_load() {
	local f=$TB_RUN/nh.batch t0 g
	ip -n "$dut" route flush via 10.77.1.1
	ip -n "$dut" route flush via 10.77.1.2
	{
		echo "nexthop add id 1 via 10.77.1.1 dev $D1"
		echo "nexthop add id 2 via 10.77.1.2 dev $D1"
		for ((g = 0; g < NH_GROUPS; g++)); do
			echo "nexthop add id $((101 + g)) group 1,$((1 + g % 4))/2,$((4 - g % 4))"
		done
		echo "route add 198.18.0.0/24 nhid 101"
		tbl_gen "$ROUTES" | awk -v n="$NH_GROUPS" '{ $4 = "nhid"; $5 = 101 + NR % n; print }'
	} >"$f"
	t0=$(now)
	ip -n "$dut" -batch "$f"
	EXTRA["nh_load_s"]=$(echo "$(now) - $t0" | bc -l | cut -c1-6)
	EXTRA["nh_routes"]=$(ip -n "$dut" -4 route show | grep -c nhid)
	rm -f "$f"
}

# One next hop every group holds changes (ip nexthop replace) while a
# ferryd follows: EXTRA[nh_move_s_C] until the object is rewritten,
# EXTRA[nh_quiet_s_C] until the messages about it are read (the mirror
# quiet for 1 s; that second not counted), C the nexthop_compat_mode
# (1: the kernel also sends every route through the object, before the
# object's own message).
tbl_nh_move() {
	local t0 rep msgs last i gw=$1 compat=$2
	ip netns exec "$dut" sysctl -qw net.ipv4.nexthop_compat_mode="$compat"
	tbl_up route_live
	rep=$(nl_ctr nexthops_replaced)
	t0=$(now)
	ip -n "$dut" nexthop replace id 1 via "$gw" dev "$D1"
	EXTRA["nh_cmd_s_$compat"]=$(echo "$(now) - $t0" | bc -l | cut -c1-6)
	for ((i = 0; i < 6000; i++)); do
		(($(nl_ctr nexthops_replaced) > rep)) && break
		sleep 0.01
	done
	EXTRA["nh_move_s_$compat"]=$(echo "$(now) - $t0" | bc -l | cut -c1-6)
	last=$(nl_ctr messages)
	while :; do
		sleep 1
		msgs=$(nl_ctr messages)
		((msgs == last)) && break
		last=$msgs
	done
	EXTRA["nh_quiet_s_$compat"]=$(echo "$(now) - $t0 - 1" | bc -l | cut -c1-6)
	EXTRA["nh_move_nl_$compat"]=$(tb_ctlj dut stats | jq -c '.data.route.netlink |
		{messages, routes_added, nexthops_replaced, nh_unknown, fib_errors, overruns}')
	tbl_down route_live
	ip netns exec "$dut" sysctl -qw net.ipv4.nexthop_compat_mode=1
}

declare -A VALS
TBL_ROWS=(kernel xdp_fib route route_kernel)
table_part() {
	local i row rows
	say "table part: ${TBL_ROWS[*]} interleaved, $RUNS runs of ${SECS}s"
	tbl_fib_load
	tbl_sink
	for ((i = 0; i < RUNS; i++)); do
		for row in "${TBL_ROWS[@]}"; do tbl_sample "$row"; done
	done
	rows=("${TBL_ROWS[@]}")
	if ((ROUTES > 0)); then
		say "loading $ROUTES routes into the dut's main table (ferryd following)"
		tbl_load
		say "loaded in ${EXTRA["load_s"]}s, ferryd's mirror done after ${EXTRA["mirror_s"]}s"
		for ((i = 0; i < RUNS; i++)); do
			for row in "${TBL_ROWS[@]}"; do tbl_sample "${row}_full"; done
		done
		for row in "${TBL_ROWS[@]}"; do rows+=("${row}_full"); done
		if ((NH_GROUPS > 0)); then
			ip -n "$dut" neigh replace 10.77.1.2 lladdr "$(tb_mac dut d0)" dev "$D1" nud permanent
			say "moving the $ROUTES plain routes to 10.77.1.2 (ferryd following)"
			tbl_plain_move
			say "ferryd followed in ${EXTRA["plain_move_s"]}s"
			say "the table behind $NH_GROUPS nexthop groups"
			tbl_nh_load
			for ((i = 0; i < RUNS; i++)); do
				for row in "${TBL_ROWS[@]}"; do tbl_sample "${row}_nh"; done
			done
			for row in "${TBL_ROWS[@]}"; do rows+=("${row}_nh"); done
			tbl_nh_move 10.77.1.2 1
			tbl_nh_move 10.77.1.1 0
			say "nexthop 1 replaced, compat mode 1: object rewritten after ${EXTRA["nh_move_s_1"]}s; compat mode 0: ${EXTRA["nh_move_s_0"]}s"
		fi
	fi
	for row in "${rows[@]}"; do
		# shellcheck disable=SC2086 # the values, one word each
		record "t_$row" ${VALS[$row]}
	done
	echo
	echo "routed 64-byte pps, 1 flow (198.18.0.1 -> .2), veth native XDP copy mode, d0's NAPI threaded"
	echo "on CPU $FWD_CPU with the forwarder (ferry: one busy-polling worker, need_wakeup on), and s0's receive"
	echo "(an XDP count+drop) after it there; the generator on CPU 0; rows interleaved, median/min/max of $RUNS runs of ${SECS}s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-14s %12s %12s %12s %10s %10s\n' row median_pps min max vs_kernel vs_xdp_fib
	for row in "${rows[@]}"; do
		printf '%-14s %12s %12s %12s %10s %10s\n' "$row" "${MED[t_$row]}" "${MIN[t_$row]}" \
			"${MAX[t_$row]}" "$(ratio "t_$row" t_kernel)" "$(ratio "t_$row" t_xdp_fib)"
	done
	if ((ROUTES > 0)); then
		echo "full table: kernel_full / kernel = $(ratio t_kernel_full t_kernel);" \
			"route_full / kernel_full = $(ratio t_route_full t_kernel_full);" \
			"route_full / route = $(ratio t_route_full t_route)"
		if ((NH_GROUPS > 0)); then
			echo "nexthop table: ${EXTRA["nh_routes"]} routes behind $NH_GROUPS groups of 2 next hops (ip -batch ${EXTRA["nh_load_s"]}s);" \
				"route_nh / route_full = $(ratio t_route_nh t_route_full);" \
				"route_kernel_nh / route_kernel_full = $(ratio t_route_kernel_nh t_route_kernel_full);" \
				"kernel_nh / kernel_full = $(ratio t_kernel_nh t_kernel_full)"
			echo "following one change under all $ROUTES routes: plain table, $ROUTES route replaces:" \
				"${EXTRA["plain_move_s"]}s; nexthop table, one ip nexthop replace: object rewritten after" \
				"${EXTRA["nh_move_s_1"]}s with nexthop_compat_mode 1 (the ip command itself returned after" \
				"${EXTRA["nh_cmd_s_1"]}s; messages read after ${EXTRA["nh_quiet_s_1"]}s; ${EXTRA["nh_move_nl_1"]})," \
				"after ${EXTRA["nh_move_s_0"]}s with 0 (the ip command: ${EXTRA["nh_cmd_s_0"]}s; ${EXTRA["nh_move_nl_0"]})"
		fi
		echo "full table: $ROUTES routes generated, ${EXTRA["kernel_routes"]} IPv4 routes in the dut's main table;" \
			"ip -batch load ${EXTRA["load_s"]}s; ferryd following it live done after ${EXTRA["mirror_s"]}s" \
			"(${EXTRA["mirror_nl"]}); ferryd's initial dump at \`route p0\` (s, per run):${EXTRA[route_full_dump]:-}"
	fi
	for row in "${rows[@]}"; do
		[[ -n ${EXTRA[${row}_ctr]:-} ]] && echo "  $row counters (last run): ${EXTRA[${row}_ctr]}"
	done
	echo "  sink, all runs: $(tb_exec sink bpftool -j map dump pinned "${FIB_PIN}_sink_maps/sink_ctr" |
		jq -r '[.[].formatted | [.values[].value] | add] | "\(.[0]) frames, \(.[1]) with a TTL under 63 (a recycled page back again)"')"
	return 0
}

if ((ONLY_TABLE)); then
	table_part
	exit 0
fi


ROWS=(kernel route route_kernel xconnect)
((VLAN)) && ROWS=(kernel kernel_vlan route route_vlan route_kernel route_kernel_vlan)
for row in "${ROWS[@]}"; do
	measure "$row"
done

printf '\n%-18s %12s %12s %12s %8s %8s %8s\n' row median_pps min max vs_kernel vs_route vs_untag
for row in "${ROWS[@]}"; do
	printf '%-18s %12s %12s %12s %8s %8s %8s\n' "$row" "${MED[$row]}" "${MIN[$row]}" \
		"${MAX[$row]}" "$(ratio "$row" kernel)" "$(ratio "$row" route)" \
		"$([[ $row == *_vlan ]] && ratio "$row" "${row%_vlan}" || echo -)"
done
echo "route counters: ${EXTRA["route"]:-}"
((VLAN)) && echo "route_vlan counters: ${EXTRA["route_vlan"]:-}" &&
	echo "route_kernel_vlan, p0: ${EXTRA["route_kernel_vlan"]:-}"
echo
echo "d0's classifier per 64-byte frame (BPF_PROG_TEST_RUN, repeat $COST_REPEAT, median of $COST_CALLS calls):"
printf '%-12s %8s %12s\n' row ns vs_xconnect
for row in route route_kernel xconnect; do
	((VLAN)) && [[ $row == xconnect ]] && continue
	printf '%-12s %8s %12s\n' "$row" "${COST[$row]:-}" \
		"$([[ -n ${COST[xconnect]:-} ]] && echo "scale=2; ${COST[$row]} / ${COST[xconnect]}" | bc -l)"
done
echo "route path kernel, p0: ${EXTRA["route_kernel"]:-}"

if ((!ONLY_TABLE && !VLAN)); then
	echo
	table_part
fi
