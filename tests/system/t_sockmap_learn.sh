#!/usr/bin/env bash
# sockmap per-service decisions: learned, pinned, sticky, and kept across
# a restart of ferryd.
#
# One namespace (loopback only), a child cgroup v2 holding the tcpx
# clients and servers, ferryd attached with the default `default learn`.
# Two services side by side: 127.0.0.1:7101 streams 1 KiB writes (where a
# redirect is slower than TCP), 127.0.0.1:7102 is request/response like
# redis (64 B requests, 128 B responses: where a redirect wins). Checked:
#   - while learning, connections stay on plain TCP and are measured;
#   - after the warm-up the stream's service says plain (small-stream) and
#     the request/response one redirect (req-resp), with their evidence;
#   - then, run at the same time, the stream's new connection stays plain
#     (not in the SOCKHASH, no flow entry) and the request/response one is
#     redirected (every byte), both byte-exact;
#   - `sockmap policy add dst` (and the older form without dst) pins a
#     service either way, by port or address and port (IPv4 and IPv6), and
#     `policy del` gives it back to learning; bad policies are refused; policies show in `show config`, before the attach line;
#   - a connection keeps its decision for its life: a policy added while
#     it runs does not move it;
#   - attach's warmup/rr-max/min-write move the rule: with min-write 1000
#     the 1 KiB stream learns redirect (large-writes) after 2 sockets;
#   - ferryd shut down and started again from its saved config while a
#     redirected request/response connection and a plain stream are open:
#     both go on byte-exact over TCP, and the policies come back.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/sockmap.sh
. "$(dirname "$0")/../lib/sockmap.sh"

sm_testbed
D=dut
ST=7101 # the 1 KiB stream
RR=7102 # request/response

# err CODE ARGS...: the command fails with CODE.
err() {
	tb_err "$D" "$@"
}

# svc PORT FIELD: a field of the service row of 127.0.0.1:PORT.
svc() {
	tb_ctlj $D sockmap show |
		jq -r --arg s "127.0.0.1:$1" --arg f "$2" \
			'[.data.services[]? | select(.service == $s) | getpath($f | split("."))] | first | if . == null then "none" else . end'
}

# dir PORT FIELD: the client->server direction's flow counter, "none" when
# the connection was never put in the SOCKHASH.
dir() {
	tb_ctlj $D sockmap show | jq -r --arg p ":$1" --arg k "$2" \
		'[.data.flows[]? | select(.dst | endswith($p)) | .[$k]] | first // "none"'
}

# stream PORT BYTES: one 1 KiB-write transfer, verified by the server.
stream() {
	sm_stream 127.0.0.1 "$1" "$2" "$CG" "stream $1 $2 B"
}

# rr_server PORT OUT ARGS...: a request/response server in the cgroup; its
# PID in RR_PID once it listens.
rr_server() {
	local port=$1 out=$2
	shift 2
	rm -f "$out.ready"
	ip netns exec "$(tb_nsname h)" sh -c "$TB_CG_EXEC" "$CG" \
		"$TCPX" rr-server -l "${RR_ADDR:-127.0.0.1}:$port" -m 64 --resp 128 --ready "$out.ready" "$@" \
		>"$out" 2>&1 &
	RR_PID=$!
	tb_track $RR_PID
	tb_wait_file "$out.ready" || tb_die "rr server on $port did not start: $(cat "$out")"
}

# rr PORT REQUESTS: one connection of REQUESTS turns, verified both ways,
# to 127.0.0.1 or $RR_ADDR.
rr() {
	local port=$1 n=$2 cli rc=0
	rr_server "$port" "$TB_RUN/rr-$port.json"
	cli=$(tb_cg_exec h "$CG" "$TCPX" rr-client -d "${RR_ADDR:-127.0.0.1}:$port" -n "$n" -m 64 --resp 128) || rc=$?
	wait "$RR_PID" || rc=$?
	assert_eq "rr $port $n requests: exit codes" 0 "$rc"
	assert_json '"\(.ok) \(.requests)"' "true $n" "$cli"
	assert_json '"\(.ok) \(.requests)"' "true $n" "$(cat "$TB_RUN/rr-$port.json")"
}

out=$(tb_do $D sockmap attach cgroup "$CG" ports 7100-7199)
assert_json .data.default learn "$out"
assert_match "show config: no default word for learn" "sockmap attach cgroup \"$CG\" ports 7100-7199$" \
	"$(tb_ctlj $D show config | jq -r .data)"

