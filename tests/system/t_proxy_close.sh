#!/usr/bin/env bash
# TCP proxy, endings (PX_MODE: auto by default, t_proxy_close_splice.sh:
# splice):
#   - the server closes mid-stream (after 8 MB of 100 MB, unread bytes
#     left): its RST reaches the proxy's backend socket and the proxy
#     resets the client side, so the client's send fails with ECONNRESET or
#     EPIPE; nothing passes for a clean end. The flow is counted aborted,
#     and proxy show (last_abort) and the log say why.
#   - `proxy del` under load. Defined behaviour: the listening socket closes
#     at once (new clients are refused); established flows keep running
#     to completion (draining_flows), then close. Checked:
#     a transfer running across the delete arrives byte-exact, a new
#     connection is refused, draining_flows goes 1 -> 0, and the name can
#     be added again at once.
#   - shutdown with a flow running: ferryd resets both ends and exits 0.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/proxy_tb.sh
. "$(dirname "$0")/../lib/proxy_tb.sh"

MODE=${PX_MODE:-auto}
tb_init
px_setup
tb_do px proxy add p listen "$PX_PX4:8000" backend "$PX_SRV4:9000" mode "$MODE" >/dev/null

# ---- the server closes mid-stream ----
px_server srv "$PX_SRV4:9000" "$TB_RUN/srv.out" -n 1 --close-after 8000000
spid=$PX_PID
rc=0
out=$(tb_exec cli "$TCPX" client -d "$PX_PX4:8000" -n 100000000 -m 65536) || rc=$?
wait "$spid" || true
echo "client: $out (exit $rc)"
echo "server: $(cat "$TB_RUN/srv.out")"
assert_ge "client exit status" 1 "$rc"
assert_json .errors 1 "$out"
assert_match "client's error" 'ECONNRESET|EPIPE' "$(jq -r .last_errno <<<"$out")"
assert_le "bytes the client could send" 99999999 "$(jq -r .bytes <<<"$out")"
assert_json .bytes 8000000 "$(cat "$TB_RUN/srv.out")"
for ((i = 0; i < 30; i++)); do
	[[ $(tb_ctlj px proxy show p | jq .data.proxies[0].active) == 0 ]] && break
	sleep 0.1
done
show=$(tb_do px proxy show p)
assert_json '.data.proxies[0].aborted' 1 "$show"
assert_json '.data.proxies[0].active' 0 "$show"
# Why, in proxy show and in the log: the server's reset, met on the backend
# socket or by the copy of held bytes to it, whichever came first.
assert_match "last_abort" '^(backend socket|held bytes to the backend): (Connection reset by peer|Broken pipe)$' \
	"$(jq -r '.data.proxies[0].last_abort' <<<"$show")"
assert_match "ferryd's log" 'proxy p: flow from 10\.78\.1\.1:[0-9]+ aborted: (backend socket|held bytes to the backend)' \
	"$(cat "$TB_RUN/px.log")"

# ---- proxy del under load ----
px_server srv "$PX_SRV4:9000" "$TB_RUN/srv2.out" -n 1 --rate 20000000
spid=$PX_PID
px_bg cli "$TB_RUN/cli2.out" "$TCPX" client -d "$PX_PX4:8000" -n 40000000 -m 16384
cpid=$PX_PID
sleep 0.7
assert_json '.data.proxies[0].active' 1 "$(tb_do px proxy show p)"
tb_do px proxy del p >/dev/null
show=$(tb_do px proxy show)
assert_json '.data.proxies | length' 0 "$show"
assert_json '.data.draining_flows' 1 "$show"
rc=0
refused=$(tb_exec cli "$TCPX" client -d "$PX_PX4:8000" -n 1000 -m 1000 2>&1) || rc=$?
echo "new client after del: $refused (exit $rc)"
assert_ge "new client after del: exit status" 1 "$rc"
assert_match "new client after del" "refused" "$refused"
# The name is free again while the old flow drains.
tb_do px proxy add p listen "$PX_PX4:8001" backend "$PX_SRV4:9000" mode "$MODE" >/dev/null
wait "$cpid" || true
wait "$spid" || true
echo "client: $(cat "$TB_RUN/cli2.out")"
echo "server: $(cat "$TB_RUN/srv2.out")"
assert_json .errors 0 "$(cat "$TB_RUN/cli2.out")"
assert_json .ok true "$(cat "$TB_RUN/srv2.out")"
assert_json .bytes 40000000 "$(cat "$TB_RUN/srv2.out")"
for ((i = 0; i < 30; i++)); do
	[[ $(tb_ctlj px proxy show | jq .data.draining_flows) == 0 ]] && break
	sleep 0.1
done
assert_json '.data.draining_flows' 0 "$(tb_do px proxy show)"
assert_eq "sockets left in px" 0 "$(tb_exec px ss -tanH state established | wc -l)"

# ---- shutdown with a flow running: both ends are reset, ferryd exits 0 ----
px_server srv "$PX_SRV4:9000" "$TB_RUN/srv3.out" -n 1 --rate 10000000
spid=$PX_PID
px_bg cli "$TB_RUN/cli3.out" "$TCPX" client -d "$PX_PX4:8001" -n 40000000 -m 65536
cpid=$PX_PID
sleep 0.5
assert_json '.data.proxies[0].active' 1 "$(tb_do px proxy show p)"
tb_do px shutdown >/dev/null
tb_wait_exit px 20
assert_eq "ferryd exit status" 0 "$TB_EXIT_RC"
wait "$cpid" || true
wait "$spid" || true
echo "client: $(cat "$TB_RUN/cli3.out")"
echo "server: $(cat "$TB_RUN/srv3.out")"
assert_match "client after shutdown" 'ECONNRESET|EPIPE' "$(jq -r .last_errno "$TB_RUN/cli3.out")"
assert_json .ok false "$(cat "$TB_RUN/srv3.out")"
