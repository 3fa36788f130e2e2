#!/usr/bin/env bash
# bench/fib.sh [FIB_BENCH] [-4 N] [-6 N] [-r ROUNDS] [-s SEED] - ferry's FIB beside DPDK's rte_fib,
# rte_lpm, rte_fib6 and rte_lpm6 on one Internet-like table (1 000 000 IPv4,
# 200 000 IPv6 prefixes by default) and the same 2^20 addresses: lookups per
# second, load time and memory, as ratios to ferry's, in one run. Needs the
# DPDK build (meson -Ddpdk=enabled) and ~3 GB of RAM; no root, no hugepages
# (DPDK runs with --no-huge). rte_lpm's load of 1 M routes takes a minute.
# Also prints the machine it ran on, for docs/performance.md.
set -euo pipefail
bin=$(dirname "$0")/../build/bench/fib_bench
if [[ $# -gt 0 && $1 != -* ]]; then
	bin=$1
	shift
fi
[[ -x $bin ]] || { echo "fib.sh: $bin not built (DPDK missing?)" >&2; exit 1; }
echo "kernel $(uname -r), $(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (times are this thread's CPU time)"
exec "$bin" "$@"
