#!/usr/bin/env bash
# TCP proxy, byte-exact: a client in cli sends through ferryd's proxy in
# px to a server in srv, at 1 B, 64 B, 1 KiB, 64 KiB and 1 MiB messages,
# over IPv4 and IPv6, and a server sends 20 MB back. Checked for every
# transfer: the server verifies every byte's value and position and reports
# the full count, the client saw no error, the proxy counted the bytes and
# the flow completed (FIN passed on in both directions, sockets closed), no
# flow is left behind. Also: the proxy's lines in show config.
#
# PX_MODE (default auto; t_proxy_exact_splice.sh: splice) is the proxies'
# mode. auto and relay: every flow is relayed (flows_relay, bytes_relayed);
# a direction that streams moves through a pipe: each 1 MiB-write flow
# of the IPv4 proxy must have (flows_piped, bytes_piped), the 1 B one and a
# request/response flow (200 echoed 100-byte requests) must not; the IPv6
# proxy has `pipe off`: none of its flows may.
# splice: the IPv4 proxy coalesces small segments (the default), the IPv6
# one does not (coalesce 0): the IPv4 one must have raised a socket's mark
# at 1 B and 64 B, the IPv6 one never.
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

if [[ $MODE == auto ]]; then
	# The default: no mode word given.
	tb_do px proxy add v4 listen "$PX_PX4:8000" backend "$PX_SRV4:9000" >/dev/null
else
	tb_do px proxy add v4 listen "$PX_PX4:8000" backend "$PX_SRV4:9000" mode "$MODE" >/dev/null
fi
V6PIPE=
[[ $MODE != splice ]] && V6PIPE=" pipe off"
# shellcheck disable=SC2086 # V6PIPE is words
tb_do px proxy add v6 listen "[$PX_PX6]:8000" backend "[$PX_SRV6]:9000" limit 1048576 coalesce 0 mode "$MODE" $V6PIPE >/dev/null
conf=$(tb_ctlj px show config | jq -r .data)
assert_match "config: v4" "proxy add v4 listen $PX_PX4:8000 backend $PX_SRV4:9000 limit 4194304 coalesce 2048 mode $MODE\$" "$(grep 'proxy add v4' <<<"$conf")"
assert_match "config: v6" "proxy add v6 listen \\[$PX_PX6\\]:8000 backend \\[$PX_SRV6\\]:9000 limit 1048576 coalesce 0 mode $MODE$V6PIPE\$" "$(grep 'proxy add v6' <<<"$conf")"
assert_json '[.data.proxies[].mode] | join(",")' "$MODE,$MODE" "$(tb_do px proxy show)"
v6pipe=auto
[[ -n $V6PIPE ]] && v6pipe=off
assert_json '[.data.proxies[].pipe] | join(",")' "auto,$v6pipe" "$(tb_do px proxy show)"

