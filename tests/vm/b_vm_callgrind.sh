#!/usr/bin/env bash
# tests/vm/b_vm_callgrind.sh: a measurement, not a test; runs inside the
# guest (tests/vm/run.sh with FERRY_VM_NICS=4). Userspace instructions per
# forwarded frame in ferry's worker (ferry_worker_poll_once and all it
# calls, counted by callgrind) with the same two virtio NICs bound
# zero-copy and then copy mode, one ferryd under valgrind per mode. The
# kernel's pktgen on NIC1 (wired to NIC0 = p0) offers 60-byte frames as
# fast as it can; ferry forwards p0 -> p1 (NIC2) on one worker. The
# counters are zeroed once the stream runs and dumped SECS later
# (callgrind_control), and divided by the frames p1 sent in between; the
# kicks are printed beside them.
# What the kernel does (the copy in copy mode, the kicks' work) is not
# userspace and not counted: the tx_kicks per frame say how often the
# worker asked for it. TCG emulation under valgrind: the instruction
# counts are the code's, the rates are not a NIC's.
# Arguments: SECS (default 10).
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"
SECS=${1:-10}
N0=$(nic_by_mac 52:54:00:fe:00:00) N1=$(nic_by_mac 52:54:00:fe:00:01)
N2=$(nic_by_mac 52:54:00:fe:00:02)
[[ -n $N0 && -n $N1 && -n $N2 ]] || {
	bad "four NICs needed (FERRY_VM_NICS=4)"
	exit 1
}
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || {
	bad "valgrind (callgrind_control) needed"
	exit 1
}
modprobe pktgen || {
	bad "modprobe pktgen"
	exit 1
}
# pktgen on CPU 0 (the worker is on CPU 1), from NIC1 (wired to NIC0).
pktgen_on "$N1"
for mode in zc copy; do
	out=/run/cg.$mode
	valgrind --tool=callgrind --toggle-collect=ferry_worker_poll_once \
		--callgrind-out-file="$out" "$FERRYD" -f -s "$SOCK" </dev/null \
		>"/run/cg.$mode.log" 2>&1 &
	FPID=$!
	for ((i = 0; i < 1200; i++)); do
		ctl version >/dev/null 2>&1 && break
		sleep 0.5
	done
	ctl workers 1 >/dev/null || bad "$mode: workers 1"
	ctl port add p0 dev "$N0" mode "$mode" >/dev/null || bad "$mode: port add p0"
	ctl port add p1 dev "$N2" mode "$mode" >/dev/null || bad "$mode: port add p1"
	ctl xconnect add p0 p1 path xsk >/dev/null || bad "$mode: xconnect add"
	echo start >/proc/net/pktgen/pgctrl &
	PG=$!
	sleep 5
	callgrind_control -z "$FPID" >/dev/null
	s0=$(ctl -j stats)
	sleep "$SECS"
	callgrind_control -d "$FPID" >/dev/null
	s1=$(ctl -j stats)
	echo stop >/proc/net/pktgen/pgctrl
	wait "$PG"
	sleep 2
	ir=$(for f in "$out".*; do callgrind_annotate "$f" 2>/dev/null; done |
		awk '/PROGRAM TOTALS/ {gsub(",", "", $1); s += $1} END {print s + 0}')
	jq -n -r --argjson a "$s0" --argjson b "$s1" --arg ir "$ir" --arg m "$mode" '
		def p($s; $n): $s.data.ports[] | select(.name == $n) | .totals;
		(p($b; "p1").tx_packets - p($a; "p1").tx_packets) as $f |
		"RESULT \($m) frames \($f) instr_per_frame \(if $f > 0 then (($ir | tonumber) / $f * 10 | floor) / 10 else "n/a" end)" +
		" tx_kicks_p1_per_frame \(if $f > 0 then ((p($b; "p1").tx_kicks - p($a; "p1").tx_kicks) / $f * 1000 | floor) / 1000 else "n/a" end)"'
	ctl -j port show | jq -M -c '[.data[] | {name, mode}]'
	ctl shutdown >/dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$FPID" 2>/dev/null || break
		sleep 0.5
	done
	wait "$FPID" 2>/dev/null
	rm -f "$out"*
done
ok "measured"
