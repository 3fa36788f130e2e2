#!/usr/bin/env bash
# sockmap quiet periods: when every service is decided plain, nothing is
# in the SOCKHASH and nothing could be redirected, ferryd detaches the
# send/receive tracepoints (which every send() and recv() of the host pays
# for) until a connection needs them.
#
# One namespace (loopback only), a child cgroup v2 holding the tcpx
# clients and servers, ferryd attached with `default learn`. Checked:
#   - a fresh attachment measures (no service yet); a 1 KiB stream's
#     service learns plain, and a few seconds later `measuring` is false;
#   - a stream while quiet is byte-exact and plain, and not measured (its
#     service's byte counters do not move);
#   - a connection of a new service (request/response) wakes the
#     tracepoints within a tick or two; the service learns redirect, its
#     next connection is redirected, every byte, and ferryd stays measuring
#     (a redirected service needs the counters);
#   - pinning that service plain makes every service plain: quiet again;
#     a redirect policy, or removing a policy, wakes the tracepoints at
#     once, with the command, so the unpinned service's next connection is
#     redirected again;
#   - no connection was kept plain by a quiet period (quiet_plain 0);
#   - detach while quiet, and a new attachment measures again.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/sockmap.sh
. "$(dirname "$0")/../lib/sockmap.sh"

sm_testbed
D=dut
ST=7201 # the 1 KiB stream
RR=7202 # request/response

show() { tb_ctlj $D sockmap show; }
measuring() { show | jq -r .data.measuring; }

# svc PORT FIELD: a field of the service row of 127.0.0.1:PORT.
svc() {
	show | jq -r --arg s "127.0.0.1:$1" --arg f "$2" \
		'[.data.services[]? | select(.service == $s) | getpath($f | split("."))] | first | if . == null then "none" else . end'
}

# dir PORT FIELD: the client->server direction's flow counter, "none" when
# the connection was never put in the SOCKHASH.
dir() {
	show | jq -r --arg p ":$1" --arg k "$2" \
		'[.data.flows[]? | select(.dst | endswith($p)) | .[$k]] | first // "none"'
}

# wait_measuring WANT SECONDS: until `measuring` is WANT; the last value in M.
wait_measuring() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		M=$(measuring)
		[[ $M == "$1" ]] && return 0
		sleep 0.1
	done
}

# stream PORT BYTES: one 1 KiB-write transfer, verified by the server.
stream() {
	sm_stream 127.0.0.1 "$1" "$2" "$CG" "stream $1 $2 B"
}

# rr PORT REQUESTS: one request/response connection, verified both ways.
rr() {
	local port=$1 n=$2 out=$TB_RUN/rr-$1.json cli rc=0 sp
	rm -f "$out.ready"
	ip netns exec "$(tb_nsname h)" sh -c "$TB_CG_EXEC" "$CG" \
		"$TCPX" rr-server -l "127.0.0.1:$port" -m 64 --resp 128 --ready "$out.ready" \
		>"$out" 2>&1 &
	sp=$!
	tb_track $sp
	tb_wait_file "$out.ready" || tb_die "rr server on $port did not start: $(cat "$out")"
	cli=$(tb_cg_exec h "$CG" "$TCPX" rr-client -d "127.0.0.1:$port" -n "$n" -m 64 --resp 128) || rc=$?
	wait "$sp" || rc=$?
	assert_eq "rr $port $n requests: exit codes" 0 "$rc"
	assert_json '"\(.ok) \(.requests)"' "true $n" "$cli"
	assert_json '"\(.ok) \(.requests)"' "true $n" "$(cat "$out")"
}

tb_do $D sockmap attach cgroup "$CG" ports 7200-7299 >/dev/null
sleep 3.5
assert_eq "fresh attachment, no service yet: measuring" true "$(measuring)"

# ---- a stream's service learns plain; then quiet ----
for i in 1 2 3 4; do
	stream $ST 2000000
done
assert_eq "stream: decision, reason" "plain small-stream" "$(svc $ST decision) $(svc $ST reason)"
wait_measuring false 8
assert_eq "every service plain, nothing in the SOCKHASH: measuring" false "$M"
before=$(svc $ST counters.bytes_plain)
stream $ST 8000000
assert_eq "quiet: the stream is not in the SOCKHASH" none "$(dir $ST redirects)"
assert_eq "quiet: connections of the stream" 5 "$(svc $ST counters.conns)"
assert_eq "quiet: the stream was not measured" "$before" "$(svc $ST counters.bytes_plain)"
assert_eq "quiet: still quiet" false "$(measuring)"

# ---- a new service wakes the tracepoints ----
rr $RR 500
wait_measuring true 3
assert_eq "a new service's connection: measuring again" true "$M"
for ((i = 0; i < 6; i++)); do
	[[ $(svc $RR decision) == redirect ]] && break
	rr $RR 500
done
assert_eq "rr: decision, reason" "redirect req-resp" "$(svc $RR decision) $(svc $RR reason)"
rr $RR 2000
assert_eq "rr: redirected, every request byte" $((2000 * 64)) "$(dir $RR bytes_redirected)"
sleep 3.5
assert_eq "a service decided redirect: still measuring" true "$(measuring)"

# ---- policies: plain everywhere is quiet; a redirect policy wakes ----
tb_do $D sockmap policy add dst $RR plain >/dev/null
wait_measuring false 8
assert_eq "rr pinned plain: every service plain, quiet" false "$M"
tb_do $D sockmap policy add dst 7203 redirect >/dev/null
assert_eq "a redirect policy wakes at once" true "$(measuring)"
tb_do $D sockmap policy del dst 7203 >/dev/null
wait_measuring false 8
assert_eq "redirect policy gone: quiet again" false "$M"
# rr learned redirect: back to learning, its next connection is redirected.
tb_do $D sockmap policy del dst $RR >/dev/null
assert_eq "a policy removed wakes at once" true "$(measuring)"
rr $RR 1000
assert_eq "rr unpinned: redirected again (client directions: both connections' request bytes)" \
	"2 $((3000 * 64))" \
	"$(show | jq -r '[.data.flows[] | select(.dst == "127.0.0.1:7202")] | "\(length) \(map(.bytes_redirected) | add)"')"
assert_eq "no connection kept plain by a quiet period" 0 \
	"$(show | jq .data.counters.quiet_plain)"
# Detach while quiet: nothing to move, the tracepoints already gone.
tb_do $D sockmap policy add dst $RR plain >/dev/null
wait_measuring false 8
assert_eq "quiet before the detach" false "$M"
assert_json '"\(.data.sockets_to_tcp) \(.data.sockets_draining)"' "0 0" "$(tb_do $D sockmap detach)"
assert_json '"\(.data.attached) \(.data.last_detached.measuring)"' "false false" "$(tb_do $D sockmap show)"
tb_do $D sockmap attach cgroup "$CG" ports 7200-7299 >/dev/null
assert_eq "a new attachment measures" true "$(measuring)"
tb_do $D sockmap detach >/dev/null
assert_json .data.ferryd 0.1.0 "$(tb_do $D version)"
