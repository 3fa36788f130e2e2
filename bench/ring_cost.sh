#!/usr/bin/env bash
# bench/ring_cost.sh [RING_BENCH] - userspace instructions per packet of the
# worker loop (ferry_worker_poll_once and everything it calls), counted by
# callgrind on fake rings, so the figure depends on the code only.
# Prints: "<app> <burst> <instructions per packet>" per case, then the
# checksum completion (csum.h) per frame size: "csum <mode> <size> <ipp>",
# mode off (port does not complete), plain (it does, frames need nothing),
# partial (every frame completed); xconnect, burst 256. Between them,
# xconnect against mixed (every frame copied to the other UMEM) per size.
set -euo pipefail
bin=${1:-$(dirname "$0")/../build/bench/ring_bench}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
ipp() { # N ARGS...: instructions per packet of ring_bench N ARGS...
	local n=$1
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect=ferry_worker_poll_once \
		"$bin" "$@" >/dev/null 2>&1
	ir=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	echo "scale=1; $ir / $n" | bc -l
}
for app in xconnect reflect; do
	for burst in 256 64 8 1; do
		printf '%-9s burst %-3s %s\n' "$app" "$burst" "$(ipp 200000 "$burst" "$app")"
	done
done
# Mixed-mode ports (worker.h): the egress on the worker's other UMEM, each
# frame copied into it; against xconnect in one UMEM, by frame size.
if [ "${RING_COST_MIXED:-1}" = 1 ]; then
	for size in 60 1500; do
		for app in xconnect mixed; do
			printf '%-9s size %-4s %s\n' "$app" "$size" \
				"$(ipp 100000 256 "$app" off "$size")"
		done
	done
fi
[ "${RING_COST_CSUM:-1}" = 1 ] || exit 0
for size in 60 1500; do
	for mode in off plain partial; do
		printf 'csum %-7s size %-4s %s\n' "$mode" "$size" \
			"$(ipp 100000 256 xconnect "$mode" "$size")"
	done
done
