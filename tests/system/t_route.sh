#!/usr/bin/env bash
# ferry routes between two addressed ports with the kernel as its control
# plane: client -- dut (p0, p1: `route p0`, `route p1`, kernel forwarding
# off) -- server, default routes via the dut. Ping and byte-exact TCP both
# ways over IPv4 and IPv6 with replies at TTL 63 (the next hops need
# resolving first: the dut knows no neighbour when the test starts);
# `ping -t 1` gets time exceeded from the dut's address; a route added and
# deleted with `ip route` while traffic runs is followed within a second;
# a multipath route carries TCP byte-exact; a smaller egress MTU gets
# fragmentation-needed; save and a start from the file route again.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
# ferry forwards, the kernel answers for itself only (tb_routed)
tb_routed 88

DUTN=dut
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut route p0 >/dev/null
tb_do dut route p1 >/dev/null

# fib show has the connected routes and the host's addresses
fib=$(tb_ctlj dut fib show)
echo "fib: $(jq -c '.data' <<<"$fib")"
assert_eq "fib has 10.88.2.0/24 on p1" p1 \
	"$(jq -r '.data[] | select(.prefix == "10.88.2.0/24") | .port' <<<"$fib")"
assert_eq "fib has fd88:2::/64 on p1" p1 \
	"$(jq -r '.data[] | select(.prefix == "fd88:2::/64") | .port' <<<"$fib")"
assert_eq "fib show PREFIX" 10.88.2.0/24 \
	"$(tb_ctlj dut fib show 10.88.2.0/24 | jq -r '[.data[].prefix] | map(select(. == "10.88.2.0/24")) | .[0]')"
assert_eq "show config has route p0" 1 "$(tb_ctl dut show config | grep -c '^route p0$')"

# ping: the first frames find no neighbour (dropped, resolution asked),
# then every reply comes back through ferry at TTL 63 / hop limit 63
out=$(tb_routed_ping "$DUTN" "$cli" 10.88.2.1) || tb_die "no IPv4 ping reply: $out"
assert_eq "IPv4 reply TTL" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping "$DUTN" "$cli" fd88:2::1) || tb_die "no IPv6 ping reply: $out"
assert_eq "IPv6 reply hop limit" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping "$DUTN" "$srv" 10.88.1.1) || tb_die "no IPv4 ping reply srv->cli: $out"
assert_eq "IPv4 reply TTL srv->cli" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping "$DUTN" "$srv" fd88:1::1) || tb_die "no IPv6 ping reply srv->cli: $out"
out=$(ip netns exec "$cli" ping -c 5 -i 0.2 -W 1 10.88.2.1) || tb_die "ping lost frames: $out"
assert_eq "5 IPv4 replies" 1 "$(grep -c '5 received' <<<"$out")"
echo "neigh: $(tb_ctlj dut neigh show | jq -c '.data')"
assert_eq "neigh has the server" 1 \
	"$(tb_ctlj dut neigh show | jq '[.data[] | select(.address == "10.88.2.1")] | length')"

# the human views: tables, no JSON, no line over 120 columns
for c in "fib show" "neigh show" "fib show 10.88.2.0/24"; do
	# shellcheck disable=SC2086 # the command's words
	h=$(tb_ctl dut $c)
	printf '%s\n' "$h"
	assert_eq "$c: no JSON in the human view" 0 "$(grep -c '[{}]' <<<"$h" || true)"
	assert_le "$c: widest line" 120 "$(awk '{ if (length > m) m = length } END { print m + 0 }' <<<"$h")"
done
tb_ctl dut fib show 10.88.0.0/33 >/dev/null 2>&1 && tb_die "fib show took a bad prefix"
tb_ctl dut version >/dev/null || tb_die "ferryd gone after a bad prefix"

# the dut's own addresses are the kernel's: the classifier passes them
for a in 10.88.1.254 10.88.2.254 fd88:1::fe fd88:2::fe; do
	out=$(ip netns exec "$cli" ping -c 1 -W 2 "$a" 2>&1) || tb_die "no reply from the dut's $a: $out"
	assert_eq "the dut's kernel answers $a at TTL 64" 1 "$(grep -c 'ttl=64' <<<"$out")"
