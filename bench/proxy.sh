#!/usr/bin/env bash
# bench/proxy.sh - TCP proxy throughput and request rate: ferry's proxy in
# its default mode (auto: the relay in ferryd) and in mode splice (sk_skb),
# against HAProxy 2.6 (mode tcp, option splice-auto, nbthread 1) and two
# userspace proxies (bench/proxy_base.c: splice(2) and read/write), all
# measured in the same run on the same testbed, so rows compare with each
# other only. Ratios are against HAProxy.
#
#   bench/proxy.sh [--runs N] [--tests "iperf3:1024 wrk:1048576 ..."]
#                  [--rows ferry,ferry_nopipe,ferry_splice,haproxy,splice,rw]
#                  [--client iperf3|tcpx|wrk --sizes LIST] [--secs S] [--mb MB]
#                  [--wrk-conns N] [--rps MASK]
#
# Topology (tests/lib/proxy_tb.sh): cli --veth-- px --veth-- srv. The
# client in cli, the proxy in px, the server in srv. A test is CLIENT:SIZE:
#   iperf3:SIZE  one flow, `iperf3 -c ... -l SIZE -t S` against `iperf3 -s`:
#                MB/s, the server's received bytes over its test time.
#                iperf3 also opens its control connection through the proxy.
#   tcpx:SIZE    tests/lib/tcpx.c sends MB megabytes (fewer for small
#                messages) in SIZE-byte writes; the server verifies every
#                byte, and a run that is not byte-exact fails the benchmark.
#                MB/s: bytes over the time from accept to EOF.
#   wrk:SIZE     `wrk -t1 -c N -d S` (keep-alive, N connections, default 32)
#                fetching a SIZE-byte file from nginx (one worker, sendfile,
#                no access log): requests per second; any error or non-2xx
#                answer fails the run.
# Default tests: iperf3:1024 iperf3:65536 wrk:1024 wrk:1048576.
# Also printed: the proxy process's CPU time (utime + stime, all its
# threads, from /proc) over each test per unit of work: ms per MB for
# iperf3 and tcpx, ms per 1000 requests for wrk. On a shared host it moves
# less than the rates do: another process's load takes CPUs away from the
# proxy, but it adds little to what the proxy spends per byte.
# Rows:
#   ferry         ferryd proxy, defaults (mode auto, limit 4 MiB): the
#                 relay, streaming directions through a pipe
#   ferry_nopipe  the same with pipe off: every byte through the buffer
#   ferry_splice  ferryd proxy, mode splice (sk_skb), limit 4 MiB
#   haproxy       HAProxy, mode tcp, option splice-auto, nbthread 1
#   splice        userspace splice(2) proxy, a thread per direction
#   rw            userspace read/write proxy, a thread per direction
# --rps MASK sets rps_cpus of px's two veths (receive packet steering: the
# proxy's receive work on the CPUs of MASK, not the sender's); off by
# default.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=../tests/lib/proxy_tb.sh
. tests/lib/proxy_tb.sh

RUNS=3
TESTS="iperf3:1024 iperf3:65536 wrk:1024 wrk:1048576"
ROWS=ferry,ferry_nopipe,ferry_splice,haproxy,splice,rw
CLIENT=''
SIZES=''
SECS=3
MB=400
WRK_CONNS=32
RPS=
usage() {
	echo "usage: $0 [--runs N] [--tests LIST] [--rows LIST] [--client iperf3|tcpx|wrk --sizes LIST] [--secs S] [--mb MB] [--wrk-conns N]" >&2
	exit 2
}
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--tests) TESTS=$2 && shift ;;
	--rows) ROWS=$2 && shift ;;
	--sizes) SIZES=$2 && shift ;;
	--client) CLIENT=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--mb) MB=$2 && shift ;;
	--wrk-conns) WRK_CONNS=$2 && shift ;;
	--rps) RPS=$2 && shift ;;
	*) usage ;;
	esac
	shift
