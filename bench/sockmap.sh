#!/usr/bin/env bash
# bench/sockmap.sh - local TCP throughput with and without sockmap
# acceleration, every row measured in the same run.
#
#   bench/sockmap.sh [--runs N] [--sizes "64 1024 16384 65536"] [--scale X]
#                    [--rows "plain nodelay per-message ferry"] [--places "diff same"]
#
# Over loopback in a namespace of its own, tcpx (build/tests/tcpx) sends a
# fixed number of bytes per message size in one flow; MB/s is the client's
# (first send to the reader's close, so everything was read and verified).
# Rows, each with writer and reader on different CPUs (0 and 1) and on the
# same CPU (0):
#   plain        plain TCP
#   nodelay      plain TCP, TCP_NODELAY on the writer
#   per-message  sockmap redirect, verdict on every send()
#                (`sockmap attach ... verdict per-message`)
#   ferry        ferry's lasting verdict (`verdict auto`: BPF_F_PERMANENT
#                where the kernel has it, else apply_bytes 0xffffffff)
# Median of N runs per cell; ratios are against rows of the same run.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh

RUNS=3
SIZES="64 1024 16384 65536"
SCALE=1
ROWS=(plain nodelay per-message ferry)
PLACES="diff same"
while (($#)); do
	case $1 in
	--rows) read -r -a ROWS <<<"$2" && shift ;;
	--places) PLACES=$2 && shift ;;
	--runs) RUNS=$2 && shift ;;
	--sizes) SIZES=$2 && shift ;;
	--scale) SCALE=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--sizes LIST] [--scale X] [--rows LIST] [--places LIST]" >&2 && exit 2 ;;
	esac
	shift
done

[[ -x $TCPX ]] || tb_die "build first (./run build): no $TCPX"
say() { printf '==> %s\n' "$*" >&2; }

# Bytes per cell: about a second at the slowest row's rate, so small
# messages (tens of MB/s) don't take minutes and large ones still run long
# enough to leave slow start behind.
bytes_for() {
	local b
	case $1 in
	64) b=$((24 * 1024 * 1024)) ;;
	1024) b=$((256 * 1024 * 1024)) ;;
	16384) b=$((2 * 1024 * 1024 * 1024)) ;;
	*) b=$((3 * 1024 * 1024 * 1024)) ;;
	esac
	echo "$b * $SCALE / 1" | bc
}

tb_init
tb_ns h
tb_cgroup bench
CG=$TB_CGROUP
tb_ferryd h dut >/dev/null

PORT=9000
# one_run ROW PLACEMENT SIZE: sets MBPS to the client's MB/s. Not in $(...):
# PORT must advance and only this shell can wait for its children.
one_run() {
	local row=$1 place=$2 size=$3 bytes sp out scpu=1 extra=() rc=0
	bytes=$(bytes_for "$size")
	[[ $place == same ]] && scpu=0
	[[ $row == nodelay ]] && extra=(--nodelay)
	PORT=$((PORT + 1))
	tb_tcpx_server h "127.0.0.1:$PORT" "$TB_RUN/srv.json" --cgroup "$CG" -c "$scpu" ||
		tb_die "$row/$place/$size: tcpx server did not start"
	sp=$TB_TCPX_PID
	out=$(tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$PORT" -c 0 -n "$bytes" -m "$size" \
		"${extra[@]}") || rc=$?
	wait "$sp" || rc=$?
	((rc == 0)) || tb_die "$row/$place/$size: tcpx failed: $out $(cat "$TB_RUN/srv.json")"
	MBPS=$(jq -r .MBps <<<"$out")
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A MED
for row in "${ROWS[@]}"; do
	case $row in
	per-message) tb_do dut sockmap attach cgroup "$CG" ports 9000-9999 verdict per-message >/dev/null ;;
	ferry) tb_do dut sockmap attach cgroup "$CG" ports 9000-9999 >/dev/null ;;
	esac
	if [[ $row == ferry ]]; then
		MECH=$(tb_do dut sockmap show | jq -r .data.mechanism)
	fi
	for place in $PLACES; do
		for size in $SIZES; do
			vals=()
			for ((r = 0; r < RUNS; r++)); do
				one_run "$row" "$place" "$size"
				vals+=("$MBPS")
			done
			MED[$row.$place.$size]=$(printf '%s\n' "${vals[@]}" | median)
			say "$row $place $size: ${vals[*]} MB/s (median ${MED[$row.$place.$size]})"
		done
	done
	case $row in
	per-message | ferry) tb_do dut sockmap detach >/dev/null ;;
	esac
done

ratio() { echo "scale=2; $1 / $2" | bc -l; }

echo
echo "sockmap benchmark: $(uname -r), loopback in a namespace, one flow, tcpx (pattern-verified),"
echo "$(nproc) CPUs, median of $RUNS runs; ferry's mechanism on this kernel: ${MECH:-?}"
echo "MB/s by message size (writer CPU 0; reader CPU 1 = diff, CPU 0 = same):"
printf '%-22s' row
for size in $SIZES; do printf '%10s' "$size"; done
echo
for place in $PLACES; do
	for row in "${ROWS[@]}"; do
		printf '%-22s' "$row ($place)"
		for size in $SIZES; do printf '%10s' "${MED[$row.$place.$size]}"; done
		echo
	done
done
echo
echo "ratios (same run):"
for place in $PLACES; do
	for pair in "ferry per-message" "ferry plain" "per-message plain"; do
		read -r a b <<<"$pair"
		[[ -n ${MED[$a.$place.${SIZES%% *}]:-} && -n ${MED[$b.$place.${SIZES%% *}]:-} ]] || continue
		printf '%-22s' "$a/$b ($place)"
		for size in $SIZES; do printf '%10s' "$(ratio "${MED[$a.$place.$size]}" "${MED[$b.$place.$size]}")"; done
		echo
	done
done
