#!/usr/bin/env bash
# Run every executable tests/<suite>/*.sh (or the ones named after the suite); each prints what
# it checks and exits non-zero on failure.  Prints "<suite>: N passed, M failed".
#
# Each script runs under its own time limit: "# suite-timeout: SECONDS" in its header, else
# SUITE_TIMEOUT (default 300).  One that runs out is reported as
#   TIMEOUT: suite <suite>, test <script>: no result after <n>s
# with the last lines of its output, and counts as failed.  With UTGT_SUMMARY set (make test)
# each script adds a row "<suite>/<name>|pass|FAIL|TIMEOUT|<seconds>" to that file, and the
# script running is written to UTGT_CURRENT.
set -u
suite=$1
shift
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 failed=()
shopt -s nullglob
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(tests/"$suite"/*.sh)
logdir=$(mktemp -d /tmp/utgt-suite.XXXXXX)
trap 'rm -rf "$logdir"' EXIT

header() { sed -n "s/^# $2: *//p" "$1" | head -1; }
. scripts/lib/limit.sh

for t in "${scripts[@]}"; do
	[ -x "$t" ] || continue
	name=$(basename "$t" .sh)
	limit=$(header "$t" suite-timeout)
	limit=${limit:-${SUITE_TIMEOUT:-300}}
	log=$logdir/$name.log
	echo "== $t (limit ${limit}s)"
	[ -n "${UTGT_CURRENT:-}" ] && echo "$t" >"$UTGT_CURRENT"
	t0=$SECONDS
	run_limited "$limit" "$log" "$t"
	rc=$?
	secs=$((SECONDS - t0))
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		res=TIMEOUT
		echo "TIMEOUT: suite $suite, test $t: no result after ${limit}s; its last lines:"
		tail -20 "$log" | awk '{ print "  | " $0 }'
	elif [ "$rc" = 0 ]; then
		res=pass
	else
		res=FAIL
	fi
	if [ "$res" = pass ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed+=("$t")
	fi
	[ -n "${UTGT_SUMMARY:-}" ] && printf '%s/%s|%s|%s\n' "$suite" "$name" "$res" "$secs" >>"$UTGT_SUMMARY"
done
echo "$suite: $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "failing: ${failed[*]}"; exit 1; }
