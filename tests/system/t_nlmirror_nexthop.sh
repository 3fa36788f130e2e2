#!/usr/bin/env bash
# nlmirror follows the kernel's nexthop objects (`ip nexthop`, what FRR's
# zebra installs routes with), through tests/lib/nlmirror_dump -i against a
# router namespace: objects and a route naming one (nhid) made before the
# mirror starts are in its first dump; `ip nexthop replace` changes what
# every route through the object forwards to with the same FIB next hop and
# no route message (nexthop_compat_mode off, then on); a weighted group, a
# group member replaced, a group replaced in place (and past its room: its
# route moved to a bigger one), a resilient group, a
# blackhole made a gateway, IPv6; a member deleted leaves its groups, an
# object deleted takes its routes and the groups it empties with it (the
# kernel says nothing of those routes), a higher-metric route behind one
# takes over; a link without carrier flushes the objects through it (101,
# 500 routes) and their routes; events lost to a socket overrun are made good by the
# re-dump, a deleted object's routes included.
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
tb_ns pc
for n in dut pa pb pc; do
	tb_ipv6_on "$n"
done
tb_veth dut da pa pa
tb_veth dut db pb pb
tb_veth dut dc pc pc
DA=$(tb_ifname da) DB=$(tb_ifname db) DC=$(tb_ifname dc)
dut=$(tb_nsname dut)
ip -n "$dut" addr add 10.1.0.1/24 dev "$DA"
ip -n "$dut" addr add 10.2.0.1/24 dev "$DB"
ip -n "$dut" addr add 10.3.0.1/24 dev "$DC"
ip -n "$dut" addr add 2001:db8:2::1/64 dev "$DB" nodad
MA=02:00:00:00:00:0a MB=02:00:00:00:00:0b MC=02:00:00:00:00:0c
ip -n "$dut" neigh replace 10.1.0.2 lladdr $MA dev "$DA" nud permanent
ip -n "$dut" neigh replace 10.2.0.2 lladdr $MB dev "$DB" nud permanent
ip -n "$dut" neigh replace 10.3.0.2 lladdr $MC dev "$DC" nud permanent
ip -n "$dut" neigh replace 2001:db8:2::2 lladdr $MB dev "$DB" nud permanent
# no route messages when an object changes: what is seen comes from it
ip netns exec "$dut" sysctl -qw net.ipv4.nexthop_compat_mode=0

# made before the mirror starts: its first dump has them
ip -n "$dut" nexthop add id 1 via 10.1.0.2 dev "$DA"
ip -n "$dut" nexthop add id 2 via 10.2.0.2 dev "$DB"
ip -n "$dut" nexthop add id 3 group 1/2
ip -n "$dut" route add 10.10.0.0/16 nhid 1
ip -n "$dut" route add 10.11.0.0/16 nhid 3

coproc DUMPER { exec ip netns exec "$dut" "$DUMP" -p "$DA" -p "$DB" -p "$DC" -i 2>&1; }
# bash unsets DUMPER_PID once the coprocess exits: a copy to wait for
dpid=$DUMPER_PID
tb_track "$dpid"
# the coprocess's own descriptors are closed in subshells: $(q ...) needs
# copies
exec {DIN}>&"${DUMPER[1]}" {DOUT}<&"${DUMPER[0]}"
first=
while read -r -t 5 line <&"$DOUT"; do
	first+="$line"$'\n'
	[[ $line == ready ]] && break
done
assert_match "dump ready" '^ready$' "$first"
assert_match "first dump: route through an object" \
	"^route 10.10.0.0/16 via 10.1.0.2 port 0 mac $MA\$" "$first"
assert_match "first dump: route through a group object" \
	"^route 10.11.0.0/16 multipath \[via 10.1.0.2 port 0 mac $MA, via 10.2.0.2 port 1 mac $MB\]\$" "$first"

