# shellcheck shell=bash
# assert.sh - assertions for the system tests. Each prints what it expected
# and what it saw, and returns non-zero on failure (with `set -e` the test
# stops there and its trap cleans up).
#
#   assert_eq   WHAT EXPECTED SEEN        string equality
#   assert_ge   WHAT MIN SEEN             integers
#   assert_le   WHAT MAX SEEN             integers
#   assert_match WHAT REGEX SEEN          grep -Ei
#   assert_json EXPR EXPECTED [JSON]      jq -r EXPR on JSON (default: stdin)
#   assert_ok   CMD...                    CMD exits 0
#   assert_fail CMD...                    CMD exits non-zero

ASSERT_FAILS=${ASSERT_FAILS:-0}

assert__fail() {
	ASSERT_FAILS=$((ASSERT_FAILS + 1))
	printf 'ASSERT FAILED: %s\n' "$1" >&2
	shift
	local line
	for line in "$@"; do
		printf '    %s\n' "$line" >&2
	done
	return 1
}

assert__pass() {
	printf 'ok: %s\n' "$1"
}

assert__int() {
	[[ $1 =~ ^-?[0-9]+$ ]]
}

assert_eq() {
	local what=$1 want=$2 seen=$3
	if [[ $seen == "$want" ]]; then
		assert__pass "$what == $want"
	else
		assert__fail "$what" "expected: $want" "seen:     $seen"
	fi
}

assert_ge() {
	local what=$1 min=$2 seen=$3
	if assert__int "$seen" && assert__int "$min" && ((seen >= min)); then
		assert__pass "$what = $seen >= $min"
	else
		assert__fail "$what" "expected: >= $min" "seen:     $seen"
	fi
}

assert_le() {
	local what=$1 max=$2 seen=$3
	if assert__int "$seen" && assert__int "$max" && ((seen <= max)); then
		assert__pass "$what = $seen <= $max"
	else
		assert__fail "$what" "expected: <= $max" "seen:     $seen"
	fi
}

assert_match() {
	local what=$1 re=$2 seen=$3
	if grep -Eiq -- "$re" <<<"$seen"; then
		assert__pass "$what matches /$re/"
	else
		assert__fail "$what" "expected to match: /$re/" "seen: $seen"
	fi
}

assert_json() {
	local expr=$1 want=$2 json seen
	if (($# >= 3)); then json=$3; else json=$(cat); fi
	if ! seen=$(jq -r "$expr" <<<"$json" 2>&1); then
		assert__fail "jq '$expr'" "expected: $want" "jq failed: $seen" "json: ${json:0:400}"
		return 1
	fi
	if [[ $seen == "$want" ]]; then
		assert__pass "$expr == $want"
	else
		assert__fail "jq '$expr'" "expected: $want" "seen:     $seen" "json: ${json:0:400}"
	fi
}

assert_ok() {
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	if ((rc == 0)); then
		assert__pass "$*"
	else
		assert__fail "command failed (exit $rc): $*" "output: ${out:0:600}"
	fi
}

assert_fail() {
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	if ((rc != 0)); then
		assert__pass "fails as expected (exit $rc): $*"
	else
		assert__fail "command succeeded but should fail: $*" "output: ${out:0:600}"
	fi
}
