#!/usr/bin/env bash
# TCP proxy, bad input: each a clear error reply that changes nothing,
# and the daemon keeps serving.
#   - malformed arguments: EINVAL/ERANGE; unknown names: ENOENT; a taken
#     name: EEXIST;
#   - a listen address in use (by another proxy, or by any socket): EADDRINUSE,
#     no proxy left half-added;
#   - a backend that refuses connections. Defined behaviour: `proxy add`
#     does not probe the backend (a probe would be a connection the backend
#     sees, and a backend may come up later); each client whose backend
#     connection fails is reset, so it sees an error rather than an empty
#     stream, and counted in backend_failed; nothing stays attached.
#     Once the backend is up, the same proxy works.
#   - save + restart brings the proxies back from the config file.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/proxy_tb.sh
. "$(dirname "$0")/../lib/proxy_tb.sh"

tb_init
px_setup

err() {
	tb_err px "$@"
}
L="$PX_PX4:8000"
B="$PX_SRV4:9000"
err EINVAL proxy add
err EINVAL proxy add a listen "$L"
err EINVAL proxy add a backend "$B"
err EINVAL proxy add a listen 10.78.1.2 backend "$B"
err EINVAL proxy add a listen 10.78.1.300:80 backend "$B"
err EINVAL proxy add a listen fd78:1::2:80 backend "$B"
err ERANGE proxy add a listen 10.78.1.2:0 backend "$B"
err ERANGE proxy add a listen 10.78.1.2:65536 backend "$B"
err ERANGE proxy add a listen "$L" backend "$B" limit 100
err EINVAL proxy add a listen "$L" backend "$B" limit lots
err ERANGE proxy add a listen "$L" backend "$B" coalesce 2000000
err EINVAL proxy add a listen "$L" backend "$B" coalesce -1
err ERANGE proxy add a listen "$L" backend "$B" limit 65536 coalesce 16384
err EINVAL proxy add a listen "$L" backend "$B" colour blue
err EINVAL proxy add a listen "$L" backend "$B" mode fast
err EINVAL proxy add a listen "$L" backend "$B" pipe on
err EINVAL proxy add 'bad/name' listen "$L" backend "$B"
err EADDRNOTAVAIL proxy add a listen 192.0.2.1:8000 backend "$B"
err ENOENT proxy del nosuch
err ENOENT proxy show nosuch
err EINVAL proxy del
assert_json '.data.proxies | length' 0 "$(tb_do px proxy show)"

# ---- address in use ----
tb_do px proxy add a listen "$L" backend "$B" >/dev/null
err EEXIST proxy add a listen "$PX_PX4:8001" backend "$B"
err EADDRINUSE proxy add b listen "$L" backend "$B"
px_bg px "$TB_RUN/holder.out" "$PYTHON" -c "
import socket, time
s = socket.socket(); s.bind(('$PX_PX4', 8002)); s.listen(1); time.sleep(60)"
holder=$PX_PID
tb_wait_listen px 8002
err EADDRINUSE proxy add b listen "$PX_PX4:8002" backend "$B"
kill "$holder"
assert_json '[.data.proxies[].name] | join(",")' a "$(tb_do px proxy show)"

# ---- a backend that refuses ----
for ((n = 1; n <= 3; n++)); do
	rc=0
	out=$(tb_exec cli "$TCPX" client -d "$L" -n 100000 -m 1000 2>&1) || rc=$?
	echo "client $n with the backend down: $out (exit $rc)"
	assert_ge "client $n: exit status" 1 "$rc"
	assert_match "client $n: reset" 'ECONNRESET|EPIPE|reset' "$out"
done
for ((i = 0; i < 30; i++)); do
	[[ $(tb_ctlj px proxy show a | jq .data.proxies[0].backend_failed) == 3 ]] && break
	sleep 0.1
done
show=$(tb_do px proxy show a)
assert_json '.data.proxies[0].backend_failed' 3 "$show"
assert_json '.data.proxies[0].accepted' 3 "$show"
assert_json '.data.proxies[0].active' 0 "$show"
assert_eq "sockets left in px" 0 "$(tb_exec px ss -tanH state established | wc -l)"
assert_ok tb_ctl px version

# The backend comes up: the same proxy works.
px_server srv "$B" "$TB_RUN/srv.out" -n 1
spid=$PX_PID
out=$(tb_exec cli "$TCPX" client -d "$L" -n 1000000 -m 4096)
wait "$spid" || true
assert_json .errors 0 "$out"
assert_json .bytes 1000000 "$(cat "$TB_RUN/srv.out")"
assert_json .ok true "$(cat "$TB_RUN/srv.out")"

# ---- save + restart ----
tb_do px proxy add v6 listen "[$PX_PX6]:8000" backend "[$PX_SRV6]:9000" limit 65536 coalesce 0 mode splice >/dev/null
# A hot restart hands over ports only: refused, nothing changes.
err EBUSY handover begin
assert_json '.data.proxies | length' 2 "$(tb_do px proxy show)" 
before=$(tb_do px proxy show | jq -c '[.data.proxies[] | {name, listen, backend, limit, coalesce, mode}]')
tb_do px save "$TB_RUN/saved.conf" >/dev/null
cat "$TB_RUN/saved.conf"
tb_do px shutdown >/dev/null
tb_wait_exit px 20
assert_eq "ferryd exit status" 0 "$TB_EXIT_RC"
tb_ferryd px px2 -c "$TB_RUN/saved.conf"
after=$(tb_do px2 proxy show | jq -c '[.data.proxies[] | {name, listen, backend, limit, coalesce, mode}]')
assert_eq "proxies after save + restart" "$before" "$after"
