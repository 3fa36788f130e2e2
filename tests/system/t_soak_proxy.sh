#!/usr/bin/env bash
# TCP proxy conservation soak (PX_MODE: auto by default,
# t_soak_proxy_splice.sh: splice), in bytes: rounds of configuration changes
# under traffic, and at the end every byte a client sent reached the server,
# verified, to the byte.
#
# Each round adds proxy p (the limit alternating between 64 KiB, which makes
# the verdict hold and ferryd copy, and 4 MiB), runs two clients through it
# (1 KiB and 64 KiB sends, 8 MB each), and:
#   - odd rounds delete the proxy while both flows run (they drain to the
#     end over the sockmap);
#   - even rounds let the flows finish, then check that the proxy's byte
#     counters equal what the clients sent, to the byte, before deleting.
# Also `stats reset` every round, and a sockmap attach/detach on a cgroup
# with no sockets, so that the two sockmap users change next to each other.
# At the end: every client exited 0 with no send error, the server verified
# every connection (bytes and content), no flow is left draining, and
# ferryd holds as many file descriptors as after the first round.
#
# Env: SOAK_ROUNDS (default 8).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/proxy_tb.sh
. "$(dirname "$0")/../lib/proxy_tb.sh"

ROUNDS=${SOAK_ROUNDS:-8}
BYTES=8000000
MODE=${PX_MODE:-auto}
tb_init
# Before ferryd starts: its mount namespace sees mounts made before it only.
tb_cgroup soak
cg=$TB_CGROUP
px_setup
pid=${TB_PID_OF[px]}
fds_before=

sent=0
for ((r = 1; r <= ROUNDS; r++)); do
	limit=$(((r % 2) ? 65536 : 4194304))
	# tcpx closes its connections when all it waits for are done: one
	# server a round.
	px_server srv "$PX_SRV4:9000" "$TB_RUN/srv.$r" -n 2
	spid=$PX_PID
	tb_do px proxy add p listen "$PX_PX4:8000" backend "$PX_SRV4:9000" \
		limit "$limit" mode "$MODE" >/dev/null
	tb_do px stats reset >/dev/null
	tb_do px sockmap attach cgroup "$cg" ports 7000 >/dev/null
	px_bg cli "$TB_RUN/c$r.a" "$TCPX" client -d "$PX_PX4:8000" -n "$BYTES" -m 1024
	a=$PX_PID
	px_bg cli "$TB_RUN/c$r.b" "$TCPX" client -d "$PX_PX4:8000" -n "$BYTES" -m 65536
	b=$PX_PID
	tb_do px sockmap detach >/dev/null
	if ((r % 2)); then
		sleep 0.3
		tb_do px proxy del p >/dev/null
		wait "$a"
		wait "$b"
	else
		wait "$a"
		wait "$b"
		# The last bytes may still be between the two stacks.
		for ((i = 0; i < 50; i++)); do
			[[ $(tb_ctlj px proxy show p | jq .data.proxies[0].active) == 0 ]] && break
			sleep 0.1
		done
		show=$(tb_do px proxy show p)
		assert_json '.data.proxies[0].bytes_client_to_backend' $((2 * BYTES)) "$show"
		assert_json '.data.proxies[0].completed' 2 "$show"
		assert_json '.data.proxies[0].aborted' 0 "$show"
		tb_do px proxy del p >/dev/null
	fi
	wait "$spid" || true
	for f in "$TB_RUN/c$r.a" "$TB_RUN/c$r.b"; do
		assert_json '.errors' 0 "$(cat "$f")"
		sent=$((sent + $(jq .bytes "$f")))
	done
	# After the first round: the proxy and sockmap programs are loaded
	# once, at first use, and stay.
	[[ -n $fds_before ]] || fds_before=$(ls /proc/"$pid"/fd | wc -l)
done
cat "$TB_RUN"/srv.* >"$TB_RUN/srv.all"
got=$(jq -s '[.[].bytes] | add' "$TB_RUN/srv.all")
bad=$(jq -s '[.[] | select(.ok != true)] | length' "$TB_RUN/srv.all")
conns=$(jq -s 'length' "$TB_RUN/srv.all")
echo "rounds $ROUNDS: clients sent $sent bytes, server verified $got in $conns connections"
assert_eq "bytes sent by the clients" $((2 * ROUNDS * BYTES)) "$sent"
assert_eq "bytes the server received, verified" "$sent" "$got"
assert_eq "connections with a bad byte" 0 "$bad"
assert_eq "connections" $((2 * ROUNDS)) "$conns"
for ((i = 0; i < 50; i++)); do
	[[ $(tb_ctlj px proxy show | jq .data.draining_flows) == 0 ]] && break
	sleep 0.1
done
assert_json '.data.draining_flows' 0 "$(tb_do px proxy show)"
assert_eq "ferryd's file descriptors" "$fds_before" "$(ls /proc/"$pid"/fd | wc -l)"