# ---- learning: plain TCP, measured ----
# learn_samples is 4 sockets: two rr connections (both ends write), four
# stream connections (only the writer does).
for i in 1 2; do
	stream $ST 4000000
	rr $RR 2000
	assert_eq "learning: the stream's connection $i is not in the SOCKHASH" none "$(dir $ST redirects)"
	assert_eq "learning: the rr connection $i is not in the SOCKHASH" none "$(dir $RR redirects)"
done
assert_eq "stream: still learning after 2 connections" "learn learning" \
	"$(svc $ST decision) $(svc $ST reason)"
for i in 3 4; do
	stream $ST 4000000
	assert_eq "learning: the stream's connection $i is not in the SOCKHASH" none "$(dir $ST redirects)"
done
tb_ctl $D sockmap show
assert_eq "stream: decision" plain "$(svc $ST decision)"
assert_eq "stream: reason" small-stream "$(svc $ST reason)"
assert_eq "stream: connections" 4 "$(svc $ST counters.conns)"
assert_eq "stream: sockets measured" 4 "$(svc $ST evidence.samples)"
assert_eq "stream: connections redirected" 0 "$(svc $ST counters.conns_redirected)"
assert_eq "stream: bytes measured on plain TCP" 16000000 "$(svc $ST counters.bytes_plain)"
assert_eq "stream: mean write" 1024 "$(svc $ST evidence.mean_write)"
assert_eq "stream: turns per KiB" 0 "$(svc $ST evidence.turns_per_kb)"
assert_eq "stream: shape" stream "$(svc $ST evidence.shape)"
assert_eq "rr: decision" redirect "$(svc $RR decision)"
assert_eq "rr: reason" req-resp "$(svc $RR reason)"
assert_eq "rr: shape" req-resp "$(svc $RR evidence.shape)"
assert_eq "rr: connections redirected while learning" 0 "$(svc $RR counters.conns_redirected)"
# Both ends write: 4000 requests of 64 B, 4000 responses of 128 B.
assert_eq "rr: bytes measured on plain TCP" $((4000 * 192)) "$(svc $RR counters.bytes_plain)"
assert_eq "rr: writes measured on plain TCP" 8000 "$(svc $RR counters.writes_plain)"
# Every write but each client's first follows a read.
assert_eq "rr: turns on plain TCP" $((8000 - 2)) "$(svc $RR counters.turns_plain)"
assert_ge "rr: turns per KiB" 5 "$(svc $RR evidence.turns_per_kb | cut -d. -f1)"

# ---- side by side: the stream stays plain, rr is redirected ----
tb_tcpx_server h "127.0.0.1:$ST" "$TB_RUN/st-side.json" --cgroup "$CG"
sp=$TB_TCPX_PID
tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$ST" -n 256000000 -m 1024 >"$TB_RUN/st-cli.json" &
cp=$!
tb_track $cp
rr $RR 20000
rc=0
wait $cp || rc=$?
wait $sp || rc=$?
assert_eq "side by side: stream exit codes" 0 "$rc"
assert_json '"\(.ok) \(.bytes)"' "true 256000000" "$(cat "$TB_RUN/st-side.json")"
assert_eq "side by side: the stream is not in the SOCKHASH" none "$(dir $ST redirects)"
assert_eq "side by side: stream connections redirected" 0 "$(svc $ST counters.conns_redirected)"
assert_eq "side by side: rr connections redirected" 1 "$(svc $RR counters.conns_redirected)"
assert_eq "side by side: rr requests redirected, one verdict" "1 $((20000 * 64))" \
	"$(dir $RR verdict_runs) $(dir $RR bytes_redirected)"
assert_eq "side by side: rr bytes measured redirected" $((20000 * 192)) \
	"$(svc $RR counters.bytes_redirected)"
# Measured on the redirected path too: the receive tracepoint sees
# tcp_bpf_recvmsg's reads.
assert_eq "side by side: rr turns on the redirected connection" $((40000 - 1)) \
	"$(svc $RR counters.turns_redirected)"
assert_eq "side by side: rr still redirect" redirect "$(svc $RR decision)"
assert_eq "side by side: connections decided redirect, plain (attachment)" "1 7" \
	"$(tb_ctlj $D sockmap show | jq -r '"\(.data.counters.decided_redirect) \(.data.counters.decided_plain)"')"

