#!/usr/bin/env bash
# nlmirror follows the kernel: a router namespace with two veth links,
# addresses, routes (one via a gateway, a multipath one, an IPv6 one, a
# blackhole) and neighbours, loaded into a FIB by tests/lib/nlmirror_dump;
# a route changed, one deleted, an IPv6 one added and one path of an IPv6
# multipath route deleted with `ip route` are seen within a second, and a
# route shadowed by a lower metric takes over when that one goes;
# a next hop without a neighbour is resolved on request (NTF_USE).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

DUMP=$(tb__abs "${NLMIRROR_DUMP:-build/tests/nlmirror_dump}")
[[ -x $DUMP ]] || tb_die "$DUMP not built"

tb_init
tb_ns dut
tb_ns pa
tb_ns pb
for n in dut pa pb; do
	tb_ipv6_on "$n"
done
tb_veth dut da pa pa
tb_veth dut db pb pb
DA=$(tb_ifname da) DB=$(tb_ifname db)
dut=$(tb_nsname dut)
ip -n "$dut" addr add 10.1.0.1/24 dev "$DA"
ip -n "$dut" addr add 10.2.0.1/24 dev "$DB"
ip -n "$dut" addr add 2001:db8:1::1/64 dev "$DA" nodad
ip -n "$dut" addr add 2001:db8:2::1/64 dev "$DB" nodad
ip -n "$(tb_nsname pa)" addr add 10.1.0.2/24 dev "$(tb_ifname pa)"
ip -n "$(tb_nsname pa)" addr add 2001:db8:1::2/64 dev "$(tb_ifname pa)" nodad
ip -n "$(tb_nsname pb)" addr add 10.2.0.2/24 dev "$(tb_ifname pb)"
ip -n "$(tb_nsname pb)" addr add 2001:db8:2::2/64 dev "$(tb_ifname pb)" nodad
MA=$(tb_mac pa pa) MB=$(tb_mac pb pb)
# 10.1.0.2 and 2001:db8:2::2 are known; 10.2.0.2 is not (resolved below)
ip -n "$dut" neigh replace 10.1.0.2 lladdr "$MA" dev "$DA" nud permanent
ip -n "$dut" neigh replace 2001:db8:2::2 lladdr "$MB" dev "$DB" nud permanent
ip -n "$dut" route add 10.9.0.0/16 via 10.1.0.2
ip -n "$dut" route add 10.8.0.0/16 nexthop via 10.1.0.2 nexthop via 10.2.0.2
ip -n "$dut" route add blackhole 10.7.0.0/16
# one prefix, two metrics: the lower wins, the higher takes over on delete
ip -n "$dut" route add 10.6.0.0/16 via 10.1.0.2 metric 100
ip -n "$dut" route add 10.6.0.0/16 via 10.2.0.2 metric 200
ip -n "$dut" -6 route add 2001:db8:9::/48 via 2001:db8:2::2
ip -n "$dut" -6 route add 2001:db8:8::/48 nexthop via 2001:db8:1::2 nexthop via 2001:db8:2::2

out=$TB_RUN/dump.out
ip netns exec "$dut" "$DUMP" -p "$DA" -p "$DB" -r "10.2.0.2@$DB" -f 4 >"$out" 2>&1 &
pid=$!
tb_track "$pid"
for _ in $(seq 100); do
	grep -q '^ready' "$out" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
assert_match "dump ready" '^ready' "$(cat "$out")"
dump=$(sed -n '1,/^ready/p' "$out")
assert_match "link a is port 0" "^link $DA port 0\$" "$dump"
assert_match "link b is port 1" "^link $DB port 1\$" "$dump"
assert_match "port 1's ICMP sources" "^port 1 mtu 1500 ip4 10.2.0.1 ip6 2001:db8:2::1\$" "$dump"
assert_match "address" "^addr 10.1.0.1/24 dev $DA\$" "$dump"
assert_match "IPv6 address" "^addr 2001:db8:2::1/64 dev $DB\$" "$dump"
assert_match "neighbour" "^neigh 10.1.0.2 dev $DA lladdr $MA\$" "$dump"
assert_match "route via a gateway" "^route 10.9.0.0/16 via 10.1.0.2 port 0 mac $MA\$" "$dump"
assert_match "multipath route" \
	"^route 10.8.0.0/16 multipath \[via 10.1.0.2 port 0 mac $MA, via 10.2.0.2 port 1 unresolved\]\$" "$dump"
