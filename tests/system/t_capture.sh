#!/usr/bin/env bash
# capture start/stop/show on a dut's xconnect: 1000 generator frames in two
# flows (source ports 1024 and 1025, alternating), captured on p0 rx with a
# filter that matches one flow: the file holds the 500 frames of that flow,
# byte for byte what the generator sent, in order. Frames a worker drops go
# in with the reason in their comment; bad requests start nothing.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/capture_check.sh
. "$(dirname "$0")/../lib/capture_check.sh"

command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_std3
tb_gen_up
tb_dut_xconnect

# ---- 1000 frames, a filter matching half ----
f="$TB_RUN/half.pcapng"
tb_do dut capture start half port p0 filter "udp and src port 1024" file "$f" >/dev/null
assert_json '.data | length' 1 "$(tb_do dut capture show)"
tb_do gen gen start g0 count 1000 rate 20000 size 128 flows 2 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
show=$(tb_do dut capture show)
echo "show: $show"
assert_json '.data[0].matched' 500 "$show"
# The worker is on CPU 1: by default the capture's threads are not.
cpus=$(jq -r '.data[0].cpus' <<<"$show")
if (($(nproc) > 1)); then
	[[ $cpus != any ]] || tb_die "capture threads unpinned with a CPU free"
	for r in ${cpus//,/ }; do
		((${r%-*} > 1 || ${r#*-} < 1)) || tb_die "capture threads on the worker's CPU: $cpus"
	done
fi
tb_do dut capture stop half >/dev/null
assert_json '.data | length' 0 "$(tb_do dut capture show)"
assert_eq "tcpdump count" 500 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"
assert_eq "frames as sent" 500 "$(cap_check_frames "$f" 1024 128)"
assert_eq "p1 tx" 1000 "$(tb_stat dut p1 tx_packets)"

# ---- tx, after the rewrite: both directions of p1 on the way out ----
f="$TB_RUN/tx.pcapng"
tb_do dut capture start out port p1 dir tx count 100 file "$f" >/dev/null
tb_do gen gen start g0 count 300 rate 20000 size 128 flows 2 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
# count reached: the tick ends the capture by itself.
cap_show_until '.data | length == 0' >/dev/null
assert_json '.data | length' 0 "$(tb_do dut capture show)"
assert_eq "tx count" 100 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"

# ---- streaming: ferryctl capture ... -w - | tcpdump, the reader leaves ----
out="$TB_RUN/stream.txt"
# (timeout: should frames go missing, the count below fails, nothing hangs)
(timeout -s INT 60 "$FERRYCTL" -s "$TB_RUN/dut.sock" capture p0 \
	filter "udp and src port 1025" -w - |
	tcpdump -nn -r - -c 20 >"$out" 2>/dev/null) &
spid=$!
cap_show_until '.data | length == 1' >/dev/null
assert_json '.data[0].output' stream "$(tb_do dut capture show)"
tb_do gen gen start g0 count 200 rate 2000 size 128 flows 2 >/dev/null
tb_wait_gen_done gen g0 30
wait "$spid"
assert_eq "streamed frames" 20 "$(grep -c '\.1025 >' "$out")"
# tcpdump left after 20: ferryctl ends, the tick ends the capture.
cap_show_until '.data | length == 0' >/dev/null
assert_json '.data | length' 0 "$(tb_do dut capture show)"
# A client that goes away while nothing matches: the tick sees it too.
# (ferryctl itself in the background: kill reaches it, not a subshell)
"$FERRYCTL" -s "$TB_RUN/dut.sock" capture p0 filter "udp port 7777" cpu 0 \
	-w "$TB_RUN/none.pcapng" &
spid=$!
cap_show_until '.data | length == 1' >/dev/null
kill -INT "$spid"
wait "$spid" || true
cap_show_until '.data | length == 0' >/dev/null
assert_json '.data | length' 0 "$(tb_do dut capture show)"
tcpdump -r "$TB_RUN/none.pcapng" >/dev/null 2>&1 || tb_die "the streamed file does not read"
# A stream's errors come back as errors.
rc=0
err=$(tb_ctl dut capture nosuch -w - 2>&1 >/dev/null) || rc=$?
echo "stream to nosuch -> $rc: $err"
((rc != 0)) && [[ $err == *"no port nosuch"* ]] || tb_die "stream error: $err"

# ---- frames the worker drops: the reason in the comment ----
tb_do dut xconnect del p0 >/dev/null
tb_do dut drop p0 >/dev/null
f="$TB_RUN/drop.pcapng"
tb_do dut capture start d port p0 file "$f" >/dev/null
tb_do gen gen start g0 count 10 rate 1000 size 128 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut
tb_do dut capture stop d >/dev/null
assert_eq "dropped frames" 10 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"
assert_eq "drop comments" 10 "$(grep -ac 'drop=app_drop' "$f")"

# ---- frames no worker sees, captured in XDP with their verdict ----
f="$TB_RUN/xdp.pcapng"
tb_do dut capture start x port p0 file "$f" >/dev/null
tb_send gen g0 5 bad_ihl --rate 1000 >/dev/null
tb_do dut steer add r1 port p0 match proto udp dport 9 to cpus 0 >/dev/null
tb_send gen g0 7 good --rate 1000 >/dev/null
tb_wait_quiet dut
sleep 0.3 # the perf buffer's reader polls
show=$(tb_do dut capture show)
echo "show: $show"
human=$(tb_ctl dut capture show)
echo "$human"
if awk 'length > 120' <<<"$human" | grep -q . || grep -q '[{}]' <<<"$human"; then
	tb_die "capture show: a line over 120 columns or JSON in the human view"
fi
tb_do dut capture stop x >/dev/null
tb_do dut steer del r1 >/dev/null
assert_eq "xdp frames" 12 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"
assert_eq "malformed comments" 5 "$(grep -ac 'xdp=drop_bad_ihl' "$f")"
assert_eq "steered comments" 7 "$(grep -ac 'xdp=cpu_redirect' "$f")"

# ---- bad requests: clear errors, nothing started ----
bad() {
	local want=$1 out rc=0
	shift
	out=$(tb_ctl dut "$@" 2>&1) || rc=$?
	echo "$* -> $rc: $out"
	((rc != 0)) || tb_die "accepted: $*"
	[[ $out == *"$want"* ]] || tb_die "no '$want' in: $out"
}
bad "bad filter" capture start b port p0 filter "udp port 99999" file "$TB_RUN/b1.pcapng"
[[ ! -e $TB_RUN/b1.pcapng ]] || tb_die "a bad filter left a file"
bad "/nonexistent/dir/x.pcapng" capture start b port p0 file /nonexistent/dir/x.pcapng
bad "no port nosuch" capture start b port nosuch file "$TB_RUN/b2.pcapng"
[[ ! -e $TB_RUN/b2.pcapng ]] || tb_die "an unknown port left a file"
tb_do dut capture start b port p0 file "$TB_RUN/b3.pcapng" >/dev/null
bad "already running" capture start b port p1 file "$TB_RUN/b4.pcapng"
bad "already captured" capture start c port p0 file "$TB_RUN/b4.pcapng"
tb_do dut capture stop b >/dev/null
bad "no capture b" capture stop b
assert_json '.data | length' 0 "$(tb_do dut capture show)"
bad "CPU 999 is not online" capture start b port p0 cpu 999 file "$TB_RUN/b5.pcapng"
[[ ! -e $TB_RUN/b5.pcapng ]] || tb_die "a bad cpu left a file"
assert_json '.data | length' 0 "$(tb_do dut capture show)"
# Runtime state only: not in the configuration. Its threads on CPU 0.
tb_do dut capture start k port p0 cpu 0 file "$TB_RUN/k.pcapng" >/dev/null
assert_json '.data[0].cpus' 0 "$(tb_do dut capture show)"
tb_ctl dut capture show | grep -q 'cpus' || tb_die "capture show: no cpus in the human view"
if tb_ctl dut show config | grep -q capture; then
	tb_die "show config carries a capture"
fi
tb_do dut capture stop k >/dev/null
# A port deleted under a capture ends it.
tb_do dut capture start g port p1 dir both file "$TB_RUN/g.pcapng" >/dev/null
tb_do dut port del p1 >/dev/null
assert_json '.data | length' 0 "$(tb_do dut capture show)"
tb_ctl dut version >/dev/null
tb_log "ok"