done
xdp=$(tb_ctlj dut stats | jq -c '.data.ports[0].xdp')
echo "p0 classifier: $xdp"
assert_ge "p0 pass_local" 4 "$(jq .pass_local <<<"$xdp")"
assert_eq "port show: host frames" "arp,ndp,local,link-local" \
	"$(tb_ctlj dut port show p0 | jq -r '.data[0].host_frames // .data.host_frames // empty' | head -1)"

# TCP byte-exact, both ways, both families
tb_tcpx cli srv 10.88.2.1 7101
tb_tcpx cli srv '[fd88:2::1]' 7102
tb_tcpx srv cli 10.88.1.1 7103
tb_tcpx srv cli '[fd88:1::1]' 7104

# TTL 1: time exceeded from the dut's ingress address
out=$(ip netns exec "$cli" ping -c 1 -W 2 -t 1 10.88.2.1 2>&1 || true)
echo "$out"
assert_eq "IPv4 time exceeded from the dut" 1 \
	"$(grep -c 'From 10.88.1.254.*Time to live exceeded' <<<"$out")"
out=$(ip netns exec "$cli" ping -c 1 -W 2 -t 1 fd88:2::1 2>&1 || true)
echo "$out"
assert_eq "IPv6 time exceeded from the dut" 1 \
	"$(grep -ci 'From fd88:1::fe.*Time exceeded' <<<"$out")"

# a route added with ip route while traffic runs: followed within a second
ip -n "$srv" addr add 10.99.0.1/32 dev lo
# traffic through the dut the whole time: no frame of it is lost
ip netns exec "$cli" ping -c 150 -i 0.02 -W 1 10.88.2.1 >"$TB_RUN/bg-ping.txt" 2>&1 &
bg=$!
tb_track "$bg"
ip -n "$dut" route add 10.99.0.0/24 via 10.88.2.1
t0=$(date +%s%N)
for ((i = 0; i < 20; i++)); do
	[[ $(tb_ctlj dut fib show 10.99.0.0/24 | jq -r '[.data[] | select(.prefix == "10.99.0.0/24")] | length') == 1 ]] && break
	sleep 0.1
done
dt=$((($(date +%s%N) - t0) / 1000000))
echo "route seen after ${dt} ms"
assert_eq "route added within a second" 1 "$((dt < 1000))"
out=$(tb_routed_ping "$DUTN" "$cli" 10.99.0.1) || tb_die "no reply through the new route: $out"
ip -n "$dut" route del 10.99.0.0/24
t0=$(date +%s%N)
for ((i = 0; i < 20; i++)); do
	[[ $(tb_ctlj dut fib show 10.99.0.0/24 | jq -r '[.data[] | select(.prefix == "10.99.0.0/24")] | length') == 0 ]] && break
	sleep 0.1
done
dt=$((($(date +%s%N) - t0) / 1000000))
echo "route gone after ${dt} ms"
assert_eq "route deleted within a second" 1 "$((dt < 1000))"
out=$(ip netns exec "$cli" ping -c 1 -W 2 10.99.0.1 2>&1 || true)
echo "$out"
assert_eq "deleted route: unreachable from the dut" 1 \
	"$(grep -c 'From 10.88.1.254.*Unreachable' <<<"$out")"
wait "$bg" || true
tail -2 "$TB_RUN/bg-ping.txt"
assert_eq "traffic during the route changes: all replies" 1 \
	"$(grep -c '150 packets transmitted, 150 received' "$TB_RUN/bg-ping.txt")"

# a multipath route: both paths resolved, traffic through it byte-exact
ip -n "$srv" addr add 10.88.2.2/24 dev "$S0"
ip -n "$srv" addr add 10.99.1.1/32 dev lo
ip -n "$dut" route add 10.99.1.0/24 nexthop via 10.88.2.1 nexthop via 10.88.2.2
for ((i = 0; i < 20; i++)); do
	fib=$(tb_ctlj dut fib show 10.99.1.0/24)
	[[ $(jq -r '.data[] | select(.prefix == "10.99.1.0/24") | .paths' <<<"$fib") == 2 ]] && break
	sleep 0.1
