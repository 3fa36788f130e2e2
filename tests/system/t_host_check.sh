#!/usr/bin/env bash
# `host check` on this machine: from ferryd (its workers' CPUs) and from
# ferryctl alone when no daemon answers; bpffs absent and present (a network
# namespace's fresh /sys has none until testbed mounts it); hugepages absent
# (a fake count bind-mounted over sysfs, in a private mount namespace) and
# present (the real pool raised for a moment, then put back); bad input.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

HUGE=/sys/kernel/mm/hugepages/hugepages-2048kB
tb_global_lock hugepages
HUGE_BEFORE=$(cat "$HUGE/nr_hugepages")
tb_init
# The hugepage pool is host-wide: whatever happens, put it back.
tb_defer tb_write "$HUGE/nr_hugepages" "$HUGE_BEFORE"
tb_ns dut
tb_ns peer
tb_veth dut d0 peer p0 2
D0=$(tb_ifname d0)
NS=$(tb_nsname dut)

# status of the row named $1 in the JSON rows on stdin
st() { jq -r --arg c "$1" '.data[] | select(.check == $c) | .status'; }
val() { jq -r --arg c "$1" '.data[] | select(.check == $c) | .value'; }

# ---- ferryctl alone, no daemon: says so, same table
nosock=$TB_RUN/none.sock
out=$(tb_exec dut "$FERRYCTL" -s "$nosock" -j host check "$D0" cpus 0 2>"$TB_RUN/err")
assert_match "ferryctl says it checked locally" "no ferryd answers.*checking this host" "$(cat "$TB_RUN/err")"
echo "$out" | jq -c '.data[] | [.check, .status, .value]'
assert_json .ok true "$out"
for c in "kernel: AF_XDP sockets" "kernel: CPUMAP" "kernel: sockmap" "kernel: BTF"; do
	assert_eq "$c" ok "$(st "$c" <<<"$out")"
done
assert_eq "bpffs with testbed's mount" ok "$(st bpffs <<<"$out")"
assert_eq "driver row" ok "$(st driver <<<"$out")"
assert_match "driver row names the profile" "veth: profile veth" "$(val driver <<<"$out")"
assert_match "irq row on veth" "no IRQs" "$(val "irq affinity" <<<"$out")"
assert_eq "queues: 2 queues, 1 worker" ok "$(st queues <<<"$out")"
assert_eq "numa of cpu 0 (one node)" ok "$(st "numa: cpu 0" <<<"$out")"
assert_match "workers row" "CPUs 0 \(given\)" "$(val workers <<<"$out")"
assert_match "unprivileged BPF row" "^[0-2]: " "$(val kernel.unprivileged_bpf_disabled <<<"$out")"
assert_json '[.data[] | select(.status != "ok" and .fix == "-")] | length' 0 "$out"
# the view for people: a line per check, its status first, a fix under it
human=$(tb_exec dut "$FERRYCTL" -s "$nosock" host check 2>/dev/null)
assert_match "first check" "^ok +kernel: AF_XDP sockets +available" "$(head -1 <<<"$human")"
assert_match "a fix under its check" "^ +fix: " "$human"

# ---- in the host's own namespace the net.core BPF sysctls are visible
out=$("$FERRYCTL" -s "$nosock" -j host check 2>/dev/null)
assert_match "bpf_jit_harden on the host" "^[0-2]: " "$(val net.core.bpf_jit_harden <<<"$out")"
assert_match "bpf_jit_enable on the host" "^[0-9]" "$(val net.core.bpf_jit_enable <<<"$out")"

# ---- bpffs absent: plain `ip netns exec` gives a fresh /sys without it
out=$(ip netns exec "$NS" "$FERRYCTL" -s "$nosock" -j host check 2>/dev/null)
assert_eq "bpffs without a mount" warn "$(st bpffs <<<"$out")"
assert_match "bpffs fix" "mount -t bpf" "$(jq -r '.data[] | select(.check == "bpffs") | .fix' <<<"$out")"

# ---- hugepages absent: a fake pool of 0 over sysfs, private to this command
cat >"$TB_RUN/nohuge.sh" <<INNER
set -e
echo 0 >$TB_RUN/zero
mount --bind $TB_RUN/zero $HUGE/nr_hugepages
mount --bind $TB_RUN/zero $HUGE/free_hugepages
exec "$FERRYCTL" -s "$nosock" -j host check cpus 0
INNER
out=$(ip netns exec "$NS" bash "$TB_RUN/nohuge.sh" 2>/dev/null)
assert_eq "hugepages absent" warn "$(st "hugepages 2M" <<<"$out")"
assert_match "hugepages absent value" "none reserved" "$(val "hugepages 2M" <<<"$out")"
assert_eq "host pool untouched by the fake" "$HUGE_BEFORE" "$(cat "$HUGE/nr_hugepages")"

# ---- hugepages present: raise the real pool by 17 (one worker's UMEM)
echo $((HUGE_BEFORE + 17)) >"$HUGE/nr_hugepages"
free=$(cat "$HUGE/free_hugepages")
out=$(tb_exec dut "$FERRYCTL" -s "$nosock" -j host check cpus 0 2>/dev/null)
if ((free >= 17)); then
	assert_eq "hugepages present ($free free)" ok "$(st "hugepages 2M" <<<"$out")"
else
	echo "only $free hugepages could be reserved (fragmented memory)"
	assert_eq "hugepages short" warn "$(st "hugepages 2M" <<<"$out")"
fi
echo "$HUGE_BEFORE" >"$HUGE/nr_hugepages"
assert_eq "hugepage pool restored" "$HUGE_BEFORE" "$(cat "$HUGE/nr_hugepages")"

# ---- from ferryd: its workers are the default CPUs
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
out=$(tb_do dut host check "$D0")
assert_match "workers from ferryd" "CPUs 1 \(ferryd's workers\)" "$(val workers <<<"$out")"
out=$(tb_do dut host check "$D0" cpus 0-1)
assert_match "cpus given" "CPUs 0-1 \(given\)" "$(val workers <<<"$out")"
assert_eq "two workers, two queues" ok "$(st queues <<<"$out")"

# ---- bad input: clear errors, the daemon keeps serving
rc=0
out=$(tb_ctlj dut host check nosuch0) || rc=$?
assert_eq "exit for a missing interface" 1 "$rc"
assert_json .error.code ENODEV "$out"
assert_json .error.message "no interface 'nosuch0' here" "$out"
rc=0
out=$(tb_ctlj dut host check "$D0" cpus 63) || rc=$?
assert_json .error.code EINVAL "$out"
assert_json .error.message "CPU 63 is not online" "$out"
rc=0
out=$(tb_ctlj dut host check "$D0" queues 2) || rc=$?
assert_json .error.code EINVAL "$out"
assert_match "usage in the error" "usage: host check" "$(jq -r .error.message <<<"$out")"
assert_ok tb_ctl dut version >/dev/null
echo "PASS"
