#!/usr/bin/env bash
# Hot restart of a spread port (software RSS: one queue, a socket per
# worker, one shared pool): `ferryd --takeover` is handed every socket, the
# pool owner's UMEM and its frame tags, and serves them as they are.
#
# cli --veth (1 queue)-- dut: port p0 `spread cpus 0-1`, app reflect (the
# second worker sends frames of the first worker's UMEM). Each round: N
# frames in 32 flows at RATE pps from cli, reflected back, a takeover in the
# middle; ROUNDS rounds in a row. Checked per round: every frame came back
# exactly once (count and content), the new ferryd adopted the rings (no
# rebuild), the old one exited 0, dut's counters carried on, no frame was
# handed back twice (frames_dup), and once quiet the owner's pool holds all
# its frames again but what its fill ring has. Then the same with
# `spread cpus 1 via cpumap` (the new program's CPUMAP filled before the
# swap). Last: a successor told to rebuild (FERRY_TAKEOVER_REBUILD=1)
# refuses, saying why, and the old ferryd carries on.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

ROUNDS=${ROUNDS:-3}
RATE=${RATE:-4000}
N=${N:-12000}

tb_init
tb_ns cli
tb_ns dut
tb_veth cli c0 dut d0
C0=$(tb_ifname c0)
D0=$(tb_ifname d0)
MAC=$(tb_mac dut d0)

tb_ferryd dut dut
tb_do dut workers 0-1 >/dev/null

umem_files() {
	find "/proc/$1/fd" -lname '/memfd:ferry-umem*' | wc -l
}

# round NAME: one stream reflected across a takeover to NAME.
round() {
	local name=$1 tx0 tx old_pid new_pid stats inuse
	tx0=$(tb_ctlj dut stats port p0 | jq '[.data.ports[0].queues[].tx_packets] | add')
	tb_capture_start cli c0 "$TB_RUN/$name.json" --count "$N" --timeout $((N / RATE + 20)) \
		--linger 1 --verify-gen 64
	tb_exec cli "$PYTHON" "$PKT" send "$C0" "$N" good --dst-mac "$MAC" --flows 32 \
		--src-mac 02:00:00:00:00:01 --rate "$RATE" >/dev/null &
	local pid_send=$!
	tb_track $pid_send
	sleep "$(echo "$N / $RATE / 2" | bc -l)"
	old_pid=${TB_PID_OF[dut]}
	tb_takeover "$name"
	tb_takeover_wait "$name"
	assert_eq "$name: old ferryd exit code" 0 "$TB_EXIT_RC"
	TB_PID_OF[dut]=${TB_PID_OF[$name]}
	new_pid=${TB_PID_OF[dut]}
	wait $pid_send
	tb_capture_wait "$TB_RUN/$name.json"
	echo "$name: $(cat "$TB_RUN/$name.json")"
	assert_match "$name: rings adopted, not rebuilt" "rings adopted" "$(cat "$TB_RUN/$name.log")"
	grep -h "takeover: \(rings adopted\|forwarding again\)" "$TB_RUN/$name.log" >&2
	kill -0 "$old_pid" 2>/dev/null && tb_die "$name: the old ferryd is still there"
	assert_json '.received' "$N" "$(cat "$TB_RUN/$name.json")"
	assert_json '.bad' 0 "$(cat "$TB_RUN/$name.json")"
	tb_wait_quiet 10 dut
	stats=$(tb_ctlj dut stats port p0)
	tx=$(jq '[.data.ports[0].queues[].tx_packets] | add' <<<"$stats")
	assert_eq "$name: p0 tx_packets carried on" "$N" $((tx - tx0))
	assert_json '[.data.workers[].frames_dup] | add' 0 "$(tb_ctlj dut stats)"
	# One UMEM: the pool owner's, in the new process only.
	assert_eq "$name: UMEM files open in the new ferryd" 1 "$(umem_files "$new_pid")"
	inuse=$(tb_ctlj dut worker show | jq '[.data[] | .umem_frames - .umem_free] | max')
	assert_ge "$name: owner's frames out of the pool (its fill ring)" $((2048 - 63)) "$inuse"
	assert_le "$name: owner's frames out of the pool (its fill ring)" 2048 "$inuse"
}

# ---- direct over two workers ----
tb_do dut port add p0 dev "$D0" spread cpus 0-1 >/dev/null
tb_do dut reflect p0 >/dev/null
for ((r = 1; r <= ROUNDS; r++)); do
	round "dut$r"
done
out=$(tb_do dut port show)
assert_json '.data[0].spread.workers | join(",")' 0,1 "$out"
assert_match "spread note after the takeover" 'handed over' "$(jq -r '.data[0].spread.note' <<<"$out")"
assert_json '[.data.ports[0].queues[] | select(.tx_packets > 0)] | length' 2 \
	"$(tb_ctlj dut stats port p0)"
tb_do dut port del p0 >/dev/null

# ---- via cpumap on one CPU ----
tb_do dut port add p0 dev "$D0" spread cpus 1 via cpumap >/dev/null
tb_do dut reflect p0 >/dev/null
round dutc

# ---- a successor that would rebuild: refused, the old one carries on ----
old_pid=${TB_PID_OF[dut]}
TB_FERRYD_EXEC="export FERRY_TAKEOVER_REBUILD=1; $TB_BPFFS_EXEC"
tb_takeover dutr
unset TB_FERRYD_EXEC
for ((i = 0; i < 100; i++)); do
	kill -0 "${TB_PID_OF[dutr]}" 2>/dev/null || break
	sleep 0.1
done
rc=0
wait "${TB_PID_OF[dutr]}" || rc=$?
assert_eq "rebuilding successor: failed" yes "$( ((rc != 0)) && echo yes || echo "no (rc $rc)")"
assert_match "rebuilding successor: says why" 'only handing its sockets over restarts it' \
	"$(cat "$TB_RUN/dutr.log")"
kill -0 "$old_pid" || tb_die "the old ferryd did not carry on"
tb_capture_start cli c0 "$TB_RUN/after.json" --count 200 --timeout 15
tb_exec cli "$PYTHON" "$PKT" send "$C0" 200 good --dst-mac "$MAC" --flows 8 \
	--src-mac 02:00:00:00:00:01 >/dev/null
tb_capture_wait "$TB_RUN/after.json"
assert_json '.received' 200 "$(cat "$TB_RUN/after.json")"

tb_do dut shutdown >/dev/null
tb_wait_exit dut 10 || tb_die "the last ferryd did not exit on shutdown"
assert_eq "last ferryd exit code" 0 "$TB_EXIT_RC"
echo "PASS t_takeover_spread"
