# shellcheck shell=bash
# frr.sh - FRR routing daemons (Debian's frr, 8.4) inside a testbed's
# namespaces. Source it after testbed.sh, once tb_init has run.
#
#   frr_require                  zebra, bgpd and vtysh are installed; skips
#                                the test when they are not (fails with CI=true)
#   frr_start NS NAME ZEBRA_CONF BGPD_CONF
#                                zebra, then bgpd, in NS: an instance of their
#                                own under $TB_RUN/frr-NAME (config, pid files,
#                                vty sockets, the zserv socket), tracked
#                                for the trap; returns once vtysh answers
#   frr_vtysh NAME ARGS...       vtysh on NAME's instance (-c ... as usual)
#   frr_conf NAME LINE...        configure terminal, then each LINE: one -c each
#   frr_pid NAME DAEMON          the PID of NAME's zebra or bgpd
#
# Each daemon logs to $TB_RUN/frr-NAME-DAEMON.log (its own log file and its
# stdout/stderr), so the trap shows the logs' tails when a test fails.
# Each daemon is started as a simple command after `&`, so that `ip netns
# exec` execs into it and $! is the daemon itself: the trap ends exactly the
# processes started here (SIGTERM, then SIGKILL), nothing found by name.
# No daemon forks (-d is never given). The daemons drop to the frr user, so
# the instance dir belongs to frr; no TCP vty port is opened (-P 0).

FRR_DIR=${FRR_DIR:-/usr/lib/frr}
declare -A FRR_PID=()

frr_require() {
	local b
	for b in "$FRR_DIR/zebra" "$FRR_DIR/bgpd" "$(command -v vtysh || echo vtysh)"; do
		[[ -x $b ]] && continue
		[[ ${CI:-} == true ]] && tb_die "needs FRR ($b; apt-get install frr) (CI=true: failing, not skipping)"
		echo "skip: needs FRR ($b; apt-get install frr)"
		exit 77
	done
	id frr >/dev/null 2>&1 || tb_die "FRR installed but there is no user frr"
}

frr__dir() {
	printf '%s\n' "$TB_RUN/frr-$1"
}

frr_vtysh() {
	local name=$1
	shift
	vtysh --vty_socket "$(frr__dir "$name")" "$@"
}

frr_conf() {
	local name=$1 l args=(-c "configure terminal")
	shift
	for l in "$@"; do
		args+=(-c "$l")
	done
	frr_vtysh "$name" "${args[@]}"
}

frr_pid() {
	printf '%s\n' "${FRR_PID[$1.$2]:-}"
}

# frr__daemon NS NAME DAEMON CONF: starts DAEMON of NAME's instance in NS.
frr__daemon() {
	local ns=$1 name=$2 d=$3 dir pid log
	dir=$(frr__dir "$name")
	log=$TB_RUN/frr-$name-$d.log
	# the daemon opens its log as frr, in a run dir that is root's
	: >"$log"
	chown frr:frr "$log"
	ip netns exec "$ns" "$FRR_DIR/$d" -f "$dir/$d.conf" -i "$dir/$d.pid" \
		-z "$dir/zserv.api" --vty_socket "$dir" -P 0 --log "file:$log" \
		</dev/null >>"$log" 2>&1 &
	pid=$!
	tb_track "$pid"
	FRR_PID[$name.$d]=$pid
}

# frr__wait NAME DAEMON: up to 10 s for the daemon's vty to answer.
frr__wait() {
	local name=$1 d=$2 i
	for ((i = 0; i < 100; i++)); do
		frr_vtysh "$name" -d "$d" -c "show version" >/dev/null 2>&1 && return 0
		kill -0 "${FRR_PID[$name.$d]}" 2>/dev/null || break
		sleep 0.1
	done
	tb_log "FRR $d of $name did not come up; its log:"
	cat "$TB_RUN/frr-$name-$d.log" >&2
	return 1
}

frr_start() {
	local ns name=$2 dir
	ns=$(tb_nsname "$1")
	dir=$(frr__dir "$name")
	mkdir -m 0750 "$dir" || tb_die "mkdir $dir"
	printf '%s\n' "$3" >"$dir/zebra.conf"
	printf '%s\n' "$4" >"$dir/bgpd.conf"
	chown -R frr:frr "$dir"
	frr__daemon "$ns" "$name" zebra
	frr__wait "$name" zebra || return 1
	frr__daemon "$ns" "$name" bgpd
	frr__wait "$name" bgpd || return 1
	tb_log "FRR $name up in $ns (zebra ${FRR_PID[$name.zebra]}, bgpd ${FRR_PID[$name.bgpd]})"
}
