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
