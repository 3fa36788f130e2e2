#!/usr/bin/env bash
# The route app on the workers at MTU 9000: client -- dut (`route pN path
# xsk`) -- server, every link at MTU 9000. ping -s 8000 -M do answered over
# IPv4 and IPv6; a byte-exact TCP transfer at MSS near 8960 crosses; the
# frames were multi-buffer chains routed by the worker (route.routed_chain),
# none dropped as chain_unsupported; a 9000-byte frame towards an egress at
# MTU 1500 gets fragmentation needed / packet too big from the dut.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_routed 89
ip -n "$cli" link set dev "$C0" mtu 9000
ip -n "$dut" link set dev "$D0" mtu 9000
ip -n "$dut" link set dev "$D1" mtu 9000
ip -n "$srv" link set dev "$S0" mtu 9000

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut route p0 path xsk >/dev/null
tb_do dut route p1 path xsk >/dev/null

out=$(tb_routed_ping dut "$cli" -s 8000 -M do 10.89.2.1) || tb_die "no 8000-byte IPv4 reply: $out"
assert_eq "IPv4 8000-byte reply at TTL 63" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$cli" -s 8000 -M do fd89:2::1) || tb_die "no 8000-byte IPv6 reply: $out"
assert_eq "IPv6 8000-byte reply at hop limit 63" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(ip netns exec "$cli" ping -c 3 -i 0.2 -W 2 -s 8000 -M do 10.89.2.1 || true)
assert_match "3 IPv4 8000-byte replies" "3 received" "$out"
out=$(ip netns exec "$cli" ping -6 -c 3 -i 0.2 -W 2 -s 8000 -M do fd89:2::1 || true)
assert_match "3 IPv6 8000-byte replies" "3 received" "$out"

tb_do dut stats reset >/dev/null
# TCP at MTU 9000: segments of MSS 8960 (IPv4) / 8940 (IPv6), byte-exact
tb_tcpx cli srv 10.89.2.1 7401 20000000 65536
tb_tcpx cli srv '[fd89:2::1]' 7402 8000000 65536
st=$(tb_ctlj dut stats)
echo "route: $(jq -c '.data.route' <<<"$st")"
echo "ports: $(jq -c '[.data.ports[] | {name, totals}]' <<<"$st")"
assert_ge "chains routed by the worker" 2000 "$(jq .data.route.routed_chain <<<"$st")"
assert_ge "p0 bytes per frame (multi-buffer frames)" 4000 \
	$(($(tb_stat dut p0 rx_bytes) / $(tb_stat dut p0 rx_packets)))
assert_eq "p0 chain_unsupported" 0 \
	"$(jq '[.data.ports[] | select(.name == "p0") | .totals.drop.chain_unsupported // 0] | first' <<<"$st")"
assert_eq "p0 drops" 0 "$(tb_stat dut p0 drops)"

# a 9000-byte frame towards an egress at MTU 1500
ip -n "$dut" link set dev "$D1" mtu 1500
sleep 1.5
out=$(ip netns exec "$cli" ping -c 1 -W 2 -M do -s 8972 10.89.2.1 2>&1 || true)
echo "$out"
assert_eq "IPv4 frag needed for a 9000-byte frame" 1 \
	"$(grep -c 'From 10.89.1.254.*Frag needed and DF set (mtu = 1500)' <<<"$out")"
out=$(ip netns exec "$cli" ping -6 -c 1 -W 2 -M do -s 8952 fd89:2::1 2>&1 || true)
echo "$out"
assert_eq "IPv6 packet too big for a 9000-byte frame" 1 \
	"$(grep -c 'From fd89:1::fe.*Packet too big: mtu=1500' <<<"$out")"
