# shellcheck shell=bash
# shellcheck disable=SC2034 # TB_* globals are read by the tests that source this
# testbed.sh - network-namespace testbeds for ferry's system tests and demo.
#
# Source it, call tb_init, then build what the test needs:
#
#   tb_init                      run-unique prefix $TB_P, run dir $TB_RUN, cleanup trap
#   tb_global_lock NAME          serialise host-wide changes (hugepages) across runs
#   tb_wait_file FILE            wait up to 5 s for FILE (a tool's --ready file)
#   tb_wait_listen NS PORT       wait up to 5 s until a TCP socket listens on PORT in NS
#   tb_ns NAME                   namespace $TB_P-NAME, lo up, IPv6 off (no stray frames)
#   tb_veth NS_A IF_A NS_B IF_B [QUEUES]
#                                veth pair $TB_P-IF_A (in NS_A) <-> $TB_P-IF_B (in NS_B)
#   tb_std3 [QUEUES]             gen:g0 <-> dut:d0, dut:d1 <-> sink:s0;
#                                sets G0 D0 D1 S0 to the real interface names
#   tb_exec NS CMD...            CMD in the namespace, with its own bpffs mounted
#   tb_ferryd NS NAME [ARGS...]  ferryd -f -s $TB_RUN/NAME.sock in NS, waits until it answers
#   tb_bg NS OUT CMD...          CMD in NS in the background, stdout to OUT; its PID
#                                (tracked for the trap) in $TB_BG_PID
#   tb_track PID                 a background child for the trap to end first
#   tb_on_fail CMD...            run CMD (a simple command) if the test fails, before
#                                the trap ends its processes: live state for the log
#   tb_defer CMD...              undo what was just made, when the test ends (any exit):
#                                last registered runs first, after the processes end
#   tb_write FILE TEXT           TEXT into FILE (a sysctl): `tb_defer tb_write F "$old"`
#   tb_ctl NAME ARGS...          ferryctl -s $TB_RUN/NAME.sock ARGS...
#   tb_ctlj NAME ARGS...         the same with -j
#   tb_cgroup NAME               child cgroup v2 $TB_CGROUP of a cgroup2 mount
#                                of this run's own (outside /sys, which
#                                `ip netns exec` remounts)
#   tb_cg_exec NS CGROUP CMD...  CMD in the namespace, moved into CGROUP
#   tb_tcpx_server NS ADDR:PORT OUT [--cgroup CG] [--stderr] [ARGS...]
#                                tcpx server in NS (in CG), stdout (and with
#                                --stderr, stderr) to OUT; returns once it
#                                listens, its PID in $TB_TCPX_PID
#
# Namespaces and interfaces carry the prefix, so parallel runs never collide;
# interfaces are created directly inside their namespaces and never appear in
# the host's. The trap, on any exit, failures and signals included, ends the
# tracked PIDs, then every other process of the run (procs.sh), however it
# was started (a backgrounded function or subshell and what it runs,
# setsid, orphans): whatever carries the run's mark TB_RUN_ID in its
# environment, is in the run's cgroup $TB_RUN_CG, descends from this shell
# or runs in one of the run's namespaces; then deletes only the namespaces
# made here (their veths go with them) and the run dir.

TB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_REPO=$(cd "$TB_LIB_DIR/../.." && pwd)
# shellcheck source=procs.sh
. "$TB_LIB_DIR/procs.sh"

tb__abs() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$TB_REPO/$1" ;;
	esac
}

FERRYD=$(tb__abs "${FERRYD:-build/daemon/ferryd}")
FERRYCTL=$(tb__abs "${FERRYCTL:-build/ctl/ferryctl}")
TCPX=$(tb__abs "${TCPX:-build/tests/tcpx}")
if [[ -z ${PYTHON:-} ]]; then
	if [[ -x /usr/bin/python3 ]]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
PKT="$TB_LIB_DIR/pkt.py"

TB_P=
TB_RUN=
TB_NSES=()
TB_PIDS=()
declare -A TB_PID_OF=()
TB_CAPTURE_PID=
TB_CAP=
TB_EXIT_RC=
TB_CGMNT=
TB_CGROUPS=()
TB_CGROUP=
TB_TCPX_PID=
TB_BG_PID=
TB_ON_FAIL=()
TB_DEFER=()

# tb_global_lock NAME: waits for, then holds until the test exits, a lock
# shared by every run on this host, for a test that changes host-wide state
# (the hugepage pool): two such tests at once would restore each other's
# values.
tb_global_lock() {
	local fd
	exec {fd}>"/tmp/ferry-global-$1.lock"
	flock "$fd"
}

# tb_wait_file FILE: waits up to 5 s for FILE to appear (a tool's --ready
# file); 0 when it did, 1 when it did not.
tb_wait_file() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.05
	done
	return 1
}

tb_wait_listen() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -n $(tb_exec "$1" ss -ltnH "( sport = :$2 )") ]] && return 0
		sleep 0.05
	done
	return 1
}

tb_log() {
	printf '[tb %s] %s\n' "$(date +%T)" "$*" >&2
}

tb_die() {
	tb_log "FATAL: $*"
	exit 1
}

