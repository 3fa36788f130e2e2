#!/usr/bin/env bash
# Capture on the route app's kernel path (client -- dut: p0, p1 route path
# kernel -- server, as t_route_kernel): no worker sees the frames, the
# classifier rewrites them (MACs, TTL) and redirects them into the egress's
# DEVMAP_HASH entry. An rx capture on the ingress p0 shows the echo requests
# as received (to the dut's MAC, TTL 64); a tx capture on the egress p1
# shows the same requests as sent (to the server's MAC from the dut's, TTL
# 63), by the capture's DEVMAP program, which is in the entry towards p1
# only while the capture runs.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/capture_check.sh
. "$(dirname "$0")/../lib/capture_check.sh"

command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_routed_kernel 86
assert_eq "p0 path" kernel "$(tb_pshow dut p0 path)"
assert_eq "p1 path" kernel "$(tb_pshow dut p1 path)"
# neighbours resolved (the first frames go to the worker for that)
tb_routed_ping dut "$cli" 10.86.2.1 >/dev/null

progs() { cap_devmap_progs dut p0 ferry_fib_dev "$(tb_ifindex dut d1)"; }
assert_eq "no program in p0's entry towards p1" 0 "$(progs)"
want='icmp[icmptype] == icmp-echo and dst host 10.86.2.1'
tb_do dut stats reset >/dev/null
tb_do dut capture start rin port p0 filter "$want" file "$TB_RUN/rx.pcapng" >/dev/null
tb_do dut capture start rtx port p1 dir tx filter "$want" file "$TB_RUN/tx.pcapng" >/dev/null
[[ $(progs) =~ ^[1-9][0-9]*$ ]] || tb_die "no program in p0's entry towards p1: $(progs)"
# A route change while it runs: p1 off the kernel path and back, its entry
# written again with the program.
tb_do dut route p1 path xsk >/dev/null
tb_do dut route p1 path kernel >/dev/null
assert_eq "p1 path" kernel "$(tb_pshow dut p1 path)"
[[ $(progs) =~ ^[1-9][0-9]*$ ]] || tb_die "re-added: no program in the entry: $(progs)"
tb_routed_ping dut "$cli" 10.86.2.1 >/dev/null
tb_do dut stats reset >/dev/null
out=$(ip netns exec "$cli" ping -c 10 -i 0.05 -W 2 10.86.2.1 || true)
echo "$out"
assert_match "10 echo replies" "10 received" "$out"
tb_wait_quiet dut
assert_ge "p0 kernel rx (the requests took the kernel path)" 10 "$(tb_kstat dut p0 rx_packets)"
show=$(cap_show_until '[.data[].written] | min >= 11')
echo "show: $show"
tb_do dut capture stop rin >/dev/null
tb_do dut capture stop rtx >/dev/null
assert_eq "no program in the entry after" 0 "$(progs)"

dut_d0=$(tb_mac dut d0) dut_d1=$(tb_mac dut d1) cli_c0=$(tb_mac cli c0) srv_s0=$(tb_mac srv s0)
rx=$(tcpdump -nn -e -v -r "$TB_RUN/rx.pcapng" 2>/dev/null)
tx=$(tcpdump -nn -e -v -r "$TB_RUN/tx.pcapng" 2>/dev/null)
echo "rx: $(head -2 <<<"$rx")"
echo "tx: $(head -2 <<<"$tx")"
n=$(grep -c "^[0-9:.]* $cli_c0 > $dut_d0, .*ttl 64," <<<"$rx" || true)
assert_ge "rx: requests as received (cli -> dut MAC, TTL 64)" 11 "$n"
assert_eq "rx: nothing else" "$n" "$(grep -c '^[0-9]' <<<"$rx")"
n=$(grep -c "^[0-9:.]* $dut_d1 > $srv_s0, .*ttl 63," <<<"$tx" || true)
assert_ge "tx: requests as sent (dut -> srv MAC, TTL 63)" 11 "$n"
assert_eq "tx: nothing else" "$n" "$(grep -c '^[0-9]' <<<"$tx")"
# the same requests, in the same order, on both sides
seqs() { grep -o 'ICMP echo request, id [0-9]*, seq [0-9]*' | sed 's/.*id //'; }
assert_eq "same requests both sides" "$(seqs <<<"$rx" | tr '\n' ' ')" "$(seqs <<<"$tx" | tr '\n' ' ')"
assert_eq "tx comments: the kernel path" "$n" "$(cap_count "$TB_RUN/tx.pcapng" 'xdp=dev_redirect')"
tb_log "ok"
