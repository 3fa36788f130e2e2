#!/usr/bin/env bash
# CPU steering: frames that match a steer rule leave XDP through the port's
# CPUMAP and reach the kernel stack on the CPU their flow hashes to.
#
# cli (10.77.0.1) --veth-- srv (10.77.0.2): ferryd in srv with port p0 on
# the srv end, no app, default pass (unmatched frames go to the kernel), a
# TCP echo server and a UDP sink. Checked:
#   - one UDP flow: every frame steered to one CPU, and processed there;
#   - 64 UDP flows over CPUs 0-1: each CPU gets between 40% and 60%;
#   - an IPv6 flow: on one CPU, past an IPv4 rule listed before it;
#   - a TCP connection through a rule echoes byte-exact, its frames steered
#     (the symmetry of the hash is checked in tests/unit/test_steer.c: the
#     replies leave srv by its TX path, which XDP does not see);
#   - deleting the rule under a UDP stream and a TCP transfer: every
#     datagram arrives, the transfer is byte-exact, no CPUMAP drop;
#   - a CPUMAP queue of 8 under a generator burst: enqueue drops counted,
#     and steered == processed + enqueue drops (no silent loss);
#   - bad rules are refused with clear errors; show config rebuilds rules.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

PEER="$TB_LIB_DIR/steer_peer.py"
CLI_IP=10.77.0.1
SRV_IP=10.77.0.2

tb_init
tb_ns cli
tb_ns srv
tb_veth cli c0 srv s0
tb_veth cli f0 srv f1
C0=$(tb_ifname c0)
S0=$(tb_ifname s0)
F0=$(tb_ifname f0)
F1=$(tb_ifname f1)
ip -n "$(tb_nsname cli)" addr add "$CLI_IP/24" dev "$C0"
ip -n "$(tb_nsname srv)" addr add "$SRV_IP/24" dev "$S0"
ip -n "$(tb_nsname srv)" addr add 198.18.0.2/24 dev "$F1"
# The client keeps TX checksum offload on (veth's default): its TCP/UDP
# frames carry partial checksums, which the classifier completes before
# steering them (a CPUMAP-built skb has lost the CHECKSUM_PARTIAL mark).

tb_ferryd srv dut
tb_do dut workers 1 idle poll >/dev/null
tb_do dut port add p0 dev "$S0" default pass >/dev/null
assert_json '.data[0].default' pass "$(tb_do dut port show p0)"

count_file="$TB_RUN/udp.count"
tb_bg srv "$TB_RUN/serve.log" "$PYTHON" "$PEER" serve "$SRV_IP" 9001 9000 "$count_file"
for ((i = 0; i < 50; i++)); do
	[[ -e $count_file ]] && break
	sleep 0.1
done
[[ -e $count_file ]] || tb_die "UDP sink did not start"

# steered/processed of RULE on CPU as one number each.
ctr() {
	tb_ctlj dut steer show "$1" | jq -r --argjson c "$2" --arg k "$3" \
		'[.data[0].counters[] | select(.cpu == $c) | .[$k]] | first // 0'
}

udp_count() { cat "$count_file"; }

# Waits until the UDP sink has counted at least N datagrams (or 10 s).
wait_udp() {
	local want=$1 i
	for ((i = 0; i < 100; i++)); do
		(($(udp_count) >= want)) && return 0
		sleep 0.1
	done
	return 0
}

# ---- bad rules ----
err() {
	tb_err dut "$@"
}
err ENOENT steer add r port nosuch match to cpus 0
err EINVAL steer add r port p0 match to cpus 0,9
err ERANGE steer add r port p0 match to cpus 0 qsize 0
err ERANGE steer add r port p0 match to cpus 0 qsize 16385
err EINVAL steer add r port p0 match proto sctp to cpus 0
err ERANGE steer add r port p0 match dst 10.0.0.0/33 to cpus 0
err EINVAL steer add r port p0 match dst 10.0.0.300 to cpus 0
err EINVAL steer add r port p0 match to 0
err EINVAL steer add r match to cpus 0
tb_do dut steer add dup port p0 match dport 1 to cpus 0 >/dev/null
err EEXIST steer add dup port p0 match dport 2 to cpus 1
err ENOENT steer del nosuch
tb_do dut steer del dup >/dev/null
assert_json '.data | length' 0 "$(tb_do dut steer show)"