# ---- policies ----
err EINVAL sockmap policy add dst
err EINVAL sockmap policy add dst $ST
err EINVAL sockmap policy add dst dst plain
err EINVAL sockmap policy add dst 0 plain
err EINVAL sockmap policy add dst 70000 plain
err EINVAL sockmap policy add dst $ST sometimes
err EINVAL sockmap policy add dst 1.2.3:$ST plain
err EINVAL sockmap policy add dst "[::1:$ST" plain
err EINVAL sockmap policy add dst $ST plain extra
err EINVAL sockmap policy add
err EINVAL sockmap policy add $ST sometimes
err ENOENT sockmap policy del dst 7999
err ENOENT sockmap policy del dst 127.0.0.1:$ST
err ENOENT sockmap policy del 7999

# The form with dst, and the one of configs saved before it.
tb_do $D sockmap policy add dst $ST redirect >/dev/null
tb_do $D sockmap policy add 127.0.0.1:$RR plain >/dev/null
tb_do $D sockmap policy add "[::1]:7150" plain >/dev/null
assert_eq "pinned stream: decision, reason, pinned" "redirect policy true" \
	"$(svc $ST decision) $(svc $ST reason) $(svc $ST pinned)"
assert_eq "pinned stream: still learned plain" plain "$(svc $ST learned)"
assert_eq "pinned rr: decision, reason" "plain policy" "$(svc $RR decision) $(svc $RR reason)"
stream $ST 8000000
assert_eq "pinned stream: redirected, every byte" 8000000 "$(dir $ST bytes_redirected)"
rr $RR 1000
assert_eq "pinned rr: connections redirected (unchanged)" 1 "$(svc $RR counters.conns_redirected)"
conf=$(tb_ctlj $D show config | jq -r .data)
echo "$conf"
assert_match "show config: port policy" "sockmap policy add dst $ST redirect" "$conf"
assert_match "show config: address policy" "sockmap policy add dst 127.0.0.1:$RR plain" "$conf"
assert_match "show config: v6 policy" "sockmap policy add dst \[::1\]:7150 plain" "$conf"
assert_match "show config: policies before the attach line" \
	"policy add dst \[::1\]:7150 plain.*sockmap attach" "$(tr '\n' ' ' <<<"$conf")"
assert_json '.data.policies | length' 3 "$(tb_do $D sockmap show)"
tb_do $D sockmap policy del "[::1]:7150" >/dev/null
tb_do $D sockmap policy del dst $ST >/dev/null
assert_eq "stream back to learning: decision" "plain small-stream false" \
	"$(svc $ST decision) $(svc $ST reason) $(svc $ST pinned)"

# ---- IPv6: a service pinned by its address ----
tb_exec h sysctl -qw net.ipv6.conf.lo.disable_ipv6=0
tb_do $D sockmap policy add dst "[::1]:7103" redirect >/dev/null
RR_ADDR='[::1]' rr 7103 500
v6=$(tb_ctlj $D sockmap show | jq -c '[.data.services[] | select(.service == "[::1]:7103")] | first')
echo "    $v6"
assert_json '"\(.decision) \(.reason) \(.counters.conns_redirected)"' "redirect policy 1" "$v6"
assert_eq "IPv6 pinned: requests redirected" $((500 * 64)) "$(dir 7103 bytes_redirected)"
tb_do $D sockmap policy del dst "[::1]:7103" >/dev/null

# ---- sticky: a policy added mid-connection does not move it ----
tb_tcpx_server h "127.0.0.1:$ST" "$TB_RUN/st-sticky.json" --cgroup "$CG" --rate 20M
sp=$TB_TCPX_PID
tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$ST" -n 40000000 -m 1024 >/dev/null &
cp=$!
tb_track $cp
sleep 0.5
tb_do $D sockmap policy add dst $ST redirect >/dev/null
rc=0
wait $cp || rc=$?
wait $sp || rc=$?
assert_eq "sticky: exit codes" 0 "$rc"
assert_json '"\(.ok) \(.bytes)"' "true 40000000" "$(cat "$TB_RUN/st-sticky.json")"
assert_eq "sticky: the only stream direction ever in the SOCKHASH is the pinned one" 1 \
	"$(tb_ctlj $D sockmap show | jq '[.data.flows[] | select(.dst == "127.0.0.1:7101")] | length')"
tb_do $D sockmap policy del dst $ST >/dev/null

