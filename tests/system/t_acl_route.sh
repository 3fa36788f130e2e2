#!/usr/bin/env bash
# ACLs on route ports: client -- dut (`route p0`, `route p1`, kernel
# forwarding off) -- server. An ACL on p0 that drops routed TCP to one
# server port leaves the next port routed byte-exact, counts the SYNs it
# dropped, and `acl del` opens the port; frames for the dut itself go to
# its kernel before the rule table (a rule matching everything leaves a
# ping of the dut's address answered, and drops routed pings).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_routed 88

tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut route p0 >/dev/null
tb_do dut route p1 >/dev/null

rule() { tb_do dut acl show "$1" | jq -r ".data[0].$2"; }
assert_ok tb_routed_ping dut "$cli" 10.88.2.1

tb_do dut acl add no5001 port p0 match proto tcp dst 10.88.2.0/24 dport 5001 action drop >/dev/null
tb_tcpx_server srv 10.88.2.1:5002 "$TB_RUN/s5002.json" || tb_die "server 5002"
out=$(ip netns exec "$cli" timeout 60 "$TCPX" client -d 10.88.2.1:5002 -n 2000000 -m 1400)
wait "$TB_TCPX_PID" || tb_die "server 5002: $(cat "$TB_RUN/s5002.json")"
assert_json .bytes 2000000 "$out"
assert_json .ok true "$(cat "$TB_RUN/s5002.json")"

tb_tcpx_server srv 10.88.2.1:5001 "$TB_RUN/s5001.json" || tb_die "server 5001"
s5001=$TB_TCPX_PID
rc=0
ip netns exec "$cli" timeout 3 bash -c "exec 3<>/dev/tcp/10.88.2.1/5001" 2>/dev/null || rc=$?
assert_eq "routed connect to 5001 times out (124)" 124 "$rc"
assert_ge "no5001 dropped the SYNs" 2 "$(rule no5001 packets)"
routed=$(tb_ctlj dut stats | jq -c '.data.route')
echo "route counters: $routed"

tb_log "a rule for everything: the dut's own address still answers, routed pings do not"
tb_do dut acl add all port p0 match action drop >/dev/null
assert_ok ip netns exec "$cli" ping -c 2 -W 2 10.88.1.254
assert_fail ip netns exec "$cli" ping -c 2 -W 1 10.88.2.1
assert_ge "all dropped the routed pings" 2 "$(rule all packets)"
tb_do dut acl del all >/dev/null

tb_log "acl del opens the port"
tb_do dut acl del no5001 >/dev/null
out=$(ip netns exec "$cli" timeout 60 "$TCPX" client -d 10.88.2.1:5001 -n 1000000 -m 1400)
wait "$s5001" || tb_die "server 5001: $(cat "$TB_RUN/s5001.json")"
assert_json .bytes 1000000 "$out"
assert_json .ok true "$(cat "$TB_RUN/s5001.json")"
