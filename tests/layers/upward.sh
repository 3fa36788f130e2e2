#!/usr/bin/env bash
# tests/layers/upward.sh - the build refuses an upward dependency between the
# folders of dataplane/ (docs/design.md, "Layers"). In a scratch copy of the
# tracked tree: (1) fib/ linking core/ must fail at configure time (meson
# knows no core_dep yet where fib/ is declared); (2) fib.c including core's
# private header must fail at compile time (fib/ sees only its own and lower
# include directories). Prints PASS/FAIL lines; exits non-zero on a FAIL.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

copy() { # DIR: the tracked tree of the repo, as it is in the work tree
	mkdir -p "$1"
	(cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$1")
}

copy "$tmp/link"
sed -i "s/^fib_lib = static_library('ferry_fib', 'fib.c', 'route.c', 'nlmirror.c',/&\n  link_with : core_lib,/" \
	"$tmp/link/dataplane/fib/meson.build"
if ! grep -q 'core_lib' "$tmp/link/dataplane/fib/meson.build"; then
	echo "FAIL layers: upward link (could not place it in dataplane/fib/meson.build)"
	rc=1
elif out=$(meson setup "$tmp/link/b" "$tmp/link" 2>&1); then
	echo "FAIL layers: fib/ linking core/ configured"
	rc=1
elif grep -q 'Unknown variable "core_lib"' <<<"$out"; then
	echo "PASS layers: fib/ linking core/ refused at configure time"
else
	echo "FAIL layers: configure failed for another reason:"
	tail -n 5 <<<"$out" | sed 's/^/    | /'
	rc=1
fi

copy "$tmp/inc"
sed -i '0,/^#include "fib.h"/s//#include "fib.h"\n#include "ferry_int.h"/' "$tmp/inc/dataplane/fib/fib.c"
if ! meson setup "$tmp/inc/b" "$tmp/inc" >"$tmp/inc.log" 2>&1; then
	echo "FAIL layers: the scratch tree did not configure:"
	tail -n 5 "$tmp/inc.log" | sed 's/^/    | /'
	rc=1
elif out=$(ninja -C "$tmp/inc/b" dataplane/fib/libferry_fib.a 2>&1); then
	echo "FAIL layers: fib.c including core's ferry_int.h compiled"
	rc=1
elif grep -q 'ferry_int.h: No such file' <<<"$out"; then
	echo "PASS layers: fib.c including core's ferry_int.h refused at compile time"
else
	echo "FAIL layers: the compile failed for another reason:"
	grep -m 5 error <<<"$out" | sed 's/^/    | /'
	rc=1
fi
exit $rc