done
if [[ -n $CLIENT || -n $SIZES ]]; then
	TESTS=
	SIZES=${SIZES:-1024,65536}
	for sz in ${SIZES//,/ }; do TESTS+="${CLIENT:-iperf3}:$sz "; done
fi
BASE=$REPO/build/bench/proxy_base
[[ -x $BASE && -x $TCPX ]] || tb_die "build first (./run build)"
for t in $TESTS; do
	case ${t%%:*} in
	iperf3 | wrk) command -v "${t%%:*}" >/dev/null || tb_die "no ${t%%:*} (./run build installs it)" ;;
	tcpx) ;;
	*) tb_die "test '$t': the client is iperf3, tcpx or wrk" ;;
	esac
	[[ ${t%%:*} == wrk ]] && { command -v nginx >/dev/null || tb_die "no nginx (./run build installs nginx-light)"; }
done
[[ ,$ROWS, != *,haproxy,* ]] || command -v haproxy >/dev/null || tb_die "no haproxy (./run build installs it)"

say() { printf '==> %s\n' "$*" >&2; }

tb_init
px_setup >/dev/null
L4="$PX_PX4:8000"
B4="$PX_SRV4:9000"
if [[ -n $RPS ]]; then
	for ifc in p0 p1; do
		tb_exec px sh -c "echo $RPS >/sys/class/net/$(tb_ifname $ifc)/queues/rx-0/rps_cpus"
	done
fi

# Bytes for a message size: small messages cost a syscall each.
bytes_for() {
	local sz=$1 b=$((MB * 1000000))
	((sz < 1024)) && b=$((b / 20))
	((sz < 16384 && sz >= 1024)) && b=$((b / 2))
	echo "$b"
}

# iperf3_run SIZE: MB/s at the iperf3 server of S seconds of SIZE-byte
# writes through whatever listens on L4.
iperf3_run() {
	local sz=$1 spid out
	px_bg srv "$TB_RUN/srv.json" iperf3 -s -1 -B "$PX_SRV4" -p 9000 --json
	spid=$PX_PID
	tb_wait_listen srv 9000 || say "iperf3 server: not listening after 5 s"
	tb_exec cli iperf3 -c "$PX_PX4" -p 8000 -l "$sz" -t "$SECS" --json >"$TB_RUN/cli.json" || true
	wait "$spid" || true
	out=$(jq -r '.end.sum_received.bits_per_second // empty' "$TB_RUN/srv.json" 2>/dev/null)
	if [[ -z $out ]] || ! jq -e '.end.sum_received.bytes > 0' "$TB_RUN/srv.json" >/dev/null 2>&1; then
		say "iperf3 at $sz B failed: server $(jq -c '.error // .' "$TB_RUN/srv.json" 2>/dev/null | head -c 300), client $(jq -c '.error // empty' "$TB_RUN/cli.json" 2>/dev/null)"
		return 1
	fi
	echo "scale=1; $out / 8000000" | bc -l
}

# tcpx_run SIZE: MB/s of one verified transfer through whatever listens on L4.
tcpx_run() {
	local sz=$1 bytes out spid
	bytes=$(bytes_for "$sz")
	px_server srv "$B4" "$TB_RUN/srv.out" -n 1 || return 1
	spid=$PX_PID
	tb_exec cli "$TCPX" client -d "$L4" -n "$bytes" -m "$sz" >"$TB_RUN/cli.out" || true
	wait "$spid" || true
	out=$(cat "$TB_RUN/srv.out")
	if [[ $(jq -r .ok <<<"$out") != true || $(jq -r .bytes <<<"$out") != "$bytes" ]]; then
		say "not byte-exact at $sz B: server $out, client $(cat "$TB_RUN/cli.out")"
		return 1
	fi
	jq -r .MBps <<<"$out"
}

