#!/usr/bin/env bash
# ferry's route app follows routes through nexthop objects (`ip nexthop`,
# as FRR's zebra installs them): client -- dut (p0, p1, p2: route) -- two
# servers, srv behind p1 and srv2 behind p2, both holding 10.97.0.1 and
# fd97::1. A route `nhid 10` sends pings to srv; `ip nexthop replace id 10`
# through p2 makes them go to srv2 with no route change, a ping every
# 20 ms losing nothing, on the worker path (path xsk) and on the kernel
# path (bpf_fib_lookup resolves the objects itself), IPv4 and IPv6; an
# object's gateway not yet resolved is asked for; the kernel forwards
# nothing itself; the object deleted takes its route with
# it: unreachable from the dut.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_routed 85
tb_ns srv2
ip netns exec "$(tb_nsname srv2)" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
	net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.all.accept_dad=0 \
	net.ipv6.conf.default.accept_dad=0 >/dev/null
tb_veth dut d2 srv2 s2
D2=$(tb_ifname d2) S2=$(tb_ifname s2) srv2=$(tb_nsname srv2)
ip -n "$dut" addr add 10.85.3.254/24 dev "$D2"
ip -n "$dut" addr add fd85:3::fe/64 dev "$D2" nodad
ip -n "$srv2" addr add 10.85.3.1/24 dev "$S2"
ip -n "$srv2" addr add fd85:3::1/64 dev "$S2" nodad
ip -n "$srv2" route add default via 10.85.3.254
ip -n "$srv2" -6 route add default via fd85:3::fe
for ns in "$srv" "$srv2"; do
	ip -n "$ns" addr add 10.97.0.1/32 dev lo
	ip -n "$ns" addr add fd97::1/128 dev lo
done
# the gateways resolved by the dut's kernel beforehand: a switch of path
# finds its neighbour known
for a in 10.85.2.1 10.85.3.1 fd85:2::1 fd85:3::1; do
	ip netns exec "$dut" ping -c 1 -W 1 "$a" >/dev/null || tb_die "dut cannot reach $a"
done
# no route message when an object changes: ferry follows the object
ip netns exec "$dut" sysctl -qw net.ipv4.nexthop_compat_mode=0
ip -n "$dut" nexthop add id 10 via 10.85.2.1 dev "$D1"
ip -n "$dut" -6 nexthop add id 16 via fd85:2::1 dev "$D1"
ip -n "$dut" route add 10.97.0.0/24 nhid 10
ip -n "$dut" -6 route add fd97::/64 nhid 16

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut port add p2 dev "$D2" >/dev/null
for p in p0 p1 p2; do
	tb_do dut route $p path xsk >/dev/null
done

# echo requests a namespace's kernel answered (IPv4 and IPv6)
echos() {
	ip netns exec "$1" awk '/^Icmp:/ && !h { for (i = 2; i <= NF; i++) if ($i == "InEchos") c = i; h = 1; next }
		/^Icmp:/ { n += $c } /^Icmp6InEchos/ { n += $2 } END { print n + 0 }' /proc/net/snmp /proc/net/snmp6
}
kfwd() { # frames the dut's kernel forwarded itself: must stay 0
	ip netns exec "$dut" cat /proc/net/snmp /proc/net/snmp6 |
		awk '/^Ip: [0-9]/ { n += $7 } /^Ip6OutForwDatagrams/ { n += $2 } END { print n + 0 }'
}
via() { # PREFIX: the gateway and port fib show has for it
	tb_ctlj dut fib show "$1" | jq -r --arg p "$1" '.data[] | select(.prefix == $p) | "\(.via) \(.port)"'
}
wait_via() { # PREFIX WANT: up to 2 s for fib show to say WANT
	local i
	for ((i = 0; i < 40; i++)); do
		[[ $(via "$1") == "$2" ]] && return 0
		sleep 0.05
	done
	return 1
}
nl() { tb_ctlj dut stats | jq -r ".data.route.netlink.$1"; }

