#!/usr/bin/env bash
# TCP proxy, half-close and reset each way (tests/lib/proxy_ends.py), then
# 1000 concurrent connections. PX_MODE: auto by default,
# t_proxy_ends_splice.sh: splice.
#   - cli_half / srv_half: one side sends 1 MB and half-closes, the other
#     reads to EOF and only then answers with 1 MB: both streams arrive
#     whole and in order, the FIN passes on after the last byte, and the
#     flow completes (not aborted).
#   - cli_rst / srv_rst: one side sends 100 kB, then resets: the other reads
#     the 100 kB, then sees ECONNRESET (not a clean EOF); the flow is
#     counted aborted.
#   - 1000 clients connect at once (tcpx -P 1000 --hold 2: every connection
#     open before any sends), each sends 64 KiB in 1 KiB writes: 1000 flows
#     active at once, every byte verified per connection, all completed.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/proxy_tb.sh
. "$(dirname "$0")/../lib/proxy_tb.sh"

MODE=${PX_MODE:-auto}
ENDS="$TB_LIB_DIR/proxy_ends.py"
CONNS=1000
# 1000 flows are 2000 sockets in ferryd, 1000 in each client and server.
ulimit -n 8192
tb_init
px_setup
tb_do px proxy add p listen "$PX_PX4:8000" backend "$PX_SRV4:9000" mode "$MODE" >/dev/null

ended() {
	local want=$1 i
	for ((i = 0; i < 50; i++)); do
		[[ $(tb_ctlj px proxy show p | jq '.data.proxies[0] | .completed + .aborted') == "$want" ]] && return 0
		sleep 0.1
	done
}

n=0
for c in cli_half srv_half cli_rst srv_rst; do
	rm -f "$TB_RUN/ends.ready"
	px_bg srv "$TB_RUN/ends.srv" "$PYTHON" "$ENDS" server "$PX_SRV4" 9000 "$c" "$TB_RUN/ends.ready"
	spid=$PX_PID
	tb_wait_file "$TB_RUN/ends.ready"
	rc=0
	out=$(tb_exec cli timeout 20 "$PYTHON" "$ENDS" client "$PX_PX4" 8000 "$c") || rc=$?
	src=0
	wait "$spid" || src=$?
	echo "$c: client $out (exit $rc), server $(cat "$TB_RUN/ends.srv") (exit $src)"
	assert_eq "$c: client ok" 0 "$rc"
	assert_eq "$c: server ok" 0 "$src"
	n=$((n + 1))
	ended $n
	show=$(tb_do px proxy show p)
	if [[ $c == *_half ]]; then
		assert_json '.data.proxies[0].aborted' 0 "$show"
		assert_json '.data.proxies[0].completed' "$n" "$show"
	else
		assert_json '.data.proxies[0].aborted' $((n - 2)) "$show"
	fi
done
assert_json '.data.proxies[0].active' 0 "$show"
assert_eq "sockets left in px" 0 "$(tb_exec px ss -tanH state established | wc -l)"

# ---- 1000 concurrent connections ----
px_server srv "$PX_SRV4:9000" "$TB_RUN/many.srv" -n $CONNS
spid=$PX_PID
px_bg cli "$TB_RUN/many.cli" "$TCPX" client -d "$PX_PX4:8000" -n 65536 -m 1024 -P $CONNS --hold 2
cpid=$PX_PID
peak=0
while tb__running "$cpid"; do
	a=$(tb_ctlj px proxy show p | jq .data.proxies[0].active)
	((a > peak)) && peak=$a
	sleep 0.2
done
wait "$cpid" || true
wait "$spid" || true
echo "client: $(cat "$TB_RUN/many.cli"), peak active flows $peak"
assert_json .errors 0 "$(cat "$TB_RUN/many.cli")"
assert_json .bytes $((CONNS * 65536)) "$(cat "$TB_RUN/many.cli")"
assert_eq "connections the server verified" $CONNS "$(jq -s '[.[] | select(.ok == true and .bytes == 65536)] | length' "$TB_RUN/many.srv")"
assert_eq "peak active flows" $CONNS "$peak"
ended $((n + CONNS))
show=$(tb_do px proxy show p)
assert_json '.data.proxies[0].completed' $((2 + CONNS)) "$show"
assert_json '.data.proxies[0].active' 0 "$show"
if [[ $MODE == splice ]]; then
	assert_json '.data.proxies[0].flows_splice' $((n + CONNS)) "$show"
else
	assert_json '.data.proxies[0].flows_relay' $((n + CONNS)) "$show"
fi
assert_eq "sockets left in px" 0 "$(tb_exec px ss -tanH state established | wc -l)"