# nginx in srv on B4, serving obj_SIZE files from $TB_RUN/www.
NGINX_PID=
nginx_up() {
	local sz t
	mkdir -p "$TB_RUN/www" "$TB_RUN/nginx"
	for t in $TESTS; do
		sz=${t#*:}
		[[ ${t%%:*} == wrk && ! -e $TB_RUN/www/obj_$sz ]] &&
			head -c "$sz" /dev/urandom >"$TB_RUN/www/obj_$sz"
	done
	cat >"$TB_RUN/nginx.conf" <<-CONF
		user root;
		worker_processes 1;
		daemon off;
		pid $TB_RUN/nginx/nginx.pid;
		error_log $TB_RUN/nginx/error.log;
		events { worker_connections 4096; }
		http {
			access_log off;
			sendfile on;
			tcp_nopush on;
			keepalive_requests 10000000;
			keepalive_timeout 120s;
			client_body_temp_path $TB_RUN/nginx/body;
			proxy_temp_path $TB_RUN/nginx/proxy;
			fastcgi_temp_path $TB_RUN/nginx/fastcgi;
			uwsgi_temp_path $TB_RUN/nginx/uwsgi;
			scgi_temp_path $TB_RUN/nginx/scgi;
			server { listen $B4; root $TB_RUN/www; }
		}
	CONF
	px_bg srv "$TB_RUN/nginx.out" nginx -p "$TB_RUN/nginx" -c "$TB_RUN/nginx.conf"
	NGINX_PID=$PX_PID
	tb_wait_listen srv 9000 || tb_die "nginx: not listening after 5 s: $(cat "$TB_RUN/nginx.out" "$TB_RUN/nginx/error.log" 2>/dev/null)"
}
nginx_down() {
	[[ -n $NGINX_PID ]] || return 0
	kill "$NGINX_PID" 2>/dev/null || true
	wait "$NGINX_PID" 2>/dev/null || true
	NGINX_PID=
}

# wrk_run SIZE: requests/s of S seconds of keep-alive GETs of obj_SIZE.
wrk_run() {
	local sz=$1 out rps
	out=$(tb_exec cli wrk -t1 -c "$WRK_CONNS" -d "${SECS}s" "http://$L4/obj_$sz" 2>&1) || true
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	if [[ -z $rps ]] || grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		say "wrk at $sz B failed: $(tr '\n' ' ' <<<"$out" | head -c 600)"
		return 1
	fi
	printf '%.0f\n' "$rps"
}

# cpu_ticks PID: the process's utime + stime, in clock ticks.
cpu_ticks() {
	awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"
}
HZ=$(getconf CLK_TCK)

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A VALS MED CPU CMED
# row_tests ROW: one run of every test; the proxy for ROW is up.
row_tests() {
	local row=$1 pid=$2 t c sz v t0 t1 unit
	for t in $TESTS; do
		c=${t%%:*} sz=${t#*:}
		[[ $c == wrk ]] && nginx_up
		t0=$(cpu_ticks "$pid")
		v=$("${c}_run" "$sz") || {
			nginx_down
			tb_die "row $row, $t failed"
		}
		t1=$(cpu_ticks "$pid")
		[[ $c == wrk ]] && nginx_down
		VALS[$row,$t]+="$v "
		# Work done: MB (iperf3: rate x time; tcpx: the bytes sent),
		# or thousands of requests (wrk).
		case $c in
		iperf3) unit=$(echo "$v * $SECS" | bc -l) ;;
		tcpx) unit=$(echo "$(bytes_for "$sz") / 1000000" | bc -l) ;;
		wrk) unit=$(echo "$v * $SECS / 1000" | bc -l) ;;
		esac
		CPU[$row,$t]+="$(echo "scale=3; ($t1 - $t0) * 1000 / $HZ / $unit" | bc -l) "
		say "$row $t: $v, proxy CPU $(((t1 - t0) * 1000 / HZ)) ms"
	done
}

