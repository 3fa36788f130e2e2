#!/usr/bin/env bash
# Least privilege: once set up, ferryd's control thread keeps only the
# run-time capabilities (base/privs.h), its workers none, and it still
# does everything (ports, xconnect, steering, generator: the other system
# tests run this way too). A command that would need a dropped capability
# fails with an error that names it: `save` into a directory root may write
# to only with CAP_DAC_OVERRIDE.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3_chain
pid=${TB_PID_OF[dut]}

# CAP_NET_ADMIN 12, NET_RAW 13, IPC_LOCK 14, SYS_NICE 23, PERFMON 38,
# BPF 39; not SYS_ADMIN 21: a killed ferryd's programs are recognised by
# their pins.
want=$(printf '%016x' $(((1 << 12) | (1 << 13) | (1 << 14) | (1 << 23) | (1 << 38) | (1 << 39))))
caps() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
assert_eq "control thread CapEff" "$want" "$(caps "$pid" CapEff)"
assert_eq "control thread CapPrm" "$want" "$(caps "$pid" CapPrm)"
assert_eq "control thread CapInh" 0000000000000000 "$(caps "$pid" CapInh)"
worker=
for t in /proc/"$pid"/task/*; do
	[[ $(cat "$t/comm") == ferry-w0 ]] && worker=${t##*/}
done
[[ -n $worker ]] || tb_die "no ferry-w0 thread in ferryd $pid"
assert_eq "worker thread CapEff" 0000000000000000 "$(caps "$pid/task/$worker" CapEff)"
assert_eq "worker thread CapPrm" 0000000000000000 "$(caps "$pid/task/$worker" CapPrm)"
assert_match "log" 'capabilities kept: NET_ADMIN NET_RAW BPF PERFMON IPC_LOCK SYS_NICE$' \
	"$(grep 'capabilities kept' "$TB_RUN/dut.log")"

# Everything still works with those: forwarding, port del/add, steering.
tb_do gen gen start g0 count 2000 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet 20 dut sink
assert_eq "sink rx_packets" 2000 "$(tb_stat sink s0 rx_packets)"
tb_do dut port del p0 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
tb_do dut steer add t80 port p0 match proto tcp dport 80 to cpus 0 >/dev/null
tb_do dut steer del t80 >/dev/null

# A directory root may write to only with CAP_DAC_OVERRIDE.
mkdir -m 0755 "$TB_RUN/theirs"
chown nobody "$TB_RUN/theirs"
out=$(tb_ctlj dut save "$TB_RUN/theirs/ferry.conf" || true)
echo "save into a directory of nobody's: $out"
assert_json .error.code EACCES "$out"
assert_match "error message" 'CAP_DAC_OVERRIDE' "$(jq -r .error.message <<<"$out")"
assert_ok tb_ctlj dut save "$TB_RUN/ferry.conf"
assert_ok tb_ctlj dut version