# ---- restart: established connections go on, policies come back ----
tb_do $D sockmap policy del dst 127.0.0.1:$RR >/dev/null
tb_do $D sockmap policy add dst 7160 plain >/dev/null
# A redirected rr connection that pauses, idle, while ferryd restarts.
rr_server $RR "$TB_RUN/rr-restart.json"
rsp=$RR_PID
tb_cg_exec h "$CG" "$TCPX" rr-client -d "127.0.0.1:$RR" -n 4000 -m 64 --resp 128 \
	--pause-after 2000 --pause 4 >"$TB_RUN/rr-restart-cli.json" &
rcp=$!
tb_track $rcp
# A plain stream, paced to last across the restart.
tb_tcpx_server h "127.0.0.1:$ST" "$TB_RUN/st-restart.json" --cgroup "$CG" --rate 10M
ssp=$TB_TCPX_PID
tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$ST" -n 60000000 -m 1024 >/dev/null &
scp=$!
tb_track $scp
for ((i = 0; i < 50; i++)); do
	r=$(tb_ctlj $D sockmap show | jq '[.data.flows[]? | select(.dst == "127.0.0.1:7102") | .redirects] | first // 0')
	((r >= 1)) && break
	sleep 0.1
done
assert_eq "restart: the rr connection is redirected before" 1 "$r"
# The SOCKHASH itself: both ends of the rr connection, none of the stream.
assert_eq "restart: sockets in the SOCKHASH (the rr pair, not the stream)" 2 \
	"$(tb_ctlj $D sockmap show | jq .data.sockets)"
sleep 1
tb_do $D save "$TB_RUN/saved.conf" >/dev/null
tb_do $D shutdown >/dev/null
tb_wait_exit $D 20
tb_ferryd h dut2 -c "$TB_RUN/saved.conf"
D=dut2
out=$(tb_do $D sockmap show)
assert_json '"\(.data.attached) \(.data.default) \(.data.policies[0].service) \(.data.policies[0].decision)"' \
	"true learn 7160 plain" "$out"
rc=0
wait $rcp || rc=$?
wait $rsp || rc=$?
echo "    rr client: $(cat "$TB_RUN/rr-restart-cli.json")"
echo "    rr server: $(cat "$TB_RUN/rr-restart.json")"
assert_eq "restart: rr exit codes" 0 "$rc"
assert_json '"\(.ok) \(.requests)"' "true 4000" "$(cat "$TB_RUN/rr-restart-cli.json")"
assert_json '"\(.ok) \(.requests)"' "true 4000" "$(cat "$TB_RUN/rr-restart.json")"
rc=0
wait $scp || rc=$?
wait $ssp || rc=$?
assert_eq "restart: stream exit codes" 0 "$rc"
assert_json '"\(.ok) \(.bytes)"' "true 60000000" "$(cat "$TB_RUN/st-restart.json")"
# The new attachment learns afresh: not an error, a fact to see.
assert_eq "restart: the old connections are not in the new SOCKHASH" none "$(dir $RR redirects)"
tb_do $D sockmap detach >/dev/null

# ---- the rule's thresholds: a host where 1 KiB writes win redirected ----
err ERANGE sockmap attach cgroup "$CG" ports 7100-7199 warmup 0
err EINVAL sockmap attach cgroup "$CG" ports 7100-7199 min-write lots
err ERANGE sockmap attach cgroup "$CG" ports 7100-7199 rr-max $((1 << 31))
out=$(tb_do $D sockmap attach cgroup "$CG" ports 7100-7199 warmup 2 min-write 1000)
assert_json '"\(.data.rule.warmup) \(.data.rule.rr_max) \(.data.rule.min_write)"' "2 16384 1000" "$out"
assert_match "show config: the thresholds given" \
	"sockmap attach cgroup \"$CG\" ports 7100-7199 warmup 2 min-write 1000$" \
	"$(tb_ctlj $D show config | jq -r .data)"
stream $ST 2000000
stream $ST 2000000
assert_eq "min-write 1000: the 1 KiB stream learned" "redirect large-writes stream 2" \
	"$(svc $ST decision) $(svc $ST reason) $(svc $ST evidence.shape) $(svc $ST evidence.samples)"
stream $ST 4000000
assert_eq "min-write 1000: the next stream is redirected, every byte" 4000000 "$(dir $ST bytes_redirected)"
tb_do $D sockmap detach >/dev/null
assert_json .data.ferryd 0.1.0 "$(tb_do $D version)"