# Picks a prefix no namespace uses and claims it by creating the run dir
# (mkdir is atomic, so two runs can't pick the same one).
tb_init() {
	local i p
	# Root and namespaces are needed; skipping is not allowed in CI.
	if [[ $(id -u) -ne 0 ]]; then
		if [[ ${CI:-} == true ]]; then
			tb_die "needs root (CI=true: failing, not skipping)"
		fi
		echo "skip: needs root"
		exit 77
	fi
	for ((i = 0; i < 64; i++)); do
		p=$(printf 'fy%04x' $(((RANDOM ^ ($$ << 3) ^ (i << 11)) & 0xffff)))
		if ip netns list 2>/dev/null | grep -q "^$p-"; then
			continue
		fi
		if mkdir -m 0755 "/tmp/ferry-$p" 2>/dev/null; then
			TB_P=$p
			TB_RUN=/tmp/ferry-$p
			break
		fi
	done
	[[ -n $TB_P ]] || tb_die "no free run prefix"
	# The run's mark, inherited by every process started from here on
	# (procs.sh): the prefix is unique among live runs, the PID and the
	# time make it unique over the host's life.
	TB_RUN_ID=$TB_P.$$.${EPOCHREALTIME/./}
	export TB_RUN_ID
	tb__run_cgroup_join
	# Lets tests/run-system.sh clean up after a test it had to kill -9.
	if [[ -n ${TB_RECORD:-} ]]; then
		printf '%s %s %s %s\n' "$TB_P" "$TB_RUN" "$TB_RUN_ID" "${TB_RUN_CG:--}" >>"$TB_RECORD"
	fi
	trap tb_cleanup EXIT
	# set -e stops a test at a failing command that is not an assertion
	# too (a client that exits non-zero inside $(...)): say which.
	trap 'tb__stopped $? $LINENO "$BASH_COMMAND"' ERR
	trap 'exit 130' INT
	trap 'exit 143' TERM
	tb__bpffs_init
	tb_log "prefix $TB_P, run dir $TB_RUN"
}

# The ERR trap: only where set -e is on, so a cleanup's own failing commands
# (after its set +e) are not taken for what stopped the test.
tb__stopped() {
	[[ $- == *e* ]] && tb_log "stopped (exit $1) at line $2: $3"
	return 0
}

# True while PID is still a child of this shell: a recycled PID never is.
tb__is_ours() {
	local stat rest ppid
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	rest=${stat##*) }
	read -r _ ppid _ <<<"$rest"
	[[ $ppid == "$$" ]]
}

# Records a background child for the trap to end.
tb_track() {
	TB_PIDS+=("$1")
	[[ -n $TB_RUN ]] && echo "$1" >>"$TB_RUN/pids"
	return 0
}

tb_on_fail() {
	TB_ON_FAIL+=("$(printf '%q ' "$@")")
}

tb_cleanup() {
	local rc=$? pid ns i f cmd
	trap - EXIT INT TERM ERR
	set +e
	if ((rc != 0)); then
		for cmd in "${TB_ON_FAIL[@]}"; do
			echo "--- on failure: $cmd" >&2
			eval "$cmd" >&2 2>&1
		done
	fi
	for pid in "${TB_PIDS[@]}"; do
		tb__is_ours "$pid" && kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${TB_PIDS[@]}"; do
		for ((i = 0; i < 30; i++)); do
			tb__is_ours "$pid" || break
			sleep 0.1
		done
		if tb__is_ours "$pid"; then
			tb_log "pid $pid did not end on SIGTERM, killing"
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	tb__end_strays
	tb__run_deferred
	# A sanitizer report in any daemon's log fails the test, whatever it
	# asserted (ferryd built with -Db_sanitize=address,undefined or thread;
	# TSan says WARNING, and goes on unless halt_on_error is set).
	if [[ -n $TB_RUN ]] && grep -lE "ERROR: (Address|Leak)Sanitizer|(ERROR|WARNING): ThreadSanitizer|runtime error:" \
		"$TB_RUN"/*.log >/dev/null 2>&1; then
		tb_log "sanitizer report in a daemon log"
		((rc == 0)) && rc=1
	fi
	if [[ $rc -ne 0 && -n $TB_RUN ]]; then
		for f in "$TB_RUN"/*.log; do
			[[ -s $f ]] || continue
			echo "--- ${f##*/} (last 30 lines)" >&2
			tail -n 30 "$f" >&2
		done
	fi
	for ns in "${TB_NSES[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	tb__cgroup_cleanup
	tb__run_cgroup_leave
	tb__bpffs_cleanup
	[[ -n $TB_RUN && $TB_RUN == /tmp/ferry-* ]] && rm -rf "$TB_RUN"
	exit "$rc"
}

# What the run started that is still there after the tracked PIDs: found
# by the run's mark, in its cgroups, as this shell's descendants or in its
# namespaces (procs.sh), so never a process of another run. Each is said in
# the log: a test should start a background command so that $! is the
# command itself (tb_bg), and track it.
tb__strays() {
	procs_find_begin
	procs_in_netns "${TB_NSES[@]}"
	procs_marked TB_RUN_ID "$TB_RUN_ID"
	procs_below $$
	procs_in_cgroup ${TB_RUN_CG:+"$TB_RUN_CG"} "${TB_CGROUPS[@]}"
}

tb__end_strays() {
	local p
	[[ -n ${TB_RUN_ID:-} ]] || return 0
	procs_end tb__strays && return 0
	for p in "${PROCS_ENDED[@]}"; do
		tb_log "ended a process of the run that was not tracked: $p"
	done
	return 0
}

