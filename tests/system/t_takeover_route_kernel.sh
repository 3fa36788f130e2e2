#!/usr/bin/env bash
# Hot restart of the route app on its kernel path: client -- dut (p0, p1:
# route path kernel, lo's forwarding knobs on, as t_route_kernel) --
# server. `ferryd --takeover` while a ping runs through; after it the new
# ferryd keeps path kernel on both ports, ping (IPv4, IPv6, both ways)
# and byte-exact TCP work, and the frames go through its kernel path
# (paths.kernel and fib fwd move). The ping's loss over the takeover is
# printed, not asserted (it is ICMP on a loaded host).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_routed_kernel 87

assert_eq "p0 path kernel" kernel "$(tb_pshow dut p0 path)"
assert_eq "p1 path kernel" kernel "$(tb_pshow dut p1 path)"
# neighbours resolved both ways before the takeover
tb_routed_ping dut "$cli" 10.87.2.1 >/dev/null || tb_die "no IPv4 ping before the takeover"
tb_routed_ping dut "$cli" fd87:2::1 >/dev/null || tb_die "no IPv6 ping before the takeover"
config_before=$(tb_ctlj dut show config | jq -r .data)
old_pid=${TB_PID_OF[dut]}

# ---- takeover while a ping runs through
ip netns exec "$cli" ping -c 60 -i 0.05 -W 1 10.87.2.1 >"$TB_RUN/ping.out" 2>&1 &
ping_pid=$!
tb_track "$ping_pid"
sleep 1
tb_takeover dut2
tb_takeover_wait dut2
assert_eq "old ferryd exit code" 0 "$TB_EXIT_RC"
assert_match "new ferryd took over" "took over from ferryd pid $old_pid" "$(cat "$TB_RUN/dut2.log")"
wait "$ping_pid" || true
echo "ping over the takeover: $(grep -E 'packets transmitted' "$TB_RUN/ping.out")"
echo "TAKEOVER_ROUTE_KERNEL_PING_LOSS=$(grep -oE '[0-9.]+% packet loss' "$TB_RUN/ping.out")"

assert_eq "same configuration" "$config_before" "$(tb_ctlj dut show config | jq -r .data)"
assert_eq "after takeover: p0 path kernel" kernel "$(tb_pshow dut p0 path)"
assert_eq "after takeover: p1 path kernel" kernel "$(tb_pshow dut p1 path)"

# for the log: the new ferryd's kernel-path ledger over the takeover (rx is
# the shared verdict counter; the route path's tx, per egress slot, is the
# new program's own)
echo "over the takeover: p0 kernel rx $(tb_kstat dut p0 rx_packets) p1 kernel tx $(tb_kstat dut p1 tx_packets)," \
	"p1 kernel rx $(tb_kstat dut p1 rx_packets) p0 kernel tx $(tb_kstat dut p0 tx_packets)"

# ---- the new ferryd routes, in XDP
tb_do dut stats reset >/dev/null
out=$(tb_routed_ping dut "$cli" 10.87.2.1) || tb_die "no IPv4 ping reply: $out"
assert_eq "IPv4 reply TTL" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$cli" fd87:2::1) || tb_die "no IPv6 ping reply: $out"
assert_eq "IPv6 reply hop limit" 1 "$(grep -c 'ttl=63' <<<"$out")"
out=$(tb_routed_ping dut "$srv" 10.87.1.1) || tb_die "no IPv4 ping reply srv->cli: $out"
out=$(tb_routed_ping dut "$srv" fd87:1::1) || tb_die "no IPv6 ping reply srv->cli: $out"
out=$(ip netns exec "$cli" ping -c 5 -i 0.2 -W 1 10.87.2.1) || tb_die "ping lost frames: $out"
assert_eq "5 IPv4 replies" 1 "$(grep -c '5 received' <<<"$out")"

tb_tcpx cli srv 10.87.2.1 7201
tb_tcpx srv cli '[fd87:1::1]' 7202

echo "p0 kernel path: $(tb_ctlj dut stats | jq -c '.data.ports[0].paths.kernel')"
assert_ge "p0 kernel rx" 1000 "$(tb_kstat dut p0 rx_packets)"
assert_ge "p1 kernel rx" 1000 "$(tb_kstat dut p1 rx_packets)"
assert_ge "p0 fib fwd" 1000 "$(tb_kstat dut p0 fib.fwd)"
# Each egress's tx against the other port's rx, from one snapshot: what
# the ingress redirected is what the egress sent, plus what the egress
# driver refused (xmit_drops: a full veth ring under a TCP burst) and the
# redirects that failed. Once, in a CI run of 2026-12-02 (ASan ferryd),
# tx fell 24 of 3665 short of rx with the drops not printed, so whether
# they were drops is not known: the shortfall beyond them is printed and
# bounded (1%) rather than asserted zero.
tb_wait_quiet dut
st=$(tb_ctlj dut stats)
k() { jq -r --arg p "$1" "[.data.ports[] | select(.name == \$p) | .paths.kernel.$2] | first // 0" <<<"$st"; }
for pair in "p0 p1" "p1 p0"; do
	read -r in out <<<"$pair"
	rx=$(k "$in" rx_packets) tx=$(k "$out" tx_packets)
	lost=$(($(k "$in" xmit_drops) + $(k "$in" xdp_redirect_err)))
	echo "TAKEOVER_ROUTE_KERNEL_TX_SHORT $in->$out: $((rx - tx - lost)) of $rx (drops and errors: $lost)"
	assert_le "$out kernel tx <= $in kernel rx" "$rx" "$tx"
	assert_le "$in -> $out: tx short, beyond drops, by at most 1%" $((rx / 100)) $((rx - tx - lost))
done

tb_do dut shutdown >/dev/null
tb_wait_exit dut2 10 || tb_die "new ferryd did not exit on shutdown"
assert_eq "new ferryd exit code" 0 "$TB_EXIT_RC"
echo "PASS t_takeover_route_kernel"
