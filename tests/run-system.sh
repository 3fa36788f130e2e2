#!/usr/bin/env bash
# run-system.sh [FILTER...] - runs tests/system/t_*.sh (only names containing
# one of the FILTERs when given), each under a timeout, and ends with the
# line "N passed, N failed, N skipped".
#
# A test exits 0 (pass), 77 (skip) or anything else (fail). They need root
# and network namespaces: without them every test is skipped, or failed
# when CI=true, since CI must not go green by skipping.
#
# No process may outlive the suite: every process started under it carries
# the suite's mark TB_SUITE_ID in its environment (tests/lib/procs.sh); one
# still running at the end is printed with its command line, ended, and
# counted as the failure "leftover processes".
#
# Env: TEST_TIMEOUT (s, default 180), VERBOSE=1 prints every test's output.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/procs.sh
. "$here/lib/procs.sh"
TB_SUITE_ID=suite.$$.${EPOCHREALTIME/./}
export TB_SUITE_ID
filters=("$@")
timeout_s=${TEST_TIMEOUT:-180}
passed=0 failed=0 skipped=0

tests=()
for t in "$here"/system/t_*.sh; do
	[[ -e $t ]] || continue
	name=$(basename "$t" .sh)
	if ((${#filters[@]} == 0)); then
		tests+=("$t")
		continue
	fi
	for f in "${filters[@]}"; do
		if [[ $name == *"$f"* ]]; then
			tests+=("$t")
			break
		fi
	done
done

summary() {
	echo "$passed passed, $failed failed, $skipped skipped"
	((failed == 0))
}

# Can this run make namespaces at all?
why_not=
if [[ $(id -u) -ne 0 ]]; then
	why_not="not root"
else
	probe="fyprobe$$"
	if ip netns add "$probe" 2>/dev/null; then
		ip netns del "$probe"
	else
		why_not="cannot create network namespaces"
	fi
fi
if [[ -n $why_not ]]; then
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		if [[ ${CI:-} == true ]]; then
			echo "FAIL $name ($why_not; CI=true does not allow skipping)"
			failed=$((failed + 1))
		else
			echo "SKIP $name ($why_not)"
			skipped=$((skipped + 1))
		fi
	done
	summary
	exit
fi

# A test's processes (procs.sh): in a namespace of its prefix P, with its
# mark RUN_ID, in its cgroup CG ("-": none) or in the cgroups tb_cgroup
# made beside its run dir RUN.
test_procs() {
	local p=$1 run=$2 run_id=$3 cg=$4 ns nses=()
	procs_find_begin
	for ns in /run/netns/"$p"-*; do
		[[ -e $ns ]] && nses+=("${ns##*/}")
	done
	procs_in_netns "${nses[@]}"
	[[ -n $run_id ]] && procs_marked TB_RUN_ID "$run_id"
	[[ $cg == */ferry-"$p" ]] && procs_in_cgroup "$cg"
	procs_in_cgroup "$run.cgroup/$p"-*
	return 0
}

# Removes what a test left behind if it was killed before its trap ran:
# tb_init appends "PREFIX RUNDIR RUN_ID CGROUP" to the record file. Its
# processes go first (each said in LOG), then its namespaces, cgroups,
# mounts and run dir.
reap_leftovers() {
	local record=$1 log=$2 p run id cg ns l leaked=0
	[[ -s $record ]] || return 0
	while read -r -u 3 p run id cg; do
		[[ -n $p ]] || continue
		if ! procs_end test_procs "$p" "$run" "$id" "${cg:--}"; then
			for l in "${PROCS_ENDED[@]}"; do
				echo "left process (ended now): $l" >>"$log"
			done
			leaked=1
		fi
		if [[ $cg == */ferry-"$p" && -d $cg ]]; then
			rmdir "$cg" && leaked=1
		fi
		for ns in $(ip netns list | awk '{print $1}' | grep "^$p-"); do
			ip netns del "$ns" && leaked=1
		done
		# tb_cgroup's cgroup2 mount beside the run dir (never rm -rf it).
		if [[ -n $run && $run == /tmp/ferry-* && -d $run.cgroup ]]; then
			rmdir "$run.cgroup/$p"-* 2>/dev/null
			umount "$run.cgroup" 2>/dev/null || umount -l "$run.cgroup"
			rmdir "$run.cgroup" && leaked=1
		fi
		# tb__bpffs_init's bpffs beside the run dir.
		if [[ -n $run && $run == /tmp/ferry-* && -d $run.bpffs ]]; then
			umount "$run.bpffs" 2>/dev/null || umount -l "$run.bpffs"
			rmdir "$run.bpffs" && leaked=1
		fi
		[[ -n $run && $run == /tmp/ferry-* && -d $run ]] && rm -rf "$run" && leaked=1
	done 3<"$record"
	return $((leaked == 0 ? 0 : 1))
}

workdir=$(mktemp -d /tmp/ferry-run-system.XXXXXX)
trap 'rm -rf "$workdir"' EXIT

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	log="$workdir/$name.log"
	record="$workdir/$name.record"
	start=$(date +%s)
	rc=0
	# In a subshell whose stderr is the log: when timeout has to SIGKILL the
	# test's process group, the shell's "Killed" notice lands there too.
	(
		TB_RECORD=$record timeout -k 15 "$timeout_s" bash "$t" </dev/null >"$log" 2>&1
		exit $?
	) 2>>"$log" || rc=$?
	secs=$(($(date +%s) - start))
	if ! reap_leftovers "$record" "$log"; then
		echo "test left namespaces, processes or files behind (removed now)" >>"$log"
		((rc == 0 || rc == 77)) && rc=99
	fi
	((rc == 124 || rc == 137)) && echo "timed out after ${timeout_s}s" >>"$log"
	[[ ${VERBOSE:-} == 1 ]] && sed 's/^/    /' "$log"
	case $rc in
	0)
		echo "PASS $name (${secs}s)"
		passed=$((passed + 1))
		;;
	77)
		echo "SKIP $name ($(tail -n 1 "$log"))"
		skipped=$((skipped + 1))
		;;
	*)
		echo "FAIL $name (exit $rc, ${secs}s)"
		if [[ ${VERBOSE:-} != 1 ]]; then
			# What failed first, then the log's tail: a long log's
			# middle may be cut where CI shows it.
			grep -m 1 -A 4 -e '^ASSERT FAILED' "$log" | sed 's/^/    ! /' || true
			tail -n 40 "$log" | sed 's/^/    | /'
		fi
		failed=$((failed + 1))
		;;
	esac
