#!/usr/bin/env bash
# ferry's route app under a real routing daemon: the dut runs FRR (zebra,
# bgpd) with eBGP to two servers, each running its own FRR and holding
# 10.84.100.1/32 on lo: client -- dut (p0, p1, p2: route, kernel forwarding
# off) -- srv (p1) and srv2 (p2). zebra installs what bgpd learns as
# nexthop objects (RTA_NH_ID), which ferry follows over netlink. On the
# worker path (path xsk), then on the kernel path (bpf_fib_lookup):
#  - srv announces the /32: the dut's kernel has it with nhid, proto bgp;
#    ping and a byte-exact TCP transfer from the client reach srv;
#  - srv2 announces it too (maximum-paths 2): a group object; 64 UDP flows
#    split over both servers, none lost;
#  - srv's bgpd goes silent (SIGSTOP): the dut's hold timer (3 s) drops
#    its path, every flow moves to srv2, none lost after the move; TCP to
#    srv2 byte-exact; srv's bgpd back (SIGCONT): two paths again;
#  - both withdraw the prefix: the route goes, pings fail.
#  - IPv6, one path: srv announces fd84:100::1/128 over an IPv6 session;
#    zebra installs it through an object of the peer's link-local
#    address; ping and TCP through it, then withdrawn: pings fail.
# The dut's kernel forwards nothing itself, and ferry's mirror meets
# nothing from zebra that it does not know.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/frr.sh
. "$(dirname "$0")/../lib/frr.sh"

tb_init
frr_require
tb_routed 84
tb_ns srv2
tb_veth dut d2 srv2 s2
D2=$(tb_ifname d2) S2=$(tb_ifname s2) srv2=$(tb_nsname srv2)
# IPv6 on srv2's lo too (tb_routed has it elsewhere): the prefix is there
ip netns exec "$srv2" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
	net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.lo.disable_ipv6=0 \
	"net.ipv6.conf.$S2.disable_ipv6=0" >/dev/null
ip -n "$dut" addr add 10.84.3.254/24 dev "$D2"
ip -n "$srv2" addr add 10.84.3.1/24 dev "$S2"
ip -n "$srv2" route add default via 10.84.3.254
PFX=10.84.100.1/32 ADDR=10.84.100.1 PFX6=fd84:100::1/128 ADDR6=fd84:100::1
for ns in "$srv" "$srv2"; do
	ip -n "$ns" addr add "$PFX" dev lo
	ip -n "$ns" addr add "$PFX6" dev lo
done
# flows spread by their ports too, on both paths (the kernel's hash for
# bpf_fib_lookup; ferry's workers hash the 5-tuple anyway)
ip netns exec "$dut" sysctl -qw net.ipv4.fib_multipath_hash_policy=1

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut port add p2 dev "$D2" >/dev/null
for p in p0 p1 p2; do
	tb_do dut route $p path xsk >/dev/null
done

# FRR: the dut (AS 65000) learns from srv (65001) and srv2 (65002) and
# tells them nothing back (route-map NONE), two paths of different
# neighbour ASes make one multipath route (multipath-relax); keepalive 1 s,
# hold 3 s; srv announces from the start, srv2 when told.
peer() { # ADDR AS
	printf ' neighbor %s remote-as %s\n neighbor %s timers 1 3\n neighbor %s timers connect 1\n' \
		"$1" "$2" "$1" "$1"
}
zconf() { printf 'hostname %s\n' "$1"; }
frr_start dut dut "$(zconf dut)" "$(
	cat <<EOF
hostname dut
route-map NONE deny 10
router bgp 65000
 bgp router-id 10.84.1.254
 no bgp ebgp-requires-policy
 no bgp network import-check
 bgp bestpath as-path multipath-relax
$(peer 10.84.2.1 65001)
$(peer 10.84.3.1 65002)
$(peer fd84:2::1 65001)
 address-family ipv4 unicast
  maximum-paths 2
  neighbor 10.84.2.1 route-map NONE out
  neighbor 10.84.3.1 route-map NONE out
  no neighbor fd84:2::1 activate
 exit-address-family
 address-family ipv6 unicast
  neighbor fd84:2::1 activate
  neighbor fd84:2::1 route-map NONE out
 exit-address-family
