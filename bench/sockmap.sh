#!/usr/bin/env bash
# bench/sockmap.sh - local TCP throughput with and without sockmap
# acceleration, every row measured in the same run.
#
#   bench/sockmap.sh [--runs N] [--sizes "64 1024 16384 65536"] [--scale X]
#                    [--rows "plain nodelay per-message redirect ferry"]
#                    [--places "diff same"] [--rr "64:128 64:4096"]
#
# Over loopback in a namespace of its own, tcpx (build/tests/tcpx) sends a
# fixed number of bytes per message size in one flow; MB/s is the client's
# (first send to the reader's close, so everything was read and verified).
# Rows, each with writer and reader on different CPUs (0 and 1) and on the
# same CPU (0):
#   plain        plain TCP, nothing attached
#   nodelay      plain TCP, TCP_NODELAY on the writer
#   per-message  every connection redirected, verdict on every send()
#                (`sockmap attach ... verdict per-message default redirect`)
#   redirect     every connection redirected with ferry's lasting verdict
#                (`default redirect`: BPF_F_PERMANENT where the kernel has
#                it, else apply_bytes 0xffffffff)
#   attached     plain TCP on a port outside the attachment's `ports`
#                (not requested by default): what every socket of the host
#                pays while ferry is attached, the tracepoints' dispatch
#   ferry        what an operator gets by default (`default learn`): each
#                message size is its own service (port); a warm-up of short
#                connections lets it learn, then the measured connection
#                gets what it learned (printed as "decided"); decided plain,
#                it runs once ferryd has gone quiet (tracepoints detached)
# The rows take turns within each run (attaching and detaching as they
# go), so the load of a shared host falls on all of them alike.
# Then request/response (tcpx rr-client, one request in flight): requests
# per second for REQ:RESP byte sizes, plain TCP against ferry's learned
# decision, in the same placements.
# Median of N runs per cell; ratios are against rows of the same run, and
# "paired" ratios are the median of each run's own ratio (the rows of a run
# took turns seconds apart, so load that comes and goes between runs, the
# usual noise of a shared host, cancels out).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh

RUNS=3
SIZES="64 1024 16384 65536"
SCALE=1
ROWS=(plain nodelay per-message redirect ferry)
PLACES="diff same"
RR_SIZES="64:128 64:4096"
while (($#)); do
	case $1 in
	--rows) read -r -a ROWS <<<"$2" && shift ;;
	--places) PLACES=$2 && shift ;;
	--runs) RUNS=$2 && shift ;;
	--sizes) SIZES=$2 && shift ;;
	--scale) SCALE=$2 && shift ;;
	--rr) RR_SIZES=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--sizes LIST] [--scale X] [--rows LIST] [--places LIST] [--rr LIST]" >&2 && exit 2 ;;
	esac
	shift
done

[[ -x $TCPX ]] || tb_die "build first (./run build): no $TCPX"
say() { printf '==> %s\n' "$*" >&2; }

# Bytes per cell: about a second at the slowest row's rate, so small
# messages (tens of MB/s) don't take minutes and large ones still run long
# enough to leave slow start behind.
bytes_for() {
	local b
	case $1 in
	64) b=$((24 * 1024 * 1024)) ;;
	1024) b=$((256 * 1024 * 1024)) ;;
	16384) b=$((2 * 1024 * 1024 * 1024)) ;;
	*) b=$((3 * 1024 * 1024 * 1024)) ;;
	esac
	echo "$b * $SCALE / 1" | bc
}

tb_init
tb_ns h
tb_cgroup bench
CG=$TB_CGROUP
tb_ferryd h dut >/dev/null

