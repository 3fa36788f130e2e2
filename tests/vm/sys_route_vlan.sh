#!/usr/bin/env bash
# VLAN sub-interfaces and VRFs on route ports. Two VLANs (100, 200) on one
# ferry port pair, each in its own VRF (vrf-blue table 10, vrf-red table
# 20), with the same addresses in both: hosts a100 / a200 (10.1.0.2) on the
# left wire, b100 / b200 (10.2.0.2) on the right, each a plain namespace
# with a kernel VLAN interface whose parent stays on the wire (the VLAN
# interface moved into the host's namespace): they know nothing of ferry.
# The dut has d0.100 / d0.200 / d1.100 / d1.200 (10.1.0.1, 10.2.0.1) in
# the VRFs, ferry routes p0 and p1. Checked: `port show` lists the VLANs,
# `fib show` has each VRF's routes; ping and a byte-exact TCP transfer
# cross within each VLAN/VRF and never into the other (the other host's
# interface counts nothing; a server in the other VRF is not reached);
# tcpdump -e on both wires shows vlan 100 and vlan 200; an 802.1ad frame
# and a frame of a VLAN the dut has not are counted as dropped by name;
# on path kernel tagged frames still cross, through a worker (fib.vlan).
# Needs a kernel with 802.1Q VLANs and VRFs (CONFIG_VLAN_8021Q,
# CONFIG_NET_VRF): without them it fails under CI=true and skips otherwise.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

# The kernel must make VLAN and VRF links: tried in a scratch namespace.
tb_ns probe
probe=$(tb_nsname probe)
if ! ip -n "$probe" link add vp type veth peer vq 2>/dev/null ||
	! ip -n "$probe" link add link vp name vp.7 type vlan id 7 2>/dev/null ||
	! ip -n "$probe" link add vrf-p type vrf table 77 2>/dev/null; then
	why="this kernel makes no VLAN or VRF links (CONFIG_VLAN_8021Q, CONFIG_NET_VRF)"
	[[ ${CI:-} == true ]] && tb_die "$why (CI=true: failing, not skipping)"
	echo "skip: $why"
	exit 77
fi

for n in dut wl wr a100 a200 b100 b200; do
	tb_ns $n
done
dut=$(tb_nsname dut)
tb_veth wl l0 dut d0
tb_veth dut d1 wr r0
D0=$(tb_ifname d0) D1=$(tb_ifname d1) L0=$(tb_ifname l0) R0=$(tb_ifname r0)

# veth gives a VLAN device's tag to the peer's XDP as metadata only (skb
# vlan_tci, bpf_xdp_metadata_rx_vlan_tag()), not in the frame ferry reads:
# the wires insert it in the frame, as a NIC with rxvlan off hands it up
# (docs/design.md, "VLANs and VRFs")
ip netns exec "$(tb_nsname wl)" ethtool -K "$L0" txvlan off >/dev/null
ip netns exec "$(tb_nsname wr)" ethtool -K "$R0" txvlan off >/dev/null
ip netns exec "$dut" ethtool -K "$D0" txvlan off >/dev/null
ip netns exec "$dut" ethtool -K "$D1" txvlan off >/dev/null

# hosts: a VLAN interface on the wire's end, moved into its own namespace
mkhost() { # mkhost WIRE_NS PARENT VID HOST_NS ADDR GW
	local wns hns
	wns=$(tb_nsname "$1") hns=$(tb_nsname "$4")
	ip -n "$wns" link add link "$2" name "v$3" type vlan id "$3"
	ip -n "$wns" link set "v$3" netns "$hns"
	ip -n "$hns" addr add "$5/24" dev "v$3"
	ip -n "$hns" link set "v$3" up
	ip -n "$hns" route add default via "$6"
}
mkhost wl "$L0" 100 a100 10.1.0.2 10.1.0.1
mkhost wl "$L0" 200 a200 10.1.0.2 10.1.0.1
mkhost wr "$R0" 100 b100 10.2.0.2 10.2.0.1
mkhost wr "$R0" 200 b200 10.2.0.2 10.2.0.1

# the dut: a VRF per VLAN, the same addresses in both, forwarding off
ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0
ip -n "$dut" link add vrf-blue type vrf table 10
ip -n "$dut" link add vrf-red type vrf table 20
ip -n "$dut" link set vrf-blue up
ip -n "$dut" link set vrf-red up
for d in "$D0" "$D1"; do
	for v in 100 200; do
		ip -n "$dut" link add link "$d" name "$d.$v" type vlan id "$v"
		ip -n "$dut" link set "$d.$v" master "$([[ $v == 100 ]] && echo vrf-blue || echo vrf-red)"
		ip -n "$dut" link set "$d.$v" up
	done