# size:bytes - small messages cost a syscall each, so fewer bytes.
cases="1:100000 64:4000000 1024:20000000 65536:60000000 1048576:100000000"
n=0
for fam in 4 6; do
	if [[ $fam == 4 ]]; then
		name=v4 srv="$PX_SRV4:9000" dst="$PX_PX4:8000"
	else
		name=v6 srv="[$PX_SRV6]:9000" dst="[$PX_PX6]:8000"
	fi
	for c in $cases; do
		msg=${c%%:*} bytes=${c#*:}
		pre=$(tb_ctlj px proxy show $name)
		before=$(jq -r '.data.proxies[0].bytes_client_to_backend' <<<"$pre")
		px_server srv "$srv" "$TB_RUN/srv.out" -n 1
		spid=$PX_PID
		out=$(tb_exec cli "$TCPX" client -d "$dst" -n "$bytes" -m "$msg")
		wait "$spid" || true
		got=$(cat "$TB_RUN/srv.out")
		echo "IPv$fam $msg B: client $out"
		echo "IPv$fam $msg B: server $got"
		assert_json .errors 0 "$out"
		assert_json .ok true "$got"
		assert_json .bytes "$bytes" "$got"
		after=$(tb_ctlj px proxy show $name | jq -r '.data.proxies[0].bytes_client_to_backend')
		assert_eq "IPv$fam $msg B: bytes the proxy moved" "$bytes" $((after - before))
		n=$((n + 1))
		if [[ $MODE != splice ]]; then
			post=$(tb_ctlj px proxy show $name)
			fp=$(($(jq -r '.data.proxies[0].flows_piped' <<<"$post") - $(jq -r '.data.proxies[0].flows_piped' <<<"$pre")))
			bp=$(($(jq -r '.data.proxies[0].bytes_piped' <<<"$post") - $(jq -r '.data.proxies[0].bytes_piped' <<<"$pre")))
			echo "IPv$fam $msg B: flows piped $fp, bytes piped $bp"
			if ((msg == 1)); then
				assert_eq "IPv$fam 1 B: flows piped" 0 "$fp"
				assert_eq "IPv$fam 1 B: bytes piped" 0 "$bp"
			elif ((fam == 6)); then
				assert_eq "IPv6 (pipe off) $msg B: flows piped" 0 "$fp"
				assert_eq "IPv6 (pipe off) $msg B: bytes piped" 0 "$bp"
			elif ((msg == 1048576)); then
				assert_eq "IPv$fam 1 MiB: flows piped" 1 "$fp"
				# Most of the stream: all but the reads before the
				# first full buffer and after a short splice.
				assert_ge "IPv$fam 1 MiB: bytes piped" $((bytes / 2)) "$bp"
			fi
		fi
		if [[ $msg == 64 && $MODE == splice ]]; then
			coal=$(tb_ctlj px proxy show $name | jq -r '.data.proxies[0].coalesced')
			echo "IPv$fam: marks raised so far: $coal"
			if [[ $fam == 4 ]]; then
				assert_ge "IPv4 (coalesce 2048): marks raised by 1 B and 64 B sends" 1 "$coal"
			else
				assert_eq "IPv6 (coalesce 0): marks raised" 0 "$coal"
			fi
		fi
	done
done

# ---- backend -> client ----
PEER="$TB_LIB_DIR/proxy_peer.py"
want=$("$PYTHON" "$PEER" digest 20000000)
for fam in 4 6; do
	if [[ $fam == 4 ]]; then host=$PX_SRV4 dst=$PX_PX4; else host=$PX_SRV6 dst=$PX_PX6; fi
	rm -f "$TB_RUN/peer.ready"
	px_bg srv "$TB_RUN/peer.out" "$PYTHON" "$PEER" serve "$host" 9000 20000000 "$TB_RUN/peer.ready"
	ppid=$PX_PID
	for ((i = 0; i < 50; i++)); do
		[[ -e $TB_RUN/peer.ready ]] && break
		sleep 0.1
	done
	got=$(tb_exec cli "$PYTHON" "$PEER" fetch "$dst" 8000)
	wait "$ppid" || true
	echo "IPv$fam backend -> client: $got"
	assert_eq "IPv$fam backend -> client: bytes and SHA-256" "$want" "$got"
	n=$((n + 1))
done

# ---- request/response: small, so never piped ----
pre=$(tb_ctlj px proxy show v4)
rm -f "$TB_RUN/peer.ready"
px_bg srv "$TB_RUN/echo.out" "$PYTHON" "$PEER" echo "$PX_SRV4" 9000 "$TB_RUN/peer.ready"
ppid=$PX_PID
for ((i = 0; i < 50; i++)); do
	[[ -e $TB_RUN/peer.ready ]] && break
	sleep 0.1
done
got=$(tb_exec cli "$PYTHON" "$PEER" ping "$PX_PX4" 8000 200 100)
wait "$ppid" || true
echo "IPv4 request/response: $got"
assert_json .ok true "$got"
n=$((n + 1))
post=$(tb_ctlj px proxy show v4)
assert_eq "request/response: bytes the proxy moved each way" "20000 20000" \
	"$(($(jq -r '.data.proxies[0].bytes_client_to_backend' <<<"$post") - $(jq -r '.data.proxies[0].bytes_client_to_backend' <<<"$pre"))) $(($(jq -r '.data.proxies[0].bytes_backend_to_client' <<<"$post") - $(jq -r '.data.proxies[0].bytes_backend_to_client' <<<"$pre")))"
if [[ $MODE != splice ]]; then
	assert_eq "request/response: flows piped" "$(jq -r '.data.proxies[0].flows_piped' <<<"$pre")" "$(jq -r '.data.proxies[0].flows_piped' <<<"$post")"
	assert_eq "request/response: bytes piped" "$(jq -r '.data.proxies[0].bytes_piped' <<<"$pre")" "$(jq -r '.data.proxies[0].bytes_piped' <<<"$post")"
fi

# Every flow ended on its own, cleanly: both FINs passed on, nothing reset.
for ((i = 0; i < 50; i++)); do
	active=$(tb_ctlj px proxy show | jq '[.data.proxies[].active] | add')
	((active == 0)) && break
	sleep 0.1
done
show=$(tb_do px proxy show)
assert_json '[.data.proxies[].active] | add' 0 "$show"
assert_json '[.data.proxies[].completed] | add' "$n" "$show"
assert_json '[.data.proxies[].aborted] | add' 0 "$show"
assert_json '[.data.proxies[].last_abort | values] | length' 0 "$show"
assert_json '.data.unknown_socket_skbs' 0 "$show"
if [[ $MODE == splice ]]; then
	assert_json '[.data.proxies[].flows_splice] | add' "$n" "$show"
	assert_json '[.data.proxies[].flows_relay] | add' 0 "$show"
else
	assert_json '[.data.proxies[].flows_relay] | add' "$n" "$show"
	assert_json '[.data.proxies[].flows_splice] | add' 0 "$show"
	# Every byte went through the relay: both directions, both proxies.
	assert_json '[.data.proxies[] | .bytes_relayed - .bytes_client_to_backend - .bytes_backend_to_client] | add' 0 "$show"
fi
assert_eq "sockets left in px" 0 "$(tb_exec px ss -tanH state established | wc -l)"
