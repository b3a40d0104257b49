#!/usr/bin/env bash
# Run every Criterion unit-test binary given; print one summary line; fail if any failed.
#
# Each binary runs under its own time limit (UNIT_TIMEOUT, default 600 s; the tests' own
# Criterion .timeout values stop a single hung test sooner).  One that runs out is reported as
#   TIMEOUT: suite unit, test <binary>: still running <suite::test ...> after <n>s
# (the tests Criterion started and never finished), with its last lines, and counts as failed.
set -u
limit=${UNIT_TIMEOUT:-600}
suite=${UNIT_SUITE:-unit}
pass=0 fail=0 failed=()
tmp=$(mktemp -d /tmp/utgt-unit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# timeout runs the binary in a process group of its own: pass Ctrl-C or our own TERM (an
# outer limit) on to it
child=
trap '[ -n "$child" ] && kill -INT "$child"; exit 130' INT
trap '[ -n "$child" ] && kill -TERM "$child"; exit 143' TERM
for bin in "$@"; do
	name=$(basename "$bin")
	out=$tmp/$name.out
	[ -n "${UTGT_CURRENT:-}" ] && echo "$suite $name" >"$UTGT_CURRENT"
	# --verbose: [RUN ] and [PASS]/[FAIL] lines tell which tests were running at a timeout
	timeout -k 10 "$limit" "$bin" --jobs 2 --verbose >"$out" 2>&1 &
	child=$!
	wait "$child"
	rc=$?
	child=
	line=$(grep -E '^\[====\] Synthesis' "$out" | tail -1)
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		running=$(awk '/^\[RUN \]/ { r[$3] = 1 }
			/^\[(PASS|FAIL|SKIP)\]/ { n = $2; sub(/:$/, "", n); delete r[n] }
			END { for (k in r) printf "%s ", k }' "$out")
		echo "TIMEOUT: suite $suite, test $name: still running ${running:-?}after ${limit}s; its last lines:"
		grep -vE "^\[(RUN |PASS)\]" "$out" | tail -20 | awk '{ print "  | " $0 }'
		failed+=("$name")
		fail=$((fail + 1))
		printf '  %-32s %s\n' "$name" "TIMEOUT after ${limit}s"
		continue
	fi
	if [ $rc -ne 0 ]; then
		grep -vE "^\[(RUN |PASS)\]" "$out" | tail -60
		failed+=("$name")
	fi
	t=$(printf '%s' "$line" | sed -nE 's/.*Tested: ([0-9]+).*/\1/p'); t=${t:-0}
	f=$(printf '%s' "$line" | sed -nE 's/.*Failing: ([0-9]+).*/\1/p'); f=${f:-0}
	c=$(printf '%s' "$line" | sed -nE 's/.*Crashing: ([0-9]+).*/\1/p'); c=${c:-0}
	[ $rc -ne 0 ] && [ $((f + c)) -eq 0 ] && f=1
	pass=$((pass + t - f - c)); fail=$((fail + f + c))
	printf '  %-32s %s\n' "$name" "${line#\[====\] }"
done
echo "$suite: $pass passed, $fail failed"
[ ${#failed[@]} -eq 0 ] || { echo "failing: ${failed[*]}"; exit 1; }
