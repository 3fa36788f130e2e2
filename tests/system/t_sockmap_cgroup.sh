#!/usr/bin/env bash
# sockmap policies by cgroup: `sockmap policy add dst SERVICE DECISION
# cgroup PATH` applies to the connections whose server socket is in that
# cgroup, and keeps that service's statistics apart from the same port's
# in other cgroups.
#
# One namespace (loopback only); ferryd attached (default learn) to a
# child cgroup v2 that holds the clients and, under it, two cgroups a and
# b, one server each, on the same port 7301 (127.0.0.1 in a, 127.0.0.2 in
# b), and a third server of the port in the parent (127.0.0.3), which no
# cgroup rule names. Policies: port 7301 redirect in a, plain in b.
# Checked:
#   - paths that are no cgroup are refused, each with its reason;
#   - a's connection is redirected (in the SOCKHASH, every byte), b's and
#     the parent's are not; all three byte-exact;
#   - `sockmap show`: two rows of 7301 with their cgroup (path and id,
#     the id the directory's inode), each with its decision, reason and
#     counters; the parent's server a row without a cgroup (learning);
#   - a dual-stack server on [::]:7302 in b, pinned redirect there: an
#     IPv4 client's connection is redirected (the listener found under
#     the IPv6 wildcard);
#   - the policies and show config carry the cgroup; ferryd shut down
#     and started from its saved config has them back, and a's new
#     connection is redirected again;
#   - `policy del dst 7301 cgroup a`: a's next connection is decided
#     without a cgroup (the service of cgroup 0, learning: plain);
#   - servers that listened before the attach: the one in ferryd's
#     namespace is listed at the attach and placed (redirected); the one
#     in another namespace can't be, decided without its cgroup, counted
#     in cg_missed.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/sockmap.sh
. "$(dirname "$0")/../lib/sockmap.sh"

[[ -x $TCPX ]] || tb_die "no tcpx at $TCPX (build first)"

# cg_rm DIR: removes a cgroup once its processes have left.
cg_rm() {
	local i
	for ((i = 0; i < 50; i++)); do
		rmdir "$1" 2>/dev/null && return 0
		[[ -d $1 ]] || return 0
		sleep 0.1
	done
	tb_log "cgroup $1 still has processes: $(cat "$1/cgroup.procs")"
	return 1
}

tb_init
tb_ns h
tb_cgroup acc
CG=$TB_CGROUP
# The servers' cgroups, inside the attached one (its programs see them).
for c in a b; do
	mkdir "$CG/$c" || tb_die "mkdir $CG/$c failed"
	tb_defer cg_rm "$CG/$c"
done
CGA=$CG/a
CGB=$CG/b
tb_ferryd h dut
D=dut
P=7301
N=16000000

# err CODE ARGS...: the command fails with CODE; its message in ERR_MSG.
err() {
	tb_err "$D" "$@"
}

# svc ADDR CGROUP FIELD: a field of the row of service ADDR:7301 in
# CGROUP (a path, or an id once no policy names it; "" for the row without
# a cgroup); "none" when there is no such row.
svc() {
	tb_ctlj $D sockmap show |
		jq -r --arg s "$1:$P" --arg c "$2" --arg f "$3" \
			'[.data.services[]? | select(.service == $s) |
			  select(if $c == "" then .cgroup_id == null
				 else .cgroup == $c or (.cgroup_id | tostring) == $c end) |
			  getpath($f | split("."))] | first | if . == null then "none" else . end'
}

# dir ADDR FIELD: the client->server direction's flow counter, "none"
# when the connection was never put in the SOCKHASH.
dir() {
	tb_ctlj $D sockmap show | jq -r --arg d "$1:$P" --arg k "$2" \
		'[.data.flows[]? | select(.dst == $d) | .[$k]] | first // "none"'
}

# stream ADDR CGROUP TAG: a server on ADDR:7301 in CGROUP, one client in
# the attached cgroup, N bytes in 1 KiB writes, verified by the server.
stream() {
	sm_stream "$1" "$P" "$N" "$2" "$3"
}

# ---- refused ----
err ENOENT sockmap policy add dst $P redirect cgroup "$CG/nope"
assert_match "missing cgroup: said" "no such cgroup" "$ERR_MSG"
err EINVAL sockmap policy add dst $P redirect cgroup /tmp
assert_match "not cgroup2: said" "not on a cgroup v2 mount" "$ERR_MSG"
# Relative: under /sys/fs/cgroup, as the message says.
err ENOENT sockmap policy add dst $P redirect cgroup ferry-no-such-cgroup
assert_match "relative path: resolved under /sys/fs/cgroup" \
	"/sys/fs/cgroup/ferry-no-such-cgroup" "$ERR_MSG"
err ENOENT sockmap policy del dst $P cgroup "$CGA"
assert_eq "nothing added by the refused ones" 0 \
	"$(tb_ctlj $D sockmap show | jq '.data.policies | length')"

