#!/usr/bin/env bash
# Metrics: `ferryctl metrics` and `ferryd --metrics ADDR:PORT` serve the same
# Prometheus text, which passes tests/lib/promcheck.py and counts the frames
# the generator sent; other paths get 404, other methods 405; bad or busy
# addresses make ferryd exit 2 before it starts anything; [IPv6] and
# localhost work.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

PROMCHECK="$TB_LIB_DIR/promcheck.py"

# http NS METHOD URL OUTFILE: prints "STATUS CONTENT-TYPE"; the body goes to
# OUTFILE. Run inside NS, so 127.0.0.1 is that namespace's loopback; no
# proxy from the environment is used.
http() {
	tb_exec "$1" "$PYTHON" - "$2" "$3" "$4" <<'PY'
import sys, urllib.error, urllib.request

method, url, out = sys.argv[1:4]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
req = urllib.request.Request(url, method=method, data=b"x=1" if method == "POST" else None)
try:
    r = opener.open(req, timeout=5)
    code, body, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
except urllib.error.HTTPError as e:
    code, body, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
with open(out, "wb") as f:
    f.write(body)
print(code, ctype)
PY
}

# A port nobody listens on in NS (the kernel picks it, we let it go).
free_port() {
	tb_exec "$1" "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Sample lines without their values: the series a text exposes.
series() {
	grep -v '^#' "$1" | sed 's/ [^ ]*$//' | sort
}

tb_init
tb_std3 1
tb_gen_up

port=$(free_port dut)
url="http://127.0.0.1:$port/metrics"
tb_ferryd dut dut --metrics "127.0.0.1:$port"
assert_eq "ferryd log says where metrics are served" "metrics on $url" \
	"$(grep -oF "metrics on $url" "$TB_RUN/dut.log" || true)"
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null

tb_do gen gen start g0 count 1000 rate 20000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut

# 1. the control socket's text
tb_do dut metrics | jq -j .data >"$TB_RUN/ctl.prom"
assert_ok "$PYTHON" "$PROMCHECK" --strict "$TB_RUN/ctl.prom"
assert_match "ctl metrics: p0 rx_packets" '^ferry_queue_rx_packets_total\{port="p0",queue="0"\} 1000$' \
	"$(cat "$TB_RUN/ctl.prom")"

# 2. the HTTP endpoint: refreshed once a tick, so wait for the counts
seen=
for ((i = 0; i < 30; i++)); do
	read -r code ctype < <(http dut GET "$url" "$TB_RUN/http.prom")
	seen=$(grep -E '^ferry_queue_rx_packets_total\{port="p0",queue="0"\} ' "$TB_RUN/http.prom" || true)
	[[ $seen == *" 1000" ]] && break
	sleep 0.2
done
assert_eq "GET /metrics status" 200 "$code"
assert_eq "GET /metrics Content-Type" "text/plain; version=0.0.4" "$ctype"
assert_eq "GET /metrics: p0 rx_packets" 'ferry_queue_rx_packets_total{port="p0",queue="0"} 1000' "$seen"
assert_ok "$PYTHON" "$PROMCHECK" --strict "$TB_RUN/http.prom"
body=$(cat "$TB_RUN/http.prom")
assert_match "GET /metrics: p1 tx_packets" '^ferry_queue_tx_packets_total\{port="p1",queue="0"\} 1000$' "$body"
assert_match "GET /metrics: p0 drop reasons" '^ferry_queue_drops_total\{port="p0",queue="0",reason="[a-z_]+"\} [0-9]+$' "$body"
assert_match "GET /metrics: p0 XDP verdicts" '^ferry_xdp_verdicts_total\{port="p0",reason="[a-z_]+"\} [0-9]+$' "$body"
assert_match "GET /metrics: worker 0" '^ferry_worker_[a-z_]+_total\{worker="0",cpu="1"\} [0-9]+$' "$body"
if d=$(diff <(series "$TB_RUN/ctl.prom") <(series "$TB_RUN/http.prom")); then
	assert__pass "HTTP and ctl expose the same series"
else
	assert__fail "HTTP and ctl expose the same series (diff ctl http)" "$d"
fi
# No frames move now: once a tick has passed, the port counters read the
# same both ways. Not the workers' loop counters, nor the kernel's
# *_empty_descs: an idle worker's poll() wake-ups keep those running.
ports_only() {
	grep -E '^ferry_(queue|xdp)_' "$1" | grep -v '_empty_descs_total'
}
same=no
for ((i = 0; i < 20; i++)); do
	tb_do dut metrics | jq -j .data >"$TB_RUN/ctl.prom"
	http dut GET "$url" "$TB_RUN/http.prom" >/dev/null
	if cmp -s <(ports_only "$TB_RUN/ctl.prom") <(ports_only "$TB_RUN/http.prom"); then
		same=yes
		break
	fi
	sleep 0.3
done
if [[ $same == yes ]]; then
	assert__pass "port counters: HTTP == ctl once quiet"
else
	assert__fail "port counters: HTTP == ctl once quiet (diff ctl http)" \
		"$(diff <(ports_only "$TB_RUN/ctl.prom") <(ports_only "$TB_RUN/http.prom"))"
fi

# 3. other paths and methods
read -r code _ < <(http dut GET "http://127.0.0.1:$port/other" "$TB_RUN/other")
assert_eq "GET /other status" 404 "$code"
read -r code _ < <(http dut GET "http://127.0.0.1:$port/" "$TB_RUN/other")
assert_eq "GET / status" 404 "$code"
read -r code _ < <(http dut POST "$url" "$TB_RUN/other")
assert_eq "POST /metrics status" 405 "$code"

# 4. a config change shows up within a tick or two; scrapes keep working
#    while commands run
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p1 >/dev/null
gone=no
for ((i = 0; i < 30; i++)); do
	http dut GET "$url" "$TB_RUN/http.prom" >/dev/null
	if ! grep -q 'port="p1"' "$TB_RUN/http.prom"; then
		gone=yes
		break
	fi
	sleep 0.2
done
assert_eq "p1's series leave /metrics after port del" yes "$gone"
tb_exec dut "$PYTHON" - "$url" <<'PY' &
import sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
for _ in range(200):
    assert opener.open(sys.argv[1], timeout=5).status == 200
PY
scraper=$!
for ((i = 0; i < 20; i++)); do
	tb_do dut stats >/dev/null
	tb_do dut metrics >/dev/null
done
rc=0
wait "$scraper" || rc=$?
assert_eq "200 scrapes while commands run" 0 "$rc"
assert_ok tb_ctlj dut version

# 5. bad and busy addresses: exit 2 with a message, before anything starts
for spec in bad:addr 127.0.0.1 127.0.0.1:0 127.0.0.1:99999 127.0.0.1:x ::1:9464 '[::1' '[nope]:9464' example.org:9464; do
	rc=0
	err=$(tb_exec dut "$FERRYD" -f -s "$TB_RUN/bad.sock" --metrics "$spec" 2>&1 </dev/null) || rc=$?
	assert_eq "ferryd --metrics $spec exits" 2 "$rc"
	assert_match "ferryd --metrics $spec says why" "error: --metrics .*expected ADDR:PORT" "$err"
done
assert_eq "no control socket left by the refused starts" no "$([[ -e $TB_RUN/bad.sock ]] && echo yes || echo no)"
rc=0
err=$(tb_exec dut "$FERRYD" -f -s "$TB_RUN/busy.sock" --metrics "127.0.0.1:$port" 2>&1 </dev/null) || rc=$?
assert_eq "ferryd --metrics on a port in use exits" 2 "$rc"
assert_match "the error says the address is in use" "address already in use" "$err"
rc=0
err=$(tb_exec dut "$FERRYD" -f -s "$TB_RUN/bad.sock" --metrics 2>&1 </dev/null) || rc=$?
assert_eq "ferryd --metrics without an argument exits" 2 "$rc"

# 6. [IPv6] and localhost (a namespace whose loopback has IPv6)
tb_ns v6
ip netns exec "$(tb_nsname v6)" sysctl -qw net.ipv6.conf.lo.disable_ipv6=0
for spec in "[::1]:9464" "localhost:9465"; do
	name=m${spec//[^0-9]/}
	tb_ferryd v6 "$name" --metrics "$spec"
	case $spec in
	\[*) u="http://$spec/metrics" ;;
	*) u="http://127.0.0.1:${spec##*:}/metrics" ;;
	esac
	assert_eq "ferryd $name log" "metrics on $u" "$(grep -oF "metrics on $u" "$TB_RUN/$name.log" || true)"
	read -r code _ < <(http v6 GET "$u" "$TB_RUN/$name.prom")
	assert_eq "GET $u status" 200 "$code"
	assert_ok "$PYTHON" "$PROMCHECK" --strict "$TB_RUN/$name.prom"
done