done
for v in 100 200; do
	ip -n "$dut" addr add 10.1.0.1/24 dev "$D0.$v"
	ip -n "$dut" addr add 10.2.0.1/24 dev "$D1.$v"
done
ip -n "$dut" link set "$D1.200" mtu 1400 # a VLAN's own MTU

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut route p0 >/dev/null
tb_do dut route p1 >/dev/null

# port show: the VLANs each port carries, with their VRFs
ps=$(tb_ctlj dut port show p1)
echo "p1 vlans: $(jq -c '.data[0].vlans' <<<"$ps")"
assert_eq "p1 follows 2 VLANs" 2 "$(jq '.data[0].vlans | length' <<<"$ps")"
assert_eq "p1 VLAN 100 in vrf-blue" vrf-blue \
	"$(jq -r '.data[0].vlans[] | select(.vid == 100) | .vrf' <<<"$ps")"
assert_eq "p1 VLAN 200 in vrf-red, table 20" "vrf-red 20" \
	"$(jq -r '.data[0].vlans[] | select(.vid == 200) | "\(.vrf) \(.table)"' <<<"$ps")"
assert_eq "p1 VLAN 200's MTU" 1400 \
	"$(jq -r '.data[0].vlans[] | select(.vid == 200) | .mtu' <<<"$ps")"

# fib show: 10.2.0.0/24 once per VRF, out of that VRF's VLAN
fib=$(tb_ctlj dut fib show 10.2.0.0/24)
echo "fib 10.2.0.0/24: $(jq -c '.data' <<<"$fib")"
assert_eq "table 10: 10.2.0.0/24 on $D1.100" "$D1.100" \
	"$(jq -r '.data[] | select(.prefix == "10.2.0.0/24" and .table == 10) | .port' <<<"$fib")"
assert_eq "table 20: 10.2.0.0/24 on $D1.200" "$D1.200" \
	"$(jq -r '.data[] | select(.prefix == "10.2.0.0/24" and .table == 20) | .port' <<<"$fib")"
assert_eq "main table: no 10.2.0.0/24" 0 \
	"$(jq '[.data[] | select(.prefix == "10.2.0.0/24" and (has("table") | not))] | length' <<<"$fib")"

# both wires, as tcpdump -e prints them, while the pings cross
tb_bg wl "$TB_RUN/l0.txt" tcpdump -e -n -l -i "$L0"
capl=$TB_BG_PID
tb_bg wr "$TB_RUN/r0.txt" tcpdump -e -n -l -i "$R0"
capr=$TB_BG_PID
sleep 1

echos_of() { # echos_of NS: ICMP echo requests its kernel received
	# shellcheck disable=SC2016 # awk's own fields
	ip netns exec "$(tb_nsname "$1")" awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "InEchos") c = i; h = 1 } else print $c }' /proc/net/snmp
}

# ping within each VLAN: reply at TTL 63 (ferry routed it), and the
# other VLAN's host of the same address got no echo request (its link may
# see the dut's ARP probes of its own VLAN, nothing else)
for v in 100 200; do
	o=$((v == 100 ? 200 : 100))
	before=$(echos_of "b$o")
	out=$(tb_routed_ping dut "$(tb_nsname "a$v")" 10.2.0.2) || tb_die "no ping reply in VLAN $v: $out"
	assert_eq "VLAN $v: reply at TTL 63" 1 "$(grep -c 'ttl=63' <<<"$out")"
	out=$(ip netns exec "$(tb_nsname "a$v")" ping -c 5 -i 0.2 -W 1 10.2.0.2) ||
		tb_die "VLAN $v: ping lost frames: $out"
	assert_eq "VLAN $v: 5 replies" 1 "$(grep -c '5 received' <<<"$out")"
	assert_eq "VLAN $v: b$o got no echo request" "$before" "$(echos_of "b$o")"
	out=$(tb_routed_ping dut "$(tb_nsname "b$v")" 10.1.0.2) || tb_die "no ping reply b$v -> a$v: $out"
done

sleep 0.5
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
stop_pid "$capl"
stop_pid "$capr"
for w in l0 r0; do
	echo "--- $w (tcpdump -e, first lines)"
	head -6 "$TB_RUN/$w.txt"
	for v in 100 200; do
		assert_ge "$w: tagged frames of vlan $v" 10 \
			"$(grep -c "vlan $v, .*ICMP echo" "$TB_RUN/$w.txt" || true)"
	done
	assert_eq "$w: no untagged ICMP" 0 \
		"$(grep 'ICMP echo' "$TB_RUN/$w.txt" | grep -vc 'vlan [12]00' || true)"
done

