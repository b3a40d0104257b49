#!/usr/bin/env bash
# Run every executable tests/<suite>/*.sh; each prints what it checks and exits non-zero on
# failure.  Prints "<suite>: N passed, M failed".
set -u
suite=$1
cd "$(dirname "$0")/.."
pass=0 fail=0 failed=()
shopt -s nullglob
for t in tests/"$suite"/*.sh; do
	[ -x "$t" ] || continue
	echo "== $t"
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
done
echo "$suite: $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "failing: ${failed[*]}"; exit 1; }