# The run's own cgroup, $TB_RUN_CG: this shell joins it in tb_init, so that
# everything it forks from then on is in it, subshells included (their
# environment does not show the mark), wherever they are reparented. Made
# under the host's cgroup2 mount (not a run's own, which goes away with
# its run); without cgroup2 the run goes without (the mark, the
# namespaces and the descendants are still searched). A child of the root,
# like tb_cgroup's, with no limit set.
TB_RUN_CG=
TB_RUN_CG_HOME=
tb__run_cgroup_join() {
	local mnt dev fs rest line
	while read -r dev mnt fs rest; do
		[[ $fs == cgroup2 && $mnt != /tmp/ferry-* ]] && break
		mnt=
	done </proc/self/mounts
	[[ -n $mnt && -w $mnt/cgroup.procs ]] || return 0
	while read -r line; do
		[[ $line == 0::* ]] && TB_RUN_CG_HOME=$mnt${line#0::}
	done </proc/self/cgroup
	[[ -n $TB_RUN_CG_HOME && -d $TB_RUN_CG_HOME ]] || TB_RUN_CG_HOME=$mnt
	mkdir "$mnt/ferry-$TB_P" 2>/dev/null || return 0
	if echo $$ 2>/dev/null >"$mnt/ferry-$TB_P/cgroup.procs"; then
		TB_RUN_CG=$mnt/ferry-$TB_P
	else
		rmdir "$mnt/ferry-$TB_P"
	fi
}

# After the run's processes have ended: this shell goes back where it came
# from, and the cgroup goes.
tb__run_cgroup_leave() {
	local i
	[[ -n $TB_RUN_CG ]] || return 0
	echo $$ 2>/dev/null >"$TB_RUN_CG_HOME/cgroup.procs" ||
		echo $$ >"${TB_RUN_CG%/*}/cgroup.procs"
	for ((i = 0; i < 50; i++)); do
		rmdir "$TB_RUN_CG" 2>/dev/null && break
		sleep 0.1
	done
	[[ -d $TB_RUN_CG ]] && tb_log "cgroup $TB_RUN_CG still has processes: $(cat "$TB_RUN_CG/cgroup.procs")"
	TB_RUN_CG=
}

# A cgroup can be removed once its last process has gone; the processes
# were ended above but may take a moment to leave.
tb__cgroup_cleanup() {
	local cg i
	for cg in "${TB_CGROUPS[@]}"; do
		for ((i = 0; i < 50; i++)); do
			rmdir "$cg" 2>/dev/null && break
			[[ -d $cg ]] || break
			sleep 0.1
		done
		[[ -d $cg ]] && tb_log "cgroup $cg still has processes: $(cat "$cg/cgroup.procs")"
	done
	if [[ -n $TB_CGMNT ]]; then
		umount "$TB_CGMNT" 2>/dev/null || umount -l "$TB_CGMNT"
		rmdir "$TB_CGMNT"
	fi
}

# tb_cgroup NAME: makes the child cgroup $TB_CGROUP. cgroup2 is mounted
# beside the run dir ($TB_RUN.cgroup), never inside it, so no `rm -rf` of
# the run dir can reach into the hierarchy.
tb_cgroup() {
	local cg
	if [[ -z $TB_CGMNT ]]; then
		TB_CGMNT=$TB_RUN.cgroup
		mkdir -m 0755 "$TB_CGMNT" || tb_die "mkdir $TB_CGMNT failed"
		if ! mount -t cgroup2 none "$TB_CGMNT"; then
			rmdir "$TB_CGMNT"
			TB_CGMNT=
			tb_die "cannot mount cgroup2"
		fi
	fi
	cg=$TB_CGMNT/$TB_P-$1
	mkdir "$cg" || tb_die "mkdir $cg failed"
	TB_CGROUPS+=("$cg")
	TB_CGROUP=$cg
}

# tb_cg_exec NS CGROUP CMD...: the shell joins CGROUP, then execs CMD, so
# CMD's sockets are born in the cgroup.
# shellcheck disable=SC2016 # expanded by sh, not here
TB_CG_EXEC='echo $$ >"$0/cgroup.procs" && exec "$@"'
tb_cg_exec() {
	local ns cg=$2
	ns=$(tb_nsname "$1")
	shift 2
	ip netns exec "$ns" sh -c "$TB_CG_EXEC" "$cg" "$@"
}

# tb_tcpx_server NS ADDR:PORT OUT [--cgroup CG] [--stderr] [ARGS...]: starts
# `$TCPX server -l ADDR:PORT --ready OUT.ready ARGS...` in NS, in cgroup CG
# when given (as tb_cg_exec does), stdout to OUT, stderr too with --stderr
# (else the caller's). Returns once the server listens, its PID (tracked
# for the trap) in TB_TCPX_PID; when it does not within 5 s, logs OUT and
# returns 1.
tb_tcpx_server() {
	local ns addr=$2 out=$3 efd=2 run
	ns=$(tb_nsname "$1")
	shift 3
	run=(ip netns exec "$ns")
	while (($#)); do
		case $1 in
		--cgroup)
			run+=(sh -c "$TB_CG_EXEC" "$2")
			shift 2
			;;
		--stderr)
			efd=1
			shift
			;;
		*) break ;;
		esac
	done
	[[ -x $TCPX ]] || tb_die "no tcpx at $TCPX (build first, or set TCPX)"
	rm -f "$out.ready"
	# A simple command, not a function, so that ip, sh and tcpx all exec
	# in the one child: $! is tcpx itself.
	"${run[@]}" "$TCPX" server -l "$addr" --ready "$out.ready" "$@" >"$out" 2>&"$efd" &
	TB_TCPX_PID=$!
	tb_track "$TB_TCPX_PID"
	tb_wait_file "$out.ready" && return 0
	tb_log "tcpx server on $addr did not start: $(cat "$out")"
	return 1
}

# Full namespace name: "gen" -> "$TB_P-gen"; a full name is kept.
tb_nsname() {
	case $1 in
	"$TB_P"-*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$TB_P-$1" ;;
	esac
}

# Real interface name: "g0" -> "$TB_P-g0".
tb_ifname() {
	case $1 in
	"$TB_P"-*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$TB_P-$1" ;;
	esac
}