# q CMD...: one command, its answer (up to "end", "ok" or the one line)
q() {
	local l out=
	echo "$*" >&"$DIN"
	while read -r -t 5 l <&"$DOUT"; do
		out+="$l"$'\n'
		[[ $l == end || $l == ok || $l == lookup* || $l == error* ]] && break
	done
	printf '%s' "$out"
}
# lk ADDR: what the FIB's lookup of ADDR gives, "nh ID NEXTHOP" or "none"
lk() {
	q lookup "$1" | sed -n "s|^lookup $1 ||p"
}
nh_of() { sed -n 's/^nh \([0-9]*\) .*/\1/p' <<<"$1"; }
ctr() { q counters | sed -n "s/^counter $1 //p"; }

# a single object; two routes through it
ip -n "$dut" nexthop add id 10 via 10.1.0.2 dev "$DA"
ip -n "$dut" route add 10.20.0.0/16 nhid 10
ip -n "$dut" route add 10.21.0.0/16 nhid 10
r=$(lk 10.20.1.1)
assert_match "route through object 10" "^nh [0-9]+ via 10.1.0.2 port 0 mac $MA\$" "$r"
nh10=$(nh_of "$r")
assert_eq "both routes share the object's next hop" "$nh10" "$(nh_of "$(lk 10.21.1.1)")"

# replaced: both routes follow, same FIB next hop, no route message
ev=$(ctr on_route) added=$(ctr routes_added)
ip -n "$dut" nexthop replace id 10 via 10.2.0.2 dev "$DB"
assert_eq "after replace, route 1" "nh $nh10 via 10.2.0.2 port 1 mac $MB" "$(lk 10.20.1.1)"
assert_eq "after replace, route 2" "nh $nh10 via 10.2.0.2 port 1 mac $MB" "$(lk 10.21.1.1)"
assert_eq "no route change reported" "$ev" "$(ctr on_route)"
assert_eq "no route added" "$added" "$(ctr routes_added)"
assert_ge "replace counted" 1 "$(ctr nexthops_replaced)"

# a weighted group: 10 (via B) twice as often as 11 (via A)
ip -n "$dut" nexthop add id 11 via 10.1.0.2 dev "$DA"
ip -n "$dut" nexthop add id 20 group 10,2/11,1
ip -n "$dut" route add 10.30.0.0/16 nhid 20
r=$(lk 10.30.1.1)
pb="via 10.2.0.2 port 1 mac $MB" pa="via 10.1.0.2 port 0 mac $MA"
assert_match "group 10,2/11,1" "^nh [0-9]+ multipath \[$pb, $pb, $pa\]\$" "$r"
nh20=$(nh_of "$r")
# a member replaced: the group follows, same FIB next hop
ip -n "$dut" nexthop replace id 11 via 10.1.0.3 dev "$DA"
assert_eq "member replaced" "nh $nh20 multipath [$pb, $pb, via 10.1.0.3 port 0 unresolved]" \
	"$(lk 10.30.1.1)"
# the group replaced: in place, same FIB next hop
ev=$(ctr on_route)
ip -n "$dut" nexthop replace id 20 group 10/11
assert_eq "group replaced in place" "nh $nh20 multipath [$pb, via 10.1.0.3 port 0 unresolved]" \
	"$(lk 10.30.1.1)"
assert_eq "group replace: no route change reported" "$ev" "$(ctr on_route)"
# past the group's room (9 paths for weights 7 and 2): a new FIB group,
# the route moved to it
ip -n "$dut" nexthop replace id 20 group 10,7/11,2
r=$(lk 10.30.1.1)
pc="via 10.1.0.3 port 0 unresolved"
assert_match "group grown past its room" \
	"^nh [0-9]+ multipath \[$pb, $pb, $pb, $pb, $pb, $pb, $pb, $pc, $pc\]\$" "$r"
assert_eq "its route moved once" $((ev + 1)) "$(ctr on_route)"
nh20=$(nh_of "$r")
ip -n "$dut" nexthop replace id 20 group 10/11
assert_eq "and back, in place" "nh $nh20 multipath [$pb, $pc]" "$(lk 10.30.1.1)"
# a resilient group is a plain group here
ip -n "$dut" nexthop add id 21 group 10/11 type resilient buckets 32
ip -n "$dut" route add 10.31.0.0/16 nhid 21
assert_match "resilient group" "^nh [0-9]+ multipath \[$pb, via 10.1.0.3 port 0 unresolved\]\$" \
	"$(lk 10.31.1.1)"

