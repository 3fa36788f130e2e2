#!/usr/bin/env bash
# A bond on route ports. The dut's bond0 (802.3ad, LACP by the kernel's
# bond driver, layer3+4 hash) has two veth members, d1 and d2, which ferry
# serves as route ports p1 and p2; the server srv has a bond of its own of
# the wires' other ends (s1, s2): a plain Linux host, as is cli on p0.
#
#   cli c0 ── d0 p0 ═ dut (ferry routes; bond0 = d1 + d2 holds 10.2.0.1)
#                          d1 p1 ── s1 ┐
#                          d2 p2 ── s2 ┴ bond0 srv 10.2.0.2
#
# Checked: `port add ... dev bond0` is refused with what to do instead;
# `port show` gives each member its bond and the members' state; LACP
# comes up through ferry (the kernel's bond gets its partner's LACPDUs,
# passed by XDP as pass_not_ip); ping at TTL 63 and byte-exact TCP both
# ways; 16 UDP flows cli -> srv leave by both members (the flow hash); one
# member's link goes down under traffic: within a second ferry sends
# nothing more out of it, the flows move to the other member and keep
# arriving, and the frames lost in the move are counted (seqflow); a
# port ferry serves enslaved later becomes a member (inactive here: srv's
# end is in no bond, so LACP does not aggregate it).
# Needs a kernel with bonding (CONFIG_BONDING): without it, it fails under
# CI=true and skips otherwise.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
SEQFLOW=$(tb__abs "${SEQFLOW:-build/tests/seqflow}")

tb_init

tb_ns probe
probe=$(tb_nsname probe)
if ! ip -n "$probe" link add bp type bond mode 802.3ad 2>/dev/null; then
	why="this kernel makes no bond links (CONFIG_BONDING)"
	[[ ${CI:-} == true ]] && tb_die "$why (CI=true: failing, not skipping)"
	echo "skip: $why"
	exit 77
fi

for n in cli dut srv; do
	tb_ns $n
done
cli=$(tb_nsname cli) dut=$(tb_nsname dut) srv=$(tb_nsname srv)
tb_veth cli c0 dut d0
tb_veth dut d1 srv s1
tb_veth dut d2 srv s2
C0=$(tb_ifname c0) D0=$(tb_ifname d0) D1=$(tb_ifname d1) D2=$(tb_ifname d2)
S1=$(tb_ifname s1) S2=$(tb_ifname s2)

# both ends: an 802.3ad bond, fast LACP (at the end, a member enslaved
# after ferry attached to it: the kernel takes it too)
mkbond() { # mkbond NS MEMBER...
	local ns=$1 m
	shift
	ip -n "$ns" link add bond0 type bond mode 802.3ad miimon 100 \
		lacp_rate fast xmit_hash_policy layer3+4
	for m in "$@"; do
		ip -n "$ns" link set "$m" down
		ip -n "$ns" link set "$m" master bond0
	done
	ip -n "$ns" link set bond0 up
}
mkbond "$dut" "$D1" "$D2"
mkbond "$srv" "$S1" "$S2"
ip -n "$cli" addr add 10.1.0.2/24 dev "$C0"
ip -n "$cli" route add default via 10.1.0.1
ip -n "$dut" addr add 10.1.0.1/24 dev "$D0"
ip -n "$dut" addr add 10.2.0.1/24 dev bond0
ip -n "$srv" addr add 10.2.0.2/24 dev bond0
ip -n "$srv" route add default via 10.2.0.1
ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0

SRV_MAC=$(ip -n "$srv" -j link show dev bond0 | jq -r '.[0].address')
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
if out=$(tb_ctl dut port add b0 dev bond0 2>&1); then
	tb_die "port add b0 dev bond0 was taken: $out"
fi
echo "port add b0 dev bond0: $out"
assert_match "a bond as a port: refused, with its members named" "add its members as ports \\($D1 $D2\\)" "$out"
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut port add p2 dev "$D2" >/dev/null
for p in p0 p1 p2; do
	tb_do dut route "$p" >/dev/null
done

# LACP through ferry: both members in the partner's aggregator, and ferry
# says both carry traffic
for ((i = 0; i < 100; i++)); do
	act=$(tb_ctlj dut port show p1 | jq -c '[.data[0].bond.members[] | select(.active)] | length')
	[[ $act == 2 ]] && ip netns exec "$dut" cat /proc/net/bonding/bond0 |
		grep -q "Partner Mac Address: $SRV_MAC" && break
	sleep 0.2
done
echo "p1 bond: $(tb_ctlj dut port show p1 | jq -c .data[0].bond)"
ip netns exec "$dut" grep -E "^(Slave Interface|MII Status|Aggregator ID|Partner Mac)" /proc/net/bonding/bond0 |
	sed 's/^/    /'
assert_eq "p1's bond" bond0 "$(tb_ctlj dut port show p1 | jq -r .data[0].bond.name)"
assert_eq "p2's bond, both members active" "p1 true p2 true" \
	"$(tb_ctlj dut port show p2 | jq -r '[.data[0].bond.members[] | "\(.port) \(.active)"] | join(" ")')"
assert_eq "p0 is in no bond" null "$(tb_ctlj dut port show p0 | jq -c .data[0].bond)"
assert_match "LACP partner known to the dut's bond (its LACPDUs passed)" \
	"Partner Mac Address: $SRV_MAC" "$(ip netns exec "$dut" cat /proc/net/bonding/bond0)"
lacp=$(($(tb_xdpstat dut p1 pass_not_ip) + $(tb_xdpstat dut p2 pass_not_ip)))
assert_ge "LACPDUs passed to the kernel (pass_not_ip on p1 + p2)" 2 "$lacp"