done

# The suite's processes still running: "PID [TEST] cmdline" lines in
# LEFTOVER, TEST from the run id each carries (the record files).
leftover_procs() {
	local pid run_id name rec p run id
	local -A test_of=()
	for rec in "$workdir"/*.record; do
		[[ -e $rec ]] || continue
		name=$(basename "$rec" .record)
		while read -r p run id _; do
			[[ -n $id ]] && test_of[$id]=$name
		done <"$rec"
	done
	LEFTOVER=()
	suite_procs
	for pid in "${PROCS[@]}"; do
		procs_env "$pid" TB_RUN_ID
		run_id=$REPLY
		procs_cmdline "$pid"
		if [[ -n $run_id && -n ${test_of[$run_id]:-} ]]; then
			LEFTOVER+=("$pid [${test_of[$run_id]}] $REPLY")
		else
			LEFTOVER+=("$pid [${run_id:-started outside a testbed}] $REPLY")
		fi
	done
}

# Every process of the suite but this shell and its ancestors.
suite_procs() {
	procs_find_begin
	procs_marked TB_SUITE_ID "$TB_SUITE_ID"
}

leftover_procs
if ((${#LEFTOVER[@]} > 0)); then
	procs_end suite_procs
	pids=()
	for l in "${LEFTOVER[@]}"; do
		pids+=("${l%% *}")
	done
	echo "FAIL leftover processes: ${#LEFTOVER[@]} still running after the suite (ended now): ${pids[*]}"
	printf '    %s\n' "${LEFTOVER[@]}"
	failed=$((failed + 1))
fi

summary