# ---- one flow lands on one CPU ----
tb_do dut steer add udp9000 port p0 match proto udp dst "$SRV_IP/32" dport 9000 \
	to cpus 0-1 >/dev/null
rule=$(tb_do dut steer show udp9000)
assert_json '.data[0].cpus | join(",")' 0,1 "$rule"
assert_json '.data[0].qsize' 2048 "$rule"
assert_json '.data[0].match.dport' 9000 "$rule"

tb_exec cli "$PYTHON" "$PEER" udp "$CLI_IP" "$SRV_IP" 9000 30000 1 2000 >/dev/null
wait_udp 2000
s0=$(ctr udp9000 0 steered)
s1=$(ctr udp9000 1 steered)
echo "one flow: cpu0 $s0, cpu1 $s1"
assert_eq "one flow: steered in total" 2000 $((s0 + s1))
assert_eq "one flow: all on one CPU" 2000 $((s0 > s1 ? s0 : s1))
assert_eq "one flow: processed on its CPU" 2000 \
	$(($(ctr udp9000 0 processed) + $(ctr udp9000 1 processed)))
assert_eq "one flow: sink got every datagram" 2000 "$(udp_count)"

# ---- 64 flows spread within 60/40 ----
b0=$s0 b1=$s1
tb_exec cli "$PYTHON" "$PEER" udp "$CLI_IP" "$SRV_IP" 9000 20000 64 50 >/dev/null
wait_udp $((2000 + 64 * 50))
d0=$(($(ctr udp9000 0 steered) - b0))
d1=$(($(ctr udp9000 1 steered) - b1))
echo "64 flows: cpu0 $d0, cpu1 $d1"
assert_eq "64 flows: steered in total" $((64 * 50)) $((d0 + d1))
assert_ge "64 flows: cpu0 share (x100)" 40 $((d0 * 100 / (d0 + d1)))
assert_ge "64 flows: cpu1 share (x100)" 40 $((d1 * 100 / (d0 + d1)))

# ---- IPv6: a flow on one CPU, rules of both families side by side ----
tb_ipv6_on cli "$C0"
tb_ipv6_on srv "$S0"
ip -n "$(tb_nsname cli)" addr add fd77::1/64 dev "$C0" nodad
ip -n "$(tb_nsname srv)" addr add fd77::2/64 dev "$S0" nodad
tb_do dut steer add udp6 port p0 match proto udp dst fd77::2/128 dport 9000 to cpus 0-1 >/dev/null
assert_json '.data[0].index' 1 "$(tb_do dut steer show udp6)"
u0=$(udp_count)
v4_before=$(($(ctr udp9000 0 steered) + $(ctr udp9000 1 steered)))
tb_exec cli "$PYTHON" "$PEER" udp fd77::1 fd77::2 9000 30000 1 1000 >/dev/null
wait_udp $((u0 + 1000))
s0=$(ctr udp6 0 steered)
s1=$(ctr udp6 1 steered)
echo "IPv6 flow: cpu0 $s0, cpu1 $s1"
assert_eq "IPv6 flow: all on one CPU" 1000 $((s0 > s1 ? s0 : s1))
assert_eq "IPv6 flow: processed" 1000 $(($(ctr udp6 0 processed) + $(ctr udp6 1 processed)))
assert_eq "IPv6 flow: sink got every datagram" $((u0 + 1000)) "$(udp_count)"
assert_eq "IPv6 flow: the IPv4 rule saw none" "$v4_before" \
	$(($(ctr udp9000 0 steered) + $(ctr udp9000 1 steered)))
tb_do dut steer del udp6 >/dev/null