tb_ns() {
	local ns
	ns=$(tb_nsname "$1")
	ip netns add "$ns" || tb_die "ip netns add $ns failed"
	TB_NSES+=("$ns")
	ip -n "$ns" link set lo up
	# No IPv6 on the test links: no MLD/RS/DAD frames to spoil exact counts.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}

# tb_ipv6_on NS [DEV...]: IPv6 back on (tb_ns turns it off) on the named
# interfaces (tb_ifname names, as tb_veth made them), or with no DEV on
# the whole namespace: every interface and the ones made later.
tb_ipv6_on() {
	local ns dev keys=()
	ns=$(tb_nsname "$1")
	shift
	if (($# == 0)); then
		keys=(net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0)
	fi
	for dev in "$@"; do
		keys+=("net.ipv6.conf.$dev.disable_ipv6=0")
	done
	ip netns exec "$ns" sysctl -qw "${keys[@]}" >/dev/null
}

tb_veth() {
	local ns_a ns_b if_a if_b q=${5:-1} mq=()
	ns_a=$(tb_nsname "$1")
	if_a=$(tb_ifname "$2")
	ns_b=$(tb_nsname "$3")
	if_b=$(tb_ifname "$4")
	((${#if_a} <= 15 && ${#if_b} <= 15)) || tb_die "interface name too long: $if_a / $if_b"
	if ((q > 1)); then
		mq=(numtxqueues "$q" numrxqueues "$q")
	fi
	ip link add name "$if_a" "${mq[@]}" netns "$ns_a" type veth \
		peer name "$if_b" "${mq[@]}" netns "$ns_b" ||
		tb_die "veth $if_a <-> $if_b failed"
	ip -n "$ns_a" link set dev "$if_a" mtu 1500 up || tb_die "$if_a up failed"
	ip -n "$ns_b" link set dev "$if_b" mtu 1500 up || tb_die "$if_b up failed"
}

# `ip netns exec` remounts /sys, so each command mounts bpffs again: the
# test's own instance ($TB_BPFFS, tb__bpffs_init), so that a restarted or
# succeeding ferryd finds the pins of the one before, as on a host; a new
# instance when there is none.
# shellcheck disable=SC2016 # expanded by sh, not here
TB_BPFFS_EXEC='{ [ -n "$TB_BPFFS" ] && mount --bind "$TB_BPFFS" /sys/fs/bpf; } 2>/dev/null || mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"'
# What tb_ferryd and tb_takeover run ferryd with: set TB_FERRYD_EXEC to
# TB_NO_BPFFS_EXEC for a ferryd that finds no bpffs (a container, a plain
# `ip netns exec`: the /sys it remounts has none).
# shellcheck disable=SC2016 # expanded by sh, not here
TB_NO_BPFFS_EXEC='exec "$@"'
tb_exec() {
	local ns
	ns=$(tb_nsname "$1")
	shift
	ip netns exec "$ns" sh -c "$TB_BPFFS_EXEC" sh "$@"
}

tb_mac() {
	ip -n "$(tb_nsname "$1")" -j link show dev "$(tb_ifname "$2")" | jq -r '.[0].address'
}

tb_ifindex() {
	ip -n "$(tb_nsname "$1")" -j link show dev "$(tb_ifname "$2")" | jq -r '.[0].ifindex'
}

# Id of the XDP program attached to an interface, "none" if there is none.
tb_xdp_prog_id() {
	ip -n "$(tb_nsname "$1")" -j -d link show dev "$(tb_ifname "$2")" |
		jq -r '.[0].xdp.prog.id // (.[0].xdp.attached[0].prog.id) // "none"'
}

tb_sock() {
	printf '%s\n' "$TB_RUN/$1.sock"
}

tb_ctl() {
	local name=$1
	shift
	"$FERRYCTL" -s "$TB_RUN/$name.sock" "$@"
}

tb_ctlj() {
	local name=$1
	shift
	"$FERRYCTL" -s "$TB_RUN/$name.sock" -j "$@"
}

# tb_ferryd NS NAME [ARGS...]: the daemon's PID is in TB_PID_OF[NAME].
tb_ferryd() {
	local ns=$1 name=$2 sock log pid i
	shift 2
	sock="$TB_RUN/$name.sock"
	log="$TB_RUN/$name.log"
	[[ -x $FERRYD ]] || tb_die "no ferryd at $FERRYD (build first, or set FERRYD)"
	[[ -x $FERRYCTL ]] || tb_die "no ferryctl at $FERRYCTL (build first, or set FERRYCTL)"
	# A simple command, not a function, so that ip, sh and ferryd all exec
	# in the one child: $! is ferryd itself.
	ip netns exec "$(tb_nsname "$ns")" sh -c "${TB_FERRYD_EXEC:-$TB_BPFFS_EXEC}" sh \
		"$FERRYD" -f -s "$sock" "$@" </dev/null >>"$log" 2>&1 &
	pid=$!
	tb_track "$pid"
	TB_PID_OF[$name]=$pid
	for ((i = 0; i < 100; i++)); do
		if "$FERRYCTL" -s "$sock" version >/dev/null 2>&1; then
			tb_log "ferryd $name up in $(tb_nsname "$ns") (pid $pid)"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	tb_log "ferryd $name did not answer on $sock; its log:"
	cat "$log" >&2
	return 1
}

# tb_bg NS OUT CMD...: CMD (with the run's bpffs, as tb_exec runs it) in NS
# in the background, stdin from /dev/null, stdout to OUT (stderr stays the
# test's); its PID, tracked for the trap, in TB_BG_PID. A simple command
# after `&`, so that ip, sh and CMD all exec in the one child: $! is CMD
# itself. `tb_exec ... &` would background a subshell running tb_exec, $!
# would be that subshell, and ending it would leave CMD running.
tb_bg() {
	local ns out=$2
	ns=$(tb_nsname "$1")
	shift 2
	ip netns exec "$ns" sh -c "$TB_BPFFS_EXEC" sh "$@" </dev/null >"$out" &
	TB_BG_PID=$!
	tb_track "$TB_BG_PID"
}

# SIGKILLs a daemon started by tb_ferryd and waits until it is gone.
tb_kill9() {
	local name=$1 pid
	pid=${TB_PID_OF[$name]:-}
	[[ -n $pid ]] || tb_die "no ferryd named $name"
	tb__is_ours "$pid" && kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	unset 'TB_PID_OF[$name]'
}

# Waits (up to TIMEOUT s) until a tb_ferryd daemon has exited and sets
# TB_EXIT_RC to its exit status ("timeout" if it is still running).
# Not in $(...): only this shell can wait for its children.
tb_wait_exit() {
	local name=$1 timeout=${2:-10} pid i
	pid=${TB_PID_OF[$name]:-}
	[[ -n $pid ]] || tb_die "no ferryd named $name"
	TB_EXIT_RC=timeout
	for ((i = 0; i < timeout * 10; i++)); do
		tb__running "$pid" || break
		sleep 0.1
	done
	tb__running "$pid" && return 1
	TB_EXIT_RC=0
	wait "$pid" 2>/dev/null || TB_EXIT_RC=$?
	unset 'TB_PID_OF[$name]'
	return 0
}

# Still running: alive and not a zombie waiting to be reaped.
tb__running() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
	[[ -n $state && $state != Z ]]
}

tb_std3() {
	local q=${1:-1}
	tb_ns gen
	tb_ns dut
	tb_ns sink
	tb_veth gen g0 dut d0 "$q"
	tb_veth dut d1 sink s0 "$q"
	G0=$(tb_ifname g0)
	D0=$(tb_ifname d0)
	D1=$(tb_ifname d1)
	S0=$(tb_ifname s0)
	export G0 D0 D1 S0
}

# tb_std3_mtu MTU: the MTU of the four std3 links (G0 D0 D1 S0).
tb_std3_mtu() {
	local l
	for l in gen:$G0 dut:$D0 dut:$D1 sink:$S0; do
		ip -n "$(tb_nsname "${l%%:*}")" link set dev "${l#*:}" mtu "$1"
	done
}

# tb_err NAME CODE ARGS...: a command to ferryd NAME that must fail with
# error code CODE (exit 1, ok false); asserted (assert.sh), the message
# printed and left in ERR_MSG.
tb_err() {
	local name=$1 code=$2 out rc=0
	shift 2
	out=$(tb_ctlj "$name" "$@" 2>&1) || rc=$?
	assert_eq "$* -> exit, error code" "1 false $code" \
		"$rc $(jq -r '"\(.ok) \(.error.code)"' <<<"$out" 2>/dev/null || echo "$out")"
	ERR_MSG=$(jq -r .error.message <<<"$out" 2>/dev/null || echo "$out")
	echo "    message: $ERR_MSG"
}

# tb_do NAME ARGS...: a command that must succeed; prints the reply when it
# does not and returns 1. The JSON reply goes to stdout.
tb_do() {
	local name=$1 out rc=0
	shift
	out=$(tb_ctlj "$name" "$@" 2>&1) || rc=$?
	if ((rc != 0)); then
		tb_log "ferryctl $name $* failed (exit $rc): $out"
		return 1
	fi
	printf '%s\n' "$out"
}

# ---- the roles of the std3 testbed ----

# ferryd "gen" in gen, port g0 on G0, worker on CPU 0.
tb_gen_up() {
	tb_ferryd gen gen || return 1
	tb_do gen workers 0 >/dev/null &&
		tb_do gen port add g0 dev "$G0" >/dev/null
}

# ferryd "dut" in dut (or NAME), ports p0 (D0) and p1 (D1), p0 -> p1.
tb_dut_xconnect() {
	local name=${1:-dut}
	tb_ferryd dut "$name" || return 1
	tb_do "$name" workers 1 >/dev/null &&
		tb_do "$name" port add p0 dev "$D0" >/dev/null &&
		tb_do "$name" port add p1 dev "$D1" >/dev/null &&
		tb_do "$name" xconnect add p0 p1 >/dev/null
}

# ferryd "sink" in sink, port s0 on S0 with the drop app.
tb_sink_drop() {
	tb_ferryd sink sink || return 1
	tb_do sink workers 0 >/dev/null &&
		tb_do sink port add s0 dev "$S0" >/dev/null &&
		tb_do sink drop s0 >/dev/null
}

# The whole std3 chain, every ferryd up: generator g0 -> dut p0 -> p1 ->
# sink s0 (drop).
tb_std3_chain() {
	tb_std3 && tb_gen_up && tb_dut_xconnect && tb_sink_drop
}

# Builds another tool's XDP program, one that passes every frame:
# $TB_RUN/foreign.o, section "xdp".
tb_foreign_xdp_build() {
	local multiarch
	cat >"$TB_RUN/foreign.c" <<'C'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int foreign_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
C
	multiarch=$(cc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	clang -O2 -g -target bpf -I"/usr/include/$multiarch" \
		-c "$TB_RUN/foreign.c" -o "$TB_RUN/foreign.o"
}

# ---- reading ferryd's stats ----

# tb_stat NAME PORT KEY: a port's total counter (0 if absent).
tb_stat() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" --arg k "$3" \
		'[.data.ports[] | select(.name == $p) | .totals[$k]] | first // 0'
}

# tb_xdpstat NAME PORT REASON: packets the XDP program gave that verdict.
tb_xdpstat() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" --arg k "$3" \
		'[.data.ports[] | select(.name == $p) | .xdp[$k]] | first // 0'
}

# tb_gen NAME PORT KEY: a generator field (frames, pps, running).
tb_gen() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" --arg k "$3" \
		'[.data.gen[]? | select(.port == $p) | .[$k]] | first // 0'
}

# Waits until the generator on PORT has stopped (count reached); fails on timeout.
tb_wait_gen_done() {
	local name=$1 port=$2 timeout=${3:-60} i running
	for ((i = 0; i < timeout * 5; i++)); do
		running=$(tb_gen "$name" "$port" running)
		[[ $running == false || $running == 0 ]] && return 0
		sleep 0.2
	done
	tb_log "generator $name/$port still running after ${timeout}s"
	return 1
}

# Waits until no packet counter of the named daemons moves for 1 s.
tb_wait_quiet() {
	local timeout=20 i n prev="" cur name
	if [[ $1 =~ ^[0-9]+$ ]]; then
		timeout=$1
		shift
	fi
	n=0
	for ((i = 0; i < timeout * 4; i++)); do
		cur=
		for name in "$@"; do
			cur+=$(tb_ctlj "$name" stats | jq -c \
				'[.data.ports[].totals | .rx_packets, .tx_packets, .drops], [.data.gen[]?.frames]')
		done
		if [[ $cur == "$prev" ]]; then
			((++n >= 4)) && return 0
		else
			n=0
		fi
		prev=$cur
		sleep 0.25
	done
	tb_log "counters of $* still moving after ${timeout}s"
	return 1
}

# ---- pkt.py ----

# tb_capture_start NS IF OUTFILE ARGS...: starts a capture in the background,
# returns once its socket is bound. Its PID is in TB_CAPTURE_PID.
tb_capture_start() {
	local ns=$1 ifn out=$3 ready i
	ifn=$(tb_ifname "$2")
	shift 3
	ready="$out.ready"
	rm -f "$ready"
	ip netns exec "$(tb_nsname "$ns")" "$PYTHON" "$PKT" capture "$ifn" \
		--ready-file "$ready" "$@" >"$out" 2>"$out.err" &
	TB_CAPTURE_PID=$!
	tb_track "$TB_CAPTURE_PID"
	for ((i = 0; i < 100; i++)); do
		[[ -e $ready ]] && return 0
		kill -0 "$TB_CAPTURE_PID" 2>/dev/null || break
		sleep 0.1
	done
	tb_log "capture on $ifn did not start:"
	cat "$out.err" >&2
	return 1
}

# Waits for the capture started last and sets TB_CAP to its JSON summary
# (also printed). Not in $(...): only this shell can wait for its children.
tb_capture_wait() {
	local out=$1 rc=0
	wait "$TB_CAPTURE_PID" || rc=$?
	TB_CAP=$(cat "$out")
	echo "capture: $TB_CAP"
	if ((rc != 0)); then
		tb_log "capture failed ($rc):"
		cat "$out.err" >&2
	fi
	return "$rc"
}

tb_send() {
	local ns=$1 ifn
	ifn=$(tb_ifname "$2")
	shift 2
	tb_exec "$ns" "$PYTHON" "$PKT" send "$ifn" "$@"
}

# tb_write FILE TEXT: TEXT and a newline into FILE (a sysctl, a /sys knob);
# as a command, so that tb_defer can take it.
tb_write() {
	printf '%s\n' "$2" >"$1"
}

# tb_defer CMD...: registers CMD (a simple command, its words kept as they
# are) to undo a change made outside the run dir and the namespaces (a
# sysctl, a user, a group), right where the change is made. The one EXIT
# trap tb_init installs runs them, the last registered first, on every exit,
# failures and signals included; after the test's processes have ended, so
# nothing still uses what they undo. Call it after tb_init.
tb_defer() {
	TB_DEFER+=("$(printf '%q ' "$@")")
}

# Runs the deferred commands, last first; one failing does not stop the
# others, and is said.
tb__run_deferred() {
	local i
	for ((i = ${#TB_DEFER[@]} - 1; i >= 0; i--)); do
		eval "${TB_DEFER[i]}" || tb_log "deferred '${TB_DEFER[i]}' failed"
	done
	TB_DEFER=()
}

# One bpffs instance per test, beside the run dir (never inside it: no
# `rm -rf` reaches into it), bound onto /sys/fs/bpf by every command run in
# a namespace (TB_BPFFS_EXEC).
TB_BPFFS=
tb__bpffs_init() {
	mkdir -p "$TB_RUN.bpffs" && mount -t bpf bpf "$TB_RUN.bpffs" ||
		tb_die "cannot mount bpffs on $TB_RUN.bpffs"
	chmod 1777 "$TB_RUN.bpffs"
	export TB_BPFFS=$TB_RUN.bpffs
}

tb__bpffs_cleanup() {
	[[ -n $TB_BPFFS && $TB_BPFFS == /tmp/ferry-*.bpffs ]] || return 0
	umount "$TB_BPFFS" 2>/dev/null || umount -l "$TB_BPFFS"
	rmdir "$TB_BPFFS"
}

# ---- the systemd unit (tests/system/t_unit_security.sh, t_unprivileged.sh)

SECCOMP_EXEC=$(tb__abs "${SECCOMP_EXEC:-build/tests/seccomp_exec}")

# The shipped unit file: daemon/ once it moved there, dataplane/ before.
tb_unit_file() {
	local f
	for f in "$TB_REPO/daemon/ferryd.service" "$TB_REPO/dataplane/ferryd.service"; do
		[[ -f $f ]] && { printf '%s\n' "$f"; return 0; }
	done
	tb_die "no ferryd.service under daemon/ or dataplane/"
}

# tb_unit_values KEY: the unit's KEY= values, space-separated, all lines.
tb_unit_values() {
	sed -n "s/^$1=//p" "$(tb_unit_file)" | tr '\n' ' '
}

# Expands one SystemCallFilter= word (@group or a name) into names.
tb__syscall_expand() {
	local w=$1 line
	if [[ $w != @* ]]; then
		printf '%s\n' "$w"
		return 0
	fi
	systemd-analyze syscall-filter "$w" | tail -n +2 | while read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		tb__syscall_expand "$line"
	done
}

# The unit's SystemCallFilter= as a flat list of names, one a line, from
# the unit file itself: what seccomp_exec applies is what systemd would.
tb_unit_syscalls() {
	local w
	command -v systemd-analyze >/dev/null || tb_die "no systemd-analyze (package systemd)"
	for w in $(tb_unit_values SystemCallFilter); do
		[[ $w == ~* ]] && tb_die "deny-list entries ($w) are not supported here"
		tb__syscall_expand "$w"
	done | sort -u
}

# ---- a wire: cli -- dut (xconnect both ways) -- srv ----

# tb_wire [MTU]: namespaces cli, dut, srv; veths c0<->d0 and d1<->s0, every
# link at MTU (1500 by default); cli 10.88.0.1/24 and fd88::1/64 on c0, srv
# 10.88.0.2/24 and fd88::2/64 on s0, each knowing the other's MAC (static
# neighbours: nothing depends on ARP/NDP crossing the dut); ferryd "dut"
# with ports p0 (D0) and p1 (D1) cross-connected both ways. Leaves TX
# checksum offload as veth has it (on). Sets C0 D0 D1 S0.
tb_wire() {
	local mtu=${1:-1500} ns
	tb_ns cli
	tb_ns dut
	tb_ns srv
	tb_veth cli c0 dut d0
	tb_veth dut d1 srv s0
	C0=$(tb_ifname c0)
	D0=$(tb_ifname d0)
	D1=$(tb_ifname d1)
	S0=$(tb_ifname s0)
	export C0 D0 D1 S0
	for ns in cli srv; do
		tb_ipv6_on $ns
		ip netns exec "$(tb_nsname $ns)" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 >/dev/null
	done
	ip -n "$(tb_nsname cli)" link set dev "$C0" mtu "$mtu"
	ip -n "$(tb_nsname dut)" link set dev "$D0" mtu "$mtu"
	ip -n "$(tb_nsname dut)" link set dev "$D1" mtu "$mtu"
	ip -n "$(tb_nsname srv)" link set dev "$S0" mtu "$mtu"
	ip netns exec "$(tb_nsname cli)" sysctl -qw "net.ipv6.conf.$C0.disable_ipv6=0" "net.ipv6.conf.$C0.accept_dad=0"
	ip netns exec "$(tb_nsname srv)" sysctl -qw "net.ipv6.conf.$S0.disable_ipv6=0" "net.ipv6.conf.$S0.accept_dad=0"
	ip -n "$(tb_nsname cli)" addr add 10.88.0.1/24 dev "$C0"
	ip -n "$(tb_nsname cli)" addr add fd88::1/64 dev "$C0" nodad
	ip -n "$(tb_nsname srv)" addr add 10.88.0.2/24 dev "$S0"
	ip -n "$(tb_nsname srv)" addr add fd88::2/64 dev "$S0" nodad
	ip -n "$(tb_nsname cli)" neigh add 10.88.0.2 lladdr "$(tb_mac srv s0)" dev "$C0" nud permanent
	ip -n "$(tb_nsname cli)" neigh add fd88::2 lladdr "$(tb_mac srv s0)" dev "$C0" nud permanent
	ip -n "$(tb_nsname srv)" neigh add 10.88.0.1 lladdr "$(tb_mac cli c0)" dev "$S0" nud permanent
	ip -n "$(tb_nsname srv)" neigh add fd88::1 lladdr "$(tb_mac cli c0)" dev "$S0" nud permanent
	tb_ferryd dut dut || return 1
	tb_do dut workers 1 >/dev/null &&
		tb_do dut port add p0 dev "$D0" >/dev/null &&
		tb_do dut port add p1 dev "$D1" >/dev/null &&
		tb_do dut xconnect add p0 p1 >/dev/null &&
		tb_do dut xconnect add p1 p0 >/dev/null
}

# tb_tcpx FROM TO ADDR PORT [BYTES [MSG]]: a byte-exact TCP transfer from
# netns FROM to a server in TO on ADDR:PORT ([v6] in brackets; BYTES
# default 4000000, writes of MSG default 1400); fails (assert.sh) unless
# both ends verified every byte.
tb_tcpx() {
	local from=$1 to=$2 addr=$3 port=$4 bytes=${5:-4000000} msg=${6:-1400} out c rc=0
	out=$TB_RUN/tcpx-$port.json
	tb_tcpx_server "$to" "$addr:$port" "$out" || tb_die "tcpx server in $to"
	c=$(ip netns exec "$(tb_nsname "$from")" timeout 60 "$TCPX" client -d "$addr:$port" -n "$bytes" -m "$msg") || rc=$?
	wait "$TB_TCPX_PID" || rc=$?
	echo "    $from -> $addr:$port client: $c server: $(cat "$out")"
	assert_eq "tcpx $from -> $addr:$port: exit codes" 0 "$rc"
	assert_json .bytes "$bytes" "$c"
	assert_json .ok true "$(cat "$out")"
	assert_json .bytes "$bytes" "$(cat "$out")"
}

# tb_wire_tcpx ADDR PORT BYTES MSG: tb_tcpx cli -> srv.
tb_wire_tcpx() {
	tb_tcpx cli srv "$@"
}

# tb_routed N: the routed testbed: cli -- dut -- srv, each link its own
# subnet (cli 10.N.1.1/24 and fdN:1::1/64 on c0, the dut .254 / ::fe on d0
# and d1, srv 10.N.2.1/24 and fdN:2::1/64 on s0), default routes via the
# dut, the dut's own forwarding off (ferry forwards, the kernel answers for
# itself only). Sets C0 D0 D1 S0 (interfaces) and cli dut srv (netns names).
tb_routed() {
	local n=$1 ns
	tb_ns cli
	tb_ns dut
	tb_ns srv
	for ns in cli dut srv; do
		ip netns exec "$(tb_nsname $ns)" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
			net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 >/dev/null
	done
	tb_veth cli c0 dut d0
	tb_veth dut d1 srv s0
	C0=$(tb_ifname c0) D0=$(tb_ifname d0) D1=$(tb_ifname d1) S0=$(tb_ifname s0)
	cli=$(tb_nsname cli) dut=$(tb_nsname dut) srv=$(tb_nsname srv)
	ip netns exec "$dut" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
	ip -n "$cli" addr add "10.$n.1.1/24" dev "$C0"
	ip -n "$cli" addr add "fd$n:1::1/64" dev "$C0" nodad
	ip -n "$dut" addr add "10.$n.1.254/24" dev "$D0"
	ip -n "$dut" addr add "fd$n:1::fe/64" dev "$D0" nodad
	ip -n "$dut" addr add "10.$n.2.254/24" dev "$D1"
	ip -n "$dut" addr add "fd$n:2::fe/64" dev "$D1" nodad
	ip -n "$srv" addr add "10.$n.2.1/24" dev "$S0"
	ip -n "$srv" addr add "fd$n:2::1/64" dev "$S0" nodad
	ip -n "$cli" route add default via "10.$n.1.254"
	ip -n "$cli" -6 route add default via "fd$n:1::fe"
	ip -n "$srv" route add default via "10.$n.2.254"
	ip -n "$srv" -6 route add default via "fd$n:2::fe"
}

# tb_routed_ping FERRYD NS ARGS...: ping from NS through tb_routed's dut
# (ferryd FERRYD) until one reply, up to 20 tries (the first frames find no
# neighbour yet: dropped while the kernel resolves it); prints the reply.
# On failure, the dut's counters and neighbours go to stderr.
tb_routed_ping() {
	local fd=$1 ns=$2 i out
	shift 2
	for ((i = 0; i < 20; i++)); do
		if out=$(ip netns exec "$ns" ping -c 1 -W 1 "$@" 2>&1); then
			printf '%s\n' "$out"
			return 0
		fi
	done
	printf '%s\n' "$out"
	echo "dut stats: $(tb_ctlj "$fd" stats | jq -c '.data | {route, ports: [.ports[] | {name, totals, xdp, paths}]}')" >&2
	echo "dut neigh: $(tb_ctlj "$fd" neigh show | jq -c .data)" >&2
	ip -n "$dut" neigh >&2
	return 1
}

# tb_pshow NAME PORT FIELD: FIELD of `port show PORT` on NAME's ferryd
# (path, path_why, ...); empty when it has none.
tb_pshow() {
	tb_ctlj "$1" port show "$2" | jq -r ".data[0].$3 // empty"
}

# tb_kstat / tb_xstat NAME PORT FIELD: PORT's counter FIELD on the kernel
# path (stats paths.kernel, e.g. rx_packets, fib.fwd) or on the AF_XDP path
# (paths.xsk); 0 when absent.
tb_kstat() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" \
		"[.data.ports[] | select(.name == \$p) | .paths.kernel.$3] | first // 0"
}
tb_xstat() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" \
		"[.data.ports[] | select(.name == \$p) | .paths.xsk.$3] | first // 0"
}

# tb_takeover NAME: a `ferryd --takeover` on dut's socket, tracked as NAME
# (its log: $TB_RUN/NAME.log). Its `ip netns exec` mounts a bpffs of its
# own, without the old one's pins: the shared maps come from the old
# program itself.
tb_takeover() {
	local name=$1 pid
	ip netns exec "$(tb_nsname dut)" sh -c "${TB_FERRYD_EXEC:-$TB_BPFFS_EXEC}" sh \
		"$FERRYD" -f -s "$(tb_sock dut)" --takeover \
		</dev/null >>"$TB_RUN/$name.log" 2>&1 &
	pid=$!
	tb_track "$pid"
	TB_PID_OF[$name]=$pid
}

# tb_takeover_wait NAME: the old dut ferryd has exited (its exit code in
# TB_EXIT_RC) and NAME serves dut's socket; dies otherwise.
tb_takeover_wait() {
	local name=$1 i
	tb_wait_exit dut 20 || tb_die "the old ferryd did not exit"
	for ((i = 0; i < 100; i++)); do
		grep -q "ready on" "$TB_RUN/$name.log" &&
			tb_ctl dut version >/dev/null 2>&1 && return 0
		kill -0 "${TB_PID_OF[$name]}" 2>/dev/null || tb_die "the new ferryd exited"
		sleep 0.1
	done
	tb_die "the new ferryd does not serve $(tb_sock dut)"
}

# tb_routed_kernel N: tb_routed N and a dut ferryd routing p0 (d0) and p1
# (d1) on the kernel path: GRO on the end hosts' veths (a DEVMAP redirect
# into a veth arrives only if its peer has GRO or XDP) and lo's forwarding
# knobs on (bpf_fib_lookup's precondition, docs/design.md).
tb_routed_kernel() {
	tb_routed "$1"
	ip netns exec "$cli" ethtool -K "$C0" gro on >/dev/null
	ip netns exec "$srv" ethtool -K "$S0" gro on >/dev/null
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.lo.forwarding=1 net.ipv6.conf.lo.forwarding=1
	tb_ferryd dut dut
	tb_do dut workers 1 >/dev/null
	tb_do dut port add p0 dev "$D0" >/dev/null
	tb_do dut port add p1 dev "$D1" >/dev/null
	tb_do dut route p0 path kernel >/dev/null
	tb_do dut route p1 path kernel >/dev/null
}
