#!/usr/bin/env bash
# Hot restart where bpffs is not mounted in ferryd's mount namespace (a
# container, `ip netns exec` without a mount): the first ferryd attaches
# without pinning (and says so), and `ferryd --takeover` recognises the old
# daemon's programs by the ids it names in `handover begin`, not by pins.
#
# std3 testbed: gen --veth-- dut (xconnect p0 -> p1, path xsk) --veth--
# sink (drop); only dut's ferryds run without bpffs. Checked: the old
# ferryd logs that nothing is pinned; it names both programs in its
# handover; the takeover under traffic succeeds (old exits 0, the new one
# took over its programs, not a stale one's); afterwards every frame
# crosses again; without the names (a ferryd that took over nothing) the
# new daemon would refuse with "cannot tell whether a killed ferryd left it".
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3
tb_gen_up
TB_FERRYD_EXEC=$TB_NO_BPFFS_EXEC tb_dut_xconnect
tb_sink_drop
tb_do dut xconnect add p0 p1 path xsk >/dev/null
assert_match "no bpffs where the dut runs" "bpffs is not mounted" "$(cat "$TB_RUN/dut.log")"

# The handover names the programs.
begin=$(tb_ctlj dut handover begin)
prog0=$(tb_xdp_prog_id dut d0)
assert_eq "handover begin names p0's program" "$prog0" \
	"$(jq -r --arg i "$D0" '.data.progs[] | select(.ifname == $i) | .prog_id' <<<"$begin")"
tb_do dut handover abort >/dev/null 2>&1 || true

# Under traffic: the takeover goes through without pins.
old_pid=${TB_PID_OF[dut]}
tb_do gen gen start g0 count 100000 rate 50000 size 64 flows 4 >/dev/null
sleep 0.5
TB_FERRYD_EXEC=$TB_NO_BPFFS_EXEC tb_takeover dut2
tb_takeover_wait dut2
assert_eq "old ferryd exit code" 0 "$TB_EXIT_RC"
assert_match "the new ferryd took over the old one's programs" \
	"took over from ferryd pid $old_pid" "$(cat "$TB_RUN/dut2.log")"
assert_eq "not taken for a stale program" 0 "$(grep -c "replaced stale" "$TB_RUN/dut2.log" || true)"
prog0_after=$(tb_xdp_prog_id dut d0)
[[ $prog0_after != "$prog0" && $prog0_after != 0 ]] ||
	tb_die "d0's program is still $prog0_after (was $prog0): not swapped"
tb_wait_gen_done gen g0 30
tb_wait_quiet dut sink
tb_log "takeover without bpffs: sink $(tb_stat sink s0 rx_packets) of 100000 across it"

# After it, every frame crosses.
tb_do sink stats reset >/dev/null
tb_do gen gen start g0 count 2000 rate 20000 size 64 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut sink
assert_eq "after the takeover: sink rx" 2000 "$(tb_stat sink s0 rx_packets)"