EOF
)" || tb_die "FRR on the dut"
frr_start srv srv "$(zconf srv)" "$(
	cat <<EOF
hostname srv
router bgp 65001
 bgp router-id 10.84.2.1
 no bgp ebgp-requires-policy
$(peer 10.84.2.254 65000)
$(peer fd84:2::fe 65000)
 address-family ipv4 unicast
  network $PFX
  no neighbor fd84:2::fe activate
 exit-address-family
 address-family ipv6 unicast
  neighbor fd84:2::fe activate
  network $PFX6
 exit-address-family
EOF
)" || tb_die "FRR on srv"
frr_start srv2 srv2 "$(zconf srv2)" "$(
	cat <<EOF
hostname srv2
router bgp 65002
 bgp router-id 10.84.3.1
 no bgp ebgp-requires-policy
$(peer 10.84.3.254 65000)
EOF
)" || tb_die "FRR on srv2"
tb_on_fail frr_vtysh dut -c "show bgp summary" -c "show ip route"
tb_on_fail ip -n "$dut" route
tb_on_fail ip -n "$dut" nexthop
tb_on_fail tb_ctl dut fib show

# wait_for SECS CMD...: polls CMD every 0.2 s until it succeeds
wait_for() {
	local n=$(($1 * 5)) i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
# the dut's BGP sessions up: how many are Established
established() {
	frr_vtysh dut -c "show bgp ipv4 unicast summary json" |
		jq '[.peers[] | select(.state == "Established")] | length'
}
established6() {
	frr_vtysh dut -c "show bgp ipv6 unicast summary json" |
		jq '[.peers[] | select(.state == "Established")] | length'
}
both_up() { [[ $(established) == 2 && $(established6) == 1 ]]; }
# the dut's kernel route for the prefix: its gateways, sorted, comma-joined
kgw() {
	ip -n "$dut" -j route show "$PFX" |
		jq -r '[.[] | (.gateway // empty), (.nexthops[]?.gateway)] | sort | join(",")'
}
knhid() { ip -n "$dut" -j route show "$PFX" | jq -r '.[0].nhid // empty'; }
# what ferry's FIB has for it: the gateways (comma-joined)
fgw() {
	tb_ctlj dut fib show "$PFX" | jq -r --arg p "$PFX" \
		'[.data[] | select(.prefix == $p) | .via] | first // "" | split(",") | sort | join(",")'
}
both() { [[ $(kgw) == "$1" && $(fgw) == "$1" ]]; }
# datagrams a namespace's kernel had no socket for (the flows go to port 9)
noports() {
	ip netns exec "$1" awk '/^Udp:/ && !h { for (i = 2; i <= NF; i++) if ($i == "NoPorts") c = i; h = 1; next }
		/^Udp:/ { print $c; exit }' /proc/net/snmp
}
kfwd() { # frames the dut's kernel forwarded itself, IPv4 and IPv6
	ip netns exec "$dut" cat /proc/net/snmp /proc/net/snmp6 |
		awk '/^Ip: [0-9]/ { n += $7 } /^Ip6OutForwDatagrams/ { n += $2 } END { print n + 0 }'
}
nl() { tb_ctlj dut stats | jq -r ".data.route.netlink.$1"; }
# flows N K BASE: N UDP flows (source ports BASE..) of K datagrams each from
# the client to the prefix, paced a little: a burst on a shared 2-core host
# is not what is measured here
FLOWS_PY='
import socket, sys, time
dst, n, k, base = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", base + i))
    for _ in range(k):
        s.sendto(b"ferry-frr-flow" * 4, (dst, 9))
        time.sleep(0.001)
    s.close()
'
flows() {
	ip netns exec "$cli" "$PYTHON" -c "$FLOWS_PY" "$ADDR" "$@"
}
# spread TAG BASE: 64 flows of 4; sets N1 N2 to what srv and srv2 got
spread() {
	local a b i
	a=$(noports "$srv") b=$(noports "$srv2")
	flows 64 4 "$2"
	# the last datagrams may still be on their way
	for ((i = 0; i < 20; i++)); do
		N1=$(($(noports "$srv") - a)) N2=$(($(noports "$srv2") - b))
		((N1 + N2 >= 256)) && break
		sleep 0.1
	done
	echo "    $1: srv got $N1, srv2 got $N2 of 256"
}

wait_for 60 both_up || tb_die "the dut's BGP sessions did not come up"
assert_eq "zebra left the dut's forwarding off" 0 \
	"$(ip netns exec "$dut" sysctl -n net.ipv4.ip_forward)"
kf0=$(kfwd)

# scenario PATH TCPPORT: the whole story on one path; it starts and ends
# with srv announcing and srv2 not
scenario() {
	local path=$1 port=$2 nh out t0
	echo "=== path $path"
	wait_for 30 both 10.84.2.1 || true
	assert_eq "$path: the dut's kernel route via srv" 10.84.2.1 "$(kgw)"
	assert_eq "$path: ferry's FIB via srv" 10.84.2.1 "$(fgw)"
	nh=$(knhid)
	echo "    $(ip -n "$dut" route show "$PFX")"
	assert_match "$path: the route names a nexthop object" '^[0-9]+$' "$nh"
	assert_eq "$path: installed by bgp" bgp "$(ip -n "$dut" -j route show "$PFX" | jq -r '.[0].protocol')"
	out=$(tb_routed_ping dut "$cli" "$ADDR") || tb_die "$path: no reply from srv: $out"
	assert_eq "$path: reply TTL" 1 "$(grep -c 'ttl=63' <<<"$out")"
	out=$(ip netns exec "$cli" ping -c 5 -i 0.1 -W 2 "$ADDR") || tb_die "$path: pings lost: $out"
	tb_tcpx cli srv "$ADDR" "$port"

	# srv2 too: two paths, one group object
	frr_conf srv2 "router bgp 65002" "address-family ipv4 unicast" "network $PFX"
	wait_for 30 both 10.84.2.1,10.84.3.1 || true
	echo "    $(ip -n "$dut" route show "$PFX" | tr -s '\n\t' ' ')"
	assert_eq "$path: the kernel route has both" 10.84.2.1,10.84.3.1 "$(kgw)"
	assert_eq "$path: ferry's FIB has both" 10.84.2.1,10.84.3.1 "$(fgw)"
	nh=$(knhid)
	assert_eq "$path: through a group object" 2 \
		"$(ip -n "$dut" -j nexthop show id "$nh" | jq '.[0].group | length')"
	spread "$path, two paths" 20000
	assert_eq "$path: no flow lost over two paths" 256 $((N1 + N2))
	assert_ge "$path: srv got flows" 4 "$N1"
	assert_ge "$path: srv2 got flows" 4 "$N2"

	# srv's bgpd silent: the hold timer drops it, everything to srv2
	kill -STOP "$(frr_pid srv bgpd)"
	t0=$SECONDS
	wait_for 60 both 10.84.3.1 || true
	echo "    srv silent: moved after $((SECONDS - t0)) s"
	assert_eq "$path: the kernel route via srv2 only" 10.84.3.1 "$(kgw)"
	assert_eq "$path: ferry's FIB via srv2 only" 10.84.3.1 "$(fgw)"
	spread "$path, srv silent" 20000
	assert_eq "$path: every flow at srv2" 256 "$N2"
	assert_eq "$path: none at srv" 0 "$N1"
	tb_tcpx cli srv2 "$ADDR" $((port + 1))
	kill -CONT "$(frr_pid srv bgpd)"
	wait_for 60 both 10.84.2.1,10.84.3.1 || true
	assert_eq "$path: srv back, two paths again" 10.84.2.1,10.84.3.1 "$(fgw)"

	# both withdraw: the route goes, nothing gets through
	frr_conf srv2 "router bgp 65002" "address-family ipv4 unicast" "no network $PFX"
	frr_conf srv "router bgp 65001" "address-family ipv4 unicast" "no network $PFX"
	wait_for 30 both "" || true
	assert_eq "$path: withdrawn: no kernel route" "" "$(ip -n "$dut" route show "$PFX")"
	assert_eq "$path: withdrawn: not in ferry's FIB" "" "$(fgw)"
	assert_fail ip netns exec "$cli" ping -c 2 -i 0.2 -W 1 "$ADDR"

	frr_conf srv "router bgp 65001" "address-family ipv4 unicast" "network $PFX"
	wait_for 30 both 10.84.2.1 || true
	assert_eq "$path: srv announces again" 10.84.2.1 "$(fgw)"
}

# scenario6 PATH TCPPORT: IPv6, one path: srv announces fd84:100::1/128;
# zebra installs it through an object of the BGP next hop (the peer's
# link-local address, as bgpd prefers it)
k6() { # the kernel's gateway and device for the IPv6 prefix
	ip -n "$dut" -6 -j route show "$PFX6" | jq -r '.[0] | "\(.gateway // "") \(.dev // "")"'
}
f6() { # ferry's
	tb_ctlj dut fib show "$PFX6" | jq -r --arg p "$PFX6" \
		'[.data[] | select(.prefix == $p) | "\(.via) \(.port)"] | first // ""'
}
scenario6() {
	local path=$1 port=$2 gw out
	wait_for 60 eval '[[ $(k6) == *" $D1" && $(f6) == *" p1" ]]' || true
	echo "    $(ip -n "$dut" -6 route show "$PFX6")"
	assert_match "$path, IPv6: the kernel route via srv" " $D1\$" "$(k6)"
	assert_match "$path, IPv6: a nexthop object" '^[0-9]+$' \
		"$(ip -n "$dut" -6 -j route show "$PFX6" | jq -r '.[0].nhid // empty')"
	gw=$(k6)
	assert_eq "$path, IPv6: ferry's FIB as the kernel's" "${gw% *} p1" "$(f6)"
	out=$(tb_routed_ping dut "$cli" "$ADDR6") || tb_die "$path: no IPv6 reply from srv: $out"
	assert_eq "$path, IPv6: reply hop limit" 1 "$(grep -c 'ttl=63' <<<"$out")"
	tb_tcpx cli srv "[$ADDR6]" "$port"
	frr_conf srv "router bgp 65001" "address-family ipv6 unicast" "no network $PFX6"
	wait_for 30 eval '[[ -z $(k6 | tr -d " ") && -z $(f6) ]]' || true
	assert_eq "$path, IPv6: withdrawn: no kernel route" "" "$(ip -n "$dut" -6 route show "$PFX6")"
	assert_eq "$path, IPv6: withdrawn: not in ferry's FIB" "" "$(f6)"
	assert_fail ip netns exec "$cli" ping -c 2 -i 0.2 -W 1 "$ADDR6"
	frr_conf srv "router bgp 65001" "address-family ipv6 unicast" "network $PFX6"
}

scenario xsk 7301
scenario6 xsk 7305
assert_ge "xsk path: the workers routed" 256 "$(tb_ctlj dut stats | jq '.data.route.routed // 0')"

# the kernel path: GRO on the end hosts (a DEVMAP redirect into a veth
# needs it) and lo's forwarding knob (bpf_fib_lookup's precondition)
ip netns exec "$cli" ethtool -K "$C0" gro on >/dev/null
ip netns exec "$srv" ethtool -K "$S0" gro on >/dev/null
ip netns exec "$srv2" ethtool -K "$S2" gro on >/dev/null
ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 net.ipv6.conf.lo.forwarding=1
for p in p0 p1 p2; do
	tb_do dut route $p path kernel >/dev/null
	assert_eq "$p on the kernel path" kernel "$(tb_pshow dut $p path)"
done
f0=$(tb_kstat dut p0 fib.fwd)
scenario kernel 7311
scenario6 kernel 7315
assert_ge "kernel path: p0's XDP forwarded" $((f0 + 512)) "$(tb_kstat dut p0 fib.fwd)"
assert_eq "p0 redirect errors" 0 "$(tb_kstat dut p0 xdp_redirect_err)"

st=$(tb_ctlj dut stats)
echo "route: $(jq -c '.data.route | del(.netlink)' <<<"$st")"
echo "netlink: $(jq -c '.data.route.netlink' <<<"$st")"
assert_eq "nothing unknown to the mirror" 0 "$(jq .data.route.netlink.nh_unknown <<<"$st")"
assert_eq "the dut's kernel forwarded nothing" "$kf0" "$(kfwd)"
