#!/usr/bin/env bash
# ACLs in the classifier, with real TCP between two hosts through the dut's
# xconnect (tb_wire): an ACL that drops one TCP port leaves the next port's
# service reachable (byte-exact transfers, IPv4 and IPv6), counts what it
# dropped (the SYNs the client sent, and their bytes), and `acl del` opens
# the port again. Rules and steering rules share one table and one order,
# shown by `acl show` (human table within 120 columns, and -j); the ACLs
# survive `save` and a restart of ferryd from the saved file, there with
# 60 rules more (the bit-vector matcher: over 24 rules). The rules run
# before either xconnect path: the AF_XDP one and the in-kernel DEVMAP one.
# `action pass` is a permit: the frame crosses the wire, later rules skipped.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

# blocked ADDR PORT: a TCP connect from cli gets no answer within 3 s (not
# refused: that would mean the SYN got through).
blocked() {
	local rc=0
	ip netns exec "$(tb_nsname cli)" timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null || rc=$?
	assert_eq "connect to $1:$2 times out (124)" 124 "$rc"
}

rule() { # rule NAME FIELD: from acl show -j
	tb_do dut acl show "$1" | jq -r ".data[0].$2"
}

tb_init
tb_wire
tb_do dut stats reset >/dev/null

tb_log "drop TCP 5001 (IPv4) and 5003 (IPv6) on p0"
tb_do dut acl add no5001 port p0 match proto tcp dst 10.88.0.2/32 dport 5001 action drop >/dev/null
tb_do dut acl add no5003 port p0 match proto tcp dst fd88::/64 dport 5003 action drop >/dev/null
# A steering rule in the same table, after the ACLs, for a port nothing uses.
tb_do dut steer add st9 port p0 match proto udp dport 9999 to cpus 0 >/dev/null
tb_do dut acl add ssh-ok port p0 match proto tcp src 10.88.0.0/24 sport 1024-65535 dport 22 action pass >/dev/null

tb_log "the next ports are reachable, byte-exact"
tb_wire_tcpx 10.88.0.2 5002 2000000 1400 || tb_die "tcpx to 5002"
tb_wire_tcpx "[fd88::2]" 5004 2000000 1400 || tb_die "tcpx to [fd88::2]:5004"

tb_log "the dropped ports are not, while their servers listen"
tb_tcpx_server srv 10.88.0.2:5001 "$TB_RUN/srv5001.json" || tb_die "server 5001"
srv5001=$TB_TCPX_PID
blocked 10.88.0.2 5001
blocked fd88::2 5003
p=$(rule no5001 packets)
b=$(rule no5001 bytes)
echo "no5001: $p frames $b bytes; no5003: $(rule no5003 packets) frames"
assert_ge "no5001 dropped the SYNs (>= 2 in 3 s)" 2 "$p"
# An IPv4 SYN with options: 14 + 20 + 40 bytes each at least.
assert_ge "no5001 bytes" $((p * 74)) "$b"
assert_ge "no5003 dropped SYNs" 2 "$(rule no5003 packets)"
assert_eq "the transfers were not dropped by a rule" 0 "$(rule ssh-ok packets)"
drops=$(tb_ctlj dut stats | jq '[.data.ports[] | select(.name == "p0") | .xdp.drop_rule] | add')
assert_ge "p0 drop_rule counts them" "$((p + 2))" "$drops"

tb_log "one table, one order, both kinds"
show=$(tb_do dut acl show)
echo "$show" | jq -c '.data[] | [.index, .name, .kind, .action, .packets]'
assert_json '[.data[] | .name] | join(",")' "no5001,no5003,st9,ssh-ok" "$show"
assert_json '[.data[] | .kind] | join(",")' "acl,acl,steer,acl" "$show"
assert_json '[.data[] | .index] | join(",")' "0,1,2,3" "$show"
assert_json '.data[3].match.src' "10.88.0.0/24" "$show"
assert_json '.data[3].match.sport' "1024-65535" "$show"
assert_json '.data[0].match.dst' "10.88.0.2/32" "$show"
assert_eq "steer show: the steering rule at its table index" 2 \
	"$(tb_do dut steer show | jq '.data[] | select(.name == "st9") | .index')"