out=$(tb_routed_ping dut "$cli" 10.2.0.2) || tb_die "no ping reply cli -> srv: $out"
assert_eq "cli -> srv: reply at TTL 63" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$srv" 10.1.0.2) || tb_die "no ping reply srv -> cli: $out"
tb_tcpx cli srv 10.2.0.2 7301 8000000
tb_tcpx srv cli 10.1.0.2 7302 8000000

tx_of() { tb_stat dut "$1" tx_packets; } # frames ferry sent out of a port

# 16 flows, 2000 pps, 3 s: both members carry some
RATE=2000 FLOWS=16
tb_bg srv "$TB_RUN/recv1.json" "$SEQFLOW" recv -l 0.0.0.0:7400 -f $FLOWS -i 2 -T 30 --ready "$TB_RUN/ready1"
r1=$TB_BG_PID
tb_wait_file "$TB_RUN/ready1"
a1=$(tx_of p1) a2=$(tx_of p2)
ip netns exec "$cli" "$SEQFLOW" send -d 10.2.0.2:7400 -r $RATE -t 3 -f $FLOWS >"$TB_RUN/send1.json"
wait "$r1" || true
b1=$(tx_of p1) b2=$(tx_of p2)
echo "16 flows: out of p1 $((b1 - a1)), out of p2 $((b2 - a2)); recv $(jq -c '{unique, missing, duplicates}' "$TB_RUN/recv1.json")"
sent=$(jq .sent "$TB_RUN/send1.json")
assert_eq "16 flows: every datagram arrived" "$sent" "$(jq .unique "$TB_RUN/recv1.json")"
assert_ge "p1 carried at least a tenth" $((sent / 10)) $((b1 - a1))
assert_ge "p2 carried at least a tenth" $((sent / 10)) $((b2 - a2))

# a member's link down under traffic: srv's end of the p2 wire goes down
# at 2 s of 6; ferry leaves p2 out at once (its carrier event) and the
# flows it carried move to p1
tb_bg srv "$TB_RUN/recv2.json" "$SEQFLOW" recv -l 0.0.0.0:7401 -f $FLOWS -i 2 -T 40 --ready "$TB_RUN/ready2"
r2=$TB_BG_PID
tb_wait_file "$TB_RUN/ready2"
ip netns exec "$cli" "$SEQFLOW" send -d 10.2.0.2:7401 -r $RATE -t 6 -f $FLOWS >"$TB_RUN/send2.json" &
snd=$!
tb_track "$snd"
sleep 2
ip -n "$srv" link set "$S2" down
t_down=$(date +%s.%N)
sleep 1
p2_at_1s=$(tx_of p2)
echo "p2 left out: $(tb_ctlj dut port show p1 | jq -c '.data[0].bond.members')"
wait "$snd" || true
wait "$r2" || true
p2_end=$(tx_of p2)
sent=$(jq .sent "$TB_RUN/send2.json")
recv=$(jq -c '{unique, missing, duplicates, late}' "$TB_RUN/recv2.json")
lost=$((sent - $(jq .unique "$TB_RUN/recv2.json")))
echo "member down at $t_down: sent $sent, recv $recv, lost $lost; p2 tx 1 s after: $p2_at_1s, at the end: $p2_end"
assert_eq "p2 sends nothing from 1 s after its link went down" "$p2_at_1s" "$p2_end"
assert_eq "after the move, only p1 is active" "p1 true p2 false" \
	"$(tb_ctlj dut port show p1 | jq -r '[.data[0].bond.members[] | "\(.port) \(.active)"] | join(" ")')"
# what was in flight, at most the frames of one second of its half
assert_le "lost in the move (seqflow counts them): under a second of p2's half" $((RATE / 2)) "$lost"
assert_ge "the flows kept arriving after the move" $((sent - RATE)) "$(jq .unique "$TB_RUN/recv2.json")"
st=$(tb_ctlj dut stats | jq -c '.data.route')
echo "route: $(jq -c '{routed, no_neigh, egress_not_routed}' <<<"$st"); dropped by ferry as port_down: $(tb_ctlj dut stats | jq -c '[.data.ports[] | {(.name): ([.. | objects | .port_down? // empty] | add)}] | add')"

# back up: both carry again once LACP has it back
ip -n "$srv" link set "$S2" up
for ((i = 0; i < 100; i++)); do
	[[ $(tb_ctlj dut port show p2 | jq -c '[.data[0].bond.members[] | select(.active)] | length') == 2 ]] && break
	sleep 0.2
done
assert_eq "member back: both active again" 2 \
	"$(tb_ctlj dut port show p2 | jq -c '[.data[0].bond.members[] | select(.active)] | length')"
tb_tcpx cli srv 10.2.0.2 7303 4000000

# a port ferry already serves (XDP attached) enslaved to the bond: what
# the kernel says, and ferry follows the bond's new member if it takes it
tb_veth dut d3 srv s3
D3=$(tb_ifname d3)
tb_do dut port add p3 dev "$D3" >/dev/null
tb_do dut route p3 >/dev/null
ip -n "$dut" link set "$D3" down
if out=$(ip -n "$dut" link set "$D3" master bond0 2>&1); then
	ip -n "$dut" link set "$D3" up
	for ((i = 0; i < 50; i++)); do
		[[ $(tb_ctlj dut port show p3 | jq -r '.data[0].bond.name') == bond0 ]] && break
		sleep 0.2
	done
	echo "enslaving a port ferry serves: accepted; p3 bond: $(tb_ctlj dut port show p3 | jq -c .data[0].bond)"
	assert_eq "p3 enslaved: ferry follows it as a member" bond0 \
		"$(tb_ctlj dut port show p3 | jq -r '.data[0].bond.name')"
else
	echo "enslaving a port ferry serves: refused by the kernel: $out"
fi
echo "PASS"