# a blackhole object drops; made a gateway, its route forwards
ip -n "$dut" nexthop add id 30 blackhole
ip -n "$dut" route add 10.40.0.0/16 nhid 30
r=$(lk 10.40.1.1)
assert_match "blackhole object" "^nh [0-9]+ drop\$" "$r"
ip -n "$dut" nexthop replace id 30 via 10.1.0.2 dev "$DA"
assert_eq "blackhole made a gateway" "nh $(nh_of "$r") $pa" "$(lk 10.40.1.1)"

# IPv6
ip -n "$dut" -6 nexthop add id 40 via 2001:db8:2::2 dev "$DB"
ip -n "$dut" -6 route add 2001:db8:40::/48 nhid 40
assert_match "IPv6 route through an object" "^nh [0-9]+ via 2001:db8:2::2 port 1 mac $MB\$" \
	"$(lk 2001:db8:40::1)"

# a shadowed route: the higher metric takes over when the lower one's
# object goes
ip -n "$dut" nexthop add id 50 via 10.1.0.2 dev "$DA"
ip -n "$dut" nexthop add id 51 via 10.2.0.2 dev "$DB"
ip -n "$dut" route add 10.50.0.0/16 nhid 50 metric 100
ip -n "$dut" route add 10.50.0.0/16 nhid 51 metric 200
assert_match "lower metric wins" "^nh [0-9]+ $pa\$" "$(lk 10.50.1.1)"

# deletes: a member leaves its groups; an object takes its routes and the
# groups it empties with it
ip -n "$dut" nexthop del id 11
assert_eq "member deleted" "nh $nh20 multipath [$pb]" "$(lk 10.30.1.1)"
assert_match "member deleted, resilient" "^nh [0-9]+ multipath \[$pb\]\$" "$(lk 10.31.1.1)"
del=$(ctr nexthops_deleted)
ip -n "$dut" nexthop del id 10
assert_eq "object deleted: its route" none "$(lk 10.20.1.1)"
assert_eq "object deleted: its other route" none "$(lk 10.21.1.1)"
assert_eq "emptied group: its route" none "$(lk 10.30.1.1)"
assert_eq "emptied resilient group: its route" none "$(lk 10.31.1.1)"
assert_eq "deletes counted (10, 20, 21)" $((del + 3)) "$(ctr nexthops_deleted)"
ip -n "$dut" nexthop del id 50
r=""
for _ in $(seq 20); do # the kernel answers which route wins now
	r=$(lk 10.50.1.1)
	[[ $r == *"$pb" ]] && break
	sleep 0.05
done
assert_match "higher metric took over" "^nh [0-9]+ $pb\$" "$r"
# the kernel's own view agrees: none of those routes is left there
assert_eq "kernel: routes of deleted objects gone" 0 \
	"$(ip -n "$dut" route show | grep -cE '^10\.(20|21|30|31)\.' || true)"
assert_match "still there: route through object 1" "^nh [0-9]+ $pa\$" "$(lk 10.10.1.1)"

# a link losing carrier: the kernel flushes the objects through it and
# their routes, silently; so does the mirror
ip -n "$dut" nexthop add id 60 via 10.3.0.2 dev "$DC"
ip -n "$dut" route add 10.60.0.0/16 nhid 60
assert_match "route via dc" "^nh [0-9]+ via 10.3.0.2 port 2 mac $MC\$" "$(lk 10.60.1.1)"
# and many more: 100 objects with 5 routes each, a group of two of them
for i in $(seq 100 199); do
	echo "nexthop add id $i via 10.3.0.2 dev $DC"
	for j in 0 1 2 3 4; do
		echo "route add 10.$((i - 36)).$j.0/24 nhid $i"
	done
done >"$TB_RUN/dc.batch"
echo "nexthop add id 300 group 100/199" >>"$TB_RUN/dc.batch"
echo "route add 10.61.0.0/16 nhid 300" >>"$TB_RUN/dc.batch"
ip -n "$dut" -batch "$TB_RUN/dc.batch"
assert_match "route 5 of object 199" "^nh [0-9]+ via 10.3.0.2 port 2 mac $MC\$" "$(lk 10.163.4.1)"
assert_match "route through the group on dc" "^nh [0-9]+ multipath " "$(lk 10.61.1.1)"
fl=$(ctr nexthops_flushed)
ip -n "$(tb_nsname pc)" link set "$(tb_ifname pc)" down
for _ in $(seq 20); do
	ip -n "$dut" nexthop show id 60 >/dev/null 2>&1 || break
	sleep 0.05
