# shellcheck shell=bash
# procs.sh - finding and ending every process of one test run or one suite
# run, whoever its parent is by now (sourced by testbed.sh and
# tests/run-system.sh).
#
# A PID list is not enough: `f ... &` backgrounds a subshell, and ending it
# leaves the command it runs; a double fork or setsid leaves no trace in the
# list; an orphan is reparented to init and runs on, in a namespace whose
# name is gone. So a run's processes are found by what they inherit:
#   - the run's mark, an environment variable (testbed.sh: TB_RUN_ID, one
#     test; run-system.sh: TB_SUITE_ID, one suite). /proc/PID/environ is the
#     environment a process was exec'd with: a command started after the
#     export shows it, the exporting shell and its forked subshells do not;
#   - the run's cgroup (testbed.sh: when cgroup2 is mounted), which every
#     fork inherits, subshells included, until it is moved out;
#   - being a descendant of the run's shell, for the subshells when there is
#     no cgroup;
#   - the run's network namespaces, for a command that clears its
#     environment there.
#
#   procs_find_begin            PROCS empty, and this shell and its
#                               ancestors (the runner, timeout) left out of
#                               what the finders below add to it
#   procs_marked VAR VALUE      + the PIDs whose environment has VAR=VALUE
#   procs_below PID             + PID's descendants
#   procs_in_cgroup DIR...      + the PIDs in the cgroups DIR, and below
#   procs_in_netns NS...        + the PIDs in the named network namespaces
#   procs_env PID VAR           REPLY: PID's VAR (1 when it has none)
#   procs_cmdline PID           REPLY: PID's command line, on one line
#   procs_end FINDER [ARG...]   ends what `FINDER ARG...` (a function making
#                               PROCS with the above) finds: SIGTERM (and
#                               SIGCONT, for a stopped one), up to
#                               PROCS_TERM_WAIT seconds, then SIGKILL to what
#                               FINDER still finds. Each ended process is one
#                               "PID cmdline" line in PROCS_ENDED; returns 0
#                               when there was none.
#
# The finders only read /proc with shell builtins (a child of this shell
# would carry the mark while it reads), and a signal only goes to a PID a
# finder has just reported: a process of another run, or a recycled PID, is
# never signalled. Zombies are not reported: they have ended.

PROCS=()
PROCS_ENDED=()
PROCS_TERM_WAIT=${PROCS_TERM_WAIT:-3}
declare -A PROCS__SKIP=()
declare -A PROCS__IN=()

# REPLY: the parent of PID, STATE its state letter; 1 when PID is gone.
procs__stat() {
	local stat
	REPLY='' STATE=''
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	read -r STATE REPLY _ <<<"$stat"
}

procs_find_begin() {
	local pid=$BASHPID
	PROCS=()
	PROCS__IN=()
	PROCS__SKIP=()
	while [[ -n $pid && $pid != 0 ]]; do
		PROCS__SKIP[$pid]=1
		procs__stat "$pid" || break
		pid=$REPLY
	done
}

procs__add() {
	local STATE
	[[ -n ${PROCS__SKIP[$1]:-} || -n ${PROCS__IN[$1]:-} ]] && return 0
	procs__stat "$1" || return 0
	[[ $STATE == Z || $STATE == X ]] && return 0
	PROCS__IN[$1]=1
	PROCS+=("$1")
}

procs_env() {
	local e
	REPLY=
	while IFS= read -r -d '' e; do
		if [[ $e == "$2="* ]]; then
			REPLY=${e#*=}
			return 0
		fi
	done 2>/dev/null <"/proc/$1/environ"
	return 1
}

procs_marked() {
	local d pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[[ -n ${PROCS__SKIP[$pid]:-} ]] && continue
		procs_env "$pid" "$1" && [[ $REPLY == "$2" ]] && procs__add "$pid"
	done
	return 0
}

procs_below() {
	local d pid p STATE
	local -A parent=()
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		procs__stat "$pid" && parent[$pid]=$REPLY
	done
	for pid in "${!parent[@]}"; do
		p=${parent[$pid]}
		while [[ -n $p && $p != 0 && $p != 1 && $p != "$1" ]]; do
			p=${parent[$p]:-}
		done
		[[ $p == "$1" && $pid != "$1" ]] && procs__add "$pid"
	done
	return 0
}

procs_in_cgroup() {
	local dir pid sub
	for dir in "$@"; do
		[[ -d $dir ]] || continue
		while read -r pid; do
			procs__add "$pid"
		done 2>/dev/null <"$dir/cgroup.procs"
		for sub in "$dir"/*/; do
			[[ -d $sub ]] && procs_in_cgroup "${sub%/}"
		done
	done
	return 0
}

# `ip netns pids` runs as a child of this shell: call it before the
# finders that read /proc, or after, never between two reads.
procs_in_netns() {
	local ns pid
	for ns in "$@"; do
		[[ -e /run/netns/$ns ]] || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			procs__add "$pid"
		done
	done
	return 0
}

procs_cmdline() {
	local args=() comm=
	mapfile -d '' -t args 2>/dev/null <"/proc/$1/cmdline"
	REPLY=${args[*]}
	if [[ -z $REPLY ]]; then
		read -r comm 2>/dev/null <"/proc/$1/comm"
		REPLY="[${comm:-gone}]"
	fi
}

# Signals what the finder reports now (TERM: only what it had not reported
# before) and notes each process once in PROCS_ENDED.
procs__signal() {
	local sig=$1 pid
	for pid in "${PROCS[@]}"; do
		if [[ -z ${procs__seen[$pid]:-} ]]; then
			procs__seen[$pid]=1
			procs_cmdline "$pid"
			PROCS_ENDED+=("$pid $REPLY")
		elif [[ $sig == TERM ]]; then
			continue # once is enough: a daemon may be shutting down
		fi
		kill "-$sig" "$pid" 2>/dev/null
		[[ $sig == TERM ]] && kill -CONT "$pid" 2>/dev/null
	done
	return 0
}

procs_end() {
	local i
	local -A procs__seen=()
	PROCS_ENDED=()
	"$@"
	((${#PROCS[@]} == 0)) && return 0
	# TERM first, so that a daemon detaches what it attached; what its
	# death orphans, or a loop still starts, is found and signalled by the
	# next round.
	for ((i = 0; i < PROCS_TERM_WAIT * 10; i++)); do
		procs__signal TERM
		sleep 0.1
		"$@"
		((${#PROCS[@]} == 0)) && return 1
	done
	for ((i = 0; i < 30; i++)); do
		procs__signal KILL
		sleep 0.1
		"$@"
		((${#PROCS[@]} == 0)) && break
	done
	return 1
}