# ping ADDR N: N pings from cli, one every 20 ms, while CMD... runs
# after 0.5 s; all must come back
ping_through() {
	local addr=$1 n=$2 bg out
	shift 2
	ip netns exec "$cli" ping -c "$n" -i 0.02 -W 1 "$addr" >"$TB_RUN/bg-ping.txt" 2>&1 &
	bg=$!
	tb_track "$bg"
	sleep 0.5
	"$@"
	wait "$bg" || true
	out=$(tail -2 "$TB_RUN/bg-ping.txt")
	echo "$out"
	assert_eq "ping $addr while the object changed: all replies" 1 \
		"$(grep -c "$n packets transmitted, $n received" <<<"$out")"
}

# path xsk: the route through object 10 goes to srv
wait_via 10.97.0.0/24 "10.85.2.1 p1" || true
assert_eq "fib: 10.97.0.0/24 through object 10" "10.85.2.1 p1" "$(via 10.97.0.0/24)"
assert_eq "fib: fd97::/64 through object 16" "fd85:2::1 p1" "$(via fd97::/64)"
out=$(tb_routed_ping dut "$cli" 10.97.0.1) || tb_die "no IPv4 reply through object 10: $out"
assert_eq "IPv4 reply TTL" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$cli" fd97::1) || tb_die "no IPv6 reply through object 16: $out"
e1=$(echos "$srv") e2=$(echos "$srv2")
out=$(ip netns exec "$cli" ping -c 5 -i 0.05 -W 1 10.97.0.1) || tb_die "pings lost: $out"
assert_eq "srv answered the 5" $((e1 + 5)) "$(echos "$srv")"
assert_eq "srv2 answered none" "$e2" "$(echos "$srv2")"

# the object replaced under traffic: the pings move to srv2
added=$(nl routes_added) rep=$(nl nexthops_replaced)
ping_through 10.97.0.1 100 ip -n "$dut" nexthop replace id 10 via 10.85.3.1 dev "$D2"
assert_eq "fib: 10.97.0.0/24 now through p2" "10.85.3.1 p2" "$(via 10.97.0.0/24)"
assert_eq "no route added for it" "$added" "$(nl routes_added)"
assert_eq "replace counted" $((rep + 1)) "$(nl nexthops_replaced)"
e1=$(echos "$srv") e2=$(echos "$srv2")
out=$(ip netns exec "$cli" ping -c 5 -i 0.05 -W 1 10.97.0.1) || tb_die "pings lost: $out"
assert_eq "srv2 answers now" $((e2 + 5)) "$(echos "$srv2")"
assert_eq "srv no more" "$e1" "$(echos "$srv")"
ping_through fd97::1 100 ip -n "$dut" -6 nexthop replace id 16 via fd85:3::1 dev "$D2"
assert_eq "fib: fd97::/64 now through p2" "fd85:3::1 p2" "$(via fd97::/64)"
e1=$(echos "$srv") e2=$(echos "$srv2")
out=$(ip netns exec "$cli" ping -c 5 -i 0.05 -W 1 fd97::1) || tb_die "pings lost: $out"
assert_eq "IPv6: srv2 answers now" $((e2 + 5)) "$(echos "$srv2")"
assert_eq "IPv6: srv no more" "$e1" "$(echos "$srv")"
# through a gateway the dut has not resolved: the worker finds no
# neighbour, ferry asks the kernel for the object's gateway, then forwards
ip -n "$srv2" addr add 10.85.3.2/24 dev "$S2"
rs=$(nl resolve_sent)
ip -n "$dut" nexthop replace id 10 via 10.85.3.2 dev "$D2"
wait_via 10.97.0.0/24 "10.85.3.2 p2" || true
assert_eq "fib: through the unresolved gateway" "10.85.3.2 p2" "$(via 10.97.0.0/24)"
out=$(tb_routed_ping dut "$cli" 10.97.0.1) || tb_die "no reply via the unresolved gateway: $out"
assert_ge "the object's gateway resolved on request" $((rs + 1)) "$(nl resolve_sent)"
assert_eq "the dut's kernel knows it now" 1 \
	"$(ip -n "$dut" neigh show 10.85.3.2 dev "$D2" | grep -c lladdr || true)"
