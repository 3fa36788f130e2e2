#!/usr/bin/env bash
# Capture on route ports, on both paths (client -- dut: p0, p1 routed --
# server, as t_route_kernel). An rx capture on the ingress p0 shows the echo
# requests as received (cli -> dut MAC, TTL 64), each with the route app's
# verdict; a tx capture on the egress p1 shows the same requests as sent
# (dut -> srv MAC, TTL 63), after the rewrite. Path xsk: the worker's taps
# (route_rx.c's rx, the TX flush's tx); path kernel: the classifier's
# records and the DEVMAP program. Read back with tcpdump: the right count,
# in the same order on both sides.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/capture_check.sh
. "$(dirname "$0")/../lib/capture_check.sh"

command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_routed_kernel 87
# neighbours resolved (the first frames go to the worker for that)
tb_routed_ping dut "$cli" 10.87.2.1 >/dev/null
dut_d0=$(tb_mac dut d0) dut_d1=$(tb_mac dut d1) cli_c0=$(tb_mac cli c0) srv_s0=$(tb_mac srv s0)
want='icmp[icmptype] == icmp-echo and dst host 10.87.2.1'
N=20

# run PATH RXCOMMENT TXCOMMENT: N pings on PATH, captured both sides.
run() {
	local path=$1 rxc=$2 txc=$3 rx tx n show seqs_rx seqs_tx
	tb_do dut route p0 path "$path" >/dev/null
	tb_do dut route p1 path "$path" >/dev/null
	assert_eq "$path: p0 path" "$path" "$(tb_pshow dut p0 path)"
	tb_routed_ping dut "$cli" 10.87.2.1 >/dev/null
	tb_do dut capture start rin port p0 filter "$want" file "$TB_RUN/$path-rx.pcapng" >/dev/null
	tb_do dut capture start rtx port p1 dir tx filter "$want" \
		file "$TB_RUN/$path-tx.pcapng" >/dev/null
	tb_do dut stats reset >/dev/null
	out=$(ip netns exec "$cli" ping -c "$N" -i 0.05 -W 2 10.87.2.1 || true)
	assert_match "$path: $N echo replies" "$N received" "$out"
	tb_wait_quiet dut
	show=$(cap_show_until "[.data[].written] | min >= $N")
	echo "$path show: $(jq -c '[.data[] | {name, matched, written}]' <<<"$show")"
	if [[ $path == xsk ]]; then
		assert_ge "$path: p0 xsk rx (the worker routed them)" "$N" "$(tb_xstat dut p0 rx_packets)"
	else
		assert_ge "$path: p0 kernel rx" "$N" "$(tb_kstat dut p0 rx_packets)"
	fi
	tb_do dut capture stop rin >/dev/null
	tb_do dut capture stop rtx >/dev/null
	rx=$(tcpdump -nn -e -v -r "$TB_RUN/$path-rx.pcapng" 2>/dev/null)
	tx=$(tcpdump -nn -e -v -r "$TB_RUN/$path-tx.pcapng" 2>/dev/null)
	echo "$path rx: $(head -2 <<<"$rx")"
	echo "$path tx: $(head -2 <<<"$tx")"
	n=$(grep -c "^[0-9:.]* $cli_c0 > $dut_d0, .*ttl 64," <<<"$rx" || true)
	assert_eq "$path rx: the requests as received (cli -> dut MAC, TTL 64)" "$N" "$n"
	assert_eq "$path rx: nothing else" "$n" "$(grep -c '^[0-9]' <<<"$rx")"
	n=$(grep -c "^[0-9:.]* $dut_d1 > $srv_s0, .*ttl 63," <<<"$tx" || true)
	assert_eq "$path tx: the requests as sent (dut -> srv MAC, TTL 63)" "$N" "$n"
	assert_eq "$path tx: nothing else" "$n" "$(grep -c '^[0-9]' <<<"$tx")"
	seqs() { grep -o 'ICMP echo request, id [0-9]*, seq [0-9]*' | sed 's/.*id //' | tr '\n' ' '; }
	seqs_rx=$(seqs <<<"$rx") seqs_tx=$(seqs <<<"$tx")
	assert_eq "$path: the same requests both sides" "$seqs_rx" "$seqs_tx"
	assert_eq "$path rx comments: $rxc" "$N" "$(cap_count "$TB_RUN/$path-rx.pcapng" "$rxc")"
	assert_eq "$path tx comments: $txc" "$N" "$(cap_count "$TB_RUN/$path-tx.pcapng" "$txc")"
}

run xsk 'route=routed' 'app=route'
run kernel 'xdp=dev_redirect' 'xdp=dev_redirect'
assert_json '.data | length' 0 "$(tb_do dut capture show)"
tb_log "ok"