# ---- two cgroups, one port ----
tb_do $D sockmap policy add dst $P redirect cgroup "$CGA" >/dev/null
tb_do $D sockmap policy add dst $P plain cgroup "$CGB" >/dev/null
tb_do $D sockmap attach cgroup "$CG" ports 7300-7399 >/dev/null
pol=$(tb_ctlj $D sockmap show | jq -c .data.policies)
echo "    policies: $pol"
ida=$(stat -c %i "$CGA")
idb=$(stat -c %i "$CGB")
assert_json '[.[] | "\(.service) \(.decision) \(.cgroup) \(.cgroup_id)"] | join(",")' \
	"$P redirect $CGA $ida,$P plain $CGB $idb" "$pol"

# The servers listen after the attach: their listeners are known.
stream 127.0.0.1 "$CGA" a
stream 127.0.0.2 "$CGB" b
stream 127.0.0.3 "$CG" parent
tb_ctl $D sockmap show
assert_eq "a: the connection was redirected, every byte" "$N" "$(dir 127.0.0.1 bytes_redirected)"
assert_ge "a: verdict runs" 1 "$(dir 127.0.0.1 verdict_runs)"
assert_eq "b: the connection is not in the SOCKHASH" none "$(dir 127.0.0.2 redirects)"
assert_eq "parent: the connection is not in the SOCKHASH" none "$(dir 127.0.0.3 redirects)"

assert_eq "a: its row's cgroup id is the directory's inode" "$ida" "$(svc 127.0.0.1 "$CGA" cgroup_id)"
assert_eq "a: decision, reason, pinned" "redirect policy true" \
	"$(svc 127.0.0.1 "$CGA" decision) $(svc 127.0.0.1 "$CGA" reason) $(svc 127.0.0.1 "$CGA" pinned)"
assert_eq "a: connections, redirected" "1 1" \
	"$(svc 127.0.0.1 "$CGA" counters.conns) $(svc 127.0.0.1 "$CGA" counters.conns_redirected)"
assert_eq "a: bytes redirected, plain" "$N 0" \
	"$(svc 127.0.0.1 "$CGA" counters.bytes_redirected) $(svc 127.0.0.1 "$CGA" counters.bytes_plain)"
assert_eq "a: no row of 127.0.0.1:$P without a cgroup" none "$(svc 127.0.0.1 "" decision)"

assert_eq "b: its row's cgroup id" "$idb" "$(svc 127.0.0.2 "$CGB" cgroup_id)"
assert_eq "b: decision, reason" "plain policy" \
	"$(svc 127.0.0.2 "$CGB" decision) $(svc 127.0.0.2 "$CGB" reason)"
assert_eq "b: connections, redirected" "1 0" \
	"$(svc 127.0.0.2 "$CGB" counters.conns) $(svc 127.0.0.2 "$CGB" counters.conns_redirected)"
assert_eq "b: bytes plain, redirected" "$N 0" \
	"$(svc 127.0.0.2 "$CGB" counters.bytes_plain) $(svc 127.0.0.2 "$CGB" counters.bytes_redirected)"

# No rule names the parent: the key of before, cgroup 0, learning.
assert_eq "parent: a row without a cgroup" "learn learning" \
	"$(svc 127.0.0.3 "" decision) $(svc 127.0.0.3 "" reason)"
assert_eq "parent: no cgroup id in its row" null \
	"$(tb_ctlj $D sockmap show | jq -r '[.data.services[] | select(.service == "127.0.0.3:'$P'")][0].cgroup_id')"
assert_eq "parent: connections, redirected" "1 0" \
	"$(svc 127.0.0.3 "" counters.conns) $(svc 127.0.0.3 "" counters.conns_redirected)"
assert_eq "no connection decided without its cgroup's rule" 0 \
	"$(tb_ctlj $D sockmap show | jq .data.counters.cg_missed)"

# ---- a dual-stack listener on [::] in b, an IPv4 client ----
# The client finds its server's cgroup under the IPv6 wildcard.
P=7302
tb_do $D sockmap policy add dst $P redirect cgroup "$CGB" >/dev/null
tb_tcpx_server h "[::]:$P" "$TB_RUN/srv-dual.json" --cgroup "$CGB" ||
	tb_die "tcpx server on [::]:$P did not start"