PORT=9000
# one_run ROW PLACEMENT SIZE [PORT [BYTES]]: sets MBPS to the client's MB/s.
# Not in $(...): PORT must advance and only this shell can wait for its
# children. A fresh port per run, except for the learned row, whose
# service is its port.
one_run() {
	local row=$1 place=$2 size=$3 port=${4:-} bytes=${5:-} sp out scpu=1 extra=() rc=0
	[[ -n $bytes ]] || bytes=$(bytes_for "$size")
	[[ $place == same ]] && scpu=0
	[[ $row == nodelay ]] && extra=(--nodelay)
	if [[ -z $port ]]; then
		PORT=$((PORT + 1))
		port=$PORT
	fi
	tb_tcpx_server h "127.0.0.1:$port" "$TB_RUN/srv.json" --cgroup "$CG" -c "$scpu" ||
		tb_die "$row/$place/$size: tcpx server did not start"
	sp=$TB_TCPX_PID
	out=$(tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$port" -c 0 -n "$bytes" -m "$size" \
		"${extra[@]}") || rc=$?
	wait "$sp" || rc=$?
	((rc == 0)) || tb_die "$row/$place/$size: tcpx failed: $out $(cat "$TB_RUN/srv.json")"
	MBPS=$(jq -r .MBps <<<"$out")
}

# decision PORT: what the learned service 127.0.0.1:PORT gives new
# connections now.
decision() {
	tb_do dut sockmap show | jq -r --arg s "127.0.0.1:$1" \
		'[.data.services[]? | select(.service == $s) | "\(.decision) (\(.reason))"] | first // "none"'
}

# warm PORT SIZE: short connections until the service has decided.
warm() {
	local i
	for ((i = 0; i < 16; i++)); do
		[[ $(decision "$1") == learn* || $(decision "$1") == none ]] || return 0
		one_run ferry diff "$2" "$1" $((256 * $2))
	done
	tb_die "service 127.0.0.1:$1 still learning after 16 connections"
}

# wait_quiet: until ferryd has detached the tracepoints (every service
# decided plain: a few ticks), as an operator's host runs between changes.
wait_quiet() {
	local i
	for ((i = 0; i < 80; i++)); do
		[[ $(tb_do dut sockmap show | jq -r .data.measuring) == false ]] && return 0
		sleep 0.1
	done
	tb_die "the attachment did not go quiet"
}

# Each size's service in the learned row: its own port.
learn_port() { echo $((9500 + $(index_of "$1"))); }
index_of() {
	local i=0 s
	for s in $SIZES; do
		[[ $s == "$1" ]] && echo $i && return
		i=$((i + 1))
	done
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# attach ROW / detach ROW: the attachment a row runs under (none for the
# plain rows).
attach() {
	case $1 in
	per-message) tb_do dut sockmap attach cgroup "$CG" ports 9000-9999 verdict per-message \
		default redirect >/dev/null ;;
	redirect) tb_do dut sockmap attach cgroup "$CG" ports 9000-9999 default redirect >/dev/null ;;
	ferry | attached) tb_do dut sockmap attach cgroup "$CG" ports 9000-9999 >/dev/null ;;
	*) return 0 ;;
	esac
	MECH=$(tb_do dut sockmap show | jq -r .data.mechanism)
}
detach() {
	case $1 in
	per-message | redirect | ferry | attached) tb_do dut sockmap detach >/dev/null ;;
	esac
}

# The rows take turns within each run, so a load that comes and goes on a
# shared host lands on all of them alike; the learned row attaches afresh
# each time and learns again (a warm-up of a few short connections).
declare -A MED DECIDED VALS
for place in $PLACES; do
	for size in $SIZES; do
		for ((r = 0; r < RUNS; r++)); do
			for row in "${ROWS[@]}"; do
				attach "$row"
				lp=
				if [[ $row == ferry ]]; then
					lp=$(learn_port "$size")
					warm "$lp" "$size"
					DECIDED[$size]=$(decision "$lp")
					# Decided plain: the steady state is quiet.
					[[ ${DECIDED[$size]} != plain* ]] || wait_quiet
				fi
				# Outside 9000-9999: not matched, not measured.
				[[ $row == attached ]] && PORT=$((PORT + 1)) && lp=$((PORT - 1000))
				one_run "$row" "$place" "$size" $lp
				detach "$row"
				VALS[$row.$place.$size]+="$MBPS "
			done
		done
		for row in "${ROWS[@]}"; do
			read -r -a vals <<<"${VALS[$row.$place.$size]}"
			MED[$row.$place.$size]=$(printf '%s\n' "${vals[@]}" | median)
			say "$row $place $size: ${vals[*]} MB/s (median ${MED[$row.$place.$size]})"
		done
		[[ -n ${DECIDED[$size]:-} ]] && say "ferry: the service of $size B writes decided ${DECIDED[$size]}"
	done
done