done
echo "multipath: $(jq -c .data <<<"$fib")"
assert_eq "multipath route with 2 paths" 2 \
	"$(jq -r '.data[] | select(.prefix == "10.99.1.0/24") | .paths' <<<"$fib")"
assert_eq "multipath route's gateways" 10.88.2.1,10.88.2.2 \
	"$(jq -r '.data[] | select(.prefix == "10.99.1.0/24") | .via' <<<"$fib")"
tb_ctl dut fib show 10.99.1.0/24
out=$(tb_routed_ping "$DUTN" "$cli" 10.99.1.1) || tb_die "no reply through the multipath route: $out"
for p in 7201 7202 7203; do
	tb_tcpx cli srv 10.99.1.1 "$p"
done
ip -n "$dut" route del 10.99.1.0/24

# a smaller egress MTU: fragmentation needed / packet too big
ip -n "$dut" link set dev "$D1" mtu 1280
sleep 1.5
out=$(ip netns exec "$cli" ping -c 1 -W 2 -M "do" -s 1400 10.88.2.1 2>&1 || true)
echo "$out"
assert_eq "IPv4 frag needed from the dut" 1 \
	"$(grep -c 'From 10.88.1.254.*Frag needed and DF set (mtu = 1280)' <<<"$out")"
out=$(ip netns exec "$cli" ping -c 1 -W 2 -M "do" -s 1400 fd88:2::1 2>&1 || true)
echo "$out"
assert_eq "IPv6 packet too big from the dut" 1 \
	"$(grep -c 'From fd88:1::fe.*Packet too big: mtu=1280' <<<"$out")"
ip -n "$dut" link set dev "$D1" mtu 1500

st=$(tb_ctlj dut stats)
echo "route stats: $(jq -c '.data.route' <<<"$st")"
assert_ge "routed" 5000 "$(jq .data.route.routed <<<"$st")"
assert_ge "no_neigh counted (resolution asked)" 1 "$(jq .data.route.no_neigh <<<"$st")"
assert_ge "resolutions sent" 1 "$(jq .data.route.netlink.resolve_sent <<<"$st")"
assert_ge "ttl_exceeded counted" 2 "$(jq .data.route.ttl_exceeded <<<"$st")"
assert_ge "frag_needed counted" 1 "$(jq .data.route.frag_needed <<<"$st")"
assert_ge "pkt_too_big counted" 1 "$(jq .data.route.pkt_too_big <<<"$st")"

# save, and a new ferryd from the file routes again (the router is made
# while the config file is applied, before the server runs)
conf=$TB_RUN/route.conf
cfg1=$(tb_do dut show config | jq -j .data)
tb_do dut save "$conf" >/dev/null
tb_do dut shutdown >/dev/null
tb_wait_exit dut 10
tb_ferryd dut dut2 -c "$conf"
DUTN=dut2
assert_eq "show config after -c FILE" "$cfg1" "$(tb_do dut2 show config | jq -j .data)"
out=$(tb_routed_ping "$DUTN" "$cli" 10.88.2.1) || tb_die "no reply after the restart: $out"
assert_eq "IPv4 reply TTL after the restart" 1 "$(grep -c 'ttl=63' <<<"$out")"
tb_tcpx cli srv '[fd88:2::1]' 7301
ip -n "$dut" route add 10.99.2.0/24 via 10.88.2.1
for ((i = 0; i < 20; i++)); do
	[[ $(tb_ctlj dut2 fib show 10.99.2.0/24 | jq '[.data[] | select(.prefix == "10.99.2.0/24")] | length') == 1 ]] && break
	sleep 0.1
done
assert_eq "route events followed after a start from the file" 1 \
	"$(tb_ctlj dut2 fib show 10.99.2.0/24 | jq '[.data[] | select(.prefix == "10.99.2.0/24")] | length')"