st=$(tb_ctlj dut stats)
echo "route: $(jq -c '.data.route | del(.netlink)' <<<"$st")"
echo "netlink: $(jq -c '.data.route.netlink' <<<"$st")"
assert_eq "nothing unknown to the mirror" 0 "$(jq .data.route.netlink.nh_unknown <<<"$st")"

# the kernel path: bpf_fib_lookup resolves the objects itself
ip netns exec "$cli" ethtool -K "$C0" gro on >/dev/null
ip netns exec "$srv" ethtool -K "$S0" gro on >/dev/null
ip netns exec "$srv2" ethtool -K "$S2" gro on >/dev/null
ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 net.ipv6.conf.lo.forwarding=1
for p in p0 p1 p2; do
	tb_do dut route $p path kernel >/dev/null
	assert_eq "$p on the kernel path" kernel "$(tb_pshow dut $p path)"
done
kf0=$(kfwd)
k0=$(tb_kstat dut p0 rx_packets) f0=$(tb_kstat dut p0 fib.fwd)
ip -n "$dut" nexthop replace id 10 via 10.85.2.1 dev "$D1"
e1=$(echos "$srv") e2=$(echos "$srv2")
out=$(tb_routed_ping dut "$cli" 10.97.0.1) || tb_die "no reply on the kernel path: $out"
out=$(ip netns exec "$cli" ping -c 5 -i 0.05 -W 1 10.97.0.1) || tb_die "pings lost: $out"
assert_ge "kernel path: srv answers" $((e1 + 6)) "$(echos "$srv")"
assert_eq "kernel path: srv2 not" "$e2" "$(echos "$srv2")"
assert_ge "p0 kernel rx" $((k0 + 6)) "$(tb_kstat dut p0 rx_packets)"
assert_ge "p0 fib fwd" $((f0 + 6)) "$(tb_kstat dut p0 fib.fwd)"
k0=$(tb_kstat dut p0 rx_packets)
ping_through 10.97.0.1 100 ip -n "$dut" nexthop replace id 10 via 10.85.3.1 dev "$D2"
e1=$(echos "$srv") e2=$(echos "$srv2")
out=$(ip netns exec "$cli" ping -c 5 -i 0.05 -W 1 10.97.0.1) || tb_die "pings lost: $out"
assert_eq "kernel path: srv2 answers now" $((e2 + 5)) "$(echos "$srv2")"
assert_eq "kernel path: srv no more" "$e1" "$(echos "$srv")"
assert_ge "p0 kernel rx during the change" $((k0 + 105)) "$(tb_kstat dut p0 rx_packets)"
ping_through fd97::1 100 ip -n "$dut" -6 nexthop replace id 16 via fd85:2::1 dev "$D1"
e1=$(echos "$srv") e2=$(echos "$srv2")
out=$(ip netns exec "$cli" ping -c 5 -i 0.05 -W 1 fd97::1) || tb_die "pings lost: $out"
assert_eq "kernel path, IPv6: srv answers now" $((e1 + 5)) "$(echos "$srv")"
assert_eq "kernel path, IPv6: srv2 no more" "$e2" "$(echos "$srv2")"
assert_eq "p0 redirect errors" 0 "$(tb_kstat dut p0 xdp_redirect_err)"
assert_eq "the dut's kernel forwarded nothing" "$kf0" "$(kfwd)"

# the object deleted: the kernel drops its route without a word, ferry too
ip -n "$dut" nexthop del id 10
for ((i = 0; i < 40; i++)); do
	[[ -z $(via 10.97.0.0/24) ]] && break
	sleep 0.05
done
assert_eq "fib: 10.97.0.0/24 gone with its object" "" "$(via 10.97.0.0/24)"
out=$(ip netns exec "$cli" ping -c 1 -W 2 10.97.0.1 2>&1 || true)
echo "$out"
assert_eq "object deleted: unreachable from the dut" 1 \
	"$(grep -c 'From 10.85.1.254.*Unreachable' <<<"$out")"
assert_ge "delete counted" 1 "$(nl nexthops_deleted)"