done
assert_eq "kernel flushed object 60" 1 "$(ip -n "$dut" nexthop show id 60 >/dev/null 2>&1 || echo 1)"
assert_eq "carrier lost: route gone" none "$(lk 10.60.1.1)"
assert_eq "carrier lost: route of object 100 gone" none "$(lk 10.64.0.1)"
assert_eq "carrier lost: route of object 199 gone" none "$(lk 10.163.4.1)"
assert_eq "carrier lost: the group's route gone" none "$(lk 10.61.1.1)"
assert_eq "flush counted (60, 100-199)" $((fl + 101)) "$(ctr nexthops_flushed)"
# (the neighbour's own host route stays)
assert_eq "no route of dc's objects left" 0 \
	"$(q routes | grep -v '^route 10.3.0.2/32 ' | grep -c 'via 10.3.0.2 port 2' || true)"

# with nexthop_compat_mode on the kernel also sends every route through a
# changed object: the same FIB next hop either way
ip netns exec "$dut" sysctl -qw net.ipv4.nexthop_compat_mode=1
ip -n "$dut" nexthop add id 70 via 10.1.0.2 dev "$DA"
ip -n "$dut" route add 10.70.0.0/16 nhid 70
r=$(lk 10.70.1.1)
ip -n "$dut" nexthop replace id 70 via 10.2.0.2 dev "$DB"
assert_eq "compat mode: replaced" "nh $(nh_of "$r") $pb" "$(lk 10.70.1.1)"

# events lost: a tiny receive buffer, the mirror reading nothing for a
# while, a flood of routes and then object changes that do not fit; the
# re-dump after the overrun has them all, the deleted object's route gone
ip -n "$dut" nexthop add id 80 via 10.1.0.2 dev "$DA"
ip -n "$dut" nexthop add id 81 via 10.1.0.2 dev "$DA"
ip -n "$dut" route add 10.80.0.0/16 nhid 80
ip -n "$dut" route add 10.81.0.0/16 nhid 81
assert_match "before the overrun: 10.81" "^nh [0-9]+ $pa\$" "$(lk 10.81.1.1)"
ov=$(ctr overruns)
q rcvbuf 1024 >/dev/null
echo "sleep 2" >&"$DIN"
for i in $(seq 0 255); do
	echo "route add 10.100.$i.0/24 nhid 80"
done >"$TB_RUN/flood.batch"
ip -n "$dut" -batch "$TB_RUN/flood.batch"
ip -n "$dut" nexthop replace id 80 via 10.2.0.2 dev "$DB"
ip -n "$dut" nexthop del id 81
ip -n "$dut" nexthop add id 82 group 80/1
ip -n "$dut" route add 10.82.0.0/16 nhid 82
read -r -t 5 line <&"$DOUT"
assert_eq "mirror slept" ok "$line"
assert_eq "after the overrun: replaced object" "$pb" "$(lk 10.80.1.1 | sed 's/^nh [0-9]* //')"
assert_eq "after the overrun: flooded route" "$pb" "$(lk 10.100.255.1 | sed 's/^nh [0-9]* //')"
assert_eq "after the overrun: deleted object's route" none "$(lk 10.81.1.1)"
assert_eq "after the overrun: new group" "multipath [$pb, $pa]" "$(lk 10.82.1.1 | sed 's/^nh [0-9]* //')"
assert_ge "overrun counted" $((ov + 1)) "$(ctr overruns)"

c=$(q counters)
echo "$c"
assert_match "no unknown ids" "^counter nh_unknown 0\$" "$c"
assert_match "no FIB errors" "^counter fib_errors 0\$" "$c"
echo quit >&"$DIN"
wait "$dpid" || tb_die "nlmirror_dump failed"
((ASSERT_FAILS == 0))