# ---- TCP through a rule: byte-exact, steered ----
tb_do dut steer add tcp9001 port p0 match proto tcp dport 9001 to cpus 0-1 qsize 4096 >/dev/null
out=$(tb_exec cli "$PYTHON" "$PEER" tcp "$SRV_IP" 9001 2000000)
echo "tcp: $out"
assert_json .exact true "$out"
assert_json .received 2000000 "$out"
t=$(($(ctr tcp9001 0 steered) + $(ctr tcp9001 1 steered)))
p=$(($(ctr tcp9001 0 processed) + $(ctr tcp9001 1 processed)))
assert_ge "tcp frames steered" 100 "$t"
assert_eq "tcp frames processed" "$t" "$p"
assert_eq "tcp: one CPU only" "$t" $(($(ctr tcp9001 0 steered) > $(ctr tcp9001 1 steered) ?
	$(ctr tcp9001 0 steered) : $(ctr tcp9001 1 steered)))
# The client's partial checksums were completed before steering.
for c in TcpInCsumErrors UdpInCsumErrors; do
	assert_eq "srv $c" 0 "$(tb_exec srv nstat -az "$c" | awk -v c="$c" '$1 == c {print $2}')"
done

# The rules are in stats and metrics too.
assert_json '[.data.steer[].name] | join(",")' udp9000,tcp9001 "$(tb_do dut stats)"
metrics=$(tb_ctlj dut metrics | jq -r .data)
printf '%s\n' "$metrics" >"$TB_RUN/metrics.txt"
assert_match "metrics: steered" 'ferry_steer_steered_total\{port="p0",rule="tcp9001",cpu="0"\}' "$metrics"
assert_match "metrics: processed" 'ferry_steer_processed_total\{port="p0",rule="udp9000",cpu="1"\}' "$metrics"
assert_match "metrics: enqueue drops" 'ferry_cpumap_enqueue_drops_total\{port="p0",cpu="0"\} 0' "$metrics"
assert_ok "$PYTHON" "$TB_LIB_DIR/promcheck.py" --strict "$TB_RUN/metrics.txt"

# ---- show config rebuilds the rules ----
conf=$(tb_ctlj dut show config | jq -r .data)
echo "$conf"
assert_match "config: port default" "port add p0 dev $S0 .* default pass" "$conf"
assert_match "config: udp rule" "steer add udp9000 port p0 match proto udp dst $SRV_IP/32 dport 9000 to cpus 0-1 qsize 2048" "$conf"
assert_match "config: tcp rule" "steer add tcp9001 port p0 match proto tcp dport 9001 to cpus 0-1 qsize 4096" "$conf"

# The senders run for about 4 s, so that they are still sending when both
# rules are gone, however slow the ferryctl calls below are on a loaded host.
# ---- delete under traffic: back to the default path, nothing lost ----
retrans() {
	tb_exec cli nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ {print $2}'
}
r0=$(retrans)
u0=$(udp_count)
pass0=$(tb_xdpstat dut p0 pass_no_rule)
tb_bg cli "$TB_RUN/udp-del.out" "$PYTHON" "$PEER" udp "$CLI_IP" "$SRV_IP" 9000 31000 1 6000 1500
udp_pid=$TB_BG_PID
tb_bg cli "$TB_RUN/tcp-del.out" "$PYTHON" "$PEER" tcp "$SRV_IP" 9001 8000000 2000000
tcp_pid=$TB_BG_PID
sleep 0.7
# The first rule goes first: the TCP rule moves up to index 0 under its
# own traffic and keeps steering it.
tb_do dut steer del udp9000 >/dev/null
assert_json '.data[0].index' 0 "$(tb_do dut steer show tcp9001)"
moved=$(($(ctr tcp9001 0 steered) + $(ctr tcp9001 1 steered)))
sleep 0.3
steered_before=$(($(ctr tcp9001 0 steered) + $(ctr tcp9001 1 steered)))
assert_ge "tcp frames steered by the moved rule" $((moved + 50)) "$steered_before"
tb_do dut steer del tcp9001 >/dev/null
assert_ok kill -0 "$tcp_pid"
assert_ok kill -0 "$udp_pid"
assert_ge "tcp frames steered before the delete" $((t + 100)) "$steered_before"
assert_json '.data | length' 0 "$(tb_do dut steer show)"
wait "$tcp_pid" || true
wait "$udp_pid" || true
out=$(cat "$TB_RUN/tcp-del.out")
echo "tcp across delete: $out"
assert_json .exact true "$out"
assert_json .received 8000000 "$out"
wait_udp $((u0 + 6000))
assert_eq "udp across delete: every datagram arrived" $((u0 + 6000)) "$(udp_count)"
# TCP retransmits are no measure here: a paced sender sends tail loss
# probes, loss or not. The kernel's own count of CPUMAP drops is.
echo "tcp retransmits during the transfer: $(($(retrans) - r0))"
assert_json '[.data.cpumap[] | select(.port == "p0") | .enqueue_drops] | add // 0' 0 \
	"$(tb_do dut stats)"
