#!/usr/bin/env bash
# An xconnect is a wire any host can sit behind. Two hosts with addresses
# and no static neighbours, on either side of a dut with `xconnect add p0
# p1` and `xconnect add p1 p0`:
#   - port show says the host stack gets nothing from a wire port;
#   - they ping each other, IPv4 and IPv6 (ARP and NDP cross the wire);
#   - LLDP frames sent from either side arrive byte-exact at the other;
#   - TCP moves byte-exact both ways, IPv4 and IPv6, with the hosts' TX
#     checksum offload left on (their frames carry partial checksums,
#     which the worker must complete, in multi-buffer frames too).
# Ping and LLDP come first, so they are checked whatever TCP does.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

A_IP=10.77.0.1
B_IP=10.77.0.2
A_IP6=fd77::1
B_IP6=fd77::2

tb_init
tb_ns a
tb_ns dut
tb_ns b
tb_veth a a0 dut d0
tb_veth dut d1 b b0
A0=$(tb_ifname a0)
B0=$(tb_ifname b0)
D0=$(tb_ifname d0)
D1=$(tb_ifname d1)
# The hosts speak IPv6 (tb_ns turns it off); the dut does not.
tb_ipv6_on a "$A0"
tb_ipv6_on b "$B0"
ip -n "$(tb_nsname a)" addr add "$A_IP/24" dev "$A0"
ip -n "$(tb_nsname b)" addr add "$B_IP/24" dev "$B0"
ip -n "$(tb_nsname a)" addr add "$A_IP6/64" dev "$A0" nodad
ip -n "$(tb_nsname b)" addr add "$B_IP6/64" dev "$B0" nodad
# WIRE_TX_OFF=1 (by hand, never in CI) turns the hosts' offload off, to
# see TCP cross where partial checksums are not completed yet.
if [[ ${WIRE_TX_OFF:-0} == 1 ]]; then
	tb_exec a ethtool -K "$A0" tx off >/dev/null
	tb_exec b ethtool -K "$B0" tx off >/dev/null
fi
echo "offload a: $(tb_exec a ethtool -k "$A0" | grep -E '^tx-checksumming')"
echo "offload b: $(tb_exec b ethtool -k "$B0" | grep -E '^tx-checksumming')"

tb_ferryd dut dut
tb_do dut workers 1 idle poll >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
assert_json '.data[0].host_frames' arp,ndp "$(tb_do dut port show p0)"
# The classifier follows the app, both ways.
tb_do dut xconnect add p0 p1 >/dev/null
assert_json '.data[0].host_frames' "none (wire)" "$(tb_do dut port show p0)"
assert_json '.data[0].host_frames' arp,ndp "$(tb_do dut port show p1)"
tb_do dut xconnect del p0 >/dev/null
assert_json '.data[0].host_frames' arp,ndp "$(tb_do dut port show p0)"
tb_do dut reflect p0 >/dev/null
assert_json '.data[0].host_frames' "none (wire)" "$(tb_do dut port show p0)"
tb_do dut xconnect add p0 p1 >/dev/null
tb_do dut xconnect add p1 p0 >/dev/null
assert_json '.data[0].host_frames' "none (wire)" "$(tb_do dut port show p0)"
assert_json '.data[0].host_frames' "none (wire)" "$(tb_do dut port show p1)"
# The hosts' IPv6 chatter (MLD, RS) met p1 before it was a wire.
tb_do dut stats reset >/dev/null

# ---- ping, both ways, both families: neighbours are resolved across ----
for pair in "a $B_IP" "b $A_IP" "a $B_IP6" "b $A_IP6"; do
	read -r from to <<<"$pair"
	out=$(tb_exec "$from" ping -c 3 -i 0.2 -W 2 "$to" 2>&1) || true
	echo "$out" | tail -2
	assert_match "ping $from -> $to" " 0% packet loss" "$out"
done
neigh=$(ip -n "$(tb_nsname a)" neigh show dev "$A0")
echo "a's neighbours: $neigh"
assert_match "a learned b's MAC by ARP" "$B_IP .*REACHABLE|$B_IP .*STALE|$B_IP .*DELAY" "$neigh"
xdp=$(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, xdp}]')
echo "dut classifier: $xdp"
assert_eq "ARP/NDP handed to the dut's kernel" 0 \
	"$(jq '[.[].xdp | (.pass_arp // 0) + (.pass_ndp // 0)] | add' <<<"$xdp")"

# ---- LLDP, byte-exact, both ways ----
for dir in "a a0 b b0" "b b0 a a0"; do
	read -r src sif dst dif <<<"$dir"
	tb_capture_start "$dst" "$dif" "$TB_RUN/lldp-$src" --count 5 --timeout 10 \
		--ethertype 0x88cc --verify-kind lldp --size 64
	tb_send "$src" "$sif" 5 lldp --size 64 >/dev/null
	tb_capture_wait "$TB_RUN/lldp-$src"
	assert_json .received 5 "$TB_CAP"
	assert_json .bad 0 "$TB_CAP"
done

# ---- TCP, byte-exact, both ways, both families, offload on ----
xfer() {
	local srv=$1 cli=$2 addr=$3 port=$4 out c rc=0
	out=$TB_RUN/tcp-$srv-$port.json
	tb_tcpx_server "$srv" "$addr:$port" "$out"
	c=$(tb_exec "$cli" timeout 20 "$TCPX" client -d "$addr:$port" -n 4m -m 64k) || rc=$?
	# A client that never connected leaves the server waiting.
	((rc == 0)) || kill "$TB_TCPX_PID" 2>/dev/null || true
	wait "$TB_TCPX_PID" || rc=$?
	echo "    client: $c"
	echo "    server: $(cat "$out")"
	assert_eq "tcp $cli -> $srv ($addr): exit codes" 0 "$rc"
	assert_json .bytes 4194304 "$c"
	assert_json .ok true "$(cat "$out")"
	assert_json .bytes 4194304 "$(cat "$out")"
}
xfer b a "$B_IP" 7101
xfer a b "$A_IP" 7102
xfer b a "[$B_IP6]" 7103
xfer a b "[$A_IP6]" 7104
for h in a b; do
	echo "$h: $(tb_exec $h nstat -az TcpInCsumErrors | grep TcpInCsumErrors || true)"
done
