#!/usr/bin/env bash
# bench/proxy.sh - TCP proxy throughput: ferry's sk_skb splice proxy against
# two userspace proxies (bench/proxy_base.c: splice(2) and read/write), all
# measured in the same run on the same testbed, so rows compare with each
# other only.
#
#   bench/proxy.sh [--runs N] [--sizes 64,1024,16384,65536]
#                  [--client iperf3|tcpx] [--secs S] [--mb MB]
#
# Topology (tests/lib/proxy_tb.sh): cli --veth-- px --veth-- srv. One flow
# from a client in cli, writes of SIZE bytes, through the proxy in px to a
# server in srv. MB/s is the server's. Clients:
#   iperf3  (default) `iperf3 -c ... -l SIZE -t S` against `iperf3 -s`:
#           MB/s is the server's received bytes over its test time. iperf3
#           also opens its control connection through the proxy.
#   tcpx    tests/lib/tcpx.c sends MB megabytes (fewer for small messages);
#           the server verifies every byte, and a run that is not
#           byte-exact fails the benchmark. MB/s: bytes over the time from
#           accept to EOF.
# Rows:
#   ferry          ferryd proxy, default limit (4 MiB per flow/direction)
#   ferry_nolimit  ferryd proxy, limit 1 GiB: what the memory bound costs
#   splice         userspace splice(2) proxy, a thread per direction
#   rw             userspace read/write proxy, a thread per direction
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=../tests/lib/proxy_tb.sh
. tests/lib/proxy_tb.sh

RUNS=3
SIZES=64,1024,16384,65536
CLIENT=iperf3
SECS=3
MB=400
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--sizes) SIZES=$2 && shift ;;
	--client) CLIENT=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--mb) MB=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--sizes LIST] [--client iperf3|tcpx] [--secs S] [--mb MB]" >&2 && exit 2 ;;
	esac
	shift
done
BASE=$REPO/build/bench/proxy_base
[[ -x $BASE && -x $TCPX ]] || tb_die "build first (./run build)"
case $CLIENT in
iperf3) command -v iperf3 >/dev/null || tb_die "no iperf3 (./run build installs it, or --client tcpx)" ;;
tcpx) ;;
*) tb_die "--client: iperf3 or tcpx, not '$CLIENT'" ;;
esac

say() { printf '==> %s\n' "$*" >&2; }

tb_init
px_setup >/dev/null
L4="$PX_PX4:8000"
B4="$PX_SRV4:9000"

# Bytes for a message size: small messages cost a syscall each.
bytes_for() {
	local sz=$1 b=$((MB * 1000000))
	((sz < 1024)) && b=$((b / 20))
	((sz < 16384 && sz >= 1024)) && b=$((b / 2))
	echo "$b"
}

# iperf3_run SIZE: MB/s at the iperf3 server of S seconds of SIZE-byte
# writes through whatever listens on L4.
iperf3_run() {
	local sz=$1 spid out
	px_bg srv "$TB_RUN/srv.json" iperf3 -s -1 -B "$PX_SRV4" -p 9000 --json
	spid=$PX_PID
	tb_wait_listen srv 9000 || say "iperf3 server: not listening after 5 s"
	tb_exec cli iperf3 -c "$PX_PX4" -p 8000 -l "$sz" -t "$SECS" --json >"$TB_RUN/cli.json" || true
	wait "$spid" || true
	out=$(jq -r '.end.sum_received.bits_per_second // empty' "$TB_RUN/srv.json" 2>/dev/null)
	if [[ -z $out ]] || ! jq -e '.end.sum_received.bytes > 0' "$TB_RUN/srv.json" >/dev/null 2>&1; then
		say "iperf3 at $sz B failed: server $(jq -c '.error // .' "$TB_RUN/srv.json" 2>/dev/null | head -c 300), client $(jq -c '.error // empty' "$TB_RUN/cli.json" 2>/dev/null)"
		return 1
	fi
	echo "scale=1; $out / 8000000" | bc -l
}

# one_run SIZE: MB/s of one transfer through whatever listens on L4.
one_run() {
	[[ $CLIENT == iperf3 ]] && {
		iperf3_run "$1"
		return
	}
	local sz=$1 bytes out spid
	bytes=$(bytes_for "$sz")
	px_server srv "$B4" "$TB_RUN/srv.out" -n 1 || return 1
	spid=$PX_PID
	tb_exec cli "$TCPX" client -d "$L4" -n "$bytes" -m "$sz" >"$TB_RUN/cli.out" || true
	wait "$spid" || true
	out=$(cat "$TB_RUN/srv.out")
	if [[ $(jq -r .ok <<<"$out") != true || $(jq -r .bytes <<<"$out") != "$bytes" ]]; then
		say "not byte-exact at $sz B: server $out, client $(cat "$TB_RUN/cli.out")"
		return 1
	fi
	jq -r .MBps <<<"$out"
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A MED
# row_sizes ROW: RUNS runs at every size; the proxy for ROW is up.
row_sizes() {
	local row=$1 sz r vals
	for sz in ${SIZES//,/ }; do
		vals=
		for ((r = 0; r < RUNS; r++)); do
			vals+="$(one_run "$sz") " || tb_die "row $row failed"
		done
		MED[$row,$sz]=$(tr ' ' '\n' <<<"$vals" | grep . | median)
		say "$row ${sz} B: $vals-> median ${MED[$row,$sz]} MB/s"
	done
}

for row in ferry ferry_nolimit splice rw; do
	case $row in
	ferry) tb_do px proxy add b listen "$L4" backend "$B4" >/dev/null ;;
	ferry_nolimit) tb_do px proxy add b listen "$L4" backend "$B4" limit 1073741824 >/dev/null ;;
	*)
		px_bg px "$TB_RUN/base.out" "$BASE" "$row" "$L4" "$B4"
		base_pid=$PX_PID
		sleep 0.3
		;;
	esac
	row_sizes "$row"
	case $row in
	ferry*)
		tb_ctlj px proxy show b | jq -c '.data.proxies[0] | {holds, bytes_copied, bytes_client_to_backend, max_queued, coalesced}' |
			sed "s/^/  $row counters: /" >&2
		tb_do px proxy del b >/dev/null
		;;
	*)
		kill "$base_pid"
		wait "$base_pid" 2>/dev/null || true
		;;
	esac
done

echo
if [[ $CLIENT == iperf3 ]]; then
	echo "TCP proxy throughput: $(uname -r), veth, $(nproc) CPUs, one flow, iperf3 client (-l SIZE -t $SECS)"
	echo "-> proxy -> iperf3 server, MB/s at the server, median of $RUNS runs; ratios against splice(2)"
else
	echo "TCP proxy throughput: $(uname -r), veth, $(nproc) CPUs, one flow, tcpx client -> proxy -> tcpx"
	echo "server (verifies every byte), MB/s at the server, median of $RUNS runs; ratios against splice(2)"
fi
printf '%-14s' "row"
for sz in ${SIZES//,/ }; do printf ' %10s %6s' "${sz}B" "/spl"; done
echo
for row in ferry ferry_nolimit splice rw; do
	printf '%-14s' "$row"
	for sz in ${SIZES//,/ }; do
		printf ' %10s %6s' "${MED[$row,$sz]}" \
			"$(echo "scale=2; ${MED[$row,$sz]} / ${MED[splice,$sz]}" | bc -l)"
	done
	echo
done