haproxy_up() {
	cat >"$TB_RUN/haproxy.cfg" <<-CONF
		global
			nbthread 1
			maxconn 4000
		defaults
			mode tcp
			option splice-auto
			timeout connect 5s
			timeout client 120s
			timeout server 120s
		listen p
			bind $L4
			server s $B4
	CONF
	px_bg px "$TB_RUN/haproxy.out" haproxy -db -f "$TB_RUN/haproxy.cfg"
	base_pid=$PX_PID
	tb_wait_listen px 8000 || tb_die "haproxy: not listening: $(cat "$TB_RUN/haproxy.out")"
}

when=$(date -u '+%Y-%m-%d %H:%M')
# Rows take turns run by run, so that load from outside lands on all of
# them alike.
for ((r = 0; r < RUNS; r++)); do
	for row in ${ROWS//,/ }; do
		case $row in
		ferry) tb_do px proxy add b listen "$L4" backend "$B4" >/dev/null ;;
		ferry_nopipe) tb_do px proxy add b listen "$L4" backend "$B4" pipe off >/dev/null ;;
		ferry_splice) tb_do px proxy add b listen "$L4" backend "$B4" mode splice >/dev/null ;;
		haproxy) haproxy_up ;;
		splice | rw)
			px_bg px "$TB_RUN/base.out" "$BASE" "$row" "$L4" "$B4"
			base_pid=$PX_PID
			tb_wait_listen px 8000 || tb_die "proxy_base $row: not listening"
			;;
		*) tb_die "unknown row '$row'" ;;
		esac
		if [[ $row == ferry* ]]; then
			row_tests "$row" "${TB_PID_OF[px]}"
		else
			row_tests "$row" "$base_pid"
		fi
		case $row in
		ferry*)
			tb_ctlj px proxy show b | jq -c '.data.proxies[0] | {mode, flows_relay, flows_splice, bytes_relayed, flows_piped, bytes_piped, holds, bytes_copied, max_queued, coalesced, aborted}' |
				sed "s/^/  $row counters: /" >&2
			tb_do px proxy del b >/dev/null
			;;
		*)
			kill "$base_pid"
			wait "$base_pid" 2>/dev/null || true
			;;
		esac
		# Flows of the last row drain before the next row listens.
		sleep 0.5
	done
done
for row in ${ROWS//,/ }; do
	for t in $TESTS; do
		MED[$row,$t]=$(tr ' ' '\n' <<<"${VALS[$row,$t]}" | grep . | median)
		CMED[$row,$t]=$(tr ' ' '\n' <<<"${CPU[$row,$t]}" | grep . | median)
		say "$row $t: ${VALS[$row,$t]}-> median ${MED[$row,$t]}"
	done
done

echo
echo "TCP proxy: $(uname -r), veth${RPS:+ (rps_cpus $RPS in px)}, $(nproc) CPUs, $when UTC, median of $RUNS runs, ratios against haproxy"
echo "iperf3:SIZE one flow -l SIZE -t $SECS (MB/s at the server); tcpx:SIZE verified (MB/s);"
echo "wrk:SIZE -t1 -c $WRK_CONNS -d $SECS keep-alive GETs of a SIZE-byte file from nginx (requests/s)"
ref=haproxy
[[ ,$ROWS, == *,haproxy,* ]] || ref=${ROWS%%,*}
# table ARRAY: a row per proxy, a column pair per test: ARRAY[row,test]
# and its ratio to the reference row's.
table() {
	local -n m=$1
	local row t
	printf '%-14s' "row"
	for t in $TESTS; do printf ' %14s %6s' "$t" "/$ref"; done
	echo
	for row in ${ROWS//,/ }; do
		printf '%-14s' "$row"
		for t in $TESTS; do
			printf ' %14s %6s' "${m[$row,$t]}" \
				"$(echo "scale=2; ${m[$row,$t]} / ${m[$ref,$t]}" | bc -l)"
		done
		echo
	done
}
table MED
echo
echo "proxy CPU time: ms per MB (iperf3, tcpx) or per 1000 requests (wrk), median of $RUNS runs"
table CMED
