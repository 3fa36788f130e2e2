#!/usr/bin/env bash
# bench/proxy.sh - TCP proxy throughput: ferry's sk_skb splice proxy against
# two userspace proxies (bench/proxy_base.c: splice(2) and read/write), all
# measured in the same run on the same testbed, so rows compare with each
# other only.
#
#   bench/proxy.sh [--runs N] [--sizes 64,1024,16384,65536] [--mb MB]
#
# Topology (tests/lib/proxy_tb.sh): cli --veth-- px --veth-- srv. The
# client (tcpx, one flow, send() of SIZE-byte messages) sends MB megabytes
# (fewer for small messages) through the proxy in px to the server (tcpx,
# verifies every byte). MB/s is the server's: bytes over the time from
# accept to EOF. A run that is not byte-exact fails the benchmark. Rows:
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
MB=400
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--sizes) SIZES=$2 && shift ;;
	--mb) MB=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--sizes LIST] [--mb MB]" >&2 && exit 2 ;;
	esac
	shift
done
BASE=$REPO/build/bench/proxy_base
[[ -x $BASE && -x $TCPX ]] || tb_die "build first (./run build)"

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

# one_run SIZE: MB/s of one transfer through whatever listens on L4.
one_run() {
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
		tb_ctlj px proxy show b | jq -c '.data.proxies[0] | {holds, bytes_copied, bytes_client_to_backend, max_queued}' |
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
echo "TCP proxy throughput: $(uname -r), veth, $(nproc) CPUs, one flow, tcpx client -> proxy -> tcpx"
echo "server (verifies every byte), MB/s at the server, median of $RUNS runs; ratios against splice(2)"
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
