#!/usr/bin/env bash
# run-system.sh [FILTER...] - runs tests/system/t_*.sh (only names containing
# one of the FILTERs when given), each under a timeout, and ends with the
# line "N passed, N failed, N skipped".
#
# A test exits 0 (pass), 77 (skip) or anything else (fail). They need root
# and network namespaces: without them every test is skipped, or failed
# when CI=true, since CI must not go green by skipping.
#
# Env: TEST_TIMEOUT (s, default 180), VERBOSE=1 prints every test's output.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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

# Removes what a test left behind if it was killed before its trap ran:
# tb_init appends "PREFIX RUNDIR" to the record file.
reap_leftovers() {
	local record=$1 p run ns pid leaked=0
	[[ -s $record ]] || return 0
	while read -r p run; do
		if [[ -f $run/pids ]]; then
			while read -r pid; do
				# Only PIDs still running inside this test's namespaces.
				for ns in $(ip netns identify "$pid" 2>/dev/null); do
					[[ $ns == "$p"-* ]] && kill -KILL "$pid" 2>/dev/null && leaked=1
				done
			done <"$run/pids"
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
	done <"$record"
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
	if ! reap_leftovers "$record"; then
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

summary
