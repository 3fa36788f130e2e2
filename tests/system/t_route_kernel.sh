#!/usr/bin/env bash
# The route app's kernel path: client -- dut (p0, p1: route, kernel
# forwarding off) -- server, as t_route. Without lo's forwarding knobs
# (bpf_fib_lookup's precondition, docs/design.md) auto keeps xsk and says
# why, and path kernel is refused with the fix; with them, ping and
# byte-exact TCP both ways over IPv4 and IPv6 on path kernel, replies at
# TTL 63, the kernel-path counters moving and the kernel's own forwarding
# counters not; `ping -t 1` still gets time exceeded and an MTU too small
# still gets fragmentation-needed (both from a worker); path xsk still
# routes; switching path under traffic loses nothing; show config carries
# the path; the knob turned off while running sends the ports back to xsk.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
# ferry forwards, the kernel answers for itself only (tb_routed)
tb_routed 89
# a DEVMAP redirect into a veth arrives only if its peer has GRO or XDP
ip netns exec "$cli" ethtool -K "$C0" gro on >/dev/null
ip netns exec "$srv" ethtool -K "$S0" gro on >/dev/null

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null

fstat() { tb_kstat dut "$1" "fib.$2"; }
kfwd() { # frames the dut's kernel forwarded itself: must stay 0
	ip netns exec "$dut" cat /proc/net/snmp /proc/net/snmp6 |
		awk '/^Ip: [0-9]/ { n += $7 } /^Ip6OutForwDatagrams/ { n += $2 } END { print n + 0 }'
}

# the precondition missing: auto keeps xsk and says why; kernel refused
tb_do dut route p0 >/dev/null
tb_do dut route p1 >/dev/null
assert_eq "auto without lo forwarding" xsk "$(tb_pshow dut p0 path)"
assert_match "why" "lo.forwarding" "$(tb_pshow dut p0 path_why)"
out=$(tb_ctlj dut route p0 path kernel 2>&1 || true)
echo "$out"
assert_match "path kernel refused with the fix" "sysctl -w net.ipv4.conf.lo.forwarding=1" "$out"
assert_eq "still xsk" xsk "$(tb_pshow dut p0 path)"

# lo forwards nothing from the wire: the ports' own knobs stay off
ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 net.ipv6.conf.lo.forwarding=1
assert_eq "d0 forwarding stays off" 0 "$(ip netns exec "$dut" sysctl -n net.ipv4.conf."$D0".forwarding)"
tb_do dut route p0 path kernel >/dev/null
tb_do dut route p1 path kernel >/dev/null
assert_eq "p0 path kernel" kernel "$(tb_pshow dut p0 path)"
assert_eq "p1 path kernel" kernel "$(tb_pshow dut p1 path)"
echo "p0: $(tb_pshow dut p0 path_why)"
h=$(tb_ctl dut port show p0)
printf '%s\n' "$h"
assert_eq "port show: no JSON in the human view" 0 "$(grep -c '[{}]' <<<"$h" || true)"
assert_le "port show: widest line" 120 "$(awk '{ if (length > m) m = length } END { print m + 0 }' <<<"$h")"
assert_eq "show config has route p0 path kernel" 1 \
	"$(tb_ctl dut show config | grep -c '^route p0 path kernel$')"
kf0=$(kfwd)

tb_do dut stats reset >/dev/null
out=$(tb_routed_ping dut "$cli" 10.89.2.1) || tb_die "no IPv4 ping reply: $out"
assert_eq "IPv4 reply TTL" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$cli" fd89:2::1) || tb_die "no IPv6 ping reply: $out"
assert_eq "IPv6 reply hop limit" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$srv" 10.89.1.1) || tb_die "no IPv4 ping reply srv->cli: $out"
assert_eq "IPv4 reply TTL srv->cli" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$srv" fd89:1::1) || tb_die "no IPv6 ping reply srv->cli: $out"
assert_eq "IPv6 reply hop limit srv->cli" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(ip netns exec "$cli" ping -c 5 -i 0.2 -W 1 10.89.2.1) || tb_die "ping lost frames: $out"
assert_eq "5 IPv4 replies" 1 "$(grep -c '5 received' <<<"$out")"

tb_tcpx cli srv 10.89.2.1 7101
tb_tcpx cli srv '[fd89:2::1]' 7102
tb_tcpx srv cli 10.89.1.1 7103
tb_tcpx srv cli '[fd89:1::1]' 7104