human=$(tb_ctl dut acl show)
echo "$human"
assert_eq "human table: no line over 120 columns" 0 "$(echo "$human" | awk 'length > 120' | wc -l)"
assert_eq "human table: no JSON" 0 "$(echo "$human" | grep -c '[{}]' || true)"
assert_eq "human table: the rule's line" 1 "$(echo "$human" | grep -c '^0 .*no5001 .*acl .*drop')"
assert_fail tb_ctlj dut acl del st9
assert_fail tb_ctlj dut steer del no5001
assert_fail tb_ctlj dut acl add no5001 port p0 match action drop
assert_fail tb_ctlj dut acl add bad port p0 match proto icmp dport 5 action drop
assert_fail tb_ctlj dut acl add bad port p0 match src 10.0.0.0/8 dst fd00::/8 action drop

tb_log "the in-kernel path (DEVMAP): the rules run before the redirect"
# A DEVMAP redirect into a veth needs GRO (or XDP) on its peer.
ip netns exec "$(tb_nsname srv)" ethtool -K "$S0" gro on >/dev/null
tb_do dut xconnect add p0 p1 path kernel >/dev/null
n0=$(rule no5003 packets)
blocked fd88::2 5003
assert_ge "no5003 drops on path kernel" $((n0 + 2)) "$(rule no5003 packets)"
tb_wire_tcpx 10.88.0.2 5006 1000000 1400 || tb_die "tcpx to 5006 on path kernel"
assert_ge "p0's frames took the kernel path" 100 \
	"$(tb_ctlj dut stats | jq '[.data.ports[] | select(.name == "p0") | .xdp.dev_redirect] | add')"

tb_log "save, then a restart from the file keeps the rules and their order"
conf=$TB_RUN/acl.conf
cfg1=$(tb_do dut show config | jq -j .data)
printf '%s' "$cfg1" | sed 's/^/    /'
tb_do dut save "$conf" >/dev/null
assert_eq "acl lines saved" 3 "$(grep -c '^acl add' "$conf")"
tb_do dut shutdown >/dev/null
tb_wait_exit dut 15
# 60 more rules in the file, after the saved ones: a table over 24 rules,
# which the classifier matches with its bit-vector lookups, not the walk.
cp "$conf" "$conf.big"
for i in $(seq 0 59); do
	echo "acl add fill$i port p0 match proto udp dst 10.88.0.2 dport $((40000 + i)) action drop"
done >>"$conf.big"
tb_ferryd dut dut -c "$conf.big"
assert_eq "show config after the restart (the saved lines first)" "$cfg1" \
	"$(tb_do dut show config | jq -j .data | head -n "$(printf '%s\n' "$cfg1" | wc -l)")"
show=$(tb_do dut acl show)
assert_json '[.data[0:4][] | .name] | join(",")' "no5001,no5003,st9,ssh-ok" "$show"
assert_json '.data | length' 64 "$show"
blocked 10.88.0.2 5001
assert_ge "no5001 counts again after the restart" 1 "$(rule no5001 packets)"
tb_wire_tcpx 10.88.0.2 5002 1000000 1400 || tb_die "tcpx to 5002 with 64 rules"
# The last rule of the 64 takes its UDP frame, and only that rule.
ip netns exec "$(tb_nsname cli)" bash -c 'echo hi > /dev/udp/10.88.0.2/40059'
ip netns exec "$(tb_nsname cli)" bash -c 'echo hi > /dev/udp/10.88.0.2/40059'
assert_eq "fill59 took its 2 frames" 2 "$(rule fill59 packets)"
assert_eq "fill58 took none" 0 "$(rule fill58 packets)"

tb_log "acl del opens the port"
tb_do dut acl del no5001 >/dev/null
out=$(ip netns exec "$(tb_nsname cli)" timeout 30 "$TCPX" client -d 10.88.0.2:5001 -n 1000000 -m 1400)
wait "$srv5001" || tb_die "server 5001 failed: $(cat "$TB_RUN/srv5001.json")"
assert_json .bytes 1000000 "$out"
assert_json .ok true "$(cat "$TB_RUN/srv5001.json")"
assert_json '[.data[0:3][] | .name] | join(",")' "no5003,st9,ssh-ok" "$(tb_do dut acl show)"
assert_fail tb_ctlj dut acl show no5001

tb_log "pass is a permit: on through the wire, the drop after it not reached"
tb_do dut acl add ok5007 port p0 match proto tcp src 10.88.0.0/24 dport 5007 action pass >/dev/null
tb_do dut acl add no5007 port p0 match proto tcp dport 5007 action drop >/dev/null
tb_wire_tcpx 10.88.0.2 5007 1000000 1400 || tb_die "tcpx to 5007 under a pass rule"
assert_ge "ok5007 took the SYNs and data" 10 "$(rule ok5007 packets)"
assert_eq "no5007 took none" 0 "$(rule no5007 packets)"
assert_json '.data[0].action' pass "$(tb_do dut acl show ok5007)"
