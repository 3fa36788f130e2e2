#!/usr/bin/env bash
# bench/route_cost.sh [ROUTE_BENCH] - instructions per frame of route_frame()
# (parse, FIB lookup, next hop, TTL/hop limit with the checksum update, MAC
# rewrite), counted by callgrind, so the figure depends on the code only.
# Prints: "IPv4|IPv6 <instructions per frame>".
set -euo pipefail
bin=${1:-$(dirname "$0")/../build/bench/route_bench}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=200000
for fam in 4 6; do
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect=route_frame "$bin" "$n" "$fam" >/dev/null 2>&1
	ir=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	printf 'IPv%s %s\n' "$fam" "$(echo "scale=1; $ir / $n" | bc -l)"
done