# TCP byte-exact within each VRF; the server of the other VRF is never
# reached (its port is only open there: the connection is refused)
tb_tcpx a100 b100 10.2.0.2 7201
tb_tcpx a200 b200 10.2.0.2 7202
tb_tcpx b200 a200 10.1.0.2 7203
tb_tcpx_server b200 10.2.0.2:7204 "$TB_RUN/red-only.json" || tb_die "tcpx server in b200"
red=$TB_TCPX_PID
if ip netns exec "$(tb_nsname a100)" timeout 5 "$TCPX" client -d 10.2.0.2:7204 -n 1000 -m 1000 \
	>"$TB_RUN/leak.json" 2>&1; then
	tb_die "a100 (vrf-blue) reached b200's server (vrf-red): $(cat "$TB_RUN/leak.json")"
fi
echo "a100 -> 10.2.0.2:7204 (a port only b200 opens): refused, as it must be"
stop_pid "$red"

# 802.1ad outer tag, and a VID the dut has no interface for: both dropped
# by name (frames written on the left wire, to p0's MAC)
st0=$(tb_ctlj dut stats | jq -c .data.route)
d0mac=$(tb_mac dut d0)
ip netns exec "$(tb_nsname wl)" python3 - "$L0" "$d0mac" <<'EOF'
import socket, struct, sys
dev, dst = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
src = bytes.fromhex("020000000abc")
ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 1, 0, 64, 17, 0,
                           socket.inet_aton("10.1.0.2"), socket.inet_aton("10.2.0.2")))
c = sum(struct.unpack("!10H", bytes(ip)))
c = (c & 0xffff) + (c >> 16)
ip[10:12] = struct.pack("!H", ~c & 0xffff)
udp = struct.pack("!HHHH", 4000, 4001, 8, 0)
for tpid, vid in ((0x88a8, 100), (0x8100, 300)):
    for _ in range(3):
        s.send(dst + src + struct.pack("!HH", tpid, vid) + b"\x08\x00" + bytes(ip) + udp)
EOF
for ((i = 0; i < 20; i++)); do
	st=$(tb_ctlj dut stats | jq -c .data.route)
	(($(jq .vlan_qinq <<<"$st") >= 3 && $(jq .vlan_unknown <<<"$st") >= 3)) && break
	sleep 0.1
done
echo "route counters: $(jq -c '{routed, vlan_qinq, vlan_unknown, no_route}' <<<"$st")"
assert_eq "802.1ad frames counted vlan_qinq" 3 $(($(jq .vlan_qinq <<<"$st") - $(jq .vlan_qinq <<<"$st0")))
assert_eq "VLAN 300 frames counted vlan_unknown" 3 \
	$(($(jq .vlan_unknown <<<"$st") - $(jq .vlan_unknown <<<"$st0")))
assert_ge "routed frames" 20 "$(jq .routed <<<"$st")"

# the kernel path: the ports take it, tagged frames are still the
# worker's (bpf_fib_lookup is not asked), counted vlan
ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 net.ipv6.conf.lo.forwarding=1
ip netns exec "$(tb_nsname wl)" ethtool -K "$L0" gro on >/dev/null
ip netns exec "$(tb_nsname wr)" ethtool -K "$R0" gro on >/dev/null
tb_do dut route p0 path kernel >/dev/null
tb_do dut route p1 path kernel >/dev/null
assert_eq "p0 path kernel" kernel "$(tb_pshow dut p0 path)"
v0=$(tb_kstat dut p0 fib.vlan)
out=$(ip netns exec "$(tb_nsname a200)" ping -c 5 -i 0.2 -W 1 10.2.0.2) ||
	tb_die "VLAN 200 on path kernel: ping lost frames: $out"
assert_eq "path kernel, VLAN 200: 5 replies at TTL 63" 5 "$(grep -c 'ttl=63' <<<"$out")"
assert_ge "p0 kernel path: tagged frames to the worker (fib.vlan)" 5 $(($(tb_kstat dut p0 fib.vlan) - v0))
tb_do dut route p0 path xsk >/dev/null
tb_do dut route p1 path xsk >/dev/null

# a VLAN deleted: the mirror lets it go
ip -n "$dut" link del "$D1.200"
for ((i = 0; i < 20; i++)); do
	[[ $(tb_ctlj dut port show p1 | jq '.data[0].vlans | length') == 1 ]] && break
	sleep 0.1
done
assert_eq "p1 follows 1 VLAN after a delete" 1 "$(tb_ctlj dut port show p1 | jq '.data[0].vlans | length')"
out=$(ip netns exec "$(tb_nsname a200)" ping -c 1 -W 1 10.2.0.2 2>&1 || true)
assert_eq "VLAN 200 gone: no reply" 0 "$(grep -c 'ttl=63' <<<"$out" || true)"
out=$(tb_routed_ping dut "$(tb_nsname a100)" 10.2.0.2) || tb_die "VLAN 100 lost with 200: $out"

tb_log "PASS"
