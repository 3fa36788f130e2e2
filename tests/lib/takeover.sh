# tests/lib/takeover.sh - checks the hot restart tests share (sourced after
# testbed.sh and assert.sh): reaching the far host through ferry, one
# seqflow stream delivered exactly once, a takeover that adopted the rings.

# tko_reach NS IP WHO: a ping from NS to IP through ferry, within 10 s.
tko_reach() {
	local i
	for ((i = 0; i < 50; i++)); do
		ip netns exec "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	ip netns exec "$1" ping -c 1 -W 1 "$2" >/dev/null ||
		tb_die "$3 cannot reach $2 through ferry"
}

# tko_exactly_once TAG SENT FILE [bad]: seqflow recv's report in FILE has
# all SENT datagrams, each once, in order per flow (and with bad: none cut
# or of other bytes).
tko_exactly_once() {
	assert_eq "$1: every datagram arrived once" "$2" "$(jq .unique "$3")"
	assert_eq "$1: duplicates" 0 "$(jq .duplicates "$3")"
	assert_eq "$1: out of order" 0 "$(jq .late "$3")"
	assert_eq "$1: missing" 0 "$(jq .missing "$3")"
	if [[ ${4:-} == bad ]]; then
		assert_eq "$1: cut or mixed (length or bytes differ)" 0 "$(jq .bad "$3")"
	fi
	return 0
}

# tko_adopted TAG LOG OLD_PID: the new ferryd (its log LOG) adopted the
# old one's rings, no rebuild, and the old one has exited.
tko_adopted() {
	assert_match "$1: rings adopted, not rebuilt" "rings adopted" "$(cat "$2")"
	grep -h "takeover: \(rings adopted\|forwarding again\)" "$2" >&2 || true
	if kill -0 "$3" 2>/dev/null; then
		tb_die "$1: the old ferryd (pid $3) is still there"
	fi
	return 0
}

# tko_xconnect_bed: on tb_std3's hosts (made by the caller, with whatever
# it adds), gen 10.88.0.1 (A_IP, its namespace nsA) and sink 10.88.0.2
# (B_IP, nsB), a dut ferryd with one worker cross-connecting p0 (d0) and
# p1 (d1) both ways on path xsk; returns once gen reaches sink.
tko_xconnect_bed() {
	A_IP=10.88.0.1 B_IP=10.88.0.2
	nsA=$(tb_nsname gen) nsB=$(tb_nsname sink)
	ip -n "$nsA" addr add "$A_IP/24" dev "$G0"
	ip -n "$nsB" addr add "$B_IP/24" dev "$S0"
	tb_ferryd dut dut
	tb_do dut workers 1 >/dev/null
	tb_do dut port add p0 dev "$D0" >/dev/null
	tb_do dut port add p1 dev "$D1" >/dev/null
	tb_do dut xconnect add p0 p1 path xsk >/dev/null
	tb_do dut xconnect add p1 p0 path xsk >/dev/null
	tko_reach "$nsA" "$B_IP" gen
}

# tko_streams TAG SECS [SIZE [BACK_SIZE]]: numbered datagrams (SEQFLOW)
# both ways for SECS, in the background: RATE pps in 4 flows from nsA to
# B_IP:7000 and RATE/10 in one flow back to A_IP:7001, of SIZE and
# BACK_SIZE bytes (seqflow's default without), the receivers ready before
# the senders start. Reports in $TB_RUN/recv_b.TAG (nsB's), recv_a.TAG,
# send_a.TAG, send_b.TAG; tko_streams_wait waits for all four.
tko_streams() {
	local tag=$1 secs=$2 size=() back=()
	[[ -n ${3:-} ]] && size=(-s "$3")
	[[ -n ${4:-} ]] && back=(-s "$4")
	rm -f "$TB_RUN/ready."*
	TKO_PIDS=()
	ip netns exec "$nsB" "$SEQFLOW" recv -l "0.0.0.0:7000" -f 4 "${size[@]}" -i 2 \
		-T $((secs + 30)) --ready "$TB_RUN/ready.b" >"$TB_RUN/recv_b.$tag" &
	TKO_PIDS+=($!)
	tb_track $!
	ip netns exec "$nsA" "$SEQFLOW" recv -l "0.0.0.0:7001" -f 1 "${back[@]}" -i 2 \
		-T $((secs + 30)) --ready "$TB_RUN/ready.a" >"$TB_RUN/recv_a.$tag" &
	TKO_PIDS+=($!)
	tb_track $!
	{ tb_wait_file "$TB_RUN/ready.a" && tb_wait_file "$TB_RUN/ready.b"; } ||
		tb_die "receivers not ready"
	ip netns exec "$nsA" "$SEQFLOW" send -d "$B_IP:7000" -r "$RATE" -t "$secs" -f 4 \
		"${size[@]}" >"$TB_RUN/send_a.$tag" &
	TKO_PIDS+=($!)
	tb_track $!
	ip netns exec "$nsB" "$SEQFLOW" send -d "$A_IP:7001" -r $((RATE / 10)) -t "$secs" \
		-f 1 "${back[@]}" >"$TB_RUN/send_b.$tag" &
	TKO_PIDS+=($!)
	tb_track $!
}

tko_streams_wait() {
	local p
	for p in "${TKO_PIDS[@]}"; do
		wait "$p"
	done
}