sp=$TB_TCPX_PID
rc=0
cli=$(tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$P" -n "$N" -m 1024) || rc=$?
wait "$sp" || rc=$?
assert_eq "dual-stack: exit codes" 0 "$rc"
assert_json '"\(.ok) \(.bytes)"' "true $N" "$(cat "$TB_RUN/srv-dual.json")"
assert_eq "dual-stack: the IPv4 connection was redirected, every byte" "$N" \
	"$(dir 127.0.0.1 bytes_redirected)"
assert_eq "dual-stack: its service, keyed as IPv4, in b" "redirect policy 1" \
	"$(svc 127.0.0.1 "$CGB" decision) $(svc 127.0.0.1 "$CGB" reason) $(svc 127.0.0.1 "$CGB" counters.conns_redirected)"
tb_do $D sockmap policy del dst $P cgroup "$CGB" >/dev/null
P=7301

# ---- config: saved, loaded again ----
conf=$(tb_ctlj $D show config | jq -r .data)
while IFS= read -r l; do echo "    $l"; done <<<"$conf"
assert_match "show config: a's policy" "^sockmap policy add dst $P redirect cgroup \"$CGA\"$" "$conf"
assert_match "show config: b's policy" "^sockmap policy add dst $P plain cgroup \"$CGB\"$" "$conf"
tb_do $D save "$TB_RUN/saved.conf" >/dev/null
tb_do $D shutdown >/dev/null
tb_wait_exit $D 20 || tb_die "ferryd did not exit"
D=dut2
tb_ferryd h $D -c "$TB_RUN/saved.conf"
assert_json '[.data.policies[] | "\(.decision) \(.cgroup_id)"] | join(",")' \
	"redirect $ida,plain $idb" "$(tb_ctlj $D sockmap show)"
stream 127.0.0.1 "$CGA" a2
assert_eq "after the restart: a's connection is redirected" "$N" "$(dir 127.0.0.1 bytes_redirected)"
assert_eq "after the restart: a's service, its cgroup" "$CGA redirect 1" \
	"$(svc 127.0.0.1 "$CGA" cgroup) $(svc 127.0.0.1 "$CGA" decision) $(svc 127.0.0.1 "$CGA" counters.conns_redirected)"

# ---- policy del with the cgroup ----
tb_do $D sockmap policy del dst $P cgroup "$CGA" >/dev/null
assert_json '[.data.policies[] | "\(.decision) \(.cgroup)"] | join(",")' \
	"plain $CGB" "$(tb_ctlj $D sockmap show)"
stream 127.0.0.1 "$CGA" a3
assert_eq "a without its rule: the service of cgroup 0, learning" "learn 1 0" \
	"$(svc 127.0.0.1 "" decision) $(svc 127.0.0.1 "" counters.conns) $(svc 127.0.0.1 "" counters.conns_redirected)"
assert_eq "a without its rule: the connection stayed plain" "$N" \
	"$(svc 127.0.0.1 "" counters.bytes_plain)"
# Its path is the policy's: gone with it (null, "none" here), the id stays.
assert_eq "a's service of its cgroup: kept, by id, not counting it" "none $ida 1" \
	"$(svc 127.0.0.1 "$ida" cgroup) $(svc 127.0.0.1 "$ida" cgroup_id) $(svc 127.0.0.1 "$ida" counters.conns)"
# ---- servers listening since before the attach ----
# One in ferryd's namespace: listed (sock_diag) at the attach, placed. One
# in another namespace: sock_diag can't list it, so it is decided without
# its cgroup, counted in cg_missed.
tb_ns h2
tb_do $D sockmap policy add dst $P redirect cgroup "$CGA" >/dev/null
tb_do $D sockmap detach >/dev/null
tb_tcpx_server h "127.0.0.1:$P" "$TB_RUN/srv-early.json" --cgroup "$CGA" ||
	tb_die "tcpx server did not start"
sp=$TB_TCPX_PID
tb_tcpx_server h2 "127.0.0.1:$P" "$TB_RUN/srv-early2.json" --cgroup "$CGA" ||
	tb_die "tcpx server in h2 did not start"
sp2=$TB_TCPX_PID
tb_do $D sockmap attach cgroup "$CG" ports 7300-7399 >/dev/null
assert_match "attach: the listener already there is listed" \
	"[1-9][0-9]* TCP listeners already there" "$(cat "$TB_RUN/dut2.log")"
rc=0
cli=$(tb_cg_exec h "$CG" "$TCPX" client -d "127.0.0.1:$P" -n "$N" -m 1024) || rc=$?
wait "$sp" || rc=$?
cli2=$(tb_cg_exec h2 "$CG" "$TCPX" client -d "127.0.0.1:$P" -n "$N" -m 1024) || rc=$?
wait "$sp2" || rc=$?
assert_eq "early listeners: exit codes" 0 "$rc"
assert_json '"\(.ok) \(.bytes)"' "true $N" "$(cat "$TB_RUN/srv-early.json")"
assert_json '"\(.ok) \(.bytes)"' "true $N" "$(cat "$TB_RUN/srv-early2.json")"
assert_json .bytes "$N" "$cli"
assert_json .bytes "$N" "$cli2"
assert_eq "early listener, ferryd's namespace: redirected, every byte" "$N" \
	"$(dir 127.0.0.1 bytes_redirected)"
assert_eq "early listener, ferryd's namespace: in its cgroup's service" "redirect 1" \
	"$(svc 127.0.0.1 "$CGA" decision) $(svc 127.0.0.1 "$CGA" counters.conns_redirected)"
assert_eq "early listener, other namespace: in the service of cgroup 0, plain" "1 0" \
	"$(svc 127.0.0.1 "" counters.conns) $(svc 127.0.0.1 "" counters.conns_redirected)"
assert_eq "early listener, other namespace: counted as decided without its cgroup's rule" 1 \
	"$(tb_ctlj $D sockmap show | jq .data.counters.cg_missed)"
tb_do $D sockmap detach >/dev/null
