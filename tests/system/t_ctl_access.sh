#!/usr/bin/env bash
# Who may use the control socket: root always; a user outside group
# "ferry" is refused with EACCES even when the file modes let it connect;
# the same user is served once it has the group (supplementary or primary);
# a daemon started while the group exists gives it the socket and its
# directory, so group members get in and others cannot even connect.
#
# Makes a system user (ferrytst<pid>) and, only when it does not exist
# yet, the group "ferry"; tb_defer removes both when the test ends.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

GROUP=ferry
TST_USER=ferrytst$$

del_test_user() {
	userdel "$TST_USER" 2>/dev/null
	# USERGROUPS_ENAB usually removes it with the user; make sure.
	if getent group "$TST_USER" >/dev/null; then
		groupdel "$TST_USER"
	fi
}

tb_init

for tool in useradd userdel groupadd groupdel gpasswd setpriv getent; do
	if ! command -v "$tool" >/dev/null; then
		[[ ${CI:-} == true ]] && tb_die "needs $tool (CI=true: failing, not skipping)"
		echo "skip: needs $tool"
		exit 77
	fi
done
getent passwd "$TST_USER" >/dev/null && tb_die "user $TST_USER exists already"

tb_defer del_test_user
useradd --system --no-create-home --shell /usr/sbin/nologin --user-group \
	--comment "ferry test $TB_P" "$TST_USER"
UID_T=$(id -u "$TST_USER")
GID_T=$(id -g "$TST_USER")
tb_log "user $TST_USER uid $UID_T gid $GID_T"

# ferryctl as the test user. CREDS: setpriv options for the groups.
# Prints the output (both streams) and returns ferryctl's exit status.
as_user() {
	local sock=$1
	shift
	local creds=()
	while [[ $1 == --* ]]; do
		creds+=("$1")
		shift
	done
	setpriv --reuid="$UID_T" "${creds[@]}" "$USER_CTL" -s "$sock" "$@" 2>&1
}

# expect_refused WHAT SOCK SETPRIV_OPTS...: EACCES from the daemon.
expect_refused() {
	local what=$1 sock=$2 out rc=0
	shift 2
	out=$(as_user "$sock" "$@" version) || rc=$?
	echo "$what: exit $rc: $out"
	assert_eq "$what: ferryctl exit status" 1 "$rc"
	assert_match "$what: error" 'EACCES' "$out"
	out=$(as_user "$sock" "$@" -j version) || true
	assert_json .error.code EACCES "$out"
}

expect_served() {
	local what=$1 sock=$2 out rc=0
	shift 2
	out=$(as_user "$sock" "$@" -j version) || rc=$?
	echo "$what: exit $rc: $out"
	assert_eq "$what: ferryctl exit status" 0 "$rc"
	assert_json .ok true "$out"
}

# ---- 1. the file modes let the user in; the daemon does not ----
tb_ns dut
tb_ferryd dut dut
SOCK=$(tb_sock dut)
# The file mode is the first gate (0660, root or group ferry); open it so
# that the daemon's own check is what this part tests. The checkout may
# not be readable by other users: they run a copy of ferryctl.
chmod 0755 "$TB_RUN"
chmod 0666 "$SOCK"
USER_CTL=$TB_RUN/ferryctl
install -m 0755 "$FERRYCTL" "$USER_CTL"

assert_ok tb_ctlj dut version
expect_refused "not in group $GROUP" "$SOCK" --regid="$GID_T" --clear-groups

# A refused client that says nothing gets the error at once and is closed
# soon after, instead of holding a client slot for the idle timeout.
silent=$(setpriv --reuid="$UID_T" --regid="$GID_T" --clear-groups \
	"$PYTHON" - "$SOCK" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
t0 = time.monotonic()
buf = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print("%.1f %s" % (time.monotonic() - t0, buf.decode().strip()))
PY
)
echo "silent refused client: $silent"
assert_match "reply to a silent refused client" '"code":"EACCES"' "$silent"
assert_le "seconds until a silent refused client is closed" 5 "${silent%%.*}"

# Refusals are logged, at most one line a second.
refusal_lines() { grep -c '^<4>ferryd: control client refused' "$TB_RUN/dut.log" || true; }
assert_ge "refusals logged so far" 1 "$(refusal_lines)"
before=$(refusal_lines)
start=$SECONDS
for ((i = 0; i < 30; i++)); do
	as_user "$SOCK" --regid="$GID_T" --clear-groups version >/dev/null || true
done
secs=$((SECONDS - start))
logged=$(($(refusal_lines) - before))
echo "30 refusals in ${secs}s logged in $logged lines"
assert_le "log lines for 30 refusals" $((secs + 2)) "$logged"
assert_ok tb_ctlj dut version

# ---- 2. the same user with the group ----
if getent group "$GROUP" >/dev/null; then
	tb_log "group $GROUP exists already; it is kept"
else
	tb_defer groupdel "$GROUP"
	groupadd --system "$GROUP"
fi
FERRY_GID=$(getent group "$GROUP" | cut -d: -f3)
gpasswd -a "$TST_USER" "$GROUP" >/dev/null

expect_served "supplementary group $GROUP" "$SOCK" --regid="$GID_T" --init-groups
expect_served "primary group $GROUP" "$SOCK" --regid="$FERRY_GID" --clear-groups
# What counts is the connecting process's credentials, as for file modes.
expect_refused "in $GROUP but not in this process" "$SOCK" --regid="$GID_T" --clear-groups
assert_ok tb_ctlj dut version

# ---- 3. a daemon started while the group exists gives it the files ----
# A 0750 directory of root's, as a previous run leaves /run/ferry.
mkdir -m 0750 "$TB_RUN/grp"
tb_ferryd dut grp/ferryd
GSOCK=$(tb_sock grp/ferryd)
assert_eq "socket directory group and mode" "$GROUP 750" "$(stat -c '%G %a' "$TB_RUN/grp")"
assert_eq "socket group and mode" "$GROUP 660" "$(stat -c '%G %a' "$GSOCK")"
expect_served "member, through the file modes" "$GSOCK" --regid="$GID_T" --init-groups
rc=0
out=$(as_user "$GSOCK" --regid="$GID_T" --clear-groups version) || rc=$?
echo "non-member on the group's socket: exit $rc: $out"
assert_eq "non-member cannot connect (ferryctl exit)" 2 "$rc"
assert_match "non-member: why" 'permission denied' "$out"
assert_ok tb_ctlj grp/ferryd version