# ---- request/response ----
# rr_run PORT REQ RESP N PLACEMENT: sets RPS (requests per second, one
# flow).
rr_run() {
	local port=$1 req=$2 resp=$3 n=$4 place=${5:-diff} sp out scpu=1 rc=0
	[[ $place == same ]] && scpu=0
	rm -f "$TB_RUN/rr.json.ready"
	ip netns exec "$(tb_nsname h)" sh -c "$TB_CG_EXEC" "$CG" "$TCPX" rr-server \
		-l "127.0.0.1:$port" -m "$req" --resp "$resp" -c $scpu --ready "$TB_RUN/rr.json.ready" \
		>"$TB_RUN/rr.json" 2>&1 &
	sp=$!
	tb_track $sp
	tb_wait_file "$TB_RUN/rr.json.ready" || tb_die "rr server did not start"
	out=$(tb_cg_exec h "$CG" "$TCPX" rr-client -d "127.0.0.1:$port" -c 0 -n "$n" -m "$req" \
		--resp "$resp") || rc=$?
	wait "$sp" || rc=$?
	((rc == 0)) || tb_die "rr $req:$resp failed: $out $(cat "$TB_RUN/rr.json")"
	RPS=$(jq -r .rps <<<"$out")
}
RR_N=$(echo "20000 * $SCALE / 1" | bc)
declare -A RRMED RRDEC RRVALS
i=0
for rs in $RR_SIZES; do
	IFS=: read -r req resp <<<"$rs"
	port=$((9800 + i))
	i=$((i + 1))
	for place in $PLACES; do
		for ((r = 0; r < RUNS; r++)); do
			rr_run $port "$req" "$resp" "$RR_N" "$place"
			RRVALS[plain.$place.$rs]+="$RPS "
			attach ferry
			for ((w = 0; w < 16; w++)); do
				[[ $(decision $port) == learn* || $(decision $port) == none ]] || break
				rr_run $port "$req" "$resp" 1000
			done
			RRDEC[$rs]=$(decision $port)
			rr_run $port "$req" "$resp" "$RR_N" "$place"
			RRVALS[ferry.$place.$rs]+="$RPS "
			detach ferry
		done
		for row in plain ferry; do
			read -r -a vals <<<"${RRVALS[$row.$place.$rs]}"
			RRMED[$row.$place.$rs]=$(printf '%s\n' "${vals[@]}" | median)
			say "rr $row $place $rs: ${vals[*]} req/s (median ${RRMED[$row.$place.$rs]})"
		done
	done
done

ratio() { echo "scale=2; $1 / $2" | bc -l; }
# paired "A1 A2 ..." "B1 B2 ...": the median of Ai / Bi.
paired() {
	local -a a b
	local i
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	for ((i = 0; i < ${#a[@]} && i < ${#b[@]}; i++)); do
		echo "scale=3; ${a[i]} / ${b[i]}" | bc -l
	done | median | xargs printf '%.2f'
}

echo
echo "sockmap benchmark: $(uname -r), loopback in a namespace, one flow, tcpx (pattern-verified),"
echo "$(nproc) CPUs, median of $RUNS runs; ferry's mechanism on this kernel: ${MECH:-?}"
echo "MB/s by message size (writer CPU 0; reader CPU 1 = diff, CPU 0 = same):"
printf '%-22s' row
for size in $SIZES; do printf '%10s' "$size"; done
echo
for place in $PLACES; do
	for row in "${ROWS[@]}"; do
		printf '%-22s' "$row ($place)"
		for size in $SIZES; do printf '%10s' "${MED[$row.$place.$size]}"; done
		echo
	done
done
echo
echo "ratios (same run):"
for place in $PLACES; do
	for pair in "ferry plain" "redirect plain" "per-message plain" "redirect per-message"; do
		read -r a b <<<"$pair"
		[[ -n ${MED[$a.$place.${SIZES%% *}]:-} && -n ${MED[$b.$place.${SIZES%% *}]:-} ]] || continue
		printf '%-22s' "$a/$b ($place)"
		for size in $SIZES; do printf '%10s' "$(ratio "${MED[$a.$place.$size]}" "${MED[$b.$place.$size]}")"; done
		echo
	done
done
echo
echo "paired ratios (median of each run's own ratio: the rows of one run took turns seconds apart,"
echo "so a load that comes and goes between runs cancels out):"
for place in $PLACES; do
	for pair in "ferry plain" "redirect plain" "ferry redirect"; do
		read -r a b <<<"$pair"
		[[ -n ${VALS[$a.$place.${SIZES%% *}]:-} && -n ${VALS[$b.$place.${SIZES%% *}]:-} ]] || continue
		printf '%-22s' "$a/$b ($place)"
		for size in $SIZES; do printf '%10s' "$(paired "${VALS[$a.$place.$size]}" "${VALS[$b.$place.$size]}")"; done
		echo
	done
done
if [[ -n ${DECIDED[*]:-} ]]; then
	printf '%-22s' "ferry decided"
	for size in $SIZES; do printf '%10s' "${DECIDED[$size]%% *}"; done
	echo
fi
echo
echo "request/response, one flow, one request in flight, req/s (client CPU 0; server CPU 1 = diff, CPU 0 = same):"
printf '%-18s%12s%12s%8s%8s  %s\n' "REQ:RESP" plain ferry ratio paired "ferry decided"
for place in $PLACES; do
	for rs in $RR_SIZES; do
		printf '%-18s%12s%12s%8s%8s  %s\n' "$rs ($place)" "${RRMED[plain.$place.$rs]}" \
			"${RRMED[ferry.$place.$rs]}" \
			"$(ratio "${RRMED[ferry.$place.$rs]}" "${RRMED[plain.$place.$rs]}")" \
			"$(paired "${RRVALS[ferry.$place.$rs]}" "${RRVALS[plain.$place.$rs]}")" "${RRDEC[$rs]}"
	done
done
