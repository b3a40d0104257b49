#!/usr/bin/env bash
# Run every Criterion unit-test binary given; print one summary line; fail if any failed.
set -u
pass=0 fail=0 failed=()
for bin in "$@"; do
	out=$("$bin" --jobs 2 2>&1); rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^\[====\] Synthesis' | tail -1)
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | grep -vE "^\[RUN \]|^\[PASS\]" | tail -60
		failed+=("$(basename "$bin")")
	fi
	t=$(printf '%s' "$line" | sed -nE 's/.*Tested: ([0-9]+).*/\1/p'); t=${t:-0}
	f=$(printf '%s' "$line" | sed -nE 's/.*Failing: ([0-9]+).*/\1/p'); f=${f:-0}
	c=$(printf '%s' "$line" | sed -nE 's/.*Crashing: ([0-9]+).*/\1/p'); c=${c:-0}
	[ $rc -ne 0 ] && [ $((f + c)) -eq 0 ] && f=1
	pass=$((pass + t - f - c)); fail=$((fail + f + c))
	printf '  %-32s %s\n' "$(basename "$bin")" "${line#\[====\] }"
done
echo "unit: $pass passed, $fail failed"
[ ${#failed[@]} -eq 0 ] || { echo "failing: ${failed[*]}"; exit 1; }