assert_match "IPv6 route" "^route 2001:db8:9::/48 via 2001:db8:2::2 port 1 mac $MB\$" "$dump"
assert_match "IPv6 multipath route" \
	"^route 2001:db8:8::/48 multipath \[via 2001:db8:1::2 port 0 unresolved, via 2001:db8:2::2 port 1 mac $MB\]\$" "$dump"
assert_match "connected route" "^route 10.1.0.0/24 connected port 0\$" "$dump"
assert_match "IPv6 connected route" "^route 2001:db8:1::/64 connected port 0\$" "$dump"
assert_match "own address" "^route 10.2.0.1/32 local\$" "$dump"
assert_match "own IPv6 address" "^route 2001:db8:1::1/128 local\$" "$dump"
assert_match "blackhole" "^route 10.7.0.0/16 drop\$" "$dump"
assert_match "lower metric wins" "^route 10.6.0.0/16 via 10.1.0.2 port 0 mac $MA\$" "$dump"
assert_match "neighbour's host route" "^route 10.1.0.2/32 via 10.1.0.2 port 0 mac $MA\$" "$dump"

# A change is applied within a second of `ip route` returning.
seen_within() {
	local re=$1 t0
	t0=$(date +%s%N)
	while (($(date +%s%N) - t0 < 1000000000)); do
		grep -Eq -- "$re" "$out" && return 0
		sleep 0.02
	done
	return 1
}
ip -n "$dut" route replace 10.9.0.0/16 via 10.2.0.2
if seen_within "^add 10.9.0.0/16 via 10.2.0.2 port 1"; then
	assert__pass "route replace seen within 1 s"
else
	assert__fail "route replace not seen within 1 s" "$(cat "$out")"
fi
ip -n "$dut" route del 10.8.0.0/16
if seen_within "^del 10.8.0.0/16"; then
	assert__pass "route delete seen within 1 s"
else
	assert__fail "route delete not seen within 1 s" "$(cat "$out")"
fi
ip -n "$dut" -6 route add 2001:db8:7::/48 via 2001:db8:1::2
if seen_within "^add 2001:db8:7::/48 via 2001:db8:1::2 port 0"; then
	assert__pass "IPv6 route add seen within 1 s"
else
	assert__fail "IPv6 route add not seen within 1 s" "$(cat "$out")"
fi
ip -n "$dut" route del 10.6.0.0/16 via 10.1.0.2 metric 100
if seen_within "^add 10.6.0.0/16 via 10.2.0.2 port 1"; then
	assert__pass "the higher metric route takes over within 1 s"
else
	assert__fail "the higher metric route did not take over within 1 s" "$(cat "$out")"
fi
# IPv6 deletes one path of a multipath route alone: the rest stays routed
ip -n "$dut" -6 route del 2001:db8:8::/48 via 2001:db8:1::2
if seen_within "^add 2001:db8:8::/48 via 2001:db8:2::2 port 1 mac $MB\$"; then
	assert__pass "IPv6 multipath path delete seen within 1 s"
else
	assert__fail "IPv6 multipath path delete not seen within 1 s" "$(cat "$out")"
fi

wait "$pid"
tail=$(sed -n '/^ready/,$p' "$out")
# the NTF_USE request made the kernel ask pb, whose answer came back
assert_match "resolved neighbour" "^neigh 10.2.0.2 dev $DB lladdr $MB\$" "$tail"
assert_match "resolve request sent" "^counter resolve_sent 1\$" "$tail"
assert_match "no netlink errors" "^counter netlink_errors 0\$" "$tail"
assert_match "no overruns" "^counter overruns 0\$" "$tail"
((ASSERT_FAILS == 0))
