#!/usr/bin/env bash
# The sockmap lag guard: an ingress redirect gives the writer no
# backpressure, so ferry bounds what a redirected direction may queue for
# its reader (`sockmap attach ... lag-max BYTES`, default 16 MiB): the
# verdict re-runs every lag-max / 4 bytes, and a direction whose reader has
# more than lag-max unread goes to plain TCP for good, where the reader's
# receive window holds the writer back.
#
# One namespace (loopback only), a child cgroup v2 holding tcpx's client
# and server, ferryd attached with `default redirect`. Checked:
#   - a flow that cannot lag (fewer bytes than lag-max): every byte
#     redirected, the verdict run once per window (ceil(bytes / window));
#   - a writer far ahead of a 20 MB/s reader: the direction moves to TCP
#     (`lagged`, `path tcp`, `lag_moves`), the transfer is byte-exact and
#     the writer never sees an error, and at most lag-max plus one window
#     went through the redirect past what the reader had read;
#   - lag-max out of range is refused, the value shows and round-trips.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/sockmap.sh
. "$(dirname "$0")/../lib/sockmap.sh"

sm_testbed

# xfer PORT BYTES SERVER_ARGS...: BYTES in 64 KiB writes to a tcpx server
# on PORT (SERVER_ARGS: its own): both ends exit 0, the writer was told of
# every byte and met no error, the reader verified every byte.
xfer() {
	local port=$1 bytes=$2 rc=0
	shift 2
	sm_server "$port" "$@"
	sm_client -d "127.0.0.1:$port" -n "$bytes" -m 65536 >"$TB_RUN/cli-$port.json" || rc=$?
	wait "$SRV_PID" || rc=$?
	assert_eq "$port: exit codes" 0 "$rc"
	echo "writer: $(cat "$TB_RUN/cli-$port.json")"
	assert_json '"\(.bytes) \(.errors)"' "$bytes 0" "$(cat "$TB_RUN/cli-$port.json")"
	assert_json .ok true "$(cat "$TB_RUN/srv-$port.json")"
	assert_json .bytes "$bytes" "$(cat "$TB_RUN/srv-$port.json")"
}
dir() {
	tb_ctlj dut sockmap show | jq -c "[.data.flows[]? | select(.dst == \"127.0.0.1:$1\")] | first"
}

# ---- refusals ----
out=$(tb_ctlj dut sockmap attach cgroup "$CG" lag-max 1000 || true)
assert_json .ok false "$out"
assert_match "lag-max too small" "ERANGE" "$(jq -r .error.code <<<"$out") $(jq -r .error.message <<<"$out")"
out=$(tb_ctlj dut sockmap attach cgroup "$CG" lag-max 2000000000 || true)
assert_json .ok false "$out"

LAG=$((16 * 1024 * 1024)) WIN=$((4 * 1024 * 1024))
out=$(tb_do dut sockmap attach cgroup "$CG" ports 7200-7210 default redirect)
assert_json .data.lag_max $LAG "$out"

# ---- a flow that cannot lag past lag-max: all redirected, one verdict per window ----
bytes=$((12 * 1024 * 1024))
xfer 7200 $bytes
d=$(dir 7200)
echo "7200: $d"
assert_json .path redirect "$d"
assert_json .lagged false "$d"
assert_json .bytes_redirected $bytes "$d"
assert_json .verdict_runs $(((bytes + WIN - 1) / WIN)) "$d"

# ---- a writer far ahead of a slow reader ----
bytes=$((128 * 1024 * 1024))
xfer 7201 $bytes --rate 20M
d=$(dir 7201)
echo "7201: $d"
assert_json .path tcp "$d"
assert_json .lagged true "$d"
red=$(jq .bytes_redirected <<<"$d") tcp=$(jq .bytes_tcp <<<"$d")
assert_eq "redirected + TCP bytes" $bytes $((red + tcp))
assert_ge "bytes over TCP after the move" $((bytes / 2)) "$tcp"
# What the reader had not read when the writer moved is at most lag-max
# plus the window the check runs in (and what the reader read meanwhile).
assert_le "bytes redirected" $((LAG + WIN + 20 * 1024 * 1024)) "$red"
assert_json .data.counters.lag_moves 1 "$(tb_do dut sockmap show)"

# ---- the value round-trips through the saved configuration ----
tb_do dut sockmap detach >/dev/null
tb_do dut sockmap attach cgroup "$CG" ports 7200-7210 default redirect lag-max 1048576 >/dev/null
assert_match "show config" "sockmap attach cgroup \"$CG\" ports 7200-7210 default redirect lag-max 1048576$" \
	"$(tb_ctlj dut show config | jq -r .data)"
tb_do dut sockmap detach >/dev/null
assert_json .data.ferryd 0.1.0 "$(tb_do dut version)"