assert_eq "drop_no_cpu across delete" 0 "$(tb_xdpstat dut p0 drop_no_cpu)"
assert_ge "frames back on the default path" $((pass0 + 100)) "$(tb_xdpstat dut p0 pass_no_rule)"

# ---- a full CPUMAP queue shows up in the drop counters ----
# ferry's generator in cli sends a burst to f1 as fast as it can; the rule
# sends it all to CPU 0 through a queue of 8 frames.
tb_ferryd cli gen
tb_do gen workers 0 idle poll >/dev/null
tb_do gen port add g0 dev "$F0" default pass >/dev/null
tb_do dut port add p1 dev "$F1" default pass >/dev/null
tb_do dut steer add flood port p1 match proto udp dport 9 to cpus 0 qsize 8 >/dev/null
tb_do gen gen start g0 count 200000 rate 0 dst-mac "$(tb_mac srv f1)" >/dev/null
tb_wait_gen_done gen g0 60
sleep 1
st=$(ctr flood 0 steered)
pr=$(ctr flood 0 processed)
cpumap=$(tb_ctlj dut stats | jq -c '[.data.cpumap[] | select(.port == "p1" and .cpu == 0)] | first')
drops=$(jq -r .enqueue_drops <<<"$cpumap")
echo "flood: steered $st, processed $pr, cpumap $cpumap"
assert_ge "flood: frames steered" 100000 "$st"
assert_ge "flood: enqueue drops" 1 "$drops"
assert_eq "flood: steered == processed + enqueue drops" "$st" $((pr + drops))
assert_match "metrics: enqueue drops counted" \
	"ferry_cpumap_enqueue_drops_total\\{port=\"p1\",cpu=\"0\"\\} $drops" \
	"$(tb_ctlj dut metrics | jq -r .data)"

# stats reset zeroes the steering counters too.
tb_do dut stats reset >/dev/null
assert_eq "flood: steered after stats reset" 0 "$(ctr flood 0 steered)"
assert_json '[.data.cpumap[] | select(.port == "p1") | .enqueue_drops] | add' 0 \
	"$(tb_do dut stats)"

# Deleting the port deletes its rules.
tb_do dut port del p1 >/dev/null
assert_json '.data | length' 0 "$(tb_do dut steer show)"

# save + restart rebuilds the rules, in order.
tb_do dut steer add b port p0 match proto udp dport 7000-7010 to cpus 1 qsize 512 >/dev/null
tb_do dut steer add a port p0 match dst 10.77.0.0/16 to cpus 0-1 >/dev/null
before=$(tb_do dut steer show | jq -c '[.data[] | {name, port, index, match, cpus, qsize}]')
tb_do dut save "$TB_RUN/saved.conf" >/dev/null
tb_do dut shutdown >/dev/null
tb_wait_exit dut 20
tb_ferryd srv dut2 -c "$TB_RUN/saved.conf"
after=$(tb_do dut2 steer show | jq -c '[.data[] | {name, port, index, match, cpus, qsize}]')
assert_eq "rules after save + restart" "$before" "$after"
assert_json '.data[0].default' pass "$(tb_do dut2 port show p0)"
