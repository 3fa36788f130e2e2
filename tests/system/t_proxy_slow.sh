#!/usr/bin/env bash
# TCP proxy (PX_MODE: auto by default, t_proxy_slow_splice.sh: splice),
# slow reader behind a fast writer: the server reads 10 MB/s
# with a 64 KiB receive buffer (the backend socket's send buffer fills, so
# the kernel's redirect path meets EAGAIN over and over: the seed's data
# loss case), the client writes 40 MB as fast as it can, the proxy's limit
# is 1 MiB per flow and direction. Checked:
#   - every byte arrives, in order (the server verifies the stream);
#   - memory stays bounded, measured twice every 0.2 s: the proxy's own
#     queued bytes (never above the limit) and, from the kernel's TCP
#     counters, every byte px received from the client and the server has
#     not acknowledged (queued + held in px's client socket + in flight);
#   - the rate never falls to zero: the server's acknowledged bytes grow in
#     every 1 s window;
#   - the bound was exercised (holds > 0);
#   - relay modes: the stream went through the pipe (flows_piped 1, most
#     bytes piped), whose bytes count in queued, so the bounds above hold
#     for it.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/proxy_tb.sh
. "$(dirname "$0")/../lib/proxy_tb.sh"

LIMIT=1048576
BYTES=40000000
RATE=10000000

MODE=${PX_MODE:-auto}
tb_init
px_setup
tb_do px proxy add slow listen "$PX_PX4:8000" backend "$PX_SRV4:9000" limit $LIMIT mode "$MODE" >/dev/null

px_server srv "$PX_SRV4:9000" "$TB_RUN/srv.out" -n 1 --rate $RATE --rcvbuf 65536
spid=$PX_PID
px_bg cli "$TB_RUN/cli.out" "$TCPX" client -d "$PX_PX4:8000" -n $BYTES -m 65536
cpid=$PX_PID

# Bytes of the backend socket the server acknowledged (ss, in px).
acked() {
	tb_exec px ss -tinH state established "( dport = :9000 )" 2>/dev/null |
		grep -o 'bytes_acked:[0-9]*' | head -1 | cut -d: -f2
}

max_q=0 max_k=0 samples=0 last_acked=0 stalls=0 t=0
while tb__running "$spid"; do
	q=$(px_flow_field slow client_to_backend.queued)
	k=$(px_kernel_held)
	((q > max_q)) && max_q=$q
	((k > max_k)) && max_k=$k
	samples=$((samples + 1))
	sleep 0.2
	t=$((t + 1))
	if ((t % 5 == 0)); then
		a=$(acked || true)
		[[ -z $a ]] && break # the flow is over
		if ((a <= last_acked)); then
			stalls=$((stalls + 1))
			tb_log "no progress in the last second (acked $a)"
		fi
		last_acked=$a
	fi
	((samples < 300)) || break
done
wait "$spid" || true
wait "$cpid" || true
echo "client: $(cat "$TB_RUN/cli.out")"
echo "server: $(cat "$TB_RUN/srv.out")"
show=$(tb_do px proxy show slow)
echo "proxy: $(jq -c '.data.proxies[0] | del(.flows)' <<<"$show")"
echo "samples $samples: max queued (proxy) $max_q, max held in px (kernel) $max_k"

assert_json .ok true "$(cat "$TB_RUN/srv.out")"
assert_json .bytes $BYTES "$(cat "$TB_RUN/srv.out")"
assert_json .errors 0 "$(cat "$TB_RUN/cli.out")"
# Each sample is two control calls and an ss: under ASan on a loaded host
# one takes up to ~0.5 s, so a 4 s transfer gives fewer than 10 (9 seen).
# Five samples spread over the run are enough for the bounds below.
assert_ge "samples taken" 5 "$samples"
assert_eq "1 s windows without progress" 0 "$stalls"
assert_le "proxy's max queued, over the run" $LIMIT "$(jq -r '.data.proxies[0].max_queued' <<<"$show")"
assert_le "proxy's queued, sampled" $LIMIT "$max_q"
# On top of the limit: the held bytes charged to the client socket (its
# receive buffer is limit/4) and what is in flight on the two links.
assert_le "held in px by the kernel's counters" $((2 * LIMIT)) "$max_k"
assert_ge "holds (the bound acted)" 1 "$(jq -r '.data.proxies[0].holds' <<<"$show")"
assert_json '.data.proxies[0].completed' 1 "$show"
if [[ $MODE != splice ]]; then
	assert_json '.data.proxies[0].flows_piped' 1 "$show"
	assert_ge "bytes piped" $((BYTES / 2)) "$(jq -r '.data.proxies[0].bytes_piped' <<<"$show")"
fi