st=$(tb_ctlj dut stats)
echo "p0 kernel path: $(jq -c '.data.ports[0].paths.kernel' <<<"$st")"
echo "p1 kernel path: $(jq -c '.data.ports[1].paths.kernel' <<<"$st")"
assert_ge "p0 kernel rx" 3000 "$(tb_kstat dut p0 rx_packets)"
assert_ge "p1 kernel rx" 3000 "$(tb_kstat dut p1 rx_packets)"
assert_ge "p0 kernel tx" 3000 "$(tb_kstat dut p0 tx_packets)"
assert_ge "p1 kernel tx" 3000 "$(tb_kstat dut p1 tx_packets)"
assert_ge "p0 fib fwd" 3000 "$(fstat p0 fwd)"
assert_eq "p0 fib fwd_disabled" 0 "$(fstat p0 fwd_disabled)"
# metrics carry the same split, reasons included
prom=$(tb_ctlj dut metrics | jq -r .data)
assert_eq "metrics: p0 fib fwd" "$(fstat p0 fwd)" \
	"$(awk '$1 == "ferry_kpath_fib_total{port=\"p0\",reason=\"fwd\"}" { print $2 }' <<<"$prom")"
assert_eq "metrics: p0 fib reasons" 9 "$(grep -c '^ferry_kpath_fib_total{port="p0",' <<<"$prom")"
# every frame p0 redirected left by p1, and the other way round
assert_eq "p0 kernel rx = p1 kernel tx" "$(tb_kstat dut p0 rx_packets)" "$(tb_kstat dut p1 tx_packets)"
assert_eq "p1 kernel rx = p0 kernel tx" "$(tb_kstat dut p1 rx_packets)" "$(tb_kstat dut p0 tx_packets)"
assert_eq "p0 dev_redirect is the kernel rx" "$(tb_kstat dut p0 rx_packets)" \
	"$(tb_xdpstat dut p0 dev_redirect)"
assert_eq "p0 redirect errors" 0 "$(tb_kstat dut p0 xdp_redirect_err)"
assert_eq "p0 xmit drops" 0 "$(tb_kstat dut p0 xmit_drops)"
# the totals carry both paths
assert_eq "p0 rx = xsk + kernel" "$(($(tb_xstat dut p0 rx_packets) + $(tb_kstat dut p0 rx_packets)))" \
	"$(tb_stat dut p0 rx_packets)"
assert_eq "p1 tx = xsk + kernel" "$(($(tb_xstat dut p1 tx_packets) + $(tb_kstat dut p1 tx_packets)))" \
	"$(tb_stat dut p1 tx_packets)"

# exceptions stay with the worker: time exceeded, fragmentation needed
out=$(ip netns exec "$cli" ping -c 1 -W 2 -t 1 10.89.2.1 2>&1 || true)
echo "$out"
assert_eq "IPv4 time exceeded from the dut" 1 \
	"$(grep -c 'From 10.89.1.254.*Time to live exceeded' <<<"$out")"
out=$(ip netns exec "$cli" ping -c 1 -W 2 -t 1 fd89:2::1 2>&1 || true)
echo "$out"
assert_eq "IPv6 time exceeded from the dut" 1 \
	"$(grep -ci 'From fd89:1::fe.*Time exceeded' <<<"$out")"
assert_ge "p0 fib ttl (to the worker)" 2 "$(fstat p0 ttl)"
ip -n "$dut" link set dev "$D1" mtu 1280
sleep 1.5
out=$(ip netns exec "$cli" ping -c 1 -W 2 -M "do" -s 1400 10.89.2.1 2>&1 || true)
echo "$out"
assert_eq "IPv4 frag needed from the dut" 1 \
	"$(grep -c 'From 10.89.1.254.*Frag needed and DF set (mtu = 1280)' <<<"$out")"
out=$(ip netns exec "$cli" ping -c 1 -W 2 -M "do" -s 1400 fd89:2::1 2>&1 || true)
echo "$out"
assert_eq "IPv6 packet too big from the dut" 1 \
	"$(grep -c 'From fd89:1::fe.*Packet too big: mtu=1280' <<<"$out")"
assert_ge "p0 fib frag_needed (to the worker)" 2 "$(fstat p0 frag_needed)"
ip -n "$dut" link set dev "$D1" mtu 1500
sleep 1.5

# an egress on xsk is not one of the kernel path's: p0's frames towards
# p1 go to the worker (egress_not_kernel), and still arrive
tb_do dut route p1 path xsk >/dev/null
k0=$(tb_kstat dut p0 rx_packets)
e0=$(fstat p0 egress_not_kernel)
out=$(tb_routed_ping dut "$cli" 10.89.2.1) || tb_die "no IPv4 ping reply with p1 on xsk: $out"
assert_eq "IPv4 reply TTL, mixed paths" 1 "$(grep -c 'ttl=63' <<<"$out")"
assert_eq "p0 kernel rx unchanged, mixed paths" "$k0" "$(tb_kstat dut p0 rx_packets)"
assert_ge "p0 egress_not_kernel" $((e0 + 1)) "$(fstat p0 egress_not_kernel)"

# path xsk still routes, and the kernel path then takes nothing
tb_do dut route p0 path xsk >/dev/null
tb_do dut route p1 path xsk >/dev/null
assert_eq "p0 path xsk" xsk "$(tb_pshow dut p0 path)"
assert_eq "show config has route p0 path xsk" 1 \
	"$(tb_ctl dut show config | grep -c '^route p0 path xsk$')"
k0=$(tb_kstat dut p0 rx_packets)
out=$(tb_routed_ping dut "$cli" 10.89.2.1) || tb_die "no IPv4 ping reply on xsk: $out"
assert_eq "IPv4 reply TTL on xsk" 1 "$(grep -c 'ttl=63' <<<"$out")"
tb_tcpx cli srv '[fd89:2::1]' 7105
assert_eq "no kernel-path frame on xsk" "$k0" "$(tb_kstat dut p0 rx_packets)"

# switching path under traffic loses nothing: a ping every 20 ms and a TCP
# transfer while both ports flip between the paths
ip netns exec "$cli" ping -c 200 -i 0.02 -W 1 10.89.2.1 >"$TB_RUN/bg-ping.txt" 2>&1 &
bg=$!
tb_track "$bg"
(
	for ((i = 0; i < 6; i++)); do
		for p in kernel xsk; do
			tb_do dut route p0 path $p >/dev/null
			tb_do dut route p1 path $p >/dev/null
			sleep 0.25
		done
	done
	tb_do dut route p0 path kernel >/dev/null
	tb_do dut route p1 path kernel >/dev/null
) &
sw=$!
tb_track "$sw"
port=7200
while kill -0 "$sw" 2>/dev/null; do
	tb_tcpx cli srv 10.89.2.1 $((port++)) 20000000
done
assert_ge "transfers during the switches" 2 $((port - 7200))
wait "$sw" || tb_die "path switching failed"
wait "$bg" || true
tail -2 "$TB_RUN/bg-ping.txt"
assert_eq "traffic during the path switches: all replies" 1 \
	"$(grep -c '200 packets transmitted, 200 received' "$TB_RUN/bg-ping.txt")"
assert_eq "p0 back on kernel" kernel "$(tb_pshow dut p0 path)"

# the kernel itself forwarded nothing the whole time
assert_eq "the dut's kernel forwarded nothing" "$kf0" "$(kfwd)"

# auto: the veth peers' GRO cannot be read from the dut's namespace
tb_do dut route p0 >/dev/null
assert_eq "auto, peer unknown" xsk "$(tb_pshow dut p0 path)"
assert_match "why" "cannot tell" "$(tb_pshow dut p0 path_why)"
# the precondition gone while running: path kernel falls back to xsk,
# saying why
tb_do dut route p0 path kernel >/dev/null
assert_eq "p0 kernel again" kernel "$(tb_pshow dut p0 path)"
ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=0
for ((i = 0; i < 30; i++)); do
	[[ $(tb_pshow dut p0 path) == xsk ]] && break
	sleep 0.1
done
assert_eq "knob off: xsk" xsk "$(tb_pshow dut p0 path)"
assert_match "why" "lo.forwarding" "$(tb_pshow dut p0 path_why)"
out=$(tb_routed_ping dut "$cli" 10.89.2.1) || tb_die "no reply after the fallback: $out"
assert_eq "IPv4 reply TTL after the fallback" 1 "$(grep -c 'ttl=63' <<<"$out")"
